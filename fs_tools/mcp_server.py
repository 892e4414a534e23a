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
import collections
import contextlib
import functools
import hashlib
import hmac
import ipaddress
import json
import logging
import os
import re
import socket
import stat
import threading
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, Protocol, TextIO

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import MCPError
from mcp.server import Server, ServerRequestContext
from mcp.server.streamable_http_manager import DEFAULT_SESSION_IDLE_TIMEOUT
from mcp.shared.message import SessionMessage
from mcp_types import UNSUPPORTED_PROTOCOL_VERSION
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

from fs_tools import __version__, mcp_json
from fs_tools.boundary import internal
from fs_tools.result import ToolResult
from fs_tools.tools import CORE_TOOLS
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
    return [types.Tool.model_validate(definition) for definition in mcp_json.tool_definitions(workspace)]


def to_call_result(result: ToolResult, *, structured: bool = True) -> types.CallToolResult:
    """The SDK's form of ``mcp_json.call_result``, which ``fs-tools call --json`` prints; without
    ``structuredContent`` when not ``structured``."""
    shaped = mcp_json.call_result(result)
    if not structured:
        del shaped["structuredContent"]
    return types.CallToolResult.model_validate(shaped)


def stdio_inline_tools(workspace: Workspace) -> frozenset[str]:
    """The tools run on the event loop itself over stdio (one client): the read-only file tools.

    A hand-off to a worker thread and back costs ~150 µs, a quarter of a small read. A mutating tool
    may wait for a directory lock another process holds, and the discovery tools walk trees for up to
    their time budget: both run in a worker thread, so the server keeps answering meanwhile and a
    cancellation reaches them."""
    inline = {core.run for core in CORE_TOOLS if core.read_only}  # by body: a published name may be prefixed
    return frozenset(name for name, tool in workspace.tools.items() if tool.run in inline)


# Files whose read decodes an image, starts the PDF reader or parses a notebook: 0.1 s to seconds, run in a
# worker thread even where reads run inline, so the server keeps answering (and a cancellation reaches the
# read). Told by name, for scheduling only: what a read shows is decided by the file's content.
_HEAVY_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".pdf", ".ipynb")


def heavy_read(raw: object) -> bool:
    """Whether a read's arguments (a mapping, or its JSON text) name a file whose read is slow to run."""
    if isinstance(raw, str):
        lowered = raw.lower()
        return any(f'{suffix}"' in lowered for suffix in _HEAVY_SUFFIXES) or '"pages"' in lowered
    if not isinstance(raw, dict):
        return False
    names = [value for value in raw.values() if isinstance(value, str)]
    names += [item for value in raw.values() if isinstance(value, list) for item in value if isinstance(item, str)]
    return "pages" in raw or any(name.lower().endswith(_HEAVY_SUFFIXES) for name in names)


def build_server(
    workspace: Workspace,
    session_of: SessionOf,
    *,
    audit: AuditLog | None = None,
    inline: frozenset[str] = frozenset(),
    structured: bool = True,
) -> Server[Any]:
    """``inline`` names the tools run on the event loop instead of a worker thread; ``structured=False``
    leaves ``structuredContent`` out of results, for a client that would show the model only that (the
    Claude Agent SDK's in-process servers: a read's lines would never reach the model)."""
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
        if isinstance(raw, ArgumentsText):
            raw = raw.text  # the library parses (and reports on) them as it would any JSON text
        session = "?"
        try:
            session = session_of(ctx)
            if params.name in inline and not heavy_read(raw):
                result = workspace.session(session).call(params.name, raw)
            else:
                result = await workspace.session(session).acall(params.name, raw)
        except Exception as exc:  # never a JSON-RPC error for a tool call
            result = ToolResult.failure(internal(exc, params.name))
        if audit is not None:
            audit.record(session, params.name, raw, result, time.perf_counter() - started)
        return to_call_result(result, structured=structured)

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

    server = build_server(workspace, stdio_sessions(), audit=audit, inline=stdio_inline_tools(workspace))
    async with _stdio_wire() as (lines, out), jsonrpc_streams(lines, out) as (read_stream, write_stream):
        # the wire is on a private descriptor now; anything printed from here on must go to stderr,
        # never into Python's stdout buffer (which would be flushed onto the wire at exit)
        sys.stdout = sys.stderr
        await server.run(read_stream, write_stream, server.create_initialization_options())


# --- the stdio wire: lines in, lines out ---------------------------------------------------------------


class LineSink(Protocol):
    """Where replies go, one line each: ``write`` queues, ``flush`` waits until the wire took it."""

    async def write(self, text: str) -> None: ...

    async def flush(self) -> None: ...


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


# --- JSON-RPC over lines: every request gets an answer ---------------------------------------------------


@contextlib.asynccontextmanager
async def jsonrpc_streams(
    lines: AsyncIterator[str], out: LineSink
) -> AsyncIterator[
    tuple[MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage]]
]:
    """The server's message streams over a line transport, as the SDK's ``stdio_server`` gives them,
    with one difference: a line the SDK's parser refuses is never dropped in silence (see
    ``inbound_message``), and a reply the SDK cannot serialise is still written (see ``wire_text``)."""
    inbound_send, inbound = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    outbound, outbound_receive = anyio.create_memory_object_stream[SessionMessage](0)
    replies = outbound.clone()  # the reader answers what it cannot hand to the server

    async def read_lines() -> None:
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            async with inbound_send, replies:
                async for line in lines:
                    message = inbound_message(line)
                    if isinstance(message, types.JSONRPCError):
                        await replies.send(SessionMessage(message))
                    elif message is not None:
                        await inbound_send.send(message)

    async def write_lines() -> None:
        try:
            async with outbound_receive:
                async for message in outbound_receive:
                    await out.write(wire_text(message.message) + "\n")
                    await out.flush()
        except (BrokenPipeError, ConnectionResetError):  # the client closed its end: the session is over
            log.info("the client stopped reading; ending the session")
            tasks.cancel_scope.cancel()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(read_lines)
        tasks.start_soon(write_lines)
        yield inbound, outbound


def inbound_message(line: str) -> SessionMessage | types.JSONRPCError | None:
    """One wire line as a message for the server, or the error its sender gets instead of silence
    (None: nothing to answer — a blank line, or a notification or response that cannot be read).

    The SDK's parser refuses some JSON that RFC 8259 allows — a lone surrogate escape (``"\\ud800"``),
    an integer of thousands of digits — and a message it cannot parse would get no reply at all, so
    its client would wait forever. Such a line is read again by Python's parser: a ``tools/call`` whose
    envelope is sound goes on with its arguments as JSON text (``ArgumentsText``), so the client gets
    the ``INVALID_ARGS`` result the library gives for the same JSON; any other request gets a JSON-RPC
    error with its id where the id can be read, ``null`` where it cannot."""
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except Exception:  # whatever the strict parser refuses, the lenient one decides about
        pass
    if not line.strip():
        return None
    try:
        value = json.loads(line, parse_int=_integer, parse_constant=_not_json)
    except (ValueError, RecursionError) as exc:
        return _error_reply(None, types.PARSE_ERROR, f"Parse error: {exc}")
    if _unanswerable(value):
        log.warning("dropped a message the server cannot read: %s", ascii(line[:200]))
        return None
    request_id = _readable_id(value)
    if request_id is not None and isinstance(value, dict):
        try:
            repaired = _call_with_arguments_as_text(value)
        except RecursionError:
            repaired = None
        if repaired is not None:
            return repaired
    return _error_reply(
        request_id, types.INVALID_REQUEST, "Invalid request: not a JSON-RPC 2.0 request this server reads"
    )


def _unanswerable(value: object) -> bool:
    """A notification or a response: JSON-RPC has no way to answer either."""
    if not isinstance(value, dict):
        return False
    if "method" in value:
        return "id" not in value
    return "id" in value and ("result" in value or "error" in value)


class ArgumentsText(dict[str, Any]):
    """A ``tools/call``'s arguments that the SDK's parser refused, kept as JSON text.

    An (empty) dict, so the SDK's request validation lets the call through; the tool handler hands
    ``text`` to the library, which parses it as it parses any JSON string of arguments."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class _LongInt(str):
    """An integer literal longer than ``int()`` takes (``sys.get_int_max_str_digits()``), kept as text."""

    __slots__ = ()


def _integer(literal: str) -> int | _LongInt:
    try:
        return int(literal)
    except ValueError:
        return _LongInt(literal)


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


_SURROGATE = re.compile("[\ud800-\udfff]")


def _plain(value: object) -> bool:
    """No lone surrogate and no over-long integer anywhere in ``value``: what the SDK could have parsed."""
    if isinstance(value, _LongInt):
        return False
    if isinstance(value, str):
        return _SURROGATE.search(value) is None
    if isinstance(value, dict):
        return all(_plain(key) and _plain(item) for key, item in value.items())
    if isinstance(value, list):
        return all(_plain(item) for item in value)
    return True


def _readable_id(value: object) -> int | str | None:
    request_id = value.get("id") if isinstance(value, dict) else None
    if isinstance(request_id, bool) or not isinstance(request_id, int | str) or not _plain(request_id):
        return None
    return request_id


def _call_with_arguments_as_text(value: dict[str, Any]) -> SessionMessage | None:
    params = value.get("params")
    if value.get("method") != "tools/call" or not isinstance(params, dict) or "arguments" not in params:
        return None
    envelope = {**value, "params": {**params, "arguments": ArgumentsText(_json_text(params["arguments"]))}}
    if not _plain(envelope):
        return None  # the trouble is outside the arguments: the request itself cannot be read
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_python(envelope, by_name=False))
    except ValueError:
        return None


def _json_text(value: object) -> str:
    """``value`` as JSON again: over-long integers as their digits, lone surrogates as escapes."""
    if isinstance(value, _LongInt):
        return str.__str__(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(key)}: {_json_text(item)}" for key, item in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_json_text(item) for item in value) + "]"
    return json.dumps(value)


def _error_reply(request_id: int | str | None, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message))


def wire_text(message: types.JSONRPCMessage) -> str:
    """One message as a line of JSON. A string holding a lone surrogate (a tool name the client sent,
    echoed in an error) cannot be UTF-8: it goes out as a ``\\uXXXX`` escape, as the client sent it."""
    try:
        return message.model_dump_json(by_alias=True, exclude_unset=True)
    except ValueError:  # pydantic's PydanticSerializationError
        return json.dumps(message.model_dump(by_alias=True, exclude_unset=True), default=str)


# --- streamable HTTP -------------------------------------------------------------------------------------

TOKEN_ENV = "FS_TOOLS_TOKEN"
_TOKEN_SHAPE = re.compile(r"[\x21-\x7e]+")  # what an Authorization header carries: visible ASCII, no spaces


def check_token(token: str) -> None:
    """Raise a one-line ValueError unless ``token`` can be sent in an ``Authorization`` header."""
    if not _TOKEN_SHAPE.fullmatch(token):
        raise ValueError("the HTTP token must be non-empty printable ASCII without spaces")


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` keeps the server to this machine (a name other than localhost may not)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class BearerToken:
    """ASGI middleware: every HTTP request must carry ``Authorization: Bearer <token>``.

    A missing, wrong, repeated or differently-schemed header is 401 before the request reaches the MCP
    app (the scheme's name is case-insensitive, as HTTP says). Tokens are compared as SHA-256 digests
    with ``hmac.compare_digest``: in constant time, and without revealing the token's length."""

    def __init__(self, app: Any, token: str) -> None:
        check_token(token)
        self._app = app
        self._expected = hashlib.sha256(token.encode("ascii")).digest()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan" or self._authorised(scope.get("headers") or ()):
            await self._app(scope, receive, send)
        elif scope["type"] == "http":
            await _unauthorised(send)
        else:  # a websocket, or anything else a future server grows: refused the same way
            await send({"type": "websocket.close", "code": 1008})

    def _authorised(self, headers: Any) -> bool:
        values = [value for name, value in headers if name.lower() == b"authorization"]
        if len(values) != 1:
            return False
        scheme, _, token = bytes(values[0]).partition(b" ")
        presented = hashlib.sha256(token.strip()).digest()
        return hmac.compare_digest(presented, self._expected) and scheme.lower() == b"bearer"


async def _unauthorised(send: Any) -> None:
    body = json.dumps(
        {"error": "unauthorized", "message": "this server requires an Authorization: Bearer <token> header"}
    ).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"www-authenticate", b'Bearer realm="fs-tools"'),
    ]
    await send({"type": "http.response.start", "status": 401, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def http_app(
    workspace: Workspace,
    *,
    host: str,
    token: str | None = None,
    audit: AuditLog | None = None,
    idle_seconds: float = DEFAULT_SESSION_IDLE_TIMEOUT,
) -> Any:
    """The streamable HTTP app at ``/mcp``. On a loopback ``host`` the SDK's Host and Origin checks stop
    DNS rebinding; with a ``token`` every request must also carry it (``BearerToken``). An MCP session
    without a request for ``idle_seconds`` ends (the SDK's own default, 30 minutes), and what the
    fs-tools session named by its id kept goes with it (``EndedSessions``); with a shared store the
    store bounds the ids (``replicas``)."""
    server = build_server(workspace, http_sessions, audit=audit)
    server.middleware.append(_handshake_only)
    store = workspace.store
    if all(callable(getattr(store, name, None)) for name in ("open_mcp_session", "mcp_session_open")):
        # a shared store (Redis): any replica serves any session; the ids live in the store
        from fs_tools.replicas import SharedSessions

        stateless = server.streamable_http_app(streamable_http_path="/mcp", stateless_http=True, host=host)
        ended = functools.partial(_forget_http_session, workspace)
        app: Any = SharedSessions(stateless, store, path="/mcp", ended=ended)  # type: ignore[arg-type]
    else:
        app = EndedSessions(
            server.streamable_http_app(
                streamable_http_path="/mcp", stateless_http=False, host=host, session_idle_timeout=idle_seconds
            ),
            path="/mcp",
            idle_seconds=idle_seconds,
            ended=functools.partial(_forget_http_session, workspace),
        )
    return app if token is None else BearerToken(app, token)


class EndedSessions:
    """ASGI middleware in front of the SDK's stateful streamable-HTTP app: tells ``ended`` (in a worker
    thread) of each MCP session id the SDK stopped serving — a DELETE it answered, an id it now answers
    404 to (a crash), an id without a request for longer than the SDK's idle timeout — once each, so
    that what the fs-tools session named by the id kept does not outlive it. The SDK offers no hook for
    a session's end to a low-level server (its connection's exit stack is not handed to handlers), so
    the ends are read from outside, on the wire. Only ids the SDK issued (an initialize answered with
    one) are remembered: at most the SDK's session cap live, plus those ended since the last request.
    ``clock`` is the idle timeout's, as the SDK's is; a sweep at each request ends what has gone idle."""

    def __init__(
        self,
        app: Any,
        *,
        path: str,
        idle_seconds: float | None,
        ended: Callable[[str], None],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._app = app
        self._path = path  # only the SDK's endpoint speaks for a session: any other path 404s whatever the id
        self._idle = idle_seconds
        self._ended = ended
        self._clock = clock
        self._last_use: collections.OrderedDict[str, float] = collections.OrderedDict()  # the oldest first
        self._in_flight: collections.Counter[str] = collections.Counter()  # never idle while serving

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or str(scope.get("path", "")).rstrip("/") != self._path:
            await self._app(scope, receive, send)
            return
        await self._sweep()
        given = _header(scope.get("headers") or (), MCP_SESSION_ID)
        deleting = scope.get("method") == "DELETE"

        async def watch(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                status = message["status"]
                if given is None:
                    issued = _header(message.get("headers") or (), MCP_SESSION_ID)
                    if issued is not None and status < 400:
                        self._used(issued)
                elif given in self._last_use:
                    if status == 404 or (deleting and 200 <= status < 300):
                        del self._last_use[given]
                        await self._forget(given)  # before the client hears that the session is over
                    else:
                        self._used(given)
            await send(message)

        if given is not None:
            self._in_flight[given] += 1
        try:
            await self._app(scope, receive, watch)
        finally:
            if given is not None:
                self._in_flight[given] -= 1
                if not self._in_flight[given]:
                    del self._in_flight[given]
                if given in self._last_use:
                    self._used(given)  # its idle time starts when the request ends, as the SDK's does

    def _used(self, session_id: str) -> None:
        self._last_use[session_id] = self._clock()
        self._last_use.move_to_end(session_id)

    async def _sweep(self) -> None:
        if self._idle is None:
            return
        now = self._clock()
        while self._last_use:
            session_id, used = next(iter(self._last_use.items()))
            if now - used <= self._idle:
                return
            del self._last_use[session_id]
            if session_id in self._in_flight:  # a GET stream held open: not idle to the SDK either
                self._last_use[session_id] = now
                continue
            await self._forget(session_id)

    async def _forget(self, session_id: str) -> None:
        try:
            await anyio.to_thread.run_sync(self._ended, session_id)
        except Exception:  # a store that fails now: the session is over either way
            log.warning("could not forget what the ended MCP session %s kept", session_id, exc_info=True)


MCP_SESSION_ID = b"mcp-session-id"


def _header(headers: Any, name: bytes) -> str | None:
    """The one value of header ``name`` (ASGI: lower-case bytes pairs); None when absent or repeated."""
    values = [bytes(value) for key, value in headers if bytes(key).lower() == name]
    return values[0].decode("latin-1") if len(values) == 1 else None


def _forget_http_session(workspace: Workspace, session_id: str) -> None:
    """An MCP session ended (DELETE, idle, crowded out): the fs-tools session named by its id can never be
    asked for again, so its observations and read windows go (a session a client names by the
    ``fs-tools-session`` header is the client's to keep, and stays)."""
    if not workspace.closed:
        workspace.session(f"http-{session_id}").forget()


def listen(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host``:``port`` (0 picks a free port); OSError when it cannot bind."""
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[
        0
    ]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(socket.SOMAXCONN)
    except OSError:
        sock.close()
        raise
    return sock


def url_of(host: str, sock: socket.socket) -> str:
    shown = f"[{host.strip('[]')}]" if ":" in host else host
    return f"http://{shown}:{sock.getsockname()[1]}/mcp"


def serve_http(
    workspace: Workspace,
    sock: socket.socket,
    *,
    host: str,
    token: str | None = None,
    audit: AuditLog | None = None,
) -> None:
    """Serve on ``sock`` (from ``listen``) until SIGINT or SIGTERM."""
    import uvicorn

    config = uvicorn.Config(http_app(workspace, host=host, token=token, audit=audit), log_level="warning")
    uvicorn.Server(config).run(sockets=[sock])
