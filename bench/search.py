"""Section 4: grep and glob against ripgrep (a subprocess, as an agent would run it) and raw Python, on
one generated tree of several thousand files."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from bench.discovery import build_tree, raw_python_glob, raw_python_grep
from bench.harness import Row, interleaved, ratio_row
from fs_tools import Workspace

SECTION = "4 search"


def search_rows(smoke: bool) -> list[Row]:
    files, lines, rounds = (60, 10, 3) if smoke else (5000, 60, 9)
    rg = shutil.which("rg")
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="fs-tools-bench-search-") as tmp:
        root = Path(tmp)
        build_tree(root, files, lines)
        size = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
        workload = f"{files:,} files, {size / 1e6:.0f} MB"
        with Workspace(root, search_seconds=600) as ws:
            session = ws.session("bench")
            for tool, args, raw, rg_args in [
                (
                    "grep",
                    {"pattern": "needle_marker"},
                    lambda: raw_python_grep(root, "needle_marker"),
                    ["-n", "needle_marker"],
                ),
                ("glob", {"pattern": "**/*.py"}, lambda: raw_python_glob(root), ["--files", "-g", "*.py"]),
            ]:
                cases: dict[str, Callable[[], object]] = {
                    f"fs-tools {tool}": _call(session, tool, args),
                    f"raw Python {tool}": raw,
                }
                if rg:
                    cases[f"ripgrep {tool}"] = _command([rg, *rg_args, str(root)])
                medians = interleaved(cases, rounds, warm=1)
                if rg:
                    rows.append(ratio_row(SECTION, workload, medians, f"fs-tools {tool}", f"ripgrep {tool}"))
                else:
                    rows.append(
                        Row(
                            SECTION,
                            workload,
                            f"fs-tools {tool}",
                            "ripgrep",
                            None,
                            note="rg not on PATH (Debian: apt-get install ripgrep)",
                        )
                    )
                rows.append(ratio_row(SECTION, workload, medians, f"fs-tools {tool}", f"raw Python {tool}"))
    return rows


def _call(session: object, tool: str, args: dict[str, object]) -> Callable[[], object]:
    def run() -> object:
        result = session.call(tool, args)  # type: ignore[attr-defined]
        if result.is_error:
            raise RuntimeError(result.text)
        return result

    return run


def _command(argv: list[str]) -> Callable[[], object]:
    return lambda: subprocess.run(argv, capture_output=True, check=False)
