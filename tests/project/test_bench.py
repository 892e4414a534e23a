"""The benchmark compares like with like: its raw baseline produces what the tools produce, and its
policy-off switch only removes the observation gate."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench.baseline import raw_edit, raw_read
from bench.files import MARK_A, MARK_B, make_workloads
from bench.gates import NullStore, policy_off
from fs_tools import Workspace, gating
from fs_tools.testing import assert_error, assert_ok

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("size", [1 << 10, 100 << 10])
def test_the_raw_read_shows_what_the_tool_shows(tmp_path: Path, size: int) -> None:
    load = make_workloads(tmp_path, {"f": size})[0]
    with Workspace(tmp_path) as ws:
        result = assert_ok(ws.session("s").call("read", {"file_path": load.relative}))
    page = result.text.split("\n\n[showing lines", 1)[0]  # the footer is not part of the page
    assert raw_read(load.path, int(result.value["lines_shown"])) == page  # type: ignore[index]


def test_the_raw_edit_leaves_the_file_the_tool_leaves(tmp_path: Path) -> None:
    ours, raw = make_workloads(tmp_path / "ours", {"f": 4096})[0], make_workloads(tmp_path / "raw", {"f": 4096})[0]
    with Workspace(tmp_path / "ours") as ws:
        session = ws.session("s")
        assert_ok(session.call("read", {"file_path": ours.relative}))
        assert_ok(session.call("edit", {"file_path": ours.relative, "old_string": MARK_A, "new_string": MARK_B}))
    raw_edit(raw.path, MARK_A, MARK_B)
    assert ours.path.read_bytes() == raw.path.read_bytes() == ours.text_b.encode()


def test_policy_off_removes_only_the_gate_and_restores_it(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    saved = gating.decide
    with Workspace(tmp_path, store=NullStore()) as ws:
        session = ws.session("s")
        with policy_off():
            assert_ok(session.call("write", {"file_path": "a.txt", "content": "blind\n"}))  # never read: allowed
            assert_error(session.call("write", {"file_path": "../x", "content": "x"}), "FS_SANDBOX_DENIED")
        assert gating.decide is saved
        assert_error(session.call("write", {"file_path": "a.txt", "content": "again\n"}), "FS_NOT_OBSERVED")
    assert (tmp_path / "a.txt").read_text() == "blind\n"


def test_the_smoke_run_writes_every_section(tmp_path: Path) -> None:
    out = tmp_path / "rows.json"
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--smoke", "--json", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    rows = json.loads(out.read_text())["rows"]
    sections = {row["section"] for row in rows}
    assert {"1 raw baseline", "2 gate overhead", "4 search", "8 history", "9 concurrency"} <= sections
    assert all(row["ratio"] is None or row["ratio"] > 0 for row in rows)
    assert "| section | workload |" in done.stdout


def test_the_lock_wait_timer_records_every_wait_and_restores_the_lock(tmp_path: Path) -> None:
    from bench.concurrency import timed_lock_waits
    from fs_tools.provider import locks

    original = locks.KeyedLocks.hold
    (tmp_path / "a.txt").write_text("a\n")
    with Workspace(tmp_path) as ws, timed_lock_waits() as waits:
        session = ws.session("s")
        assert not session.call("read", {"file_path": "a.txt"}).is_error
        assert not session.call("write", {"file_path": "a.txt", "content": "b\n"}).is_error
    assert len(waits) == 2 and all(wait >= 0 for wait in waits)  # the read's lock and the write's
    assert locks.KeyedLocks.hold is original
