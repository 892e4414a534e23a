"""Several ``serve --transport http`` replicas behind one endpoint, with no sticky load balancer (SPEC §17).

The MCP SDK keeps a streamable-HTTP session in the process that opened it, so a replica answers 404 to
a session id another replica issued. With a shared store the replicas instead serve every request
statelessly (the SDK's own stateless mode) and keep the session ids in the store: this middleware
issues an id when a client initializes, records it, and lets a request with an id through on whichever
replica it lands when the store knows the id (404 otherwise, as the protocol says). fs-tools' sessions
follow the id (``server.http_sessions``), and their observations live in the shared store, so a
session's gates hold whichever replica serves a call.

What a stateless replica cannot do: send the client a request of its own between calls (fs-tools sends
none: a GET for such a stream is 405, which clients take as "no stream") or cancel a call on another
replica (a cancellation reaches the replica it lands on; the call runs to its end there, and its result
is still gated).

Session ids are bounded as the SDK bounds its in-process sessions: an id not used for 30 minutes is
forgotten, and past 10,000 the least recently used is ended (``RedisStore(mcp_idle_seconds=...,
max_mcp_sessions=...)``). A session ended so, or by the client's DELETE, takes what the session kept
with it (``ended``: its observations, named by the id, can never be asked for again).
"""

from __future__ import annotations

import contextlib
import json
import logging
import uuid
from collections.abc import Callable
from typing import Any

import anyio.to_thread

from fs_tools.errors import StoreUnavailable
from fs_tools.mcp.server import stateless_request
from fs_tools.stores import SessionRegistry

log = logging.getLogger("fs_tools.mcp.replicas")

SESSION_HEADER = b"mcp-session-id"
MAX_OPENING_BYTES = 1 << 20  # an initialize request is a few hundred bytes


class SharedSessions:
    """ASGI middleware in front of the SDK's stateless streamable-HTTP app: session ids in a registry
    every replica shares."""

    def __init__(
        self, app: Any, registry: SessionRegistry, *, path: str, ended: Callable[[str], None] = lambda _: None
    ) -> None:
        self._app = app
        self._registry = registry
        self._path = path
        self._ended = ended  # told (in a worker thread) of each session id ended: by DELETE, or for room

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or str(scope.get("path", "")).rstrip("/") != self._path:
            await self._app(scope, receive, send)
            return
        headers = list(scope.get("headers") or ())
        if stateless_request(headers):
            # a stateless (2026-07-28) request: no MCP session to look up; the SDK serves it, and its
            # fs-tools session (a header, its _meta, its token) lives in the shared store
            await self._app(scope, receive, send)
            return
        ids = [bytes(value) for name, value in headers if name.lower() == SESSION_HEADER]
        if len(ids) > 1:
            await _reply(send, 400, "Bad Request: more than one Mcp-Session-Id header")
            return
        try:
            if not ids:
                await self._open(scope, receive, send, headers)
                return
            session_id = ids[0].decode("latin-1")
            if not await anyio.to_thread.run_sync(self._registry.mcp_session_open, session_id):
                await _reply(send, 404, "Session not found")
                return
            if scope["method"] == "DELETE":  # the client ends the session: on every replica
                await anyio.to_thread.run_sync(self._registry.close_mcp_session, session_id)
                await self._forget([session_id])
                await send({"type": "http.response.start", "status": 200, "headers": []})
                await send({"type": "http.response.body", "body": b""})
                return
            if scope["method"] == "GET":  # no stream between calls: a stateless replica sends nothing there
                allow = [(b"allow", b"POST, DELETE")]
                await _reply(send, 405, "Method Not Allowed: this server sends no messages between calls", allow)
                return
        except StoreUnavailable as exc:
            await _reply(send, 503, f"the shared session store cannot be reached: {exc.message}")
            return
        await self._app(scope, receive, send)

    async def _open(self, scope: dict[str, Any], receive: Any, send: Any, headers: list[Any]) -> None:
        """A request without a session id: only an initialize may open one."""
        if scope["method"] != "POST":
            await _reply(send, 400, "Bad Request: Missing session ID")
            return
        body = await _body(receive, MAX_OPENING_BYTES)
        if body is None:
            await _reply(send, 413, "Request too large: an initialize request is expected without a session id")
            return
        if not _is_initialize(body):
            await _reply(send, 400, "Bad Request: Missing session ID")
            return
        session_id = uuid.uuid4().hex
        await self._forget(await anyio.to_thread.run_sync(self._registry.open_mcp_session, session_id))
        opened = dict(scope, headers=[*headers, (SESSION_HEADER, session_id.encode("ascii"))])
        sent = False

        async def replay() -> dict[str, Any]:
            nonlocal sent
            if sent:
                return await receive()  # type: ignore[no-any-return]
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        async def with_id(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                if message["status"] >= 400:  # not opened after all: forget the id (it expires anyway)
                    with contextlib.suppress(StoreUnavailable):
                        await anyio.to_thread.run_sync(self._registry.close_mcp_session, session_id)
                else:
                    message = dict(
                        message, headers=[*message.get("headers", ()), (SESSION_HEADER, session_id.encode())]
                    )
            await send(message)

        await self._app(opened, replay, with_id)

    async def _forget(self, ended: list[str]) -> None:
        """What the sessions ``ended`` kept goes with them; a failure to forget is logged, not answered:
        the session itself is ended either way, and what it kept expires on its own."""
        for session_id in ended:
            try:
                await anyio.to_thread.run_sync(self._ended, session_id)
            except StoreUnavailable:
                log.warning("could not forget what the ended MCP session %s kept", session_id)


def _is_initialize(body: bytes) -> bool:
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth
        return False
    return isinstance(message, dict) and message.get("method") == "initialize"


async def _body(receive: Any, limit: int) -> bytes | None:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks)
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


async def _reply(send: Any, status: int, message: str, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    headers += extra or []
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
