"""Limits of the discovery tools, from review: catastrophic patterns, deep trees, special files that
merely carry an interesting name, pattern-size limits, and replay of hostile logs."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from fs_tools import Workspace
from fs_tools.provider import tempfiles
from fs_tools.provider.walk import MAX_WALK_DEPTH


def _code(result: object) -> str | None:
    error = getattr(result, "error", None)
    return None if error is None else str(error.code)


@pytest.mark.parametrize("path", ["a.txt", "."])
def test_a_catastrophic_pattern_stops_at_the_budget(root: Path, path: str) -> None:
    # the 'b' on a later line lets the file past grep's literal prefilter to the backtracking regex
    (root / "a.txt").write_text("a" * 40 + "!\nb\n")
    with Workspace(root, search_seconds=0.5) as ws:
        result = ws.session("s").call("grep", {"pattern": "(a|aa)+b", "path": path})
    assert _code(result) == "TOOL_TIMEOUT", result.text
    assert "budget" in result.text


def test_a_tree_deeper_than_the_walk_limit_is_an_error_not_a_silent_gap(root: Path) -> None:
    deep = root
    for _ in range(MAX_WALK_DEPTH + 2):
        deep = deep / "d"
    deep.mkdir(parents=True)
    (deep / "leaf.txt").write_text("needle\n")
    with Workspace(root) as ws:
        session = ws.session("s")
        for tool, args in (("glob", {"pattern": "**/leaf.txt"}), ("grep", {"pattern": "needle"})):
            result = session.call(tool, args)
            assert _code(result) == "FS_IO_ERROR" and "deeper than" in result.text, (tool, result.text)


def test_a_fifo_named_gitignore_is_never_opened(root: Path) -> None:
    os.mkfifo(root / ".gitignore")
    (root / "a.txt").write_text("needle\n")
    outcome: list[object] = []
    with Workspace(root) as ws:
        worker = threading.Thread(target=lambda: outcome.append(ws.session("s").call("grep", {"pattern": "needle"})))
        worker.start()
        worker.join(timeout=30)
        if worker.is_alive():  # a blocked open would hang here: release it, then fail
            with open(root / ".gitignore", "w"):
                pass
            worker.join()
            pytest.fail("grep opened the FIFO named .gitignore")
    assert outcome and "a.txt:1: needle" in outcome[0].text  # type: ignore[attr-defined]


def test_the_sweeper_never_opens_a_special_file_with_a_temp_name(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fifo = ".0123456789abcdef.fs-tools.tmp"
    os.mkfifo(root / fifo)
    opened: list[str] = []
    real_open = os.open

    def spy(path: object, flags: int, *args: object, **kwargs: object) -> int:
        opened.append(os.fsdecode(path))  # type: ignore[arg-type]
        return real_open(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(tempfiles.os, "open", spy)
    assert tempfiles.remove_orphans(real_open(root, os.O_RDONLY | os.O_DIRECTORY)) == 0
    assert fifo not in opened
    assert (root / fifo).exists()


@pytest.mark.parametrize(
    ("tool", "args", "pointer"),
    [
        ("glob", {"pattern": "{1..5000}"}, "/pattern"),
        ("glob", {"pattern": "{a,b}" * 10}, "/pattern"),
        ("grep", {"pattern": "x", "glob": "a{,}" * 11}, "/glob"),
    ],
)
def test_pattern_limits_are_invalid_arguments(root: Path, tool: str, args: dict[str, object], pointer: str) -> None:
    with Workspace(root) as ws:
        result = ws.session("s").call(tool, args)
    assert _code(result) == "INVALID_ARGS" and f"{pointer}: invalid glob pattern" in result.text, result.text


def test_replay_survives_deep_nesting_and_lone_surrogates(tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    log.write_text("[" * 100_000 + "]" * 100_000 + "\n" + '{"tool": "read", "arguments": {"file_path": "\\ud800"}}\n')
    result = subprocess.run(
        [sys.executable, "-m", "fs_tools.cli", "replay", str(log)], capture_output=True, check=False
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.decode("utf-8").splitlines()
    assert lines[0].endswith("(unreadable entry)") and "read" in lines[1]


def test_a_pattern_matching_the_empty_string_reports_only_real_lines(root: Path) -> None:
    (root / "a.txt").write_text("one\ntwo\n")
    with Workspace(root) as ws:
        result = ws.session("s").call("grep", {"pattern": "^"})
    rows = [line for line in result.text.splitlines() if line.startswith("a.txt:")]
    assert rows == ["a.txt:1: one", "a.txt:2: two"]
