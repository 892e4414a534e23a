"""grep and glob against ripgrep and a raw-Python baseline, on one generated tree, in one run.

    python bench/discovery.py            # ~5,000 files; prints a Markdown table of medians and ratios
    python bench/discovery.py --smoke    # a tiny tree: checks the command works (CI may run this)

Ratios are measured in the same run on the same warm tree, because these machines are noisy. ripgrep is
timed as a subprocess (``rg`` on PATH: Debian's ``ripgrep`` package), which is how an agent would use it;
fs-tools is timed through ``session.call``, which is how a harness uses it.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from fs_tools import Workspace

WORDS = ["alpha", "beta", "gamma", "delta", "return", "import", "class", "def", "self", "value", "print"]


def build_tree(root: Path, files: int, lines: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    for i in range(files):
        directory = root / f"pkg{i % 50:02d}" / f"mod{i % 7}"
        directory.mkdir(parents=True, exist_ok=True)
        body = []
        for n in range(lines):
            words = " ".join(rng.choice(WORDS) for _ in range(8))
            body.append(f"    {words} {n}")
        if i % 97 == 0:
            body[lines // 2] = "    needle_marker = compute(value)  # the line we look for"
        suffix = ".py" if i % 3 else ".txt"
        (directory / f"file{i}{suffix}").write_text("\n".join(body) + "\n")


def median_seconds(action: Callable[[], object], repeats: int) -> float:
    action()  # warm
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def raw_python_grep(root: Path, pattern: str, suffix: str = "") -> int:
    regex = re.compile(pattern, re.MULTILINE)
    found = 0
    for directory, _, names in os.walk(root):
        for name in names:
            if not name.endswith(suffix):
                continue
            with open(os.path.join(directory, name), "rb") as handle:
                text = handle.read().decode("utf-8", "replace")
            found += sum(1 for _ in regex.finditer(text))
    return found


def _run(command: list[str]) -> None:
    subprocess.run(command, capture_output=True, check=False)


def raw_python_glob(root: Path, pattern: str = "**/*.py") -> int:
    return sum(1 for _ in root.glob(pattern))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--lines", type=int, default=60)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    files, lines, repeats = (60, 10, 1) if args.smoke else (args.files, args.lines, args.repeats)
    rg = shutil.which("rg")
    with tempfile.TemporaryDirectory(prefix="fs-tools-bench-") as tmp:
        root = Path(tmp)
        build_tree(root, files, lines)
        size = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
        with Workspace(root, search_seconds=600) as ws:
            session = ws.session("bench")

            def ours_grep() -> object:
                result = session.call("grep", {"pattern": "needle_marker"})
                assert not result.is_error, result.text
                return result

            def ours_grep_glob() -> object:
                result = session.call("grep", {"pattern": "needle_marker", "glob": "**/*.py"})
                assert not result.is_error, result.text
                return result

            def ours_glob() -> object:
                result = session.call("glob", {"pattern": "**/*.py"})
                assert not result.is_error, result.text
                return result

            rows: list[tuple[str, float, float, float | None]] = [
                (
                    "grep `needle_marker`",
                    median_seconds(ours_grep, repeats),
                    median_seconds(lambda: raw_python_grep(root, "needle_marker"), repeats),
                    median_seconds(lambda: _run([rg, "-n", "needle_marker", str(root)]), repeats) if rg else None,
                ),
                (
                    "grep `needle_marker`, glob `**/*.py`",
                    median_seconds(ours_grep_glob, repeats),
                    median_seconds(lambda: raw_python_grep(root, "needle_marker", ".py"), repeats),
                    median_seconds(lambda: _run([rg, "-n", "-g", "*.py", "needle_marker", str(root)]), repeats)
                    if rg
                    else None,
                ),
                (
                    "glob `**/*.py`",
                    median_seconds(ours_glob, repeats),
                    median_seconds(lambda: raw_python_glob(root), repeats),
                    median_seconds(lambda: _run([rg, "--files", "-g", "*.py", str(root)]), repeats) if rg else None,
                ),
            ]
    print(f"Tree: {files:,} files, {size / 1e6:.1f} MB; warm cache; median of {repeats} runs")
    print(f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print()
    print("| operation | fs-tools | raw Python | ripgrep (subprocess) | fs-tools / ripgrep | fs-tools / raw |")
    print("|---|---|---|---|---|---|")
    for name, ours, raw, rg_time in rows:
        versus_rg = f"{ours / rg_time:.2f}×" if rg_time else "rg not found"
        rg_cell = f"{rg_time * 1000:.1f} ms" if rg_time else "—"
        print(f"| {name} | {ours * 1000:.1f} ms | {raw * 1000:.1f} ms | {rg_cell} | {versus_rg} | {ours / raw:.2f}× |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
