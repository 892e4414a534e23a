"""Section 9: writers at once — threads of one workspace, and processes each with a workspace of its own,
on distinct files and on one file, and how long a same-file writer waits for the file's lock (8 threads
against one), measured in the same run.

The lock wait is timed inside the benchmark by wrapping the provider's per-file lock (benchmark only:
fs-tools has no such hook): from asking for the lock to holding it. Every writer reads the file, then
writes it; on one file most writes are refused as stale (another thread wrote since the read), and each
of them still takes the lock to find that out.
"""

from __future__ import annotations

import contextlib
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from bench.harness import Row
from fs_tools import Workspace
from fs_tools.provider import locks

SECTION = "9 concurrency"
THREADS = 8
PROCESSES = 4


@contextlib.contextmanager
def timed_lock_waits() -> Iterator[list[float]]:
    """Every wait for a per-file lock while inside, in seconds (from asking to holding)."""
    waits: list[float] = []
    guard = threading.Lock()
    original: Any = locks.KeyedLocks.hold

    @contextlib.contextmanager
    def hold(self: locks.KeyedLocks, key: str, **kwargs: Any) -> Iterator[None]:
        asked = time.perf_counter()
        with original(self, key, **kwargs):
            waited = time.perf_counter() - asked
            with guard:
                waits.append(waited)
            yield

    locks.KeyedLocks.hold = hold  # type: ignore[method-assign]
    try:
        yield waits
    finally:
        locks.KeyedLocks.hold = original  # type: ignore[method-assign]


def _writer(ws: Workspace, name: str, path: str, calls: int, size: int) -> Callable[[], None]:
    session = ws.session(name)
    body = ("x" * (size - 1)) + "\n"

    def run() -> None:
        for n in range(calls):
            session.call("read", {"file_path": path, "limit": 1})
            session.call("write", {"file_path": path, "content": f"{name} {n}\n{body}"})

    return run


def _run_threads(jobs: list[Callable[[], None]]) -> float:
    threads = [threading.Thread(target=job) for job in jobs]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - started


_WORKER = """
import sys, time
from fs_tools import Workspace
root, path, calls, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
body = "x" * (size - 1) + "\\n"
with Workspace(root) as ws:
    session = ws.session("p")
    print("ready", flush=True)
    sys.stdin.readline()
    for n in range(calls):
        session.call("read", {"file_path": path, "limit": 1})
        session.call("write", {"file_path": path, "content": f"{n}\\n{body}"})
    print("done", flush=True)
"""


def _run_processes(root: Path, paths: list[str], calls: int, size: int) -> float:
    """Seconds from the go signal until every worker process has made its calls (start-up not counted)."""
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(root), path, str(calls), str(size)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for path in paths
    ]
    try:
        for worker in workers:
            assert worker.stdout is not None and worker.stdout.readline().strip() == "ready"
        started = time.perf_counter()
        for worker in workers:
            assert worker.stdin is not None
            worker.stdin.write("go\n")
            worker.stdin.flush()
        for worker in workers:
            assert worker.stdout is not None and worker.stdout.readline().strip() == "done"
        return time.perf_counter() - started
    finally:
        for worker in workers:
            worker.kill()
            worker.wait()


def concurrency_rows(smoke: bool) -> list[Row]:
    calls, size = (5, 1 << 10) if smoke else (150, 4 << 10)
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="fs-tools-bench-concurrency-") as tmp:
        root = Path(tmp)
        for n in range(THREADS):
            (root / f"f{n}.txt").write_text("start\n")
        with Workspace(root) as ws:
            with timed_lock_waits() as alone:
                one = _run_threads([_writer(ws, "alone", "f0.txt", calls, size)])
            with timed_lock_waits() as together:
                same = _run_threads([_writer(ws, f"t{n}", "f0.txt", calls, size) for n in range(THREADS)])
            distinct = _run_threads([_writer(ws, f"d{n}", f"f{n}.txt", calls, size) for n in range(THREADS)])
        one_process = _run_processes(root, ["f0.txt"], calls, size)
        processes = [f"f{n}.txt" for n in range(PROCESSES)]
        distinct_processes = _run_processes(root, processes, calls, size)
        same_processes = _run_processes(root, ["f0.txt"] * PROCESSES, calls, size)
    workload = f"{THREADS} threads, read + write of {size // 1024} KB, {calls} each"
    uncontended, contended = statistics.median(alone), statistics.median(together)
    rows.append(
        Row(
            SECTION,
            workload,
            "lock wait, same file (median)",
            "lock wait, 1 thread (median)",
            contended / uncontended,
            contended,
            uncontended,
            target="<= 100x",
            met=contended / uncontended <= 100,
            note=f"{contended * 1e6:,.0f} µs against {uncontended * 1e6:,.1f} µs; "
            f"p90 {statistics.quantiles(together, n=10)[-1] * 1e6:,.0f} µs",
        )
    )
    per_call_one = one / calls
    rows.append(
        Row(
            SECTION,
            workload,
            f"{THREADS} threads, distinct files (time per round)",
            "1 thread (time per round)",
            (distinct / calls) / per_call_one,
            distinct / calls,
            per_call_one,
            note=f"throughput {THREADS * calls / distinct:,.0f} against {calls / one:,.0f} read+write pairs/s",
        )
    )
    rows.append(
        Row(
            SECTION,
            workload,
            f"{THREADS} threads, one file (time per round)",
            "1 thread (time per round)",
            (same / calls) / per_call_one,
            same / calls,
            per_call_one,
        )
    )
    workload = f"{PROCESSES} processes, read + write of {size // 1024} KB, {calls} each"
    for label, seconds in (("distinct files", distinct_processes), ("one file", same_processes)):
        rows.append(
            Row(
                SECTION,
                workload,
                f"{PROCESSES} processes, {label} (time per round)",
                "1 process (time per round)",
                seconds / one_process,
                seconds / calls,
                one_process / calls,
                note=f"throughput {PROCESSES * calls / seconds:,.0f} against {calls / one_process:,.0f} "
                "read+write pairs/s (each process its own workspace and session)",
            )
        )
    return rows
