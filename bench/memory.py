"""Section 5: peak memory of the edits that once amplified a few bytes of input into gigabytes, as a
multiple of ``max_file_bytes`` (issue 12, item 1), and of diagnosing a failing edit on a file near the
limit (item 8).

    python -m bench.memory                   # every case at the default 16 MiB limit
    python -m bench.memory --limit 1048576   # a smaller limit: quicker

Each case runs in a fresh subprocess, twice: once timed, once under ``tracemalloc`` (Python's own
allocations, which is where the text lives), with the address space capped so that a case which would
exhaust memory ends as ``MemoryError`` rather than taking the machine with it. The figures are measured,
not asserted: the tests assert behaviour (the error, its message, the disk).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.harness import Row
from fs_tools import Session, Workspace
from fs_tools.result import ToolResult

SECTION = "5 memory"
DEFAULT_LIMIT = 16 << 20
SMOKE_LIMIT = 256 << 10
TIMEOUT_SECONDS = 300

# A case prepares its file (and reads it) and returns the one call to measure.
Case = Callable[[Path, Session, int], Callable[[], ToolResult]]


def _write(root: Path, session: Session, name: str, data: bytes) -> None:
    (root / name).write_bytes(data)
    result = session.call("read", {"file_path": name})
    if result.is_error:
        raise RuntimeError(result.text)


def _call(session: Session, tool: str, args: dict[str, Any]) -> Callable[[], ToolResult]:
    return lambda: session.call(tool, args)


_LINE = "    value_{:07d} = compute(value)"


def _source(limit: int, newline: str = "\n") -> bytes:
    """Source-like lines filling the file to just under ``limit`` bytes."""
    line = _LINE + newline
    return "".join(line.format(i) for i in range(_lines_in(limit, newline))).encode()


def _lines_in(limit: int, newline: str = "\n") -> int:
    return (limit - 64) // len(_LINE.format(0) + newline)


def doubling(root: Path, session: Session, limit: int) -> Callable[[], ToolResult]:
    """write "a", then 40 x replace_all "a" -> "aa": the text doubles with every edit."""
    _write(root, session, "f.txt", b"a")
    edits = [{"old_string": "a", "new_string": "aa", "replace_all": True}] * 40
    return _call(session, "multi_edit", {"file_path": "f.txt", "edits": edits})


def growth(root: Path, session: Session, limit: int) -> Callable[[], ToolResult]:
    """replace_all "a" -> "b" * 20,000 in a file of limit/16 "a"s: a join of limit * 1,250 bytes."""
    _write(root, session, "f.txt", b"a" * (limit // 16))
    args = {"file_path": "f.txt", "old_string": "a", "new_string": "b" * 20_000, "replace_all": True}
    return _call(session, "edit", args)


def many_edits(root: Path, session: Session, limit: int) -> Callable[[], ToolResult]:
    """100 unique one-line edits (the most one multi_edit takes) on a file near the limit."""
    _write(root, session, "f.txt", _source(limit))
    step = _lines_in(limit) // 100
    edits = [{"old_string": f"value_{i * step:07d} =", "new_string": f"v{i} ="} for i in range(100)]
    return _call(session, "multi_edit", {"file_path": "f.txt", "edits": edits})


def too_many_edits(root: Path, session: Session, limit: int) -> Callable[[], ToolResult]:
    """1,500 tiny edits on a file near the limit (refused before the file is read)."""
    _write(root, session, "f.txt", _source(limit))
    edits = [{"old_string": f"value_{i:07d} =", "new_string": f"v{i} ="} for i in range(1500)]
    return _call(session, "multi_edit", {"file_path": "f.txt", "edits": edits})


def every_byte(root: Path, session: Session, limit: int) -> Callable[[], ToolResult]:
    """replace_all "a" -> "b" in a file of limit - 1 "a"s: one match per byte."""
    _write(root, session, "f.txt", b"a" * (limit - 1))
    args = {"file_path": "f.txt", "old_string": "a", "new_string": "b", "replace_all": True}
    return _call(session, "edit", args)


def crlf_lines(root: Path, session: Session, limit: int) -> Callable[[], ToolResult]:
    """replace_all across every CRLF of a CRLF file near the limit (old_string written with \\n)."""
    _write(root, session, "f.txt", _source(limit, "\r\n"))
    args = {"file_path": "f.txt", "old_string": "(value)\n", "new_string": "(other)\n", "replace_all": True}
    return _call(session, "edit", args)


def mixed_lines(root: Path, session: Session, limit: int) -> Callable[[], ToolResult]:
    """replace_all across every line break of a file whose lines alternate LF and CRLF (each match is
    mapped back to the original one by one)."""
    half = _source(limit // 2).decode().split("\n")
    text = "".join(line + ("\n" if i % 2 else "\r\n") for i, line in enumerate(half[:-1]))
    _write(root, session, "f.txt", text.encode())
    args = {"file_path": "f.txt", "old_string": "(value)\n", "new_string": "(other)\n", "replace_all": True}
    return _call(session, "edit", args)


def not_found(root: Path, session: Session, limit: int) -> Callable[[], ToolResult]:
    """A failing edit (a typo) on a file near the limit: the near-miss diagnosis."""
    _write(root, session, "f.txt", _source(limit))
    args = {"file_path": "f.txt", "old_string": "    valeu_0012345 = compute(valeu)", "new_string": "x"}
    return _call(session, "edit", args)


CASES: dict[str, Case] = {
    "doubling": doubling,
    "growth": growth,
    "100 edits": many_edits,
    "1,500 edits": too_many_edits,
    "every byte": every_byte,
    "CRLF lines": crlf_lines,
    "mixed lines": mixed_lines,
    "not found": not_found,
}


def measure(name: str, limit: int) -> dict[str, Any]:
    """Run one case twice (timed, then traced) in this process; its figures."""
    case = CASES[name]
    figures: dict[str, Any] = {"case": name, "limit": limit}
    for traced in (False, True):
        with (
            tempfile.TemporaryDirectory(prefix="fs-tools-bench-memory-") as tmp,
            Workspace(tmp, max_file_bytes=limit) as ws,
        ):
            call = case(Path(tmp), ws.session("bench"), limit)
            if traced:
                tracemalloc.start()
            started = time.perf_counter()
            try:
                result = call()
                outcome = result.error.code if result.error is not None else "ok"
            except MemoryError:
                outcome = "MemoryError"
            seconds = time.perf_counter() - started
            if traced:
                figures["peak"] = tracemalloc.get_traced_memory()[1]
                tracemalloc.stop()
            else:
                figures["seconds"] = seconds
            figures["outcome"] = outcome
    figures["max_rss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return figures


def run_isolated(name: str, limit: int, cap: int) -> dict[str, Any]:
    """``measure`` in a fresh interpreter whose address space is capped at ``cap`` bytes."""
    command = [sys.executable, "-m", "bench.memory", "--run", name, "--limit", str(limit), "--cap", str(cap)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_SECONDS, check=False)
    except subprocess.TimeoutExpired:
        return {"case": name, "limit": limit, "outcome": f"timeout ({TIMEOUT_SECONDS} s)"}
    if done.returncode != 0:
        return {"case": name, "limit": limit, "outcome": f"exit {done.returncode}: {done.stderr.strip()[-200:]}"}
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def memory_rows(smoke: bool, limit: int | None = None) -> list[Row]:
    limit = limit or (SMOKE_LIMIT if smoke else DEFAULT_LIMIT)
    cap = max(4 << 30, 64 * limit)
    rows = []
    for name in CASES:
        figures = run_isolated(name, limit, cap)
        peak = figures.get("peak")
        seconds = figures.get("seconds")
        timing = f", {seconds:.2f} s" if seconds is not None else ""
        rows.append(
            Row(
                SECTION,
                f"{name} ({limit / 2**20:g} MiB limit)",
                "peak traced memory",
                "max_file_bytes",
                peak / limit if peak is not None else None,
                subject_seconds=seconds,
                target="a few x",
                note=f"{figures['outcome']}{timing}: {CASES[name].__doc__}",
                extra=figures,
            )
        )
    return rows


def render(rows: list[Row]) -> str:
    lines = ["| case | outcome | seconds | peak MiB | peak / max_file_bytes |", "|---|---|---|---|---|"]
    for row in rows:
        peak = row.extra.get("peak")
        seconds = "" if row.subject_seconds is None else f"{row.subject_seconds:.2f}"
        ratio = "" if row.ratio is None else f"{row.ratio:.2f}x"
        mib = f"{peak / 2**20:.1f}" if isinstance(peak, int) else ""
        lines.append(f"| {row.extra['case']} | {row.extra['outcome']} | {seconds} | {mib} | {ratio} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.memory", description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=DEFAULT_LIMIT, help="max_file_bytes for every case")
    parser.add_argument("--run", choices=list(CASES), help=argparse.SUPPRESS)  # one case, in this process
    parser.add_argument("--cap", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.run:
        if args.cap:
            resource.setrlimit(resource.RLIMIT_AS, (args.cap, args.cap))
        print(json.dumps(measure(args.run, args.limit)))
        return 0
    print(render(memory_rows(smoke=False, limit=args.limit)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
