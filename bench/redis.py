"""Section 12 (``python -m bench --sections redis``): the shared ledger of SPEC §17 — what a call costs with
observations and history in Redis against memory and a SQLite file, and the throughput of 1, 2 and 4
``serve --transport http --store redis://…`` replicas on this machine.

Needs ``redis-server`` on PATH (Debian: ``apt-get install redis-server``) and redis-py (the ``redis``
extra); the section says so and is skipped without them. The server runs on a free loopback port with
no persistence, started and stopped here.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from bench.harness import Row, interleaved, ratio_row
from bench.http import _free_port, _http_server, _reads
from bench.library import Toggle, _ok
from fs_tools import Workspace

SECTION = "12 Redis"
REPLICAS = (1, 2, 4)
CLIENTS = 8


@contextlib.contextmanager
def _redis_server(directory: Path) -> Iterator[str]:
    port = _free_port()
    argv = ["redis-server", "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly", "no"]
    process = subprocess.Popen([*argv, "--dir", str(directory)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:  # until it accepts connections, half a minute at most
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("redis-server did not start within half a minute")
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(timeout=10)


def redis_rows(smoke: bool) -> list[Row]:
    try:
        import redis  # noqa: F401
    except ImportError:
        return [Row(SECTION, "-", "RedisStore", "-", None, note="redis-py is not installed (the redis extra)")]
    if shutil.which("redis-server") is None:
        return [Row(SECTION, "-", "RedisStore", "-", None, note="redis-server is not on PATH")]
    with tempfile.TemporaryDirectory(prefix="fs-tools-bench-redis-") as tmp:
        base = Path(tmp)
        (base / "redis").mkdir()
        with _redis_server(base / "redis") as url:
            rows = _call_rows(base, url, 20 if smoke else 300)
            rows += _replica_rows(base, url, 5 if smoke else 60)
    return rows


def _call_rows(base: Path, url: str, rounds: int) -> list[Row]:
    """A read and an edit of a 1 KB file, one session, with each store (history recorded in each)."""
    stores: dict[str, object] = {"memory": None, "SQLite": str(base / "state.db"), "Redis": url}
    cases: dict[str, Callable[[], object]] = {}
    with contextlib.ExitStack() as stack:
        for name, store in stores.items():
            root = base / name
            root.mkdir()
            (root / "a.py").write_text("x = 1\n" * 170)
            ws = stack.enter_context(Workspace(root, store=store, check_syntax=False))  # type: ignore[arg-type]
            cases[f"read + edit, {name} store"] = _read_and_edit(ws.session("bench"))
        medians = interleaved(cases, rounds)
    note = "one session: read a 1 KB file, then edit it (history recorded); Redis on loopback"
    return [
        ratio_row(
            SECTION, "read + edit of 1 KB", medians, "read + edit, Redis store", "read + edit, memory store", note=note
        ),
        ratio_row(SECTION, "read + edit of 1 KB", medians, "read + edit, SQLite store", "read + edit, memory store"),
        ratio_row(SECTION, "read + edit of 1 KB", medians, "read + edit, Redis store", "read + edit, SQLite store"),
    ]


def _read_and_edit(session: Any) -> Callable[[], object]:
    turn = Toggle()

    def call() -> None:
        _ok(session.call("read", {"file_path": "a.py"}))
        old, new = ("x = 1", "x = 2") if turn.next() else ("x = 2", "x = 1")
        _ok(session.call("edit", {"file_path": "a.py", "old_string": old, "new_string": new, "replace_all": True}))

    return call


async def _load(urls: list[str], calls: int) -> tuple[float, int]:
    """Wall seconds for ``CLIENTS`` clients (each its own session, spread over the replicas in turn)
    making ``calls`` reads each at once, and the number of calls."""
    from mcp import Client

    async with contextlib.AsyncExitStack() as stack:
        sessions = [await stack.enter_async_context(Client(urls[n % len(urls)])) for n in range(CLIENTS)]
        for session in sessions:
            await _reads(session.call_tool, 1)
        started = time.perf_counter()
        await asyncio.gather(*(_reads(session.call_tool, calls) for session in sessions))
        return time.perf_counter() - started, CLIENTS * calls


def _replica_rows(base: Path, url: str, calls: int) -> list[Row]:
    try:
        import mcp  # noqa: F401
    except ImportError:
        return [Row(SECTION, "-", "replicas", "-", None, note="the mcp extra is not installed")]
    root = base / "replicas"
    root.mkdir()
    (root / "a.py").write_text("print('hello')\n" * 64)
    throughput: dict[int, float] = {}
    for count in REPLICAS:
        with contextlib.ExitStack() as stack:
            urls = [stack.enter_context(_http_server(root, "--store", url)) for _ in range(count)]
            wall, done = asyncio.run(_load(urls, calls))
            throughput[count] = done / wall
    return [
        Row(
            SECTION,
            f"{count} replicas against 1, {CLIENTS} clients reading 1 KB",
            f"throughput, {count} replicas",
            "throughput, 1 replica",
            throughput[count] / throughput[1],
            note=f"{throughput[count]:,.0f} against {throughput[1]:,.0f} calls/s; clients and replicas share 2 cores",
        )
        for count in REPLICAS[1:]
    ]
