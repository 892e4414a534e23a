"""Section 11: ``fs-tools serve --transport http`` under 1, 4 and 16 concurrent MCP clients (each its own
session, each reading a 1 KB file over and over), and one client's median call over HTTP against the
same call over stdio.

The clients run in the benchmark's own process (one event loop), on the same 2 cores as the server:
what a harness on the same machine sees. Throughput is calls answered per second of wall time.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.harness import Row

SECTION = "11 HTTP"
CLIENTS = (1, 4, 16)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def _http_server(root: Path, *options: str) -> Iterator[str]:
    port = _free_port()
    argv = [sys.executable, "-m", "fs_tools.cli", "serve", "--root", str(root), "--transport", "http", "--no-token"]
    argv += options  # --no-token: the figures stay comparable with earlier runs (no Authorization check)
    process = subprocess.Popen([*argv, "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while True:  # until it accepts connections, a minute at most
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
            if process.poll() is not None or time.monotonic() > deadline:
                said = process.stderr.read()[-500:] if process.stderr and process.poll() is not None else b""
                raise RuntimeError(f"the HTTP server did not start within a minute: {said!r}")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=10)


async def _reads(call: Any, calls: int) -> list[float]:
    seconds = []
    for _ in range(calls):
        started = time.perf_counter()
        result = await call("read", {"file_path": "a.py"})
        seconds.append(time.perf_counter() - started)
        if getattr(result, "isError", False):
            raise RuntimeError(f"read failed: {result.content[0].text if result.content else ''}")
    return seconds


async def _http_load(url: str, clients: int, calls: int) -> tuple[float, list[float]]:
    """Wall seconds for ``clients`` clients making ``calls`` reads each at once, and every call's time."""
    from mcp import Client

    async with contextlib.AsyncExitStack() as stack:
        sessions = [await stack.enter_async_context(Client(url)) for _ in range(clients)]
        for session in sessions:
            await _reads(session.call_tool, 1)  # warm: the session's first read
        started = time.perf_counter()
        timings = await asyncio.gather(*(_reads(session.call_tool, calls) for session in sessions))
        return time.perf_counter() - started, [t for per in timings for t in per]


async def _stdio_calls(root: Path, calls: int) -> list[float]:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable, args=["-m", "fs_tools.cli", "serve", "--root", str(root)])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await _reads(session.call_tool, 5)
        return await _reads(session.call_tool, calls)


def http_rows(smoke: bool) -> list[Row]:
    try:
        import mcp  # noqa: F401
    except ImportError:
        return [Row(SECTION, "-", "fs-tools serve --transport http", "-", None, note="the mcp extra is not installed")]
    calls = 5 if smoke else 100
    with tempfile.TemporaryDirectory(prefix="fs-tools-bench-http-") as tmp:
        root = Path(tmp)
        (root / "a.py").write_text("print('hello')\n" * 64)
        stdio = asyncio.run(_stdio_calls(root, calls))
        loads: dict[int, tuple[float, list[float]]] = {}
        with _http_server(root) as url:
            for clients in CLIENTS:
                loads[clients] = asyncio.run(_http_load(url, clients, max(calls // clients, 5) if smoke else calls))
    throughput = {n: len(seconds) / wall for n, (wall, seconds) in loads.items()}
    rows = []
    for clients in CLIENTS[1:]:
        ratio = throughput[clients] / throughput[1]
        rows.append(
            Row(
                SECTION,
                f"{clients} clients against 1, read of 1 KB",
                f"throughput, {clients} clients",
                "throughput, 1 client",
                ratio,
                target=">= 1.8x" if clients == 16 else "",
                met=ratio >= 1.8 if clients == 16 else None,
                note=f"{throughput[clients]:,.0f} against {throughput[1]:,.0f} calls/s; p50 "
                f"{statistics.median(loads[clients][1]) * 1000:,.2f} ms a call",
            )
        )
    http_p50, stdio_p50 = statistics.median(loads[1][1]), statistics.median(stdio)
    rows.append(
        Row(
            SECTION,
            "1 client, read of 1 KB",
            "HTTP p50",
            "stdio p50",
            http_p50 / stdio_p50,
            http_p50,
            stdio_p50,
            target="<= 1.5x",
            met=http_p50 / stdio_p50 <= 1.5,
            note=f"{http_p50 * 1000:,.2f} ms against {stdio_p50 * 1000:,.2f} ms",
        )
    )
    return rows
