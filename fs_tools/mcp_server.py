"""The MCP server: every tool of a workspace over the official SDK's *low-level* server.

The SDK's high-level server coerces ``"3"`` to 3, drops unknown keys and answers with pydantic's own
text; the low-level one hands us the arguments exactly as the client sent them, so our schemas, our
validation and our results are what a client sees. A tool call never becomes a JSON-RPC error: any
failure, even an unexpected one, is a result with ``isError: true``.

Sessions: one stdio connection is one session. Over HTTP a client's session is its ``mcp-session-id``
(the server speaks only the handshake protocol versions, which have sessions), or the value of an
``fs-tools-session`` header when the client sends one to keep its observations across reconnects.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import stat
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, TextIO

import mcp_types as types
from mcp import MCPError
from mcp.server import Server, ServerRequestContext
from mcp_types import UNSUPPORTED_PROTOCOL_VERSION
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

from fs_tools import __version__
from fs_tools.boundary import internal
from fs_tools.result import ToolResult
from fs_tools.workspace import Workspace

log = logging.getLogger("fs_tools.mcp")

SESSION_HEADER = "fs-tools-session"
SessionOf = Callable[[ServerRequestContext[Any, Any]], str]


def stdio_sessions() -> SessionOf:
    """One process serves one stdio connection: one session key for all its calls."""
    key = f"stdio-{uuid.uuid4().hex[:12]}"
    return lambda ctx: key


def http_sessions(ctx: ServerRequestContext[Any, Any]) -> str:
    request = ctx.request
    headers = getattr(request, "headers", None)
    if headers is not None:
        chosen = headers.get(SESSION_HEADER)
        if chosen:
            return f"http-header-{chosen}"
        sid = headers.get("mcp-session-id")
        if sid:
            return f"http-{sid}"
    return f"http-anonymous-{uuid.uuid4().hex}"  # no identity: observations cannot carry over


class AuditLog:
    """One JSON line per call: time, session, tool, arguments, code (null on success), duration."""

    def __init__(self, path: str | Path) -> None:
        self._file: TextIO = open(path, "a", encoding="utf-8")  # noqa: SIM115 - lives as long as the server

    def record(self, session: str, tool: str, arguments: object, result: ToolResult, seconds: float) -> None:
        entry = {
            "ts": round(time.time(), 3),
            "session": session,
            "tool": tool,
            "arguments": arguments,
            "code": result.error.code if result.error else None,
            "duration_ms": round(seconds * 1000, 3),
        }
        self._file.write(json.dumps(entry, ensure_ascii=False, default=repr) + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()


def tool_list(workspace: Workspace) -> list[types.Tool]:
    return [
        types.Tool(
            name=tool.name,
            description=tool.description,
            input_schema=tool.schema()["input_schema"],
            annotations=types.ToolAnnotations(
                read_only_hint=tool.read_only,
                destructive_hint=not tool.read_only,
                idempotent_hint=tool.read_only,
                open_world_hint=False,
            ),
        )
        for tool in workspace.tools.values()
    ]


def to_call_result(result: ToolResult) -> types.CallToolResult:
    text = [types.TextContent(text=result.text)]
    if result.error is not None:
        error = {"name": result.error.name, "code": result.error.code, "message": result.error.message}
        return types.CallToolResult(content=text, structured_content={"error": error}, is_error=True)
    value = result.value if isinstance(result.value, dict) else {"value": result.value}
    return types.CallToolResult(content=text, structured_content=value, is_error=False)


# Over stdio (one client), the file tools run on the event loop itself: a hand-off to a worker thread
# and back costs ~150 µs, a quarter of a small call. The discovery tools walk trees for up to their
# time budget, so they keep a worker thread, and with it prompt cancellation.
STDIO_INLINE_TOOLS = frozenset({"read", "write", "edit", "multi_edit"})


def build_server(
    workspace: Workspace,
    session_of: SessionOf,
    *,
    audit: AuditLog | None = None,
    inline: frozenset[str] = frozenset(),
) -> Server[Any]:
    """``inline`` names the tools run on the event loop instead of a worker thread."""
    tools = tool_list(workspace)
    schemas = {tool.name: tool.input_schema for tool in tools}

    async def on_list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        started = time.perf_counter()
        raw = (ctx.params or {}).get("arguments") if isinstance(ctx.params, dict) else params.arguments
        session = "?"
        try:
            session = session_of(ctx)
            if params.name in inline:
                result = workspace.session(session).call(params.name, raw)
            else:
                result = await workspace.session(session).acall(params.name, raw)
        except Exception as exc:  # never a JSON-RPC error for a tool call
            result = ToolResult.failure(internal(exc, params.name))
        if audit is not None:
            audit.record(session, params.name, raw, result, time.perf_counter() - started)
        return to_call_result(result)

    return Server(
        "fs-tools",
        version=__version__,
        instructions=(
            "Filesystem tools confined to the workspace roots. Read a file before you write over it or "
            "edit it; if a call says the file changed, read it again and retry."
        ),
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
        get_tool_input_schema=lambda name: schemas.get(name),
    )


async def _handshake_only(
    ctx: ServerRequestContext[Any, Any], call_next: Callable[[ServerRequestContext[Any, Any]], Awaitable[Any]]
) -> Any:
    """Over HTTP, refuse the session-less protocol era so clients fall back to one with a session id."""
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        raise MCPError(
            code=UNSUPPORTED_PROTOCOL_VERSION,
            message="fs-tools keeps per-session observations; use a protocol version with sessions",
            data={"supported": list(HANDSHAKE_PROTOCOL_VERSIONS), "requested": ctx.protocol_version},
        )
    return await call_next(ctx)


async def serve_stdio(workspace: Workspace, *, audit: AuditLog | None = None) -> None:
    import sys

    from mcp.server.stdio import stdio_server

    server = build_server(workspace, stdio_sessions(), audit=audit, inline=STDIO_INLINE_TOOLS)
    async with _event_loop_pipes() as pipes, stdio_server(*pipes) as (read_stream, write_stream):
        # the wire is on a private descriptor now; anything printed from here on must go to stderr,
        # never into Python's stdout buffer (which would be flushed onto the wire at exit)
        sys.stdout = sys.stderr
        await server.run(read_stream, write_stream, server.create_initialization_options())


@contextlib.asynccontextmanager
async def _event_loop_pipes() -> AsyncIterator[tuple[Any, Any]]:
    """stdin and stdout as the event loop's own pipe transports, when both are pipes or sockets.

    The SDK reads each line and writes each reply through a worker thread (a dozen thread hand-offs per
    call, most of the per-call latency); the loop's transports need none. The wire moves to private
    descriptors: fd 0 then reads the null device and fd 1 goes to stderr, so a stray print or a child
    process cannot corrupt it. On the way out every reply already written is flushed, the pipes get
    back the blocking mode they had (the transports make them non-blocking, and the parent shares
    them), and fds 0 and 1 are restored. Anything else (a terminal, a file) gets ``(None, None)``: the
    SDK's own threaded streams."""
    if not all(_is_pipe(fd) for fd in (0, 1)):
        yield None, None
        return
    loop = asyncio.get_running_loop()
    blocking = os.get_blocking(0), os.get_blocking(1)
    saved_in, saved_out = os.dup(0), os.dup(1)
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
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


class _LineReader:
    """``async for line in stdin`` over a StreamReader (what the SDK's stdio transport iterates).

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


def http_app(workspace: Workspace, *, host: str, audit: AuditLog | None = None) -> Any:
    server = build_server(workspace, http_sessions, audit=audit)
    server.middleware.append(_handshake_only)
    return server.streamable_http_app(streamable_http_path="/mcp", stateless_http=False, host=host)


def serve_http(workspace: Workspace, *, host: str, port: int, audit: AuditLog | None = None) -> None:
    import uvicorn

    uvicorn.run(http_app(workspace, host=host, audit=audit), host=host, port=port, log_level="warning")
