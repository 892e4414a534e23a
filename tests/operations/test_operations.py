"""The operations beyond read, write and edit (SPEC §13): move, delete, create_directory, read_many, stat,
brief re-reads, and edit's dry_run — each decision the spec names, with the disk checked afterwards."""

from __future__ import annotations

import errno
import os
import re
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from fs_tools import Workspace
from fs_tools.result import ToolResult
from fs_tools.workspace import Session

TEMP = re.compile(r"\.[0-9a-f]{16}\.fs-tools\.(?:tmp|dir)")


@pytest.fixture
def ws(workspace: Workspace) -> Workspace:
    return workspace


@pytest.fixture
def s(session: Session) -> Session:
    return session


def ok(result: ToolResult) -> ToolResult:
    assert not result.is_error, result.text
    return result


def code(result: ToolResult) -> str:
    assert result.error is not None, f"expected an error, got: {result.text}"
    return result.error.code


def temps(root: Path) -> list[str]:
    return [str(p) for p in root.rglob("*") if TEMP.fullmatch(p.name)]


def read(s: Session, path: str) -> None:
    ok(s.call("read", {"file_path": path}))


# --- move -------------------------------------------------------------------------------------------


def test_a_move_needs_the_sources_observation_and_carries_it_to_the_new_path(root: Path, s: Session) -> None:
    (root / "a.txt").write_text("one\n")
    inode = (root / "a.txt").stat().st_ino
    unseen = s.call("move", {"source": "a.txt", "destination": "b.txt"})
    assert code(unseen) == "FS_NOT_OBSERVED" and unseen.text.endswith("read the file, then retry")
    read(s, "a.txt")
    moved = ok(s.call("move", {"source": "a.txt", "destination": "sub/dir/b.txt"}))
    assert moved.value == {"source": "a.txt", "destination": "sub/dir/b.txt", "kind": "file", "replaced": False}
    assert not (root / "a.txt").exists() and (root / "sub/dir/b.txt").stat().st_ino == inode  # renamed, not copied
    ok(s.call("edit", {"file_path": "sub/dir/b.txt", "old_string": "one", "new_string": "1"}))  # no re-read needed
    gone = s.call("edit", {"file_path": "a.txt", "old_string": "one", "new_string": "1"})
    assert code(gone) == "FS_NOT_FOUND"  # the old path is absent for this session
    ok(s.call("write", {"file_path": "a.txt", "content": "new\n"}))  # and write may create it again
    assert temps(root) == []


def test_a_changed_source_is_stale_and_stays_where_it_is(root: Path, s: Session) -> None:
    (root / "a.txt").write_text("one\n")
    read(s, "a.txt")
    (root / "a.txt").write_text("changed by someone else\n")
    assert code(s.call("move", {"source": "a.txt", "destination": "b.txt"})) == "FS_STALE_VERSION"
    assert (root / "a.txt").read_text() == "changed by someone else\n" and not (root / "b.txt").exists()


@pytest.mark.parametrize("overwrite", [False, True])
def test_onto_an_existing_file_the_session_has_not_read_is_not_observed_whatever_overwrite_says(
    root: Path, s: Session, overwrite: bool
) -> None:
    (root / "a.txt").write_text("a\n")
    (root / "b.txt").write_text("b\n")
    read(s, "a.txt")
    refused = s.call("move", {"source": "a.txt", "destination": "b.txt", "overwrite": overwrite})
    assert code(refused) == "FS_NOT_OBSERVED" and "'b.txt'" in refused.text
    assert (root / "a.txt").read_text() == "a\n" and (root / "b.txt").read_text() == "b\n"


def test_onto_a_stale_destination_is_stale(root: Path, s: Session) -> None:
    (root / "a.txt").write_text("a\n")
    (root / "b.txt").write_text("b\n")
    read(s, "a.txt")
    read(s, "b.txt")
    (root / "b.txt").write_text("b changed\n")
    refused = s.call("move", {"source": "a.txt", "destination": "b.txt", "overwrite": True})
    assert code(refused) == "FS_STALE_VERSION"
    assert (root / "b.txt").read_text() == "b changed\n" and (root / "a.txt").exists()


def test_onto_an_observed_file_needs_overwrite_and_the_message_names_it(root: Path, s: Session) -> None:
    (root / "a.txt").write_text("a\n")
    (root / "b.txt").write_text("b\n")
    read(s, "a.txt")
    read(s, "b.txt")
    refused = s.call("move", {"source": "a.txt", "destination": "b.txt"})
    assert code(refused) == "FS_ALREADY_EXISTS" and "overwrite=true" in refused.text
    assert (root / "b.txt").read_text() == "b\n"
    replaced = ok(s.call("move", {"source": "a.txt", "destination": "b.txt", "overwrite": True}))
    assert replaced.value is not None and replaced.value["replaced"] is True
    assert (root / "b.txt").read_text() == "a\n" and not (root / "a.txt").exists()
    ok(s.call("edit", {"file_path": "b.txt", "old_string": "a", "new_string": "A"}))  # observation followed


@pytest.mark.parametrize("overwrite", [False, True])
def test_a_move_never_replaces_a_directory(root: Path, s: Session, overwrite: bool) -> None:
    (root / "a.txt").write_text("a\n")
    (root / "dir").mkdir()
    read(s, "a.txt")
    refused = s.call("move", {"source": "a.txt", "destination": "dir", "overwrite": overwrite})
    assert code(refused) == "FS_NOT_REGULAR_FILE" and "directory" in refused.text
    assert refused.text.endswith("give the full new path as destination (e.g. 'dir/name'), or choose another")
    assert (root / "a.txt").exists() and (root / "dir").is_dir()


def test_a_directory_moves_whole_without_reads_and_the_sessions_observations_follow(root: Path, s: Session) -> None:
    (root / "pkg" / "sub").mkdir(parents=True)
    (root / "pkg" / "sub" / "m.py").write_text("x = 1\n")
    (root / "pkg" / "n.py").write_text("y = 2\n")
    read(s, "pkg/sub/m.py")
    other = s.workspace.session("other")
    read(other, "pkg/n.py")
    moved = ok(s.call("move", {"source": "pkg", "destination": "lib/pkg2"}))
    assert moved.value is not None and moved.value["kind"] == "directory"
    assert (root / "lib/pkg2/sub/m.py").read_text() == "x = 1\n" and not (root / "pkg").exists()
    ok(s.call("edit", {"file_path": "lib/pkg2/sub/m.py", "old_string": "1", "new_string": "3"}))
    assert code(s.call("edit", {"file_path": "pkg/sub/m.py", "old_string": "1", "new_string": "3"})) == "FS_NOT_FOUND"
    # another session's observations stay with the old paths: gone, so stale, never a silent success
    lost = other.call("edit", {"file_path": "pkg/n.py", "old_string": "2", "new_string": "4"})
    assert code(lost) == "FS_STALE_VERSION" and "deleted or moved" in lost.text


def test_a_directory_is_never_moved_into_itself(root: Path, s: Session) -> None:
    (root / "d").mkdir()
    refused = s.call("move", {"source": "d", "destination": "d/inner/d"})
    assert code(refused) == "FS_IO_ERROR"
    assert refused.text.endswith("cannot be moved into itself — choose a destination outside it")
    assert (root / "d").is_dir() and not (root / "d" / "inner").exists()  # no parent was left behind


def test_protected_paths_apply_to_both_ends_and_everything_under_a_moved_directory(root: Path) -> None:
    (root / "conf").mkdir()
    (root / "conf" / ".env").write_text("SECRET=1\n")
    (root / "a.txt").write_text("a\n")
    with Workspace(root, protected=[".env", "locked/"]) as ws:
        s = ws.session("s")
        read(s, "a.txt")
        inside = s.call("move", {"source": "conf", "destination": "settings"})
        assert code(inside) == "FS_SANDBOX_DENIED" and ".env" in inside.text
        onto = s.call("move", {"source": "a.txt", "destination": "locked/a.txt"})
        assert code(onto) == "FS_SANDBOX_DENIED"
        read(s, "conf/.env")
        assert code(s.call("move", {"source": "conf/.env", "destination": "env.txt"})) == "FS_SANDBOX_DENIED"
    assert (root / "conf" / ".env").exists() and (root / "a.txt").exists() and not (root / "locked").exists()


def test_a_symlink_moves_as_a_link_without_a_read_and_one_leading_outside_is_refused(
    root: Path, s: Session, tmp_path: Path
) -> None:
    (root / "target.txt").write_text("t\n")
    os.symlink("target.txt", root / "link")
    ok(s.call("move", {"source": "link", "destination": "moved-link"}))
    assert os.readlink(root / "moved-link") == "target.txt" and (root / "target.txt").read_text() == "t\n"
    outside = tmp_path / "outside.txt"
    outside.write_text("TOP-SECRET\n")
    os.symlink(outside, root / "out")
    refused = s.call("move", {"source": "out", "destination": "kept"})
    assert code(refused) == "FS_SANDBOX_DENIED" and str(outside) not in refused.text
    assert (root / "out").is_symlink() and not (root / "kept").exists()


def test_a_move_onto_a_symlink_is_refused_and_keeps_the_link(root: Path, s: Session) -> None:
    (root / "a.txt").write_text("a\n")
    (root / "t.txt").write_text("t\n")
    os.symlink("t.txt", root / "link")
    read(s, "a.txt")
    read(s, "link")
    refused = s.call("move", {"source": "a.txt", "destination": "link", "overwrite": True})
    assert code(refused) == "FS_NOT_REGULAR_FILE" and "symbolic link" in refused.text
    assert os.readlink(root / "link") == "t.txt" and (root / "t.txt").read_text() == "t\n"


def test_the_root_is_never_moved_or_deleted(root: Path, s: Session) -> None:
    for path in (".", "", str(root), "sub/.."):
        if path:
            assert code(s.call("delete", {"file_path": path})) in ("FS_SANDBOX_DENIED", "FS_NOT_FOUND")
            assert code(s.call("move", {"source": path, "destination": "elsewhere"})) in (
                "FS_SANDBOX_DENIED",
                "FS_NOT_FOUND",
            )
    assert code(s.call("delete", {"file_path": "."})) == "FS_SANDBOX_DENIED"
    assert code(s.call("move", {"source": str(root), "destination": "x"})) == "FS_SANDBOX_DENIED"
    assert root.is_dir() and not (root / "elsewhere").exists() and not (root / "x").exists()


def test_a_failed_move_leaves_no_directory_it_created(root: Path, s: Session) -> None:
    (root / "a.txt").write_text("a\n")
    read(s, "a.txt")
    (root / "a.txt").write_text("changed\n")
    assert code(s.call("move", {"source": "a.txt", "destination": "new/deep/b.txt"})) == "FS_STALE_VERSION"
    assert not (root / "new").exists()


def test_across_filesystems_a_file_is_copied_atomically_then_the_source_removed(
    root: Path, s: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    (root / "a.txt").write_text("across\n")
    (root / "a.txt").chmod(0o640)
    (root / "b.txt").write_text("old\n")
    read(s, "a.txt")
    read(s, "b.txt")
    real_rename = os.rename

    def cross_device(*args: Any, **kwargs: Any) -> None:
        if kwargs.get("src_dir_fd") is not None and args[0] == "a.txt":
            raise OSError(errno.EXDEV, os.strerror(errno.EXDEV))
        real_rename(*args, **kwargs)

    monkeypatch.setattr(os, "rename", cross_device)  # a replace goes through os.rename; refuse it as EXDEV
    moved = ok(s.call("move", {"source": "a.txt", "destination": "b.txt", "overwrite": True}))
    assert moved.value is not None and moved.value["replaced"] is True
    assert (root / "b.txt").read_text() == "across\n" and (root / "b.txt").stat().st_mode & 0o777 == 0o640
    assert not (root / "a.txt").exists() and temps(root) == []


def test_two_sessions_racing_to_move_and_delete_one_file_exactly_one_wins(root: Path, ws: Workspace) -> None:
    for round_ in range(30):
        (root / "a.txt").write_text(f"round {round_}\n")
        movers = [ws.session(f"m{round_}"), ws.session(f"d{round_}")]
        for each in movers:
            read(each, "a.txt")
        results = _race(
            {
                "move": (movers[0], "move", {"source": "a.txt", "destination": "b.txt"}),
                "delete": (movers[1], "delete", {"file_path": "a.txt"}),
            }
        )
        winners = [name for name, result in results.items() if not result.is_error]
        assert len(winners) == 1, {n: r.text for n, r in results.items()}
        loser = results["delete" if winners == ["move"] else "move"]
        assert code(loser) in ("FS_STALE_VERSION", "FS_NOT_FOUND"), loser.text
        survivors = [p for p in ("a.txt", "b.txt") if (root / p).exists()]
        assert survivors == (["b.txt"] if winners == ["move"] else []), survivors
        (root / "b.txt").unlink(missing_ok=True)
    assert temps(root) == []


def _race(calls: dict[str, tuple[Session, str, dict[str, Any]]]) -> dict[str, ToolResult]:
    """Each call on a thread of its own, all released at once."""
    results: dict[str, ToolResult] = {}
    start = threading.Barrier(len(calls))

    def run(name: str) -> None:
        session, tool, args = calls[name]
        start.wait()
        results[name] = session.call(tool, args)

    threads = [threading.Thread(target=run, args=(name,)) for name in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def test_a_move_racing_another_process_writing_the_file_loses_nothing(root: Path, s: Session) -> None:
    """Another process (which takes fs-tools' directory lock, as every fs-tools writer does) saves the
    file while this session moves it: either the move took the version the session saw and the other
    process's save created the file anew, or the move was refused as stale."""
    script = (
        "import sys\nfrom fs_tools import Workspace\n"
        "with Workspace(sys.argv[1]) as ws:\n"
        "    s = ws.session('writer')\n"
        "    s.call('read', {'file_path': 'a.txt'})\n"
        "    print(s.call('write', {'file_path': 'a.txt', 'content': 'from the other process\\n'}).text)\n"
    )
    for _ in range(10):
        (root / "a.txt").write_text("original\n")
        (root / "b.txt").unlink(missing_ok=True)
        read(s, "a.txt")
        other = subprocess.Popen(["python", "-c", script, str(root)], stdout=subprocess.PIPE, text=True)
        moved = s.call("move", {"source": "a.txt", "destination": "b.txt"})
        other.communicate(timeout=60)
        contents = sorted((p.name, p.read_text()) for p in root.iterdir() if p.is_file())
        if moved.is_error:
            assert code(moved) == "FS_STALE_VERSION" and not (root / "b.txt").exists()
        else:
            assert ("b.txt", "original\n") in contents
        assert all(text in ("original\n", "from the other process\n") for _, text in contents)
        assert len([t for _, t in contents if t == "original\n"]) <= 1  # never duplicated
    assert temps(root) == []


# --- delete -------------------------------------------------------------------------------------------


def test_delete_needs_the_current_observation(root: Path, s: Session) -> None:
    (root / "a.txt").write_text("a\n")
    assert code(s.call("delete", {"file_path": "a.txt"})) == "FS_NOT_OBSERVED"
    read(s, "a.txt")
    (root / "a.txt").write_text("changed\n")
    assert code(s.call("delete", {"file_path": "a.txt"})) == "FS_STALE_VERSION"
    assert (root / "a.txt").read_text() == "changed\n"
    read(s, "a.txt")
    assert ok(s.call("delete", {"file_path": "a.txt"})).value == {"path": "a.txt", "kind": "file"}
    assert not (root / "a.txt").exists() and temps(root) == []
    assert code(s.call("edit", {"file_path": "a.txt", "old_string": "c", "new_string": "d"})) == "FS_NOT_FOUND"
    assert code(s.call("delete", {"file_path": "a.txt"})) == "FS_NOT_FOUND"


def test_delete_of_a_directory_with_entries_counts_its_direct_entries(root: Path, s: Session) -> None:
    (root / "d" / "inner").mkdir(parents=True)
    (root / "d" / "x.txt").write_text("x")
    (root / "d" / "inner" / "y.txt").write_text("y")
    refused = s.call("delete", {"file_path": "d"})
    assert code(refused) == "FS_NOT_EMPTY" and "2 entries" in refused.text
    assert "delete its entries first" in refused.text
    (root / "empty").mkdir()
    assert ok(s.call("delete", {"file_path": "empty/"})).value == {"path": "empty/", "kind": "directory"}
    assert not (root / "empty").exists() and (root / "d" / "inner" / "y.txt").exists()


def test_delete_of_a_symlink_removes_the_link_never_its_target(root: Path, s: Session) -> None:
    (root / "t.txt").write_text("t\n")
    os.symlink("t.txt", root / "link")
    os.symlink("nowhere", root / "dangling")
    assert ok(s.call("delete", {"file_path": "link"})).value == {"path": "link", "kind": "symlink"}
    ok(s.call("delete", {"file_path": "dangling"}))
    assert not os.path.lexists(root / "link") and not os.path.lexists(root / "dangling")
    assert (root / "t.txt").read_text() == "t\n"


def test_a_read_only_workspace_lists_no_file_changing_tool_and_still_refuses_a_call(root: Path) -> None:
    (root / "a.txt").write_text("a\n")
    with Workspace(root, read_only=True) as ws:
        names = {schema["name"] for schema in ws.tool_schemas()}
        assert names == {"read", "list", "glob", "grep", "read_many", "stat"}
        s = ws.session("s")
        read(s, "a.txt")
        for name, args in (
            ("delete", {"file_path": "a.txt"}),
            ("move", {"source": "a.txt", "destination": "b.txt"}),
            ("create_directory", {"path": "new"}),
        ):
            assert code(s.call(name, args)) == "FS_SANDBOX_DENIED"
    assert (root / "a.txt").exists() and not (root / "b.txt").exists() and not (root / "new").exists()


# --- create_directory ---------------------------------------------------------------------------------


def test_create_directory_makes_parents_and_an_existing_one_is_a_success_that_says_so(root: Path, s: Session) -> None:
    made = ok(s.call("create_directory", {"path": "a/b/c"}))
    assert made.value == {"path": "a/b/c", "created": True} and (root / "a/b/c").is_dir()
    again = ok(s.call("create_directory", {"path": "a/b/"}))
    assert again.value == {"path": "a/b/", "created": False} and "already exists" in again.text
    (root / "f").write_text("x")
    assert code(s.call("create_directory", {"path": "f"})) == "FS_NOT_DIRECTORY"
    assert code(s.call("create_directory", {"path": "f/sub"})) == "FS_NOT_DIRECTORY"
    assert code(s.call("create_directory", {"path": "../escape"})) == "FS_SANDBOX_DENIED"
    assert not (root.parent / "escape").exists()


def test_create_directory_of_a_protected_path_leaves_nothing(root: Path) -> None:
    with Workspace(root, protected=["secret/**"]) as ws:
        assert code(ws.session("s").call("create_directory", {"path": "secret/deep/er"})) == "FS_SANDBOX_DENIED"
    assert not (root / "secret").exists()


# --- read_many and stat ---------------------------------------------------------------------------------


def test_read_many_reads_each_file_and_reports_failures_inline(root: Path, s: Session) -> None:
    (root / "a.txt").write_text("one\ntwo\nthree\n")
    (root / "bin").write_bytes(b"\0\1\2")
    (root / "d").mkdir()
    result = ok(s.call("read_many", {"file_paths": ["a.txt", "missing.txt", "bin", "d"], "limit": 2}))
    assert "==> a.txt <==\n     1\tone\n     2\ttwo" in result.text and "continue with offset=3" in result.text
    assert "==> missing.txt <==\nERROR FS_NOT_FOUND" in result.text
    assert "'d' is a directory, not a regular file — use list to see its entries" in result.text  # its remedy
    assert result.value is not None
    files = result.value["files"]
    assert [f["code"] for f in files] == [None, "FS_NOT_FOUND", "FS_NOT_TEXT", "FS_NOT_REGULAR_FILE"]
    assert files[0]["read"]["total_lines"] == 3 and result.value["failed"] == 3
    ok(s.call("edit", {"file_path": "a.txt", "old_string": "three", "new_string": "3"}))  # the read counted


def test_read_many_argument_violations_are_all_reported(s: Session) -> None:
    bad = s.call("read_many", {"file_paths": [], "limit": 0})
    assert code(bad) == "INVALID_ARGS"
    assert "/file_paths" in bad.text and "/limit: expected integer >= 1, got 0" in bad.text
    many = s.call("read_many", {"file_paths": ["a"] * 51})
    assert code(many) == "INVALID_ARGS" and "/file_paths" in many.text
    typed = s.call("read_many", {"file_paths": ["a.txt", 3]})
    assert code(typed) == "INVALID_ARGS" and "/file_paths/1: expected string, got number" in typed.text


def test_stat_describes_and_says_where_the_session_stands(root: Path, s: Session) -> None:
    (root / "a.txt").write_text("one\ntwo")
    described = ok(s.call("stat", {"path": "a.txt"}))
    assert described.value is not None
    assert described.value["kind"] == "file" and described.value["lines"] == 2 and described.value["size"] == 7
    assert described.value["standing"] == "unseen"
    assert code(s.call("edit", {"file_path": "a.txt", "old_string": "one", "new_string": "1"})) == "FS_NOT_OBSERVED"
    read(s, "a.txt")
    assert ok(s.call("stat", {"path": "a.txt"})).value["standing"] == "current"  # type: ignore[index]
    (root / "a.txt").write_text("changed\n")
    assert ok(s.call("stat", {"path": "a.txt"})).value["standing"] == "stale"  # type: ignore[index]
    (root / "d").mkdir()
    directory = ok(s.call("stat", {"path": "d"})).value
    assert directory is not None and directory["kind"] == "directory" and directory["version"] is None
    assert code(s.call("stat", {"path": "missing"})) == "FS_NOT_FOUND"


# --- brief re-reads -------------------------------------------------------------------------------------


def test_a_re_read_of_the_same_lines_at_the_same_version_is_a_short_note(root: Path, s: Session) -> None:
    (root / "a.txt").write_text("one\ntwo\n")
    first = ok(s.call("read", {"file_path": "a.txt"}))
    again = ok(s.call("read", {"file_path": "a.txt"}))
    assert "unchanged since your last read" in again.text and "one" not in again.text
    assert again.value is not None and again.value["unchanged"] is True and again.value["total_lines"] == 2
    assert first.value is not None and first.value.get("unchanged", False) is False
    window = ok(s.call("read", {"file_path": "a.txt", "offset": 2}))  # another window: the text
    assert "two" in window.text
    ok(s.call("edit", {"file_path": "a.txt", "old_string": "two", "new_string": "2"}))
    assert "2" in ok(s.call("read", {"file_path": "a.txt", "offset": 2})).text  # after its own edit: the text
    assert "one" in ok(s.call("read", {"file_path": "a.txt"})).text  # changed since the first read
    s.forget("a.txt")
    assert "one" in ok(s.call("read", {"file_path": "a.txt"})).text  # after forget: the text
    assert "one" in ok(s.workspace.session("other").call("read", {"file_path": "a.txt"})).text  # per session


def test_brief_rereads_can_be_turned_off(root: Path) -> None:
    (root / "a.txt").write_text("one\n")
    with Workspace(root, brief_rereads=False) as ws:
        s = ws.session("s")
        assert ok(s.call("read", {"file_path": "a.txt"})).text == ok(s.call("read", {"file_path": "a.txt"})).text


# --- edit's dry run --------------------------------------------------------------------------------------


def test_a_dry_run_is_gated_and_matched_as_for_real_and_writes_nothing(root: Path, s: Session) -> None:
    (root / "a.txt").write_bytes(b"one\r\ntwo\r\nthree")
    before = (root / "a.txt").stat()
    args = {"file_path": "a.txt", "old_string": "two", "new_string": "2", "dry_run": True}
    assert code(s.call("edit", args)) == "FS_NOT_OBSERVED"
    read(s, "a.txt")
    trial = ok(s.call("edit", args))
    assert trial.value is not None and trial.value["dry_run"] is True
    diff = trial.value["diff"]
    assert diff.startswith("--- a/a.txt\n+++ b/a.txt\n") and "-two\r\n+2\r\n" in diff
    after = (root / "a.txt").stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns) and temps(root) == []
    assert code(s.call("edit", {**args, "old_string": "four"})) == "FS_EDIT_NOT_FOUND"
    # the diff applies with patch -p1 and gives what the real edit gives
    copy = root.parent / "copy"
    copy.mkdir()
    (copy / "a.txt").write_bytes((root / "a.txt").read_bytes())
    subprocess.run(["patch", "-p1", "--binary", "-s"], input=diff.encode(), cwd=copy, check=True)
    ok(s.call("edit", {**args, "dry_run": False}))
    assert (copy / "a.txt").read_bytes() == (root / "a.txt").read_bytes() == b"one\r\n2\r\nthree"


# --- killed mid-operation ---------------------------------------------------------------------------------

_MOVER = """
import sys
from fs_tools import Workspace
with Workspace(sys.argv[1]) as ws:
    s = ws.session("mover")
    print("ready", flush=True)
    while True:
        for src, dst in (("a.txt", "sub/b.txt"), ("sub/b.txt", "a.txt")):
            s.call("read", {"file_path": src})
            s.call("move", {"source": src, "destination": dst})
        s.call("read", {"file_path": "a.txt"})
        s.call("delete", {"file_path": "a.txt"})
        s.call("write", {"file_path": "a.txt", "content": "payload\\n"})
"""


def test_a_move_or_delete_killed_at_any_moment_leaves_the_old_or_the_new_state(root: Path) -> None:
    """SIGKILL at random moments of a loop of moves, deletes and creates: afterwards the file is at one
    of its paths or (between a delete and its re-creation) at none, never at both, never torn; a delete
    killed after setting the file aside leaves only a reserved temp, which the next write there sweeps."""
    import random
    import signal
    import sys
    import time

    (root / "a.txt").write_text("payload\n")
    rng = random.Random(1234)
    for _ in range(12):
        proc = subprocess.Popen([sys.executable, "-c", _MOVER, str(root)], stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        time.sleep(rng.uniform(0.0, 0.05))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        present = [p for p in ("a.txt", "sub/b.txt") if (root / p).exists()]
        assert len(present) <= 1, present
        for path in present:
            assert (root / path).read_text() == "payload\n"
        left = [Path(t) for t in temps(root)]
        assert all(t.read_bytes() in (b"", b"payload\n") for t in left if t.is_file()), left
        if not present:
            (root / "a.txt").write_text("payload\n")
        elif present == ["sub/b.txt"]:
            (root / "sub/b.txt").rename(root / "a.txt")
    with Workspace(root) as ws:  # a write in each directory sweeps what killed writers left
        s = ws.session("sweep")
        for directory in ("", "sub/"):
            if (root / directory).is_dir():
                ok(s.call("write", {"file_path": f"{directory}swept.txt", "content": "x"}))
    assert temps(root) == []


# --- what a review of the first version found -------------------------------------------------------------


def test_a_nested_root_is_never_deleted_or_moved(root: Path) -> None:
    (root / "sub").mkdir()
    (root / "d" / "inner").mkdir(parents=True)
    with Workspace([root, root / "sub", root / "d" / "inner"]) as ws:
        s = ws.session("s")
        assert code(s.call("delete", {"file_path": "sub"})) == "FS_SANDBOX_DENIED"
        assert code(s.call("move", {"source": "d", "destination": "e"})) == "FS_SANDBOX_DENIED"  # holds a root
        assert code(s.call("move", {"source": "sub", "destination": "e"})) == "FS_SANDBOX_DENIED"
    assert (root / "sub").is_dir() and (root / "d" / "inner").is_dir() and not (root / "e").exists()


def test_a_trailing_slash_on_a_symlink_still_means_the_link(root: Path, s: Session) -> None:
    (root / "empty").mkdir()
    (root / "full").mkdir()
    (root / "full" / "f.txt").write_text("f")
    os.symlink("empty", root / "lnk")
    os.symlink("full", root / "lnk2")
    assert ok(s.call("delete", {"file_path": "lnk/"})).value == {"path": "lnk/", "kind": "symlink"}
    assert (root / "empty").is_dir() and not os.path.lexists(root / "lnk")
    ok(s.call("move", {"source": "lnk2/", "destination": "moved"}))
    assert os.readlink(root / "moved") == "full" and (root / "full" / "f.txt").exists()


def test_a_file_over_the_whole_file_limit_can_still_be_moved_and_deleted(root: Path) -> None:
    (root / "big.log").write_text("x" * 2100)
    with Workspace(root, max_file_bytes=1000) as ws:
        s = ws.session("s")
        ok(s.call("read", {"file_path": "big.log", "limit": 1}))
        ok(s.call("move", {"source": "big.log", "destination": "old/big.log"}))
        ok(s.call("delete", {"file_path": "old/big.log"}))
    assert not (root / "old" / "big.log").exists()


def test_what_killed_writers_left_does_not_keep_a_directory_from_being_deleted(root: Path, s: Session) -> None:
    (root / "d").mkdir()
    (root / "d" / ".0123456789abcdef.fs-tools.tmp").write_bytes(b"partial")  # an orphan: nobody holds it
    assert "empty" in ok(s.call("list", {"path": "d"})).text
    ok(s.call("delete", {"file_path": "d"}))
    assert not (root / "d").exists()


def test_create_directory_with_a_trailing_dot_creates_it(root: Path, s: Session) -> None:
    assert ok(s.call("create_directory", {"path": "newdir/."})).value == {"path": "newdir/.", "created": True}
    assert ok(s.call("create_directory", {"path": "a/b/./"})).value == {"path": "a/b/./", "created": True}
    assert (root / "newdir").is_dir() and (root / "a" / "b").is_dir()


def test_two_hard_links_of_one_file_are_the_same_file_to_a_move(root: Path, s: Session) -> None:
    (root / "a.txt").write_text("a\n")
    os.link(root / "a.txt", root / "b.txt")
    read(s, "a.txt")
    read(s, "b.txt")
    same = s.call("move", {"source": "a.txt", "destination": "b.txt", "overwrite": True})
    assert code(same) == "FS_IO_ERROR"
    assert same.text.endswith("— nothing to move; give a destination that is another path")
    assert (root / "a.txt").exists() and (root / "b.txt").exists()


def test_a_move_or_delete_of_a_file_gone_since_it_was_read_is_stale(root: Path, s: Session) -> None:
    (root / "a.txt").write_text("a\n")
    read(s, "a.txt")
    (root / "a.txt").unlink()
    assert code(s.call("delete", {"file_path": "a.txt"})) == "FS_STALE_VERSION"
    assert code(s.call("move", {"source": "a.txt", "destination": "b.txt"})) == "FS_STALE_VERSION"
    assert code(s.workspace.session("fresh").call("delete", {"file_path": "a.txt"})) == "FS_NOT_FOUND"


def test_a_directory_never_replaces_a_file_and_the_message_does_not_suggest_overwrite(root: Path, s: Session) -> None:
    (root / "d").mkdir()
    (root / "f.txt").write_text("f\n")
    read(s, "f.txt")
    for overwrite in (False, True):
        refused = s.call("move", {"source": "d", "destination": "f.txt", "overwrite": overwrite})
        assert code(refused) == "FS_ALREADY_EXISTS" and "overwrite" not in refused.text, refused.text
    assert (root / "d").is_dir() and (root / "f.txt").read_text() == "f\n"


def test_a_directory_pattern_protects_the_directory_itself(root: Path) -> None:
    (root / "secret").mkdir()
    (root / "other").mkdir()
    with Workspace(root, protected=["secret/", "locked/"]) as ws:
        s = ws.session("s")
        assert code(s.call("delete", {"file_path": "secret"})) == "FS_SANDBOX_DENIED"
        assert code(s.call("create_directory", {"path": "locked"})) == "FS_SANDBOX_DENIED"
        assert code(s.call("move", {"source": "other", "destination": "locked"})) == "FS_SANDBOX_DENIED"
    assert (root / "secret").is_dir() and (root / "other").is_dir() and not (root / "locked").exists()


def test_a_section_read_many_cut_is_read_in_full_afterwards(root: Path, s: Session) -> None:
    for n in range(6):
        (root / f"f{n}.txt").write_text(("y" * 1000 + "\n") * 120)
    many = ok(s.call("read_many", {"file_paths": [f"f{n}.txt" for n in range(6)]}))
    assert "section is cut" in many.text
    again = ok(s.call("read", {"file_path": "f5.txt", "limit": 500}))
    assert again.value is not None and not again.value.get("unchanged") and "yyyy" in again.text


def test_an_overwriting_move_keeps_another_programs_save_of_the_destination(
    root: Path, s: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another program (which takes no lock) saves the destination by rename in the instant between the
    move's check and its rename: the swap shows the displaced file is not the version checked, so it is
    put back and the move is stale — never a silent overwrite of that save."""
    from fs_tools.provider import Primitives

    (root / "src.txt").write_text("SRC\n")
    (root / "dst.txt").write_text("DST v1\n")
    read(s, "src.txt")
    read(s, "dst.txt")
    real = Primitives.exchange_between
    saves = ["DST v2, saved by another program\n"]

    def saved_just_before(*args: Any) -> bool:
        if saves:  # once: just before the move's swap (the swap back is the real one)
            (root / "incoming").write_text(saves.pop())
            os.replace(root / "incoming", root / "dst.txt")
        return real(*args)

    monkeypatch.setattr(Primitives, "exchange_between", saved_just_before)
    refused = s.call("move", {"source": "src.txt", "destination": "dst.txt", "overwrite": True})
    if refused.is_error:
        assert code(refused) == "FS_STALE_VERSION"
        assert (root / "dst.txt").read_text() == "DST v2, saved by another program\n"
        assert (root / "src.txt").read_text() == "SRC\n"
    else:  # no kernel swap here: the documented plain rename (decisions.md) is what ran
        pytest.skip("renameat2(RENAME_EXCHANGE) is not available on this filesystem")
    assert temps(root) == []


def test_multi_edit_has_a_dry_run_too(root: Path, s: Session) -> None:
    (root / "a.txt").write_text("one\ntwo\n")
    read(s, "a.txt")
    edits = [{"old_string": "one", "new_string": "1"}, {"old_string": "two", "new_string": "2"}]
    trial = ok(s.call("multi_edit", {"file_path": "a.txt", "edits": edits, "dry_run": True}))
    assert trial.value is not None and "-one\n-two\n+1\n+2\n" in trial.value["diff"]
    assert (root / "a.txt").read_text() == "one\ntwo\n"


def test_a_store_failing_after_a_move_or_delete_says_what_was_done_and_keeps_no_record(root: Path) -> None:
    from fs_tools.errors import StoreUnavailable
    from policy import MemoryStore, Observation

    class Failing(MemoryStore):
        fail = False

        def put(self, session: str, key: str, observation: Observation) -> None:
            if self.fail:
                raise StoreUnavailable("the store is gone")
            super().put(session, key, observation)

    store = Failing()
    (root / "a.txt").write_text("a\n")
    (root / "b.txt").write_text("b\n")
    with Workspace(root, store=store) as ws:
        s = ws.session("s")
        read(s, "a.txt")
        read(s, "b.txt")
        store.fail = True
        moved = s.call("move", {"source": "a.txt", "destination": "c.txt"})
        assert code(moved) == "STORE_UNAVAILABLE" and moved.text.startswith("the move is done, but")
        deleted = s.call("delete", {"file_path": "b.txt"})
        assert code(deleted) == "STORE_UNAVAILABLE" and deleted.text.startswith("'b.txt' was deleted, but")
        assert store.observed("s") == {}  # fail closed: nothing the session holds vouches for those files
    assert (root / "c.txt").read_text() == "a\n" and not (root / "a.txt").exists() and not (root / "b.txt").exists()
