"""History, diff and rewind (SPEC §16): every mutating tool recorded, rewind restoring contents,
deleted files, moves, creates and directories — and leaving alone what someone else changed."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from fs_tools import Session, Workspace
from fs_tools.cli import main

# --- helpers ----------------------------------------------------------------------------------------------


def tree(root: Path) -> dict[str, bytes | None]:
    """Every entry below ``root``: a file by its bytes, a directory as None."""
    found: dict[str, bytes | None] = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).as_posix()
        found[relative] = None if path.is_dir() else path.read_bytes()
    return found


class OnVersionChecked:
    """A provider listener (the pytest kit's seam) that calls ``then`` when a commit has checked a version."""

    def __init__(self, then: Callable[[str], object]) -> None:
        self.then = then

    def operation_started(self, key: str) -> None:
        pass

    def read_recorded(self, key: str) -> None:
        pass

    def version_checked(self, key: str) -> None:
        self.then(key)


def ok(session: Session, tool: str, arguments: dict[str, object]) -> str:
    result = session.call(tool, arguments)
    assert not result.is_error, result.text
    return result.text


@pytest.fixture
def project(root: Path) -> Path:
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("def main():\n    return 1\n")
    (root / "notes.txt").write_text("one\ntwo\nthree\n")
    (root / "old.txt").write_text("to be deleted\n")
    (root / "tail.txt").write_bytes(b"no newline at the end")
    return root


def make_every_change(s: Session) -> None:
    """One call of every mutating tool (and a dialect's), on the project's files."""
    for path in ("src/app.py", "notes.txt", "old.txt", "tail.txt"):
        ok(s, "read", {"file_path": path})
    ok(s, "edit", {"file_path": "src/app.py", "old_string": "return 1", "new_string": "return 2"})
    ok(s, "multi_edit", {"file_path": "notes.txt", "edits": [{"old_string": "one", "new_string": "uno"}]})
    ok(s, "write", {"file_path": "deep/new/file.txt", "content": "fresh\n"})
    ok(s, "write", {"file_path": "tail.txt", "content": "now with a newline\n"})
    ok(s, "move", {"source": "deep/new/file.txt", "destination": "moved/file.txt"})
    ok(s, "delete", {"file_path": "old.txt"})
    ok(s, "create_directory", {"path": "empty/dir"})
    patch = (
        "*** Begin Patch\n*** Update File: notes.txt\n@@\n-two\n+dos\n*** Add File: added.txt\n+added\n*** End Patch\n"
    )
    ok(s, "apply_patch", {"patch": patch})


@pytest.fixture
def everything(project: Path) -> Workspace:
    return Workspace(project, tools=[*_all_tools(), "apply_patch"])


def _all_tools() -> list[str]:
    from fs_tools.tools import ALL_TOOLS

    return [tool.name for tool in ALL_TOOLS]


# --- recording ---------------------------------------------------------------------------------------------


def test_every_mutating_tool_is_recorded_in_time_order_with_marks_interleaved(everything: Workspace) -> None:
    s = everything.session("agent")
    first = s.checkpoint("before")
    make_every_change(s)
    entries = s.history()
    assert [(e.kind, e.label) for e in entries[:1]] == [("mark", "before")]
    assert entries[0].mark == first
    tools = [e.tool for e in entries[1:]]
    # one apply_patch call over two files is one entry: no mark falls inside a call
    assert tools == ["edit", "multi_edit", "write", "write", "move", "delete", "create_directory", "apply_patch"]
    paths = [e.paths for e in entries[1:]]
    assert paths[0] == ("src/app.py",)
    assert paths[2] == ("deep", "deep/new", "deep/new/file.txt")  # the parents a write made, too
    assert paths[4] == ("moved", "deep/new/file.txt", "moved/file.txt")
    assert paths[6] == ("empty", "empty/dir")
    assert set(paths[7]) == {"notes.txt", "added.txt"}
    # each change's mark is the point just before it: rewinding there undoes it and what followed
    assert entries[1].mark == first
    assert all(e.kind == "change" for e in entries[1:])


def test_reads_and_failed_calls_record_nothing(project: Path) -> None:
    with Workspace(project) as ws:
        s = ws.session("agent")
        ok(s, "read", {"file_path": "notes.txt"})
        assert s.call("edit", {"file_path": "notes.txt", "old_string": "absent", "new_string": "x"}).is_error
        assert s.call("write", {"file_path": "src/app.py", "content": "x"}).is_error  # not read
        assert s.history() == []
        assert s.diff() == ""


def test_a_dialect_tool_is_recorded_by_its_own_name(project: Path) -> None:
    with Workspace(project, dialect="claude-code") as ws:
        s = ws.session("agent")
        ok(s, "Read", {"file_path": str(project / "notes.txt")})
        ok(s, "Edit", {"file_path": str(project / "notes.txt"), "old_string": "two", "new_string": "2"})
        assert [(e.tool, e.paths) for e in s.history()] == [("Edit", ("notes.txt",))]


# --- rewind ---------------------------------------------------------------------------------------------


def test_rewind_restores_every_kind_of_change(everything: Workspace, project: Path) -> None:
    before = tree(project)
    s = everything.session("agent")
    mark = s.checkpoint()
    make_every_change(s)
    assert tree(project) != before
    report = s.rewind(mark)
    assert not report.is_error, report
    assert tree(project) == before  # contents, the deleted file, the move, creates and every directory made
    assert "old.txt" in report.restored and "added.txt" in report.restored
    assert not list(project.rglob(".fs-tools*"))  # no temp files left


def test_after_a_rewind_the_session_may_edit_the_restored_version_without_reading(
    project: Path, workspace: Workspace
) -> None:
    s = workspace.session("agent")
    ok(s, "read", {"file_path": "notes.txt"})
    mark = s.checkpoint()
    ok(s, "edit", {"file_path": "notes.txt", "old_string": "two", "new_string": "2"})
    other = workspace.session("other")
    ok(other, "read", {"file_path": "notes.txt"})  # sees the session's version
    assert not s.rewind(mark).is_error
    ok(s, "edit", {"file_path": "notes.txt", "old_string": "three", "new_string": "3"})
    late = other.call("edit", {"file_path": "notes.txt", "old_string": "one", "new_string": "1"})
    assert late.error is not None and late.error.code == "FS_STALE_VERSION"  # its read went stale
    assert (project / "notes.txt").read_text() == "one\ntwo\n3\n"


def test_rewind_leaves_a_file_changed_outside_and_says_what_changed(project: Path, workspace: Workspace) -> None:
    s = workspace.session("agent")
    ok(s, "read", {"file_path": "notes.txt"})
    ok(s, "read", {"file_path": "src/app.py"})
    mark = s.checkpoint()
    ok(s, "edit", {"file_path": "notes.txt", "old_string": "two", "new_string": "2"})
    ok(s, "edit", {"file_path": "src/app.py", "old_string": "return 1", "new_string": "return 2"})
    (project / "notes.txt").write_text("one\n2\nthree, edited by the user\n")  # an editor, outside fs-tools
    report = s.rewind(mark)
    assert report.is_error and report.code is None
    assert report.restored == ["src/app.py"]
    [skipped] = report.skipped
    assert (skipped.path, skipped.code) == ("notes.txt", "FS_STALE_VERSION")
    assert "notes.txt" in skipped.message and "line 3" in skipped.message and "forced rewind" in skipped.message
    assert (project / "notes.txt").read_text() == "one\n2\nthree, edited by the user\n"  # not clobbered
    assert (project / "src/app.py").read_text() == "def main():\n    return 1\n"
    forced = s.rewind(mark, force=True)
    assert forced.restored == ["notes.txt"] and not forced.skipped
    assert (project / "notes.txt").read_text() == "one\ntwo\nthree\n"


def test_rewind_leaves_a_file_another_session_changed_between_the_sessions_own_changes(
    project: Path, workspace: Workspace
) -> None:
    s, other = workspace.session("agent"), workspace.session("other")
    ok(s, "read", {"file_path": "notes.txt"})
    mark = s.checkpoint()
    ok(s, "edit", {"file_path": "notes.txt", "old_string": "one", "new_string": "1"})
    ok(other, "read", {"file_path": "notes.txt"})
    ok(other, "edit", {"file_path": "notes.txt", "old_string": "two", "new_string": "2"})
    ok(s, "read", {"file_path": "notes.txt"})
    ok(s, "edit", {"file_path": "notes.txt", "old_string": "three", "new_string": "3"})
    report = s.rewind(mark)
    assert [(item.path, item.code) for item in report.skipped] == [("notes.txt", "FS_STALE_VERSION")]
    assert "between this session's changes" in report.skipped[0].message
    assert (project / "notes.txt").read_text() == "1\n2\n3\n"  # the other session's change survives


def test_rewind_of_a_deleted_file_someone_recreated_leaves_theirs(project: Path, workspace: Workspace) -> None:
    s = workspace.session("agent")
    ok(s, "read", {"file_path": "old.txt"})
    mark = s.checkpoint()
    ok(s, "delete", {"file_path": "old.txt"})
    (project / "old.txt").write_text("someone else's\n")
    report = s.rewind(mark)
    assert [(item.path, item.code) for item in report.skipped] == [("old.txt", "FS_STALE_VERSION")]
    assert (project / "old.txt").read_text() == "someone else's\n"


def test_a_created_directory_holding_someone_elses_file_is_kept(project: Path, workspace: Workspace) -> None:
    s = workspace.session("agent")
    mark = s.checkpoint()
    ok(s, "write", {"file_path": "made/here/mine.txt", "content": "mine\n"})
    (project / "made" / "theirs.txt").write_text("theirs\n")
    report = s.rewind(mark)
    assert not (project / "made" / "here").exists()  # mine, and the directory only it was in
    assert (project / "made" / "theirs.txt").read_text() == "theirs\n"
    assert [(item.path, item.code) for item in report.skipped] == [("made", "FS_NOT_EMPTY")]


def test_a_directory_move_is_undone_with_what_was_edited_inside(project: Path, workspace: Workspace) -> None:
    before = tree(project)
    s = workspace.session("agent")
    ok(s, "read", {"file_path": "src/app.py"})
    mark = s.checkpoint()
    ok(s, "edit", {"file_path": "src/app.py", "old_string": "return 1", "new_string": "return 2"})
    ok(s, "move", {"source": "src", "destination": "lib/src"})
    ok(s, "edit", {"file_path": "lib/src/app.py", "old_string": "return 2", "new_string": "return 3"})
    assert "# moved the directory src/ to lib/src/" in s.diff(mark)
    assert not s.rewind(mark).is_error
    assert tree(project) == before


def test_a_move_over_a_file_is_undone_and_the_replaced_file_comes_back(project: Path, workspace: Workspace) -> None:
    before = tree(project)
    s = workspace.session("agent")
    ok(s, "read", {"file_path": "notes.txt"})
    ok(s, "read", {"file_path": "old.txt"})
    mark = s.checkpoint()
    ok(s, "move", {"source": "notes.txt", "destination": "old.txt", "overwrite": True})
    assert not s.rewind(mark).is_error
    assert tree(project) == before


def test_a_rewind_is_recorded_and_can_itself_be_rewound(project: Path, workspace: Workspace) -> None:
    s = workspace.session("agent")
    ok(s, "read", {"file_path": "notes.txt"})
    start = s.checkpoint("start")
    ok(s, "edit", {"file_path": "notes.txt", "old_string": "two", "new_string": "2"})
    ok(s, "write", {"file_path": "new.txt", "content": "new\n"})
    edited = tree(project)
    before_rewind = s.checkpoint("before the rewind")
    assert not s.rewind(start).is_error
    last = s.history()[-1]
    assert (last.tool, set(last.paths)) == ("rewind", {"notes.txt", "new.txt"})  # one entry for the rewind
    assert not s.rewind(before_rewind).is_error  # redo
    assert tree(project) == edited
    again = s.rewind(before_rewind)  # the tree is as it was at that mark already
    assert not again.is_error and again.message.startswith("Nothing to rewind")


def test_an_unknown_mark_is_a_one_line_value_error(workspace: Workspace) -> None:
    s = workspace.session("agent")
    mark = s.checkpoint()
    for bad, words in [
        ("yesterday", "marks look like"),
        (workspace.session("other").checkpoint(), "not a mark of session 'agent'"),
        (mark.replace("m1-", "m99-"), "no such point"),
        (None, "a mark is a string"),
    ]:
        with pytest.raises(ValueError, match=words) as caught:
            s.rewind(bad)  # type: ignore[arg-type]
        assert "\n" not in str(caught.value)
        if bad is not None:  # diff(since=None) is every change
            with pytest.raises(ValueError, match=words):
                s.diff(since=bad)


def test_a_rewind_to_a_mark_older_than_the_kept_history_touches_nothing(project: Path) -> None:
    with Workspace(project, max_history_bytes=2_000) as ws:
        s = ws.session("agent")
        ok(s, "read", {"file_path": "notes.txt"})
        mark = s.checkpoint()
        for number in range(30):
            ok(s, "write", {"file_path": "notes.txt", "content": f"version {number}\n" * 20})
        now = tree(project)
        report = s.rewind(mark)
        assert report.code == "HISTORY_TRIMMED" and report.is_error and not report.restored
        assert "no longer reaches" in report.message and "max_history_bytes" in report.message
        assert tree(project) == now
        assert ws.history.kept_bytes <= 2_000  # type: ignore[attr-defined]
        # the newest changes are still there to rewind
        recent = s.history()[-1].mark
        assert not s.rewind(recent).is_error
        assert (project / "notes.txt").read_text() == "version 28\n" * 20


def test_contents_larger_than_the_budget_are_not_kept_and_the_rewind_says_so(project: Path) -> None:
    with Workspace(project, max_history_bytes=4_000) as ws:
        (project / "big.txt").write_text("x" * 10_000)
        s = ws.session("agent")
        ok(s, "read", {"file_path": "big.txt"})
        mark = s.checkpoint()
        ok(s, "write", {"file_path": "big.txt", "content": "small\n"})
        report = s.rewind(mark)
        assert [(item.path, item.code) for item in report.skipped] == [("big.txt", "HISTORY_TRIMMED")]
        assert (project / "big.txt").read_text() == "small\n"
        assert "# big.txt: its content before this session's change is not kept" in s.diff(mark)


def test_a_budget_of_zero_keeps_no_history(project: Path) -> None:
    with Workspace(project, max_history_bytes=0) as ws:
        s = ws.session("agent")
        ok(s, "write", {"file_path": "a.txt", "content": "a\n"})
        assert s.history() == []
    with pytest.raises(ValueError, match="max_history_bytes"):
        Workspace(project, max_history_bytes=-1)


def test_a_read_only_workspace_refuses_the_rewind_per_file(project: Path, tmp_path: Path) -> None:
    store = tmp_path / "state.db"
    with Workspace(project, store=store) as ws:
        s = ws.session("agent")
        mark = s.checkpoint()
        ok(s, "write", {"file_path": "new.txt", "content": "new\n"})
    with Workspace(project, store=store, read_only=True) as ws:
        report = ws.session("agent").rewind(mark)
        assert [(item.path, item.code) for item in report.skipped] == [("new.txt", "FS_SANDBOX_DENIED")]
        assert (project / "new.txt").exists()


# --- diff ----------------------------------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("patch") is None, reason="needs GNU patch")
def test_the_diff_applies_with_patch_p1_to_a_copy_of_the_tree_before(
    everything: Workspace, project: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(project, copy)
    s = everything.session("agent")
    make_every_change(s)
    text = s.diff()
    assert "--- a/src/app.py\n+++ b/src/app.py\n" in text
    assert "--- a/old.txt\n+++ /dev/null\n" in text and "--- /dev/null\n+++ b/moved/file.txt\n" in text
    assert "-no newline at the end\n\\ No newline at end of file\n" in text
    assert text.count("+++ b/notes.txt") == 1  # one net section per file
    done = subprocess.run(["patch", "-p1", "-s"], input=text, text=True, cwd=copy, capture_output=True)
    assert done.returncode == 0, done.stdout + done.stderr
    files = {path: data for path, data in tree(project).items() if data is not None}
    assert {path: data for path, data in tree(copy).items() if data is not None} == files


def test_diff_since_a_mark_covers_only_what_came_after(project: Path, workspace: Workspace) -> None:
    s = workspace.session("agent")
    ok(s, "read", {"file_path": "notes.txt"})
    ok(s, "edit", {"file_path": "notes.txt", "old_string": "one", "new_string": "1"})
    mark = s.checkpoint()
    ok(s, "edit", {"file_path": "notes.txt", "old_string": "two", "new_string": "2"})
    assert s.diff(since=mark) == ("--- a/notes.txt\n+++ b/notes.txt\n@@ -1,3 +1,3 @@\n 1\n-two\n+2\n three\n")
    assert "-one\n-two\n+1\n+2\n three\n" in s.diff()


# --- persistence, processes and the CLI --------------------------------------------------------------------


def test_a_mark_is_valid_in_a_new_workspace_and_another_process(project: Path, tmp_path: Path) -> None:
    store = tmp_path / "state.db"
    before = tree(project)
    script = textwrap.dedent(
        f"""
        from fs_tools import Workspace
        with Workspace({str(project)!r}, store={str(store)!r}) as ws:
            s = ws.session("agent")
            s.call("read", {{"file_path": "notes.txt"}})
            mark = s.checkpoint("from the child")
            s.call("edit", {{"file_path": "notes.txt", "old_string": "two", "new_string": "2"}})
            s.call("write", {{"file_path": "made/new.txt", "content": "new"}})
            print(mark)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    mark = done.stdout.strip()
    with Workspace(project, store=store) as ws:
        s = ws.session("agent")
        assert s.history()[0].label == "from the child"
        report = s.rewind(mark)
        assert not report.is_error, report
    assert tree(project) == before


def test_the_cli_checkpoints_lists_diffs_and_rewinds_call_sessions(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["--root", str(project), "--session", "cli", "--state", str(tmp_path / "state.db")]
    assert main(["checkpoint", *base, "--label", "start"]) == 0
    mark = capsys.readouterr().out.strip()
    assert main(["call", *base, "read", json.dumps({"file_path": "notes.txt"})]) == 0
    assert (
        main(["call", *base, "edit", json.dumps({"file_path": "notes.txt", "old_string": "two", "new_string": "2"})])
        == 0
    )
    capsys.readouterr()
    assert main(["history", *base]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert listed[0].startswith(mark) and listed[0].endswith("checkpoint start")
    assert listed[1].endswith("edit  notes.txt")
    assert main(["diff", *base, "--since", mark]) == 0
    assert "-two\n+2\n" in capsys.readouterr().out
    (project / "notes.txt").write_text("changed by the user\n")
    assert main(["rewind", *base, mark]) == 1
    out = capsys.readouterr().out
    assert "notes.txt: FS_STALE_VERSION" in out and "forced rewind" in out
    assert main(["rewind", *base, mark, "--force"]) == 0
    assert (project / "notes.txt").read_text() == "one\ntwo\nthree\n"
    assert main(["rewind", *base, "nonsense"]) == 2
    assert "unknown mark" in capsys.readouterr().err


# --- the opt-in tools ---------------------------------------------------------------------------------------


def test_the_history_tools_are_offered_only_when_named(project: Path) -> None:
    with Workspace(project) as ws:
        assert not {"checkpoint", "history", "diff", "rewind"} & set(ws.tools)
    with Workspace(project, tools=["read", "edit", "checkpoint", "history", "diff", "rewind"]) as ws:
        s = ws.session("model")
        mark = s.call("checkpoint", {"label": "before"}).value["mark"]
        ok(s, "read", {"file_path": "notes.txt"})
        ok(s, "edit", {"file_path": "notes.txt", "old_string": "two", "new_string": "2"})
        listed = ok(s, "history", {})
        assert mark in listed and "edit notes.txt" in listed
        assert "-two\n+2" in ok(s, "diff", {"since": mark})
        (project / "notes.txt").write_text("the user's\n")
        result = s.call("rewind", {"mark": mark})
        assert not result.is_error  # reported, not failed: the model learns what was left
        assert "FS_STALE_VERSION" in result.text and "tell the user" in result.text
        assert (project / "notes.txt").read_text() == "the user's\n"
        bad = s.call("rewind", {"mark": "m5"})
        assert bad.error is not None and bad.error.code == "INVALID_ARGS" and "/mark" in bad.text
        assert s.call("rewind", {"mark": mark, "force": True}).error.code == "INVALID_ARGS"  # type: ignore[union-attr]


def test_the_rewind_tool_reports_history_trimmed_as_an_error(project: Path) -> None:
    with Workspace(project, tools=["write", "checkpoint", "rewind"], max_history_bytes=500) as ws:
        s = ws.session("model")
        mark = s.call("checkpoint", {}).value["mark"]
        for number in range(10):
            ok(s, "write", {"file_path": f"f{number}.txt", "content": "x" * 100})
        result = s.call("rewind", {"mark": mark})
        assert result.error is not None and result.error.code == "HISTORY_TRIMMED"


# --- crashes -------------------------------------------------------------------------------------------------

_KILLER = """
import os, sys
from fs_tools import Workspace

class Killer:
    def __init__(self, after):
        self.left = after
    def operation_started(self, key):
        pass
    def read_recorded(self, key):
        pass
    def version_checked(self, key):
        self.left -= 1
        if self.left < 0:
            os._exit(9)

root, store, mark, after = sys.argv[1:]
with Workspace(root, store=store) as ws:
    ws.provider.listen(Killer(int(after)))
    report = ws.session("agent").rewind(mark)
    print("done" if not report.is_error else report)
"""


def _changed_project(base: Path) -> tuple[Path, Path, str, dict[str, bytes | None]]:
    project, store = base / "project", base / "state.db"
    (project / "src").mkdir(parents=True)
    for path, text in [("notes.txt", "one\n"), ("src/app.py", "app\n"), ("old.txt", "old\n")]:
        (project / path).write_text(text)
    original = tree(project)
    with Workspace(project, store=store) as ws:
        s = ws.session("agent")
        for path in ("notes.txt", "src/app.py", "old.txt"):
            ok(s, "read", {"file_path": path})
        mark = s.checkpoint()
        ok(s, "write", {"file_path": "notes.txt", "content": "changed\n"})
        ok(s, "edit", {"file_path": "src/app.py", "old_string": "app", "new_string": "changed"})
        ok(s, "delete", {"file_path": "old.txt"})
        ok(s, "write", {"file_path": "new/created.txt", "content": "created\n"})
    return project, store, mark, original


def test_a_rewind_killed_at_any_point_leaves_each_file_as_it_was_or_restored(tmp_path: Path) -> None:
    kills = 0
    for after in range(6):
        project, store, mark, original = _changed_project(tmp_path / str(after))
        changed = tree(project)
        done = subprocess.run(
            [sys.executable, "-c", _KILLER, str(project), str(store), mark, str(after)], text=True, capture_output=True
        )
        assert done.returncode in (0, 9), done.stderr
        kills += done.returncode == 9
        now = tree(project)
        for path in {*original, *changed} - {"new"}:  # each file as it was, or as restored
            assert now.get(path) in (original.get(path), changed.get(path)), (after, path)
        with Workspace(project, store=store) as ws:  # run again: the interrupted rewind completes
            report = ws.session("agent").rewind(mark)
            assert not report.is_error, (after, report)
        assert tree(project) == original, after
    assert kills >= 3  # the kill points fell inside the rewind


def test_a_history_entry_naming_a_path_outside_the_roots_touches_nothing_outside(root: Path, tmp_path: Path) -> None:
    """History comes from a store; whatever it says, the rewind goes through the confined provider."""
    from fs_tools.history import Effect, Move

    secret = tmp_path / "outside" / "secret.txt"
    with Workspace(root, tools=["write", "rewind"]) as ws:
        s = ws.session("agent")
        mark = s.checkpoint()
        ok(s, "write", {"file_path": "mine.txt", "content": "mine\n"})
        version = ws.history.entries("agent")[-1].steps[0].after  # type: ignore[union-attr]
        for steps in (
            [Effect(str(secret), None, version)],  # "created" outside: a rewind would remove it
            [Effect(str(root / ".." / "outside" / "secret.txt"), None, version)],
            [Move(str(secret), str(root / "mine.txt"), "file", version)],  # "moved" in from outside
        ):
            ws.history.append("agent", tool="write", call="x", label=None, steps=steps, blobs={})
        report = s.rewind(mark)
        assert {item.code for item in report.skipped} <= {"FS_SANDBOX_DENIED", "FS_STALE_VERSION"}, report
        assert secret.read_text() == "TOP-SECRET\n"
        assert all(str(tmp_path / "outside") not in item.message for item in report.skipped)


def test_a_writer_landing_between_the_rewinds_check_and_its_publish_is_never_clobbered(
    project: Path, workspace: Workspace
) -> None:
    s = workspace.session("agent")
    ok(s, "read", {"file_path": "notes.txt"})
    mark = s.checkpoint()
    ok(s, "write", {"file_path": "notes.txt", "content": "the session's\n"})

    def intrude(key: str) -> None:
        """Another program saves the file the moment the rewind has checked its version."""
        if key.endswith("notes.txt"):
            (project / "notes.txt").write_text("saved by another program\n")

    stop = workspace.provider.listen(OnVersionChecked(intrude))
    try:
        report = s.rewind(mark)
    finally:
        stop()
    assert [(item.path, item.code) for item in report.skipped] == [("notes.txt", "FS_STALE_VERSION")]
    assert (project / "notes.txt").read_text() == "saved by another program\n"


# --- found on review -------------------------------------------------------------------------------------


def test_a_file_now_where_the_session_made_a_directory_is_not_removed(root: Path, workspace: Workspace) -> None:
    s = workspace.session("agent")
    mark = s.checkpoint()
    ok(s, "create_directory", {"path": "build"})
    (root / "build").rmdir()
    (root / "build").write_text("someone else's report\n")
    report = s.rewind(mark)
    assert [(item.path, item.code) for item in report.skipped] == [("build", "FS_STALE_VERSION")]
    assert "no longer the directory this session made" in report.skipped[0].message
    assert (root / "build").read_text() == "someone else's report\n"


def test_a_path_that_now_leads_through_a_symlink_elsewhere_is_left_alone(root: Path, workspace: Workspace) -> None:
    (root / "cur").mkdir()
    (root / "cur" / "config").write_text("v1\n")
    s = workspace.session("agent")
    ok(s, "read", {"file_path": "cur/config"})
    mark = s.checkpoint()
    ok(s, "write", {"file_path": "cur/config", "content": "v2\n"})
    ok(s, "write", {"file_path": "cur/new.txt", "content": "new\n"})
    shutil.copytree(root / "cur", root / "release")  # the same bytes, elsewhere
    shutil.rmtree(root / "cur")
    (root / "cur").symlink_to("release")
    report = s.rewind(mark)
    assert {item.path for item in report.skipped} == {"cur/config", "cur/new.txt"}
    assert "leads somewhere else" in report.skipped[0].message
    assert (root / "release" / "config").read_text() == "v2\n" and (root / "release" / "new.txt").exists()


def test_a_directory_move_is_not_undone_over_what_now_sits_at_its_destination(root: Path, workspace: Workspace) -> None:
    (root / "src").mkdir()
    s = workspace.session("agent")
    mark = s.checkpoint()
    ok(s, "move", {"source": "src", "destination": "dst"})
    (root / "dst").rmdir()
    (root / "dst").write_text("the user's file\n")
    report = s.rewind(mark)
    assert [(item.path, item.code) for item in report.skipped] == [("dst", "FS_STALE_VERSION")]
    assert (root / "dst").read_text() == "the user's file\n" and not (root / "src").exists()


def test_a_rewind_at_the_budget_finishes_although_its_own_records_trim_history(root: Path) -> None:
    for number in range(6):
        (root / f"f{number}.txt").write_text(f"original {number}\n")
    with Workspace(root) as ws:
        s = ws.session("agent")
        mark = s.checkpoint()
        for number in range(6):
            ok(s, "read", {"file_path": f"f{number}.txt"})
            ok(s, "write", {"file_path": f"f{number}.txt", "content": f"changed {number}\n"})
            ok(s, "move", {"source": f"f{number}.txt", "destination": f"g{number}.txt"})
        ws.history.max_bytes = ws.history.kept_bytes + 50  # type: ignore[attr-defined]  # full to the brim
        report = s.rewind(mark)
        assert not report.is_error, report
        assert sorted(path.name for path in root.iterdir()) == [f"f{number}.txt" for number in range(6)]


def test_a_rewind_interrupted_after_an_operation_landed_finishes_when_run_again(
    root: Path, workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    (root / "a.txt").write_text("original\n")
    s = workspace.session("agent")
    ok(s, "read", {"file_path": "a.txt"})
    mark = s.checkpoint()
    ok(s, "write", {"file_path": "a.txt", "content": "changed\n"})
    history = workspace.history

    def lost(*args: object, **kwargs: object) -> int:
        raise KeyboardInterrupt  # the process stops after the rename, before the record is written

    with monkeypatch.context() as patched:
        patched.setattr(history, "append", lost)
        with pytest.raises(KeyboardInterrupt):
            s.rewind(mark)
    assert (root / "a.txt").read_text() == "original\n"
    report = s.rewind(mark)
    assert report.restored == ["a.txt"] and not report.skipped  # found restored, not blamed on someone else
    ok(s, "edit", {"file_path": "a.txt", "old_string": "original", "new_string": "edited"})  # observed


def test_a_mark_of_another_store_is_unknown_and_bad_host_arguments_are_value_errors(root: Path) -> None:
    with Workspace(root) as first:
        mark = first.session("agent").checkpoint()
    with Workspace(root) as second:
        s = second.session("agent")
        s.checkpoint()
        with pytest.raises(ValueError, match="not a mark of session 'agent' in this history store"):
            s.rewind(mark)
        with pytest.raises(ValueError, match="marks look like"):
            s.rewind("m\u0661-00000000")  # an Arabic-Indic digit one is not a mark
        with pytest.raises(ValueError, match="Unicode text"):
            s.checkpoint("\ud800")
        with pytest.raises(ValueError, match="at most 1,000"):
            s.checkpoint("x" * 1_001)
        with pytest.raises(ValueError, match="True or False"):
            s.rewind(s.checkpoint(), force="yes")  # type: ignore[arg-type]


@pytest.mark.skipif(shutil.which("patch") is None, reason="needs GNU patch")
def test_the_diff_carries_names_with_spaces_and_lines_with_lone_carriage_returns(
    root: Path, workspace: Workspace, tmp_path: Path
) -> None:
    (root / "my notes.txt").write_text("one\ntwo\n")
    copy = tmp_path / "copy"
    shutil.copytree(root, copy)
    s = workspace.session("agent")
    ok(s, "read", {"file_path": "my notes.txt"})
    ok(s, "write", {"file_path": "my notes.txt", "content": "one\rstill one\ntwo\n"})
    ok(s, "write", {"file_path": "empty.txt", "content": ""})
    text = s.diff()
    assert "# created the empty file empty.txt\n" in text
    done = subprocess.run(["patch", "-p1", "-s"], input=text, text=True, cwd=copy, capture_output=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (copy / "my notes.txt").read_bytes() == b"one\rstill one\ntwo\n"


def test_a_diff_says_when_history_no_longer_reaches_its_start(root: Path) -> None:
    with Workspace(root, max_history_bytes=1_500) as ws:
        s = ws.session("agent")
        for number in range(12):
            ok(s, "write", {"file_path": f"f{number}.txt", "content": "x" * 100})
        assert s.diff().startswith("# history no longer reaches the session's first change")


def test_a_store_shared_by_two_projects_shows_each_only_its_own_changes(tmp_path: Path) -> None:
    store = tmp_path / "state.db"
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    with Workspace(first, store=store) as ws:
        s = ws.session("k")
        mark = s.checkpoint()
        ok(s, "write", {"file_path": "one.txt", "content": "1\n"})
    with Workspace(second, store=store) as ws:
        s = ws.session("k")
        assert [entry.kind for entry in s.history()] == ["mark"]
        assert s.diff() == ""
        assert not s.rewind(mark).is_error
    assert (first / "one.txt").exists()


# --- found on the second review ------------------------------------------------------------------------------


def test_a_move_of_another_file_does_not_split_a_files_restore(root: Path, workspace: Workspace) -> None:
    (root / "a.txt").write_text("a0\n")
    (root / "x.txt").write_text("x\n")
    s, other = workspace.session("agent"), workspace.session("other")
    for path in ("a.txt", "x.txt"):
        ok(s, "read", {"file_path": path})
    mark = s.checkpoint()
    ok(s, "write", {"file_path": "a.txt", "content": "a1\n"})
    ok(s, "move", {"source": "x.txt", "destination": "y.txt"})
    ok(s, "write", {"file_path": "a.txt", "content": "a2\n"})
    checks: list[str] = []

    stop = workspace.provider.listen(OnVersionChecked(lambda key: checks.append(key.rsplit("/", 1)[-1])))
    try:
        assert not s.rewind(mark).is_error
    finally:
        stop()
    assert checks.count("a.txt") == 1  # one commit: a2 -> a0, never through a1
    assert (root / "a.txt").read_text() == "a0\n" and (root / "x.txt").exists()
    # someone else's change between the session's two edits is seen across the move too
    ok(s, "read", {"file_path": "a.txt"})
    ok(s, "read", {"file_path": "x.txt"})
    mark = s.checkpoint()
    ok(s, "write", {"file_path": "a.txt", "content": "a1\n"})
    ok(other, "read", {"file_path": "a.txt"})
    ok(other, "write", {"file_path": "a.txt", "content": "theirs\n"})
    ok(s, "move", {"source": "x.txt", "destination": "y.txt"})
    ok(s, "read", {"file_path": "a.txt"})
    ok(s, "write", {"file_path": "a.txt", "content": "a3\n"})
    report = s.rewind(mark)
    assert [(item.path, item.code) for item in report.skipped] == [("a.txt", "FS_STALE_VERSION")]
    assert (root / "a.txt").read_text() == "a3\n"  # left as it is, as the report says


def test_a_damaged_history_row_never_fails_a_write(root: Path, tmp_path: Path) -> None:
    import sqlite3

    store = tmp_path / "state.db"
    (root / "a.txt").write_text("one\n")
    with Workspace(root, store=store, max_history_bytes=3_000) as ws:
        s = ws.session("agent")
        ok(s, "read", {"file_path": "a.txt"})
        ok(s, "write", {"file_path": "a.txt", "content": "two\n"})
    with sqlite3.connect(store) as db:
        db.execute("UPDATE history SET steps = 'not json'")
    with Workspace(root, store=store, max_history_bytes=3_000) as ws:
        s = ws.session("agent")
        for number in range(5):  # each append trims, meeting the damaged row
            ok(s, "write", {"file_path": "a.txt", "content": f"version {number}\n" * 20})
        assert (root / "a.txt").read_text() == "version 4\n" * 20
        ok(s, "edit", {"file_path": "a.txt", "old_string": "version 4\n" * 20, "new_string": "done\n"})


def test_what_the_rewind_tool_returns_stays_bounded(root: Path) -> None:
    with Workspace(root, tools=["write", "checkpoint", "rewind"]) as ws:
        s = ws.session("model")
        mark = s.call("checkpoint", {}).value["mark"]
        for number in range(260):
            ok(s, "write", {"file_path": f"f{number:03}.txt", "content": "mine\n"})
        for number in range(260):
            (root / f"f{number:03}.txt").write_text("the user's\n")
        result = s.call("rewind", {"mark": mark})
        assert len(result.text.splitlines()) <= 25 and "and 240 more left as they are" in result.text
        assert len(result.value["skipped"]) == 200 and result.value["more_skipped"] == 60
        long = s.call("rewind", {"mark": "m1-" + "0" * 100_000})
        assert long.error is not None and len(long.text) < 400


def test_a_move_back_onto_a_recreated_source_names_the_source(root: Path, workspace: Workspace) -> None:
    (root / "a.txt").write_text("a\n")
    s = workspace.session("agent")
    ok(s, "read", {"file_path": "a.txt"})
    mark = s.checkpoint()
    ok(s, "move", {"source": "a.txt", "destination": "b.txt"})
    (root / "a.txt").write_text("someone else's a\n")
    [skipped] = s.rewind(mark).skipped
    assert skipped.message.startswith("'a.txt' exists again")
    assert (root / "a.txt").read_text() == "someone else's a\n" and (root / "b.txt").read_text() == "a\n"


def test_the_cli_needs_an_existing_state_file_to_list_diff_or_rewind(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nowhere" / "state.db"
    for command in (["history"], ["diff"], ["rewind", "m1-00000000"]):
        assert main([*command, "--root", str(root), "--session", "k", "--state", str(missing)]) == 2
        assert "no state file" in capsys.readouterr().err
    assert not missing.parent.exists()


def test_a_directory_move_is_not_undone_for_another_directory_of_the_same_name(
    root: Path, workspace: Workspace
) -> None:
    (root / "src").mkdir()
    (root / "src" / "mine.txt").write_text("mine\n")
    s = workspace.session("agent")
    mark = s.checkpoint()
    ok(s, "move", {"source": "src", "destination": "lib"})
    (root / "lib").rename(root / "kept")  # the user moves it on, and makes a lib of their own
    (root / "lib").mkdir()
    (root / "lib" / "theirs.txt").write_text("theirs\n")
    report = s.rewind(mark)
    assert [(item.path, item.code) for item in report.skipped] == [("lib", "FS_STALE_VERSION")]
    assert "another directory" in report.skipped[0].message
    assert (root / "lib" / "theirs.txt").exists() and not (root / "src").exists()
