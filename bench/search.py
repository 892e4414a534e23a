"""Section 4: grep and glob against ripgrep (a subprocess, as an agent would run it) and raw Python, on
one generated tree of several thousand files, on a real source tree (the Django 5.2 sdist, fetched with
pip into ``.bench-env/``), and on one 50 MB file.

Every ripgrep row compares the same result set: ripgrep runs with ``--no-ignore --hidden`` (fs-tools
shows dotfiles and the trees have no ignore files), each workload is chosen to stay under fs-tools'
row cap, and the rows of both are compared in the run — a row whose sets differ says so in its note.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.discovery import build_tree, raw_python_glob, raw_python_grep
from bench.environment import ENV
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
                # a fifth of the tree (about 670 files): under glob's 1,000-file cap, so both list the same set
                (
                    "glob",
                    {"pattern": "pkg0*/**/*.py"},
                    lambda: raw_python_glob(root, "pkg0*/**/*.py"),
                    ["--files", "-g", "pkg0*/**/*.py"],
                ),
            ]:
                cases: dict[str, Callable[[], object]] = {
                    f"fs-tools {tool}": _call(session, tool, args),
                    f"raw Python {tool}": raw,
                }
                if rg:
                    cases[f"ripgrep {tool}"] = _command([rg, *rg_args, "."], root)
                medians = interleaved(cases, rounds, warm=1)
                if rg:
                    ours = session.call(tool, args).value["matches"]
                    theirs = len(subprocess.run([rg, *rg_args, "."], cwd=root, capture_output=True).stdout.splitlines())
                    note = (
                        f"{ours:,} results each" if ours == theirs else f"fs-tools {ours:,}, ripgrep {theirs:,} results"
                    )
                    rows.append(ratio_row(SECTION, workload, medians, f"fs-tools {tool}", f"ripgrep {tool}", note=note))
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
    return rows + real_tree_rows(smoke) + big_file_rows(smoke)


DJANGO = "5.2"
# (workload, fs-tools grep arguments, ripgrep arguments): each under fs-tools' 200-row cap on Django 5.2
REAL_GREPS: list[tuple[str, dict[str, Any], list[str]]] = [
    ("literal", {"pattern": "select_for_update", "glob": "*.py"}, ["-g", "*.py", "select_for_update"]),
    ("regex", {"pattern": r"def test_\w*unicode"}, [r"def test_\w*unicode"]),
    ("case-insensitive", {"pattern": "todo", "case_insensitive": True}, ["-i", "todo"]),
    ("regex, glob filter", {"pattern": r"class \w+View", "glob": "*.py"}, ["-g", "*.py", r"class \w+View"]),
    ("rare match", {"pattern": "xyzzy_never_there"}, ["xyzzy_never_there"]),
]
REAL_GLOBS: list[tuple[str, str]] = [("**/migrations/*.py", "**/migrations/*.py")]


def real_tree_rows(smoke: bool) -> list[Row]:
    """fs-tools grep and glob against ripgrep on the Django sdist (skipped in smoke mode, or without rg
    or the sdist)."""
    rg = shutil.which("rg")
    if smoke or rg is None:
        return []
    root = fetch_django()
    if root is None:
        return [Row(SECTION, f"Django {DJANGO} sdist", "fs-tools grep", "ripgrep", None, note="sdist not fetched")]
    files = sum(1 for p in root.rglob("*") if p.is_file())
    size = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
    rows: list[Row] = []
    with Workspace(root, search_seconds=600) as ws:
        session = ws.session("bench")
        for name, args, rg_args in REAL_GREPS:
            workload = f"Django {DJANGO} ({files:,} files, {size / 1e6:.0f} MB), grep {name}"
            ours = session.call("grep", args)
            theirs = subprocess.run([rg, "-n", "--no-ignore", "--hidden", *rg_args], cwd=root, capture_output=True)
            note = _compare_rows(ours.text if not ours.is_error else "", theirs.stdout.decode("utf-8", "replace"))
            medians = interleaved(
                {
                    "fs-tools grep": _call(session, "grep", args),
                    "ripgrep grep": _command([rg, "-n", "--no-ignore", "--hidden", *rg_args], root),
                },
                9,
                warm=1,
            )
            limit = 1.0 if name == "literal" else 1.5
            rows.append(ratio_row(SECTION, workload, medians, "fs-tools grep", "ripgrep grep", limit=limit, note=note))
        for pattern, rg_glob in REAL_GLOBS:
            workload = f"Django {DJANGO} ({files:,} files), glob {pattern}"
            ours = session.call("glob", {"pattern": pattern})
            theirs = subprocess.run(
                [rg, "--files", "--no-ignore", "--hidden", "-g", rg_glob], cwd=root, capture_output=True
            )
            mine = set(ours.text.splitlines()) if not ours.is_error else set()
            other = {line.removeprefix("./") for line in theirs.stdout.decode().splitlines()}
            note = f"same {len(mine):,} files" if mine == other else f"sets differ: {len(mine)} against {len(other)}"
            medians = interleaved(
                {
                    "fs-tools glob": _call(session, "glob", {"pattern": pattern}),
                    "ripgrep glob": _command([rg, "--files", "--no-ignore", "--hidden", "-g", rg_glob], root),
                },
                9,
                warm=1,
            )
            rows.append(ratio_row(SECTION, workload, medians, "fs-tools glob", "ripgrep glob", limit=1.2, note=note))
    return rows


def big_file_rows(smoke: bool) -> list[Row]:
    """One 50 MB file searched for a rare line, against ripgrep (fs-tools' whole-file limit raised to
    64 MiB for it: by default a file over 16 MiB is skipped)."""
    rg = shutil.which("rg")
    if smoke or rg is None:
        return []
    with tempfile.TemporaryDirectory(prefix="fs-tools-bench-big-") as tmp:
        root = Path(tmp)
        line = "    alpha beta gamma delta return import class def self value print 12345\n"
        count = (50 << 20) // len(line)
        with open(root / "big.log", "w") as out:
            for n in range(count):
                out.write("    needle_marker found here\n" if n == count // 2 else line)
        with Workspace(root, search_seconds=600, max_file_bytes=64 << 20) as ws:
            session = ws.session("bench")
            args = {"pattern": "needle_marker"}
            ours = session.call("grep", args)
            theirs = subprocess.run([rg, "-n", "needle_marker"], cwd=root, capture_output=True)
            note = _compare_rows(ours.text, theirs.stdout.decode())
            medians = interleaved(
                {
                    "fs-tools grep": _call(session, "grep", args),
                    "ripgrep grep": _command([rg, "-n", "needle_marker"], root),
                },
                9,
                warm=1,
            )
    return [
        ratio_row(SECTION, "one 50 MB file, rare line", medians, "fs-tools grep", "ripgrep grep", limit=2.0, note=note)
    ]


def _compare_rows(ours: str, theirs: str) -> str:
    """Whether fs-tools' ``path:line: text`` rows and ripgrep's ``path:line:text`` name the same lines."""
    mine = {
        tuple(row.split(":", 2)[:2]) for row in ours.splitlines() if row.count(":") >= 2 and not row.startswith("(")
    }
    other = {tuple(row.removeprefix("./").split(":", 2)[:2]) for row in theirs.splitlines() if row}
    if mine == other:
        return f"same {len(mine):,} rows"
    return f"sets differ: fs-tools {len(mine)}, ripgrep {len(other)} rows"


def fetch_django() -> Path | None:
    """The Django sdist unpacked under .bench-env/ (fetched with pip the first time); None on failure."""
    target = ENV / f"django-{DJANGO}"
    unpacked = target / f"Django-{DJANGO}"
    if unpacked.is_dir():
        return unpacked
    target.mkdir(parents=True, exist_ok=True)
    fetched = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--no-binary",
            ":all:",
            f"django=={DJANGO}",
            "-d",
            str(target),
        ],
        capture_output=True,
        check=False,
    )
    archives = sorted(target.glob("*.tar.gz"))
    if fetched.returncode != 0 or not archives:
        print(f"[bench] could not fetch the Django {DJANGO} sdist: the real-tree rows are skipped", file=sys.stderr)
        return None
    with tarfile.open(archives[0]) as archive:
        archive.extractall(target, filter="data")
    return unpacked if unpacked.is_dir() else None


def _call(session: object, tool: str, args: dict[str, object]) -> Callable[[], object]:
    def run() -> object:
        result = session.call(tool, args)  # type: ignore[attr-defined]
        if result.is_error:
            raise RuntimeError(result.text)
        return result

    return run


def _command(argv: list[str], cwd: Path | None = None) -> Callable[[], object]:
    return lambda: subprocess.run(argv, capture_output=True, check=False, cwd=cwd)
