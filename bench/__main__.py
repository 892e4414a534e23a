"""``python -m bench``: how close fs-tools is to the raw cost of the work, what its gates cost, and how
it compares with the tools users would otherwise pick — every figure a ratio measured in this run.

    python -m bench                  # everything; installs the peers into .bench-env/ on first use
    python -m bench --no-peers       # fs-tools, the raw baseline, gates and search only
    python -m bench --smoke          # tiny inputs, no peers: checks the command works (CI runs this)

It prints a Markdown table and writes the same rows as JSON (``--json``, default bench-results.json).
The in-process peers need Python >= 3.12 (openhands-aci): the command builds .bench-env/venv with one
and runs the whole suite again inside it, so all figures still come from one process.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

from bench.files import SIZES, SMOKE_SIZES
from bench.harness import Row

INNER = "FS_TOOLS_BENCH_INNER"  # set when running inside the peer environment
NODE_ENV = "FS_TOOLS_BENCH_NODE"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true", help="tiny inputs, no peers")
    parser.add_argument("--no-peers", action="store_true", help="skip OpenHands, LangChain and the Node server")
    parser.add_argument("--json", default="bench-results.json", help="where to write the rows")
    parser.add_argument("--python", help="a Python >= 3.12 for the peer environment")
    parser.add_argument(
        "--sections",
        default="library,peers,mcp,search,memory,diagnosis,syntax,history,concurrency,startup,http,redis,media,lines",
        help="comma-separated: library,peers,mcp,search,memory,diagnosis,syntax,history,concurrency,startup,http,"
        "redis,media,lines",
    )
    args = parser.parse_args(argv)
    peers = not (args.smoke or args.no_peers)
    if peers and not os.environ.get(INNER):
        return _run_inside_peer_environment(args, argv if argv is not None else sys.argv[1:])
    sections = set(args.sections.split(","))
    sizes = SMOKE_SIZES if args.smoke else SIZES
    started = time.perf_counter()
    rows: list[Row] = []
    if "library" in sections:
        from bench.library import library_rows

        rows += library_rows(sizes, args.smoke)
    if peers and "peers" in sections:
        from bench.peers import peer_rows

        rows += peer_rows(sizes, args.smoke)
    if peers and "mcp" in sections:
        from bench.mcp_peers import mcp_rows

        node = os.environ.get(NODE_ENV)
        rows += mcp_rows(sizes, args.smoke, Path(node) if node else None)
    if "search" in sections:
        from bench.search import search_rows

        rows += search_rows(args.smoke)
    if "memory" in sections:
        from bench.memory import memory_rows

        rows += memory_rows(args.smoke)
    if "diagnosis" in sections:
        from bench.diagnosis import diagnosis_rows

        rows += diagnosis_rows(args.smoke)
    if "syntax" in sections:
        from bench.syntax import syntax_rows

        rows += syntax_rows(args.smoke)
    if "history" in sections:
        from bench.history import history_rows

        rows += history_rows(args.smoke)
    if "concurrency" in sections:
        from bench.concurrency import concurrency_rows

        rows += concurrency_rows(args.smoke)
    if "startup" in sections:
        from bench.hooks import hook_rows
        from bench.startup import cold_workspace_rows, startup_rows

        node = os.environ.get(NODE_ENV)
        rows += startup_rows(args.smoke, Path(node) if node else None) + cold_workspace_rows(args.smoke)
        rows += hook_rows(args.smoke)
    if "http" in sections:
        from bench.http import http_rows

        rows += http_rows(args.smoke)
    if "redis" in sections:
        from bench.redis import redis_rows

        rows += redis_rows(args.smoke)
    if "media" in sections:
        from bench.media import media_rows

        rows += media_rows(args.smoke)
    if "lines" in sections:
        from bench.lines import lines_rows

        rows += lines_rows(args.smoke)
    machine = machine_info()
    print(render(rows, machine, time.perf_counter() - started))
    Path(args.json).write_text(
        json.dumps({"machine": machine, "rows": [dataclasses.asdict(r) for r in rows]}, indent=2) + "\n"
    )
    print(f"\nrows written to {args.json}", file=sys.stderr)
    return 0


def _run_inside_peer_environment(args: argparse.Namespace, argv: list[str]) -> int:
    from bench import environment

    wants_peers = "peers" in args.sections.split(",")
    python = environment.find_python312(args.python) if wants_peers else None
    if not wants_peers:
        interpreter = Path(sys.executable)  # the in-process peers are not asked for: no environment for them
    elif python is None:
        print(
            "[bench] no Python >= 3.12 found (give one with --python): running without in-process peers",
            file=sys.stderr,
        )
        interpreter = Path(sys.executable)
    else:
        interpreter = environment.ensure_python_peers(python)
    node = environment.ensure_node_peer()
    env = dict(os.environ, **{INNER: "1"})
    if node is not None:
        env[NODE_ENV] = str(node)
    else:
        print("[bench] node/npm not found: the MCP comparison is skipped", file=sys.stderr)
    return subprocess.run([str(interpreter), "-m", "bench", *argv], env=env, cwd=os.getcwd(), check=False).returncode


def machine_info() -> dict[str, object]:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as info:
            cpu = next((line.split(":", 1)[1].strip() for line in info if line.startswith("model name")), cpu)
    except OSError:
        pass
    memory = ""
    try:
        with open("/proc/meminfo") as info:
            memory = f"{int(info.readline().split()[1]) / 1024 / 1024:.0f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    import tempfile

    fs_type = subprocess.run(
        ["stat", "-f", "-c", "%T", tempfile.gettempdir()], capture_output=True, text=True, check=False
    )
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory": memory,
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "temp filesystem": fs_type.stdout.strip() or "?",
    }


def render(rows: list[Row], machine: dict[str, object], seconds: float) -> str:
    lines = [
        "Machine: " + ", ".join(f"{k} {v}" for k, v in machine.items()),
        f"Run took {seconds:.0f} s. Ratio = fs-tools time / the other's time, medians of interleaved rounds, same run.",
        "",
        "| section | workload | fs-tools | against | ratio | target | met | note |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        ratio = f"{r.ratio:.2f}×" if r.ratio is not None else "—"
        met = "" if r.met is None else ("yes" if r.met else "**no**")
        lines.append(
            f"| {r.section} | {r.workload} | {r.subject} | {r.baseline} | {ratio} | {r.target} | {met} | {r.note} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
