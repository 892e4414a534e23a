"""The pytest kit: the concurrent writer reproduces each stale scenario deterministically, and the
plugin's fixtures work when fs-tools is installed (a pytest subprocess, through the entry point)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from fs_tools import Session, Workspace
from fs_tools.testing import FAKE_ROOT, ConcurrentWriter, assert_error, assert_ok

BACKENDS = ["real", "fake"]  # a real temporary directory; pyfakefs's in-memory filesystem


@pytest.fixture(params=BACKENDS)
def root(request: pytest.FixtureRequest) -> Path:
    return request.getfixturevalue("fst_root" if request.param == "real" else "fst_fake_root")  # type: ignore[no-any-return]


@pytest.fixture
def workspace(request: pytest.FixtureRequest, root: Path) -> Workspace:
    name = "fst_fake_workspace" if root == FAKE_ROOT else "fst_workspace"
    return request.getfixturevalue(name)  # type: ignore[no-any-return]


@pytest.fixture
def session(workspace: Workspace) -> Session:
    return workspace.session("kit")


@pytest.fixture
def writer(workspace: Workspace) -> Iterator[ConcurrentWriter]:
    kit = ConcurrentWriter(workspace)
    yield kit
    kit.close()


def _edit(session: Session, old: str, new: str) -> object:
    return session.call("edit", {"file_path": "a.txt", "old_string": old, "new_string": new})


def test_a_change_right_after_the_read_makes_the_edit_stale(
    root: Path, session: Session, writer: ConcurrentWriter
) -> None:
    (root / "a.txt").write_text("one\ntwo\n")
    writer.after_read("a.txt", "one\nTWO\n")
    assert_ok(session.call("read", {"file_path": "a.txt"}))
    stale = assert_error(_edit(session, "one", "1"), "FS_STALE_VERSION")  # type: ignore[arg-type]
    assert "line 2 changed" in stale.text
    assert (root / "a.txt").read_text() == "one\nTWO\n"
    assert_ok(session.call("read", {"file_path": "a.txt"}))
    assert_ok(_edit(session, "one", "1"))  # type: ignore[arg-type]
    assert (root / "a.txt").read_text() == "1\nTWO\n"
    assert writer.fired == [f"after read: {os.path.realpath(root / 'a.txt')}"]


def test_a_change_between_the_check_and_the_commit_is_caught_by_the_commit(
    root: Path, session: Session, writer: ConcurrentWriter
) -> None:
    (root / "a.txt").write_text("one\n")
    assert_ok(session.call("read", {"file_path": "a.txt"}))
    writer.before_commit("a.txt", "outside\n")
    assert_error(_edit(session, "one", "1"), "FS_STALE_VERSION")  # type: ignore[arg-type]
    assert (root / "a.txt").read_text() == "outside\n"  # the outside write survives
    assert len(writer.fired) == 1 and writer.fired[0].startswith("before commit")


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("write", {"file_path": "a.txt", "content": "mine\n"}),
        ("edit", {"file_path": "a.txt", "old_string": "one", "new_string": "1"}),
        ("multi_edit", {"file_path": "a.txt", "edits": [{"old_string": "one", "new_string": "1"}]}),
    ],
)
def test_a_deletion_before_the_commit_is_stale_for_every_writing_tool(
    root: Path, session: Session, writer: ConcurrentWriter, tool: str, args: dict[str, object]
) -> None:
    (root / "a.txt").write_text("one\n")
    assert_ok(session.call("read", {"file_path": "a.txt"}))
    writer.before_commit("a.txt", lambda path: path.unlink())
    assert_error(session.call(tool, args), "FS_STALE_VERSION")
    assert not (root / "a.txt").exists()


def test_a_racing_creator_is_never_clobbered(root: Path, session: Session, writer: ConcurrentWriter) -> None:
    writer.before_commit("a.txt", "theirs\n")
    assert_error(session.call("write", {"file_path": "a.txt", "content": "mine\n"}), "FS_NOT_OBSERVED")
    assert (root / "a.txt").read_text() == "theirs\n"


def test_a_change_on_the_nth_provider_operation(root: Path, session: Session, writer: ConcurrentWriter) -> None:
    (root / "a.txt").write_text("one\n")
    writer.on_operation(2, "a.txt", "changed\n")  # 1: the read's scan; 2: the edit's first look
    assert_ok(session.call("read", {"file_path": "a.txt"}))
    assert_error(_edit(session, "one", "1"), "FS_STALE_VERSION")  # type: ignore[arg-type]
    assert writer.fired == [f"on operation 2: {os.path.realpath(root / 'a.txt')}"]


def test_an_editor_style_atomic_save_after_the_read(root: Path, session: Session, writer: ConcurrentWriter) -> None:
    def save(path: Path) -> None:
        temp = path.with_name(".a.txt.swp")
        temp.write_text("saved by an editor\n")
        os.replace(temp, path)

    (root / "a.txt").write_text("one\n")
    writer.after_read("a.txt", save)
    assert_ok(session.call("read", {"file_path": "a.txt"}))
    assert_error(_edit(session, "one", "1"), "FS_STALE_VERSION")  # type: ignore[arg-type]


def test_closing_the_writer_restores_the_provider(workspace: Workspace) -> None:
    kit = ConcurrentWriter(workspace)
    assert "scan" in vars(workspace.provider)
    kit.close()
    assert not {"scan", "commit", "_check_expected"} & set(vars(workspace.provider))


def test_the_assertion_helpers_say_what_they_got(root: Path, session: Session) -> None:
    missing = session.call("read", {"file_path": "nope.txt"})
    with pytest.raises(AssertionError, match="expected success, got FS_NOT_FOUND"):
        assert_ok(missing)
    with pytest.raises(AssertionError, match="expected FS_STALE_VERSION, got FS_NOT_FOUND"):
        assert_error(missing, "FS_STALE_VERSION")


DOCS = Path(__file__).resolve().parent.parent / "docs" / "testing.md"


def test_the_plugin_fixtures_work_through_the_installed_entry_point(tmp_path: Path) -> None:
    example = DOCS.read_text(encoding="utf-8").split("```python\n", 1)[1].split("```", 1)[0]
    (tmp_path / "test_sample.py").write_text(example)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path / "test_sample.py")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 passed" in result.stdout


def test_the_fake_workspace_never_touches_the_disk(fst_fake_root: Path, fst_fake_session: Session) -> None:
    assert_ok(fst_fake_session.call("write", {"file_path": "made/here.txt", "content": "in memory\n"}))
    assert (fst_fake_root / "made" / "here.txt").read_text() == "in memory\n"
    assert_error(fst_fake_session.call("read", {"file_path": "../etc/passwd"}), "FS_SANDBOX_DENIED")
    (fst_fake_root / "out").symlink_to("/etc")
    assert_error(fst_fake_session.call("read", {"file_path": "out/passwd"}), "FS_SANDBOX_DENIED")
    fst_fake_root.joinpath("made", "here.txt").write_text("changed outside\n")
    assert [change.path for change in fst_fake_session.changed()] == [str(fst_fake_root / "made" / "here.txt")]
    real = subprocess.run(["test", "-e", str(FAKE_ROOT)], check=False).returncode  # a real process, real disk
    assert real != 0


def test_importing_the_plugin_stays_light() -> None:
    heavy = "('pydantic', 'watchdog', 'fs_tools.workspace')"
    code = f"import sys, fs_tools.testing; print(sorted(m for m in {heavy} if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
