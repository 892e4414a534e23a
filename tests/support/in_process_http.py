"""``mcp_http.http_app`` served by uvicorn on a thread of the test's own process, on a free loopback
port: the test reaches the workspace's store while a real MCP client talks to the server over HTTP."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

WAIT = 60.0  # how long the server may take to start or stop; reached only when something is broken


@contextlib.contextmanager
def serving(app: Any) -> Iterator[str]:
    """Serve the ASGI ``app``; yields the ``/mcp`` URL once it listens. Always stopped."""
    import uvicorn

    from fs_tools.mcp import http as mcp_http

    sock = mcp_http.listen("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    started = threading.Event()
    server_startup = server.startup

    async def startup(sockets: Any = None) -> None:
        await server_startup(sockets=sockets)
        started.set()

    server.startup = startup  # type: ignore[method-assign]
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        if not started.wait(WAIT):
            raise AssertionError("the in-process HTTP server did not start")
        yield mcp_http.url_of("127.0.0.1", sock)
    finally:
        server.should_exit = True
        thread.join(WAIT)
        sock.close()
