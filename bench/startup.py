"""Section 10: start-up — how long ``fs-tools serve`` takes from launch to its answer to ``initialize``
over stdio, against the official Node server; and a cold ``fs-tools call`` (a whole shell-driven call:
start, one read, exit) against ``cat`` of the same file; and the first write of a new workspace into a
directory of 20,000 files against the next write there.

Each start is a fresh process; starts of the two are interleaved, the figure is the median. The
request is written as soon as the process is launched (a client does not wait either), and the clock
stops at the first line of the answer.
"""

from __future__ import annotations

import importlib.util
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.harness import Row, ratio_row, read_line
from fs_tools import Workspace

SECTION = "10 start-up"
_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "fs-tools-bench", "version": "1"},
    },
}


def first_answer_seconds(argv: list[str], env: dict[str, str] | None = None) -> float:
    """Seconds from launching ``argv`` to the first line it writes in answer to ``initialize`` (at most
    a minute: a server that never answers fails the row, with what it wrote to stderr)."""
    started = time.perf_counter()
    with tempfile.TemporaryFile() as errors:
        process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors, env=env)
        assert process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write((json.dumps(_INITIALIZE) + "\n").encode())
            process.stdin.flush()
            line = read_line(process.stdout, 60.0, f"{argv[0]} (initialize)")
            elapsed = time.perf_counter() - started
        finally:
            process.kill()
            process.wait()
        if not line.startswith("{"):
            errors.seek(0)
            raise RuntimeError(f"{argv[0]} answered {line[:200]!r}; stderr: {errors.read()[-500:]!r}")
    return elapsed


def _command_seconds(argv: list[str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{argv[:3]} failed: {done.stderr[-300:]!r}")
    return elapsed


def _interleaved(cases: dict[str, object], rounds: int) -> dict[str, float]:
    samples: dict[str, list[float]] = {name: [] for name in cases}
    rng = random.Random(rounds)
    for _ in range(rounds):
        order = list(cases)
        rng.shuffle(order)
        for name in order:
            samples[name].append(cases[name]())  # type: ignore[operator]
    return {name: statistics.median(values) for name, values in samples.items()}


def startup_rows(smoke: bool, node_server: Path | None) -> list[Row]:
    rounds = 2 if smoke else 15
    with tempfile.TemporaryDirectory(prefix="fs-tools-bench-start-") as tmp:
        root = Path(tmp) / "root"
        root.mkdir()
        (root / "a.py").write_text("print('hello')\n" * 30)
        serve = [sys.executable, "-m", "fs_tools.cli", "serve", "--root", str(root)]
        cases: dict[str, object] = {}
        if importlib.util.find_spec("mcp") is not None:  # serve needs the [mcp] extra
            cases["fs-tools serve"] = lambda: first_answer_seconds(serve)
        node = shutil.which("node")
        if node_server is not None and node is not None:
            cases["node server"] = lambda: first_answer_seconds([node, str(node_server), str(root)])
        state = str(Path(tmp) / "state.sqlite")
        call = [sys.executable, "-m", "fs_tools.cli", "call", "--root", str(root), "--session", "b", "--state", state]
        cases["fs-tools call read"] = lambda: _command_seconds([*call, "read", '{"file_path": "a.py"}'])
        cases["cat"] = lambda: _command_seconds(["cat", str(root / "a.py")])
        cases["python -c pass"] = lambda: _command_seconds([sys.executable, "-c", "pass"])
        medians = _interleaved(cases, rounds)
    call_note = f"{medians['fs-tools call read'] * 1000:,.0f} ms against {medians['cat'] * 1000:,.1f} ms"
    call = "one shell-driven call (start, read 30 lines, exit)"
    return [*_serve_rows(medians), ratio_row(SECTION, call, medians, "fs-tools call read", "cat", note=call_note)]


def _serve_rows(medians: dict[str, float]) -> list[Row]:
    if "fs-tools serve" not in medians:
        return [Row(SECTION, "stdio start-up", "fs-tools serve", "-", None, note="the mcp extra is not installed")]
    workload, serve_ms = "stdio, launch to the answer to initialize", medians["fs-tools serve"] * 1000
    rows: list[Row] = []
    if "node server" in medians:
        note = f"{serve_ms:,.0f} ms against {medians['node server'] * 1000:,.0f} ms"
        rows.append(ratio_row(SECTION, workload, medians, "fs-tools serve", "node server", limit=1.0, note=note))
    note = f"{serve_ms:,.0f} ms; the interpreter alone {medians['python -c pass'] * 1000:,.0f} ms"
    rows.append(ratio_row(SECTION, workload, medians, "fs-tools serve", "python -c pass", note=note))
    return rows


def cold_workspace_rows(smoke: bool) -> list[Row]:
    """The first write of a new workspace into a directory of many files, against the next write there
    (the first sweeps the directory for temps killed writers left)."""
    files, rounds = (200, 2) if smoke else (20_000, 9)
    cold: list[float] = []
    warm: list[float] = []
    with tempfile.TemporaryDirectory(prefix="fs-tools-bench-cold-") as tmp:
        root = Path(tmp)
        for n in range(files):
            (root / f"f{n:05d}.txt").write_text("x\n")
        for n in range(rounds):
            with Workspace(root) as ws:
                session = ws.session("cold")
                for sample, name in ((cold, f"new{n}a.txt"), (warm, f"new{n}b.txt")):
                    started = time.perf_counter()
                    result = session.call("write", {"file_path": name, "content": "new\n"})
                    sample.append(time.perf_counter() - started)
                    if result.is_error:
                        raise RuntimeError(result.text)
    first, next_ = statistics.median(cold), statistics.median(warm)
    return [
        Row(
            SECTION,
            f"a new workspace, a directory of {files:,} files",
            "first write",
            "second write",
            first / next_,
            first,
            next_,
            note=f"{first * 1000:,.2f} ms against {next_ * 1000:,.2f} ms",
        )
    ]


if __name__ == "__main__":  # python -m bench.startup: the rows alone
    print(os.linesep.join(str(row) for row in startup_rows("--smoke" in sys.argv, None)))
