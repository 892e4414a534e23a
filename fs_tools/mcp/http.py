"""MCP over streamable HTTP: a bearer token, loopback checks, sessions that end when idle (and what
they kept with them), replicas sharing a store, and the listening socket."""

from __future__ import annotations

import collections
import functools
import hashlib
import hmac
import ipaddress
import json
import logging
import re
import socket
import time
from collections.abc import Callable, Sequence
from typing import Any

import anyio
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.streamable_http_manager import DEFAULT_SESSION_IDLE_TIMEOUT

from fs_tools.mcp.server import AuditLog, build_server, http_sessions, stateless_request, token_id
from fs_tools.stores import mcp_sessions_of
from fs_tools.workspace import Workspace

log = logging.getLogger("fs_tools.mcp")


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
    """ASGI middleware: every HTTP request must carry ``Authorization: Bearer <token>``, with one of the
    server's tokens (one per agent keeps the agents' stateless sessions apart: SPEC §20).

    A missing, wrong, repeated or differently-schemed header is 401 before the request reaches the MCP
    app (the scheme's name is case-insensitive, as HTTP says). Tokens are compared as SHA-256 digests
    with ``hmac.compare_digest``: in constant time, and without revealing the token's length.

    A request let through carries who it is (``scope["user"]``, the SDK's ``AuthenticatedUser``, named
    by ``token_id`` of its token, never the token): the SDK then serves an MCP session only to the token
    that opened it, and ``server.http_sessions`` names a stateless request's session by it."""

    def __init__(self, app: Any, token: str | Sequence[str]) -> None:
        tokens = [token] if isinstance(token, str) else list(token)
        if not tokens:
            raise ValueError("give at least one HTTP token")
        for each in tokens:
            check_token(each)
        self._app = app
        self._expected = [hashlib.sha256(each.encode("ascii")).digest() for each in tokens]
        self._users = [_user(token_id(each)) for each in tokens]  # the slow hash, once per token, here

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await self._app(scope, receive, send)
            return
        user = self._authorised(scope.get("headers") or ())
        if user is not None:
            await self._app(dict(scope, user=user), receive, send)
        elif scope["type"] == "http":
            await _unauthorised(send)
        else:  # a websocket, or anything else a future server grows: refused the same way
            await send({"type": "websocket.close", "code": 1008})

    def _authorised(self, headers: Any) -> AuthenticatedUser | None:
        values = [value for name, value in headers if name.lower() == b"authorization"]
        if len(values) != 1:
            return None
        scheme, _, token = bytes(values[0]).partition(b" ")
        presented = hashlib.sha256(token.strip()).digest()
        found = None
        for index, expected in enumerate(self._expected):  # all compared: the time does not say which matched
            if hmac.compare_digest(presented, expected):
                found = index
        return self._users[found] if found is not None and scheme.lower() == b"bearer" else None


def _user(identity: str) -> AuthenticatedUser:
    return AuthenticatedUser(AccessToken(token=identity, client_id=identity, scopes=[]))


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
    token: str | Sequence[str] | None = None,
    audit: AuditLog | None = None,
    idle_seconds: float = DEFAULT_SESSION_IDLE_TIMEOUT,
) -> Any:
    """The streamable HTTP app at ``/mcp``. On a loopback ``host`` the SDK's Host and Origin checks stop
    DNS rebinding; with a ``token`` (or several) every request must also carry one (``BearerToken``). An
    MCP session without a request for ``idle_seconds`` ends (the SDK's own default, 30 minutes), and what the
    fs-tools session named by its id kept goes with it (``EndedSessions``); with a shared store the
    store bounds the ids (``replicas``)."""
    server = build_server(workspace, http_sessions, audit=audit)
    registry = mcp_sessions_of(workspace.store)
    if registry is not None:
        # a shared store (Redis): any replica serves any session; the ids live in the store
        from fs_tools.mcp.replicas import SharedSessions

        stateless = server.streamable_http_app(streamable_http_path="/mcp", stateless_http=True, host=host)
        ended = functools.partial(_forget_http_session, workspace)
        app: Any = SharedSessions(stateless, registry, path="/mcp", ended=ended)
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
        if stateless_request(scope.get("headers") or ()):
            await self._app(scope, receive, send)  # stateless: whatever id it carries is no session's use
            return
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
    token: str | Sequence[str] | None = None,
    audit: AuditLog | None = None,
) -> None:
    """Serve on ``sock`` (from ``listen``) until SIGINT or SIGTERM."""
    import uvicorn

    config = uvicorn.Config(http_app(workspace, host=host, token=token, audit=audit), log_level="warning")
    uvicorn.Server(config).run(sockets=[sock])
