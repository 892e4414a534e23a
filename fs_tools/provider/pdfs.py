"""PDFs as content facts for ``read`` (SPEC §18): a PDF's text, page by page.

pypdf does the reading, in a child process (``pdf_worker.py``) with bounded memory (1 GiB of address
space), CPU (``PDF_CPU_SECONDS``) and wall time, killed when the call is cancelled: a few KB of crafted
PDF can make it spend minutes and gigabytes on one page (found in review), and no limit inside pypdf
stops that. Text is taken only from the pages asked for, until the caller's byte cap. An encrypted PDF
that does not open with the empty password, or a file that starts like a PDF and cannot be parsed, is
``FS_NOT_TEXT`` saying so; a PDF that exceeds the bounds is ``FS_TOO_LARGE``.
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from fs_tools.errors import Aborted, NotText, TooLarge
from fs_tools.provider.face import CancelToken

PDF_CPU_SECONDS = 20
PDF_WALL_SECONDS = 40
PDF_MEMORY_BYTES = 1 << 30
_WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pdf_worker.py")


def is_pdf(head: bytes) -> bool:
    """Whether a file's first bytes announce a PDF."""
    return head.startswith(b"%PDF-")


@dataclass
class PdfPages:
    """What the worker gave: the page count, and the texts of the pages it reached, in order."""

    count: int
    texts: list[tuple[int, str]] = field(default_factory=list)


def read_pdf(
    data: bytes,
    display: str,
    choose: Callable[[int], list[int]],
    *,
    cap: int,
    cancel: CancelToken | None = None,
) -> PdfPages:
    """The PDF's page count and the text of the pages ``choose(count)`` names (it may raise, e.g. for a
    page past the end: the worker is stopped and the error passes), stopping once the texts reach
    ``cap`` bytes."""
    limits = [str(PDF_MEMORY_BYTES), str(PDF_CPU_SECONDS)]  # the worker sets them on itself first
    process = subprocess.Popen(
        [sys.executable, _WORKER, *limits], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + PDF_WALL_SECONDS
    try:
        assert process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write(len(data).to_bytes(8, "big") + data)
            process.stdin.flush()
        except BrokenPipeError:
            pass  # it ended already (a memory limit at start): its answer, or its end, says why
        with selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ)
            first = _answer(process, selector, deadline, cancel, display)
            if first.get("encrypted"):
                raise NotText(
                    f"{display!r} is an encrypted PDF that fs-tools cannot open (it needs a password, or a "
                    "cipher this installation lacks)",
                    details={"appears": "an encrypted PDF", "family": "encrypted-pdf"},
                )
            _refuse(first, display)
            pages = PdfPages(int(first["count"]))  # type: ignore[call-overload]
            wanted = choose(pages.count)
            process.stdin.write((json.dumps({"pages": wanted, "cap": cap}) + "\n").encode())
            process.stdin.close()
            while True:
                message = _answer(process, selector, deadline, cancel, display)
                if message.get("done"):
                    return pages
                _refuse(message, display)
                pages.texts.append((int(message["page"]), str(message["text"])))  # type: ignore[call-overload]
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        for stream in (process.stdin, process.stdout):
            if stream is not None and not stream.closed:
                stream.close()


def _refuse(message: dict[str, object], display: str) -> None:
    where = f" (page {message['page']})" if "page" in message else ""
    if "limit" in message:
        raise TooLarge(
            f"{display!r} needs more than the {PDF_MEMORY_BYTES >> 20:,} MiB fs-tools gives a PDF's reading{where}",
            details={"subject": "pdf"},
        )
    if "broken" in message:
        raise NotText(
            f"{display!r} starts like a PDF but cannot be read{where}: {message['broken']}",
            details={"appears": "a PDF that is damaged or unsupported", "family": "broken-pdf"},
        )


def _answer(
    process: subprocess.Popen[bytes],
    selector: selectors.BaseSelector,
    deadline: float,
    cancel: CancelToken | None,
    display: str,
) -> dict[str, object]:
    """The worker's next line; the limits, a cancellation or a worker that died are errors."""
    assert process.stdout is not None
    while True:
        if cancel is not None and cancel.is_set():
            raise Aborted(f"the read of {display!r} was cancelled")
        left = deadline - time.monotonic()
        if left <= 0:
            raise _too_slow(display, f"{PDF_WALL_SECONDS} s")
        if selector.select(min(left, 0.1)):
            line = process.stdout.readline()
            if line:
                try:
                    answer: dict[str, object] = json.loads(line)
                except ValueError:  # not the worker's protocol: something else wrote to its output
                    answer = {"broken": "the reader's answer could not be understood"}
                return answer
            code = process.wait()
            if code in (-9, -24):  # SIGKILL or SIGXCPU: the CPU limit
                raise _too_slow(display, f"{PDF_CPU_SECONDS} s of CPU")
            raise TooLarge(
                f"{display!r} could not be read within fs-tools' bounds for a PDF (the reader stopped, status {code})",
                details={"subject": "pdf"},
            )


def _too_slow(display: str, bound: str) -> TooLarge:
    return TooLarge(
        f"{display!r} takes more than {bound} to read (a very complex or crafted PDF)", details={"subject": "pdf"}
    )
