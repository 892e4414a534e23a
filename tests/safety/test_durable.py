"""Workspace(durable=False) / --no-durable: every change to the files is still atomic and gated, with no
fsync of a file or a directory (a SQLite observation store keeps its own syncing); the default syncs
each written file and its directory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fs_tools import Workspace, cli
from fs_tools.provider import FileProvider, files
from fs_tools.testing import assert_error, assert_ok


@pytest.fixture
def fsyncs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        calls.append(fd)
        real(fd)

    monkeypatch.setattr(files.os, "fsync", fsync)
    return calls


def _every_change(root: Path, durable: bool) -> None:
    (root / "a.txt").write_text("one\ntwo\n")
    (root / "unread.txt").write_text("theirs\n")
    with Workspace(root, durable=durable) as ws:
        session = ws.session("s")
        assert_ok(session.call("read", {"file_path": "a.txt"}))
        assert_ok(session.call("edit", {"file_path": "a.txt", "old_string": "two", "new_string": "2"}))
        assert_ok(session.call("write", {"file_path": "a.txt", "content": "three\n"}))
        assert_ok(session.call("write", {"file_path": "new/dir/b.txt", "content": "b\n"}))
        assert_ok(session.call("create_directory", {"path": "made"}))
        assert_ok(session.call("move", {"source": "a.txt", "destination": "made/a.txt"}))
        assert_ok(session.call("delete", {"file_path": "made/a.txt"}))
        assert_error(session.call("write", {"file_path": "unread.txt", "content": "x\n"}), "FS_NOT_OBSERVED")
    assert (root / "new" / "dir" / "b.txt").read_text() == "b\n"
    assert not (root / "made" / "a.txt").exists()
    assert [p.name for p in root.rglob("*") if p.name.endswith(".fs-tools.tmp")] == []


def test_a_workspace_that_is_not_durable_changes_files_without_one_fsync(tmp_path: Path, fsyncs: list[int]) -> None:
    _every_change(tmp_path, durable=False)
    assert fsyncs == []


def test_the_default_syncs_what_it_writes(tmp_path: Path, fsyncs: list[int]) -> None:
    _every_change(tmp_path, durable=True)
    assert len(fsyncs) >= 10  # each write's temp and directory, the made directories, the move, the delete


@pytest.mark.parametrize("durable", [True, False])
def test_a_write_and_an_edit_sync_their_temp_and_their_directory(
    tmp_path: Path, fsyncs: list[int], durable: bool
) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    with Workspace(tmp_path, durable=durable) as ws:
        session = ws.session("s")
        assert_ok(session.call("read", {"file_path": "a.txt"}))
        for tool, args in (
            ("write", {"file_path": "a.txt", "content": "two\n"}),
            ("edit", {"file_path": "a.txt", "old_string": "two", "new_string": "three"}),
        ):
            before = len(fsyncs)
            assert_ok(session.call(tool, args))
            assert len(fsyncs) - before == (2 if durable else 0), tool  # the temp, then the directory
    assert (tmp_path / "a.txt").read_text() == "three\n"


def test_durable_is_the_providers_when_a_provider_is_given(tmp_path: Path) -> None:
    provider = FileProvider([tmp_path], durable=False)
    try:
        with pytest.raises(ValueError, match="durable are the provider's"):
            Workspace(provider, durable=False)
        with pytest.raises(ValueError, match=r"durable=\.\.\.\) must be True or False, got 'no'"):
            Workspace(provider, durable="no")  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="durable must be True or False, got None"):
            FileProvider([tmp_path], durable=None)  # type: ignore[arg-type]
    finally:
        provider.close()


def test_the_command_line_takes_no_durable(
    tmp_path: Path, fsyncs: list[int], capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    args = ["call", "--root", str(root), "--session", "k", "--state", str(tmp_path / "state.sqlite")]
    assert cli.main([*args, "--no-durable", "write", '{"file_path": "a.txt", "content": "x\\n"}']) == 0
    assert (root / "a.txt").read_text() == "x\n" and fsyncs == []
    assert cli.main([*args, "write", '{"file_path": "b.txt", "content": "y\\n"}']) == 0
    assert fsyncs  # the default is durable
    assert "Created 'b.txt'" in capsys.readouterr().out
