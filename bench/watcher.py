"""What watching costs: per-call latency with and without the watcher, with thousands of observed files,
and how many inotify watches it uses. One run, ratios in the same process.

    python bench/watcher.py            # 5,000 observed files in 50 directories
    python bench/watcher.py --smoke    # a tiny tree: checks the command works
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from fs_tools import Workspace


def inotify_watches() -> int:
    """Watches held by this process's inotify descriptors (Linux), from /proc/self/fdinfo."""
    total = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") != "anon_inode:inotify":
                continue
            with open(f"/proc/self/fdinfo/{fd}") as info:
                total += sum(1 for line in info if line.startswith("inotify wd:"))
        except OSError:
            continue
    return total


def per_call(session: object, calls: int) -> float:
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        result = session.call("read", {"file_path": "d00/f0.txt"})  # type: ignore[attr-defined]
        samples.append(time.perf_counter() - started)
        assert not result.is_error
    return statistics.median(samples)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
    files, directories, calls = (40, 4, 20) if args.smoke else (5000, 50, 2000)
    with tempfile.TemporaryDirectory(prefix="fs-tools-watch-") as tmp:
        root = Path(tmp)
        for i in range(files):
            directory = root / f"d{i % directories:02d}"
            directory.mkdir(exist_ok=True)
            (directory / f"f{i // directories}.txt").write_text(f"file {i}\n")
        rows = []
        for watch in (False, True):
            with Workspace(root, watch=watch) as ws:
                session = ws.session("bench")
                for i in range(files):
                    session.call("read", {"file_path": f"d{i % directories:02d}/f{i // directories}.txt"})
                latency = per_call(session, calls)
                started = time.perf_counter()
                quiet = session.changed()
                quiet_seconds = time.perf_counter() - started
                edited = min(10, directories)
                for i in range(edited):
                    (root / f"d{i:02d}" / "f0.txt").write_text("changed\n")
                time.sleep(0.5)  # let the observer deliver the events (this is a benchmark, not a test)
                started = time.perf_counter()
                changed = session.changed()
                changed_seconds = time.perf_counter() - started
                watches = inotify_watches()
                for i in range(edited):
                    (root / f"d{i:02d}" / "f0.txt").write_text(f"file {i}\n")
            rows.append((watch, latency, quiet_seconds, len(quiet), changed_seconds, len(changed), watches))
    print(f"{files:,} observed files in {directories} directories; read latency = median of {calls} calls")
    print()
    print("| watch | read per call | changed() with no change | changed() after 10 edits | inotify watches |")
    print("|---|---|---|---|---|")
    for watch, latency, quiet, n_quiet, changed, n_changed, watches in rows:
        print(
            f"| {watch} | {latency * 1e6:.0f} µs | {quiet * 1000:.1f} ms ({n_quiet}) | "
            f"{changed * 1000:.1f} ms ({n_changed}) | {watches} |"
        )
    print(f"\nread latency ratio, watch on / off: {rows[1][1] / rows[0][1]:.2f}×")
    return 0


if __name__ == "__main__":
    sys.exit(main())
