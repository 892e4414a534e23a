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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.harness import Row, read_line
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
import sys
from fs_tools import Workspace
root, path, calls, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
body = "x" * (size - 1) + "\\n"
written = stale = 0
with Workspace(root) as ws:
    session = ws.session("p")
    print("ready", flush=True)
    sys.stdin.readline()
    for n in range(calls):
        session.call("read", {"file_path": path, "limit": 1})
        result = session.call("write", {"file_path": path, "content": f"{n}\\n{body}"})
        if result.is_error and result.error.code != "FS_STALE_VERSION":
            print("failed", result.text.replace("\\n", " "), flush=True)
            sys.exit(1)
        written, stale = written + (not result.is_error), stale + result.is_error
    print("done", written, stale, flush=True)
"""
_WAIT = 120.0  # seconds a worker may take to start, or to make its calls


@dataclass
class _Processes:
    seconds: float  # from the go signal until every worker has made its calls (start-up not counted)
    written: int
    stale: int  # writes refused because another process wrote the file since this one read it


def _run_processes(root: Path, paths: list[str], calls: int, size: int) -> _Processes:
    """One worker process per path, each with a workspace of its own, started together once all are up."""
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
            _expect(worker, "ready")
        started = time.perf_counter()
        for worker in workers:
            assert worker.stdin is not None
            worker.stdin.write("go\n")
            worker.stdin.flush()
        counts = [_expect(worker, "done") for worker in workers]
        seconds = time.perf_counter() - started
        return _Processes(seconds, sum(int(c[0]) for c in counts), sum(int(c[1]) for c in counts))
    finally:
        for worker in workers:
            worker.kill()
            worker.wait()


def _expect(worker: subprocess.Popen[str], word: str) -> list[str]:
    """The rest of the worker's next line, which must start with ``word``."""
    assert worker.stdout is not None
    line = read_line(worker.stdout, _WAIT, f"a benchmark worker ({word})").split()
    if not line or line[0] != word:
        raise RuntimeError(f"a benchmark worker said {' '.join(line)!r} where {word!r} was expected")
    return line[1:]


def _median_run(root: Path, paths: list[str], calls: int, size: int, rounds: int) -> _Processes:
    runs = sorted((_run_processes(root, paths, calls, size) for _ in range(rounds)), key=lambda run: run.seconds)
    return runs[len(runs) // 2]


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
        rounds = 1 if smoke else 3
        one_process = _median_run(root, ["f0.txt"], calls, size, rounds)
        processes = [f"f{n}.txt" for n in range(PROCESSES)]
        distinct_processes = _median_run(root, processes, calls, size, rounds)
        same_processes = _median_run(root, ["f0.txt"] * PROCESSES, calls, size, rounds)
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
    workload = f"{PROCESSES} processes, read + write of {size // 1024} KB, {calls} each (median of {rounds})"
    alone = one_process.seconds
    for label, run in (("distinct files", distinct_processes), ("one file", same_processes)):
        refused = f"; {run.stale:,} of {run.written + run.stale:,} writes refused as stale" if run.stale else ""
        rows.append(
            Row(
                SECTION,
                workload,
                f"{PROCESSES} processes, {label} (time per round)",
                "1 process (time per round)",
                run.seconds / alone,
                run.seconds / calls,
                alone / calls,
                note=f"{PROCESSES * calls / run.seconds:,.0f} against {calls / alone:,.0f} read+write pairs/s, "
                f"each process its own workspace{refused}",
            )
        )
    return rows
