"""The MCP server: every tool of a workspace over the official SDK's *low-level* server.

The SDK's high-level server coerces ``"3"`` to 3, drops unknown keys and answers with pydantic's own
text; the low-level one hands us the arguments exactly as the client sent them, so our schemas, our
validation and our results are what a client sees. A tool call never becomes a JSON-RPC error: any
failure, even an unexpected one, is a result with ``isError: true``.

Sessions (SPEC §20): one stdio connection is one session, in either protocol era. Over HTTP a request
names its session by an ``fs-tools-session`` header, or by fs-tools' own ``_meta`` key
(``fs-tools/session``); else a handshake-era request's session is its ``mcp-session-id``, and a
stateless (2026-07-28) request shares the session of its bearer token — one token per agent keeps
agents apart — or, on a server without a token, the one session of every such request.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TextIO, TypeGuard

import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

from fs_tools import __version__
from fs_tools.boundary import internal
from fs_tools.mcp import shapes
from fs_tools.mcp.wire import ArgumentsText
from fs_tools.result import ToolResult
from fs_tools.tools import CORE_TOOLS
from fs_tools.workspace import Workspace

log = logging.getLogger("fs_tools.mcp")

SESSION_HEADER = "fs-tools-session"
SESSION_META = "fs-tools/session"  # the same, as a key of a request's _meta (what a header cannot carry)
_MAX_SESSION_NAME = 256
TOOLS_TTL_MS = 3_600_000  # tools/list's cache hint (2026-07-28): the tools never change while serving
SessionOf = Callable[[ServerRequestContext[Any, Any]], str]


def stdio_sessions() -> SessionOf:
    """One process serves one stdio connection: one session key for all its calls."""
    key = f"stdio-{uuid.uuid4().hex[:12]}"
    return lambda ctx: key


def http_sessions(ctx: ServerRequestContext[Any, Any]) -> str:
    """The fs-tools session of an HTTP request (SPEC §20; the module's docstring says the order). Who a
    request is comes from the server's token check (``http.BearerToken``): a session a client names is
    its token's own, so agents with their own tokens never share one, whatever names they choose; on a
    server without tokens an ``Authorization`` header names nobody."""
    request = ctx.request
    headers = getattr(request, "headers", None)
    scope = getattr(request, "scope", None)
    user = scope.get("user") if isinstance(scope, dict) else None
    owner = user.access_token.client_id if isinstance(user, AuthenticatedUser) else None
    chosen = headers.get(SESSION_HEADER) if headers is not None else None
    if not _usable_name(chosen):
        chosen = ctx.meta.get(SESSION_META) if isinstance(ctx.meta, dict) else None
    if _usable_name(chosen):  # one name, one session, whichever way it was sent
        return f"http-token-{owner}-named-{chosen}" if owner is not None else f"http-header-{chosen}"
    stateless = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
    sid = headers.get("mcp-session-id") if headers is not None and not stateless else None
    if sid:  # the handshake era's session (the SDK serves it only to the token that opened it)
        return f"http-{sid}"
    if stateless:  # the session its token names
        return f"http-token-{owner}" if owner is not None else "http-untokened"
    return f"http-anonymous-{uuid.uuid4().hex}"  # no identity: observations cannot carry over


def stateless_request(headers: Iterable[tuple[bytes, bytes]]) -> bool:
    """Whether an HTTP request (ASGI headers) is of the stateless era, decided as the SDK's HTTP manager
    routes it before any handler runs: by its first ``MCP-Protocol-Version`` header, any value but a
    handshake version (no header: the handshake era). For middleware in front of the SDK; a handler asks
    ``ctx.protocol_version``."""
    version = next((bytes(value) for name, value in headers if bytes(name).lower() == _VERSION_HEADER), None)
    return version is not None and version.decode("latin-1") not in HANDSHAKE_PROTOCOL_VERSIONS


_VERSION_HEADER = b"mcp-protocol-version"


def _usable_name(name: object) -> TypeGuard[str]:
    """A session name a client may give: 1 to 256 printable characters."""
    return isinstance(name, str) and 0 < len(name) <= _MAX_SESSION_NAME and name.isprintable()


def token_id(token: str) -> str:
    """What names a token's sessions in the store and the audit log: a slow, salted hash of it (the same
    on every replica), so a short token cannot be found again from its name by trying candidates fast.
    Computed once per token, when the server starts."""
    return hashlib.pbkdf2_hmac("sha256", token.encode(), b"fs-tools/session-of-a-token", 100_000).hex()[:32]


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


def tool_list(workspace: Workspace, *, structured: bool = True) -> list[types.Tool]:
    definitions = shapes.tool_definitions(workspace, structured=structured)
    return [types.Tool.model_validate(definition) for definition in definitions]


def to_call_result(result: ToolResult, *, structured: bool = True) -> types.CallToolResult:
    """The SDK's form of ``shapes.call_result``, which ``fs-tools call --json`` prints; without
    ``structuredContent`` when not ``structured``."""
    shaped = shapes.call_result(result)
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
    tools = tool_list(workspace, structured=structured)
    schemas = {tool.name: tool.input_schema for tool in tools}

    async def on_list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        # the same list, in the same order, for the server's whole life: a client may keep it an hour
        return types.ListToolsResult(tools=tools, ttl_ms=TOOLS_TTL_MS, cache_scope="private")

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
            tool = workspace.tools.get(params.name)
            slow = tool is not None and tool.slow is not None and tool.slow(raw)
            if params.name in inline and not slow:
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
