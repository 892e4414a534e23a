"""Untrusted media parsed in a bounded child process (SPEC §18): the parent's side.

A few KB of crafted PDF can make pypdf spend minutes and gigabytes on one page, and a crafted JPEG can
keep Pillow decoding for minutes (found in review), and no limit inside either library stops that. So
the parsing runs in a child (``worker.py``, a script importing nothing of fs-tools) that bounds its own
address space and CPU before it reads a byte; the parent bounds the wall time and kills it when the
call is cancelled. Past a bound the read is ``FS_TOO_LARGE``, worded for what was being read.
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import time
from dataclasses import dataclass
from types import TracebackType

from fs_tools.errors import Aborted, ReaderFault, TooLarge
from fs_tools.provider.face import CancelToken

_WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "worker.py")


@dataclass(frozen=True)
class Bounds:
    """What one reading may use, and how its errors name what was read."""

    memory: int  # bytes of address space
    cpu_seconds: int
    wall_seconds: int
    subject: str  # the errors' details: "pdf", "image"
    condition: type[TooLarge]  # what a reading past these bounds is (its remedy follows it)
    kind: str  # in words: "PDF", "image"
    article: str  # "a", "an"


class Child:
    """One reading in a child process: ``reader`` (a key of ``worker.READERS``) gets ``data`` first, then
    the messages ``tell`` sends; ``answer`` waits for its next message. Used as a context manager: the
    child is killed and reaped on the way out, whatever happened."""

    def __init__(
        self, reader: str, data: bytes, bounds: Bounds, display: str, cancel: CancelToken | None = None
    ) -> None:
        self._bounds = bounds
        self._display = display
        self._cancel = cancel
        limits = [str(bounds.memory), str(bounds.cpu_seconds)]  # the worker sets them on itself first
        self._process = subprocess.Popen(
            [sys.executable, _WORKER, reader, *limits],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self._deadline = time.monotonic() + bounds.wall_seconds
        self._selector = selectors.DefaultSelector()
        try:
            assert self._process.stdout is not None
            self._selector.register(self._process.stdout, selectors.EVENT_READ)
            self._send(len(data).to_bytes(8, "big") + data)
        except BaseException:  # not yet in a with block: nothing else would kill and reap it
            self.__exit__(None, None, None)
            raise

    def __enter__(self) -> Child:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, trace: TracebackType | None
    ) -> None:
        process = self._process
        if process.poll() is None:
            process.kill()
        process.wait()
        self._selector.close()
        for stream in (process.stdin, process.stdout):
            if stream is not None and not stream.closed:
                stream.close()

    def tell(self, message: dict[str, object], *, last: bool = False) -> None:
        """Send the reader a message; ``last``: nothing follows it (the reader sees the end of its input)."""
        self._send((json.dumps(message) + "\n").encode())
        if last:
            assert self._process.stdin is not None
            self._process.stdin.close()

    def _send(self, payload: bytes) -> None:
        assert self._process.stdin is not None
        try:
            self._process.stdin.write(payload)
            self._process.stdin.flush()
        except BrokenPipeError:
            pass  # it ended already (a memory limit at start): its answer, or its end, says why

    def answer(self) -> dict[str, object]:
        """The reader's next message. A cancellation, the wall bound, a reader killed (its CPU bound) or
        one that ran out of memory (``{"limit": "memory"}``, with ``where`` it was) are errors; so is
        one that exited without an answer (a fault in it: ``FS_IO_ERROR``)."""
        process, bounds = self._process, self._bounds
        assert process.stdout is not None
        while True:
            if self._cancel is not None and self._cancel.is_set():
                raise Aborted(f"the read of {self._display!r} was cancelled")
            left = self._deadline - time.monotonic()
            if left <= 0:
                raise self._too_slow(f"{bounds.wall_seconds} s")
            if not self._selector.select(min(left, 0.1)):
                continue
            line = process.stdout.readline()
            if line.endswith(b"\n"):
                return self._understood(line)
            # its end: no line, or part of one (killed as it wrote): its status says why
            code = process.wait()
            if code in (-9, -24):  # SIGKILL or SIGXCPU: the CPU limit
                raise self._too_slow(f"{bounds.cpu_seconds} s of CPU")
            if code >= 0:  # it exited on its own without an answer: a fault in the reader, not a bound
                raise ReaderFault(
                    f"{self._display!r} could not be read: fs-tools' {bounds.kind} reader failed (status {code})",
                    details={"subject": bounds.subject},
                )
            raise self._bounds.condition(
                f"{self._display!r} could not be read within fs-tools' bounds for {bounds.article} {bounds.kind} "
                f"(the reader stopped, signal {-code})",
                details={"subject": bounds.subject},
            )

    def _understood(self, line: bytes) -> dict[str, object]:
        try:
            message: dict[str, object] = json.loads(line)
        except ValueError:  # not the worker's protocol: something else wrote to its output
            return {"broken": "the reader's answer could not be understood"}
        if "limit" in message:
            where = f" ({message['where']})" if "where" in message else ""
            bounds = self._bounds
            raise self._bounds.condition(
                f"{self._display!r} needs more than the {bounds.memory >> 20:,} MiB fs-tools gives "
                f"{bounds.article} {bounds.kind}'s reading{where}",
                details={"subject": bounds.subject, "limit": bounds.memory},
            )
        return message

    def _too_slow(self, bound: str) -> TooLarge:
        kind = self._bounds.kind
        return self._bounds.condition(
            f"{self._display!r} takes more than {bound} to read (a very complex or crafted {kind})",
            details={"subject": self._bounds.subject},
        )
