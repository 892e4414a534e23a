"""MCP over stdio: the wire on a private descriptor (nothing printed can corrupt it), read and written
with bounded lines, on the event loop where the descriptors allow it and on threads where they do not."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import stat
import threading
from collections.abc import AsyncIterator, Iterator
from typing import BinaryIO

from fs_tools.mcp.server import AuditLog, build_server, stdio_inline_tools, stdio_sessions
from fs_tools.mcp.wire import LineSink, jsonrpc_streams
from fs_tools.workspace import Workspace

log = logging.getLogger("fs_tools.mcp")


async def serve_stdio(workspace: Workspace, *, audit: AuditLog | None = None) -> None:
    import sys

    server = build_server(workspace, stdio_sessions(), audit=audit, inline=stdio_inline_tools(workspace))
    async with _stdio_wire() as (lines, out), jsonrpc_streams(lines, out) as (read_stream, write_stream):
        # the wire is on a private descriptor now; anything printed from here on must go to stderr,
        # never into Python's stdout buffer (which would be flushed onto the wire at exit)
        sys.stdout = sys.stderr
        await server.run(read_stream, write_stream, server.create_initialization_options())


@contextlib.asynccontextmanager
async def _stdio_wire() -> AsyncIterator[tuple[AsyncIterator[str], LineSink]]:
    """The protocol's lines in and out, on private duplicates of fds 0 and 1.

    fd 0 then reads the null device and fd 1 goes to stderr, so a stray print or a child process cannot
    corrupt the wire. Pipes and sockets are served by the event loop's own transports (the SDK's stdio
    transport hands every line to a worker thread and back: a dozen thread hand-offs per call, most of
    the per-call latency); anything else (a terminal, a file) by a reader and a writer thread. On the way out every
    reply already written is flushed, the descriptors get back the blocking mode they had (the loop's
    transports make them non-blocking, and the parent shares them), and fds 0 and 1 are restored."""
    blocking = os.get_blocking(0), os.get_blocking(1)
    saved_in, saved_out = os.dup(0), os.dup(1)
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    try:
        if _is_pipe(wire_in) and _is_pipe(wire_out):
            async with _loop_pipes(wire_in, wire_out) as wire:
                yield wire
        else:
            async with _threaded_files(wire_in, wire_out) as wire:
                yield wire
    finally:
        for fd, was_blocking in zip((saved_in, saved_out), blocking, strict=True):
            with contextlib.suppress(OSError):
                os.set_blocking(fd, was_blocking)
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        os.close(saved_in)
        os.close(saved_out)


_MAX_MESSAGE_BYTES = 256 << 20  # one JSON-RPC line: content up to the file limit, escaped
_FLUSH_SECONDS = 10.0


def _is_pipe(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


@contextlib.asynccontextmanager
async def _loop_pipes(wire_in: int, wire_out: int) -> AsyncIterator[tuple[AsyncIterator[str], LineSink]]:
    """The event loop's pipe transports over the wire descriptors (which they own and close)."""
    loop = asyncio.get_running_loop()
    transports: list[asyncio.BaseTransport] = []
    try:
        reader = asyncio.StreamReader(limit=_MAX_MESSAGE_BYTES)
        in_transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(wire_in, "rb", buffering=0)
        )
        transports.append(in_transport)
        out_transport, out_protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(wire_out, "wb", buffering=0)
        )
        transports.append(out_transport)
        out_transport.set_write_buffer_limits(0)  # flush() waits until the pipe has taken every byte
        writer = asyncio.StreamWriter(out_transport, out_protocol, None, loop)
        try:
            yield _LineReader(reader), _LineWriter(writer)
        finally:
            with contextlib.suppress(Exception):  # a reader that went away cannot be flushed to
                await asyncio.wait_for(writer.drain(), _FLUSH_SECONDS)
    finally:
        for transport in transports:
            transport.close()


class _LineReader:
    """``async for line in stdin`` over a StreamReader.

    A line over the size limit is dropped whole, up to and including its newline: its tail is never
    taken for a message of its own."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    def __aiter__(self) -> _LineReader:
        return self

    async def __anext__(self) -> str:
        dropping = False
        while True:
            try:
                line = await self._reader.readuntil(b"\n")
            except asyncio.IncompleteReadError as exc:  # end of input
                if dropping or not exc.partial:
                    raise StopAsyncIteration from None
                line = exc.partial
            except asyncio.LimitOverrunError as exc:  # the bytes stay buffered: discard them, go on
                await self._reader.readexactly(exc.consumed)
                if not dropping:
                    log.warning("dropped a message longer than %d bytes", _MAX_MESSAGE_BYTES)
                dropping = True
                continue
            if dropping:  # the rest of the over-long line, up to its newline
                dropping = False
                continue
            return line.decode("utf-8", errors="replace")


class _LineWriter:
    """``await write(text)`` / ``await flush()`` over a StreamWriter, with back-pressure."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def write(self, text: str) -> None:
        self._writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self._writer.drain()


@contextlib.asynccontextmanager
async def _threaded_files(wire_in: int, wire_out: int) -> AsyncIterator[tuple[AsyncIterator[str], LineSink]]:
    """A terminal or a file, which the event loop cannot watch: a daemon thread reads the lines (it may
    still be blocked in a read when the server stops, so its descriptor is closed only once it is
    done) and each batch of replies is written in a worker thread."""
    lines = _ThreadedLines(os.fdopen(wire_in, "rb", closefd=False), asyncio.get_running_loop())
    out = os.fdopen(wire_out, "wb")
    try:
        yield lines, _FileWriter(out)
    finally:
        with contextlib.suppress(OSError):
            out.close()
        if lines.finished.is_set():
            os.close(wire_in)


class _ThreadedLines:
    """``async for line in stdin`` over a blocking file, read by a daemon thread that hands the loop
    one line at a time (over-long lines are dropped whole, as ``_LineReader`` drops them)."""

    def __init__(self, file: BinaryIO, loop: asyncio.AbstractEventLoop) -> None:
        self._file = file
        self._loop = loop
        self._queue: asyncio.Queue[bytes | None] = asyncio.Queue(maxsize=1)
        self.finished = threading.Event()
        threading.Thread(target=self._read_all, name="fs-tools stdin", daemon=True).start()

    def __aiter__(self) -> _ThreadedLines:
        return self

    async def __anext__(self) -> str:
        line = await self._queue.get()
        if line is None:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")

    def _read_all(self) -> None:
        try:
            for line in _bounded_lines(self._file):
                self._hand_over(line)
        except OSError as exc:
            log.warning("stdin read failed: %s", exc)
        finally:
            self.finished.set()
            with contextlib.suppress(RuntimeError):  # the loop is gone: nobody is listening any more
                self._hand_over(None)

    def _hand_over(self, line: bytes | None) -> None:
        asyncio.run_coroutine_threadsafe(self._queue.put(line), self._loop).result()


def _bounded_lines(file: BinaryIO) -> Iterator[bytes]:
    dropping = False
    while chunk := file.readline(_MAX_MESSAGE_BYTES):
        cut = len(chunk) == _MAX_MESSAGE_BYTES and not chunk.endswith(b"\n")
        if dropping or cut:
            if not dropping:
                log.warning("dropped a message longer than %d bytes", _MAX_MESSAGE_BYTES)
            dropping = cut  # still inside the over-long line until a chunk ends it
            continue
        yield chunk


class _FileWriter:
    """Replies to a blocking file: ``write`` collects, ``flush`` writes them in a worker thread."""

    def __init__(self, file: BinaryIO) -> None:
        self._file = file
        self._pending: list[bytes] = []

    async def write(self, text: str) -> None:
        self._pending.append(text.encode("utf-8"))

    async def flush(self) -> None:
        data = b"".join(self._pending)
        self._pending.clear()
        await asyncio.to_thread(self._write, data)

    def _write(self, data: bytes) -> None:
        self._file.write(data)
        self._file.flush()
