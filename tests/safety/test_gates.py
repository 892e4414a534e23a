"""Observation gates (SPEC §6), end to end: real directories, the public ``session.call`` API, and the
disk checked afterwards. Configuration gates (read-only, protected paths) and the SQLite store too."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from fs_tools import HarnessError, Session, ToolResult, Workspace

STALE_REMEDY = " — re-read the file, then retry"
NOT_OBSERVED_REMEDY = " — read the file, then retry"


# --- helpers ------------------------------------------------------------------------------------


def read(session: Session, path: str, **extra: int) -> ToolResult:
    return session.call("read", {"file_path": path, **extra})


def write(session: Session, path: str, content: str) -> ToolResult:
    return session.call("write", {"file_path": path, "content": content})


def edit(session: Session, path: str, old: str, new: str) -> ToolResult:
    return session.call("edit", {"file_path": path, "old_string": old, "new_string": new})


def code(result: ToolResult) -> str | None:
    return None if result.error is None else result.error.code


def ok(result: ToolResult) -> ToolResult:
    assert not result.is_error, result.text
    return result


def message(result: ToolResult) -> str:
    assert result.error is not None, result.text
    return result.error.message


def cause(result: ToolResult) -> HarnessError:
    """The provider's original error, chained by the boundary."""
    assert result.exception is not None
    original = result.exception.__cause__
    assert isinstance(original, HarnessError), repr(original)
    return original


def no_temp_files(directory: Path) -> bool:
    return not [name for _, _, names in os.walk(directory) for name in names if name.endswith(".fs-tools.tmp")]


# --- the table: unseen --------------------------------------------------------------------------


def test_unseen_write_creates_a_missing_file(root: Path, session: Session) -> None:
    result = ok(write(session, "new.txt", "hello\n"))
    assert result.value["created"] is True
    assert (root / "new.txt").read_bytes() == b"hello\n"


def test_unseen_write_creates_missing_parent_directories(root: Path, session: Session) -> None:
    ok(write(session, "a/b/new.txt", "deep\n"))
    assert (root / "a" / "b" / "new.txt").read_bytes() == b"deep\n"


def test_unseen_write_over_an_existing_file_is_not_observed(root: Path, session: Session) -> None:
    target = root / "a.txt"
    target.write_bytes(b"original\n")
    before = target.stat()
    result = write(session, "a.txt", "clobbered\n")
    assert code(result) == "FS_NOT_OBSERVED"
    assert "a.txt" in message(result)
    assert target.read_bytes() == b"original\n"
    assert target.stat().st_ino == before.st_ino
    assert no_temp_files(root)


def test_unseen_edit_is_not_observed(root: Path, session: Session) -> None:
    target = root / "a.txt"
    target.write_bytes(b"one\ntwo\n")
    result = edit(session, "a.txt", "two", "2")
    assert code(result) == "FS_NOT_OBSERVED"
    assert "a.txt" in message(result)
    assert target.read_bytes() == b"one\ntwo\n"


def test_unseen_edit_of_a_missing_file_is_not_found(root: Path, session: Session) -> None:
    # Design choice: NOT_FOUND is the more useful answer when there is nothing to read.
    result = edit(session, "missing.txt", "x", "y")
    assert code(result) == "FS_NOT_FOUND"
    assert "missing.txt" in message(result)
    assert not (root / "missing.txt").exists()


# --- the table: absent --------------------------------------------------------------------------


def test_absent_then_write_creates(root: Path, session: Session) -> None:
    assert code(read(session, "new.txt")) == "FS_NOT_FOUND"
    result = ok(write(session, "new.txt", "created\n"))
    assert result.value["created"] is True
    assert (root / "new.txt").read_bytes() == b"created\n"


def test_absent_then_edit_is_not_found(root: Path, session: Session) -> None:
    assert code(read(session, "new.txt")) == "FS_NOT_FOUND"
    result = edit(session, "new.txt", "x", "y")
    assert code(result) == "FS_NOT_FOUND"
    assert "new.txt" in message(result)
    assert not (root / "new.txt").exists()


def test_absent_then_write_when_a_file_appeared_meanwhile_is_stale(root: Path, session: Session) -> None:
    assert code(read(session, "new.txt")) == "FS_NOT_FOUND"
    (root / "new.txt").write_bytes(b"someone else's\n")
    result = write(session, "new.txt", "mine\n")
    assert code(result) == "FS_STALE_VERSION"
    assert "new.txt" in message(result)
    assert message(result).endswith(STALE_REMEDY)
    assert (root / "new.txt").read_bytes() == b"someone else's\n"
    assert no_temp_files(root)


def test_absent_then_edit_when_a_file_appeared_meanwhile_is_stale(root: Path, session: Session) -> None:
    assert code(read(session, "new.txt")) == "FS_NOT_FOUND"
    (root / "new.txt").write_bytes(b"someone else's\n")
    result = edit(session, "new.txt", "else", "ELSE")
    assert code(result) == "FS_STALE_VERSION"
    assert (root / "new.txt").read_bytes() == b"someone else's\n"


# --- the table: present(v) ----------------------------------------------------------------------


def test_present_write_replaces_when_unchanged(root: Path, session: Session) -> None:
    (root / "a.txt").write_bytes(b"old\n")
    ok(read(session, "a.txt"))
    result = ok(write(session, "a.txt", "new\n"))
    assert result.value["created"] is False
    assert (root / "a.txt").read_bytes() == b"new\n"


def test_present_edit_succeeds_when_unchanged(root: Path, session: Session) -> None:
    (root / "a.txt").write_bytes(b"one\ntwo\n")
    ok(read(session, "a.txt"))
    ok(edit(session, "a.txt", "two", "2"))
    assert (root / "a.txt").read_bytes() == b"one\n2\n"


@pytest.mark.parametrize("tool", ["write", "edit"])
def test_present_mutation_of_a_changed_file_is_stale(root: Path, session: Session, tool: str) -> None:
    target = root / "a.txt"
    target.write_bytes(b"one\ntwo\n")
    ok(read(session, "a.txt"))
    target.write_bytes(b"one\ntwo\nthree\n")
    result = write(session, "a.txt", "mine\n") if tool == "write" else edit(session, "a.txt", "two", "2")
    assert code(result) == "FS_STALE_VERSION"
    assert "a.txt" in message(result)
    assert target.read_bytes() == b"one\ntwo\nthree\n"
    assert no_temp_files(root)


# --- the bullets --------------------------------------------------------------------------------


def test_partial_read_authorises_an_edit_anywhere(root: Path, session: Session) -> None:
    (root / "a.txt").write_text("".join(f"line {i}\n" for i in range(1, 101)))
    result = ok(read(session, "a.txt", offset=10, limit=2))
    assert result.value["total_lines"] == 100
    ok(edit(session, "a.txt", "line 90\n", "LINE NINETY\n"))
    ok(edit(session, "a.txt", "line 1\n", "LINE ONE\n"))
    lines = (root / "a.txt").read_text().splitlines()
    assert lines[0] == "LINE ONE"
    assert lines[89] == "LINE NINETY"
    assert len(lines) == 100


def test_own_write_refreshes_the_observation(root: Path, session: Session) -> None:
    ok(write(session, "a.txt", "alpha\nbeta\ngamma\n"))
    ok(edit(session, "a.txt", "beta", "BETA"))
    ok(edit(session, "a.txt", "gamma", "GAMMA"))
    assert (root / "a.txt").read_bytes() == b"alpha\nBETA\nGAMMA\n"


def test_own_write_over_a_read_file_refreshes_the_observation(root: Path, session: Session) -> None:
    (root / "a.txt").write_bytes(b"old\n")
    ok(read(session, "a.txt"))
    ok(write(session, "a.txt", "new\nmore\n"))
    ok(write(session, "a.txt", "newer\nmore\n"))
    ok(edit(session, "a.txt", "more", "MORE"))
    assert (root / "a.txt").read_bytes() == b"newer\nMORE\n"


@pytest.mark.parametrize("tool", ["write", "edit"])
def test_deleted_file_is_stale_then_absent_then_recreated(root: Path, session: Session, tool: str) -> None:
    target = root / "a.txt"
    target.write_bytes(b"one\ntwo\n")
    ok(read(session, "a.txt"))
    target.unlink()
    result = write(session, "a.txt", "mine\n") if tool == "write" else edit(session, "a.txt", "two", "2")
    assert code(result) == "FS_STALE_VERSION"
    assert message(result).endswith(STALE_REMEDY)
    assert not target.exists()
    assert code(read(session, "a.txt")) == "FS_NOT_FOUND"  # records absent
    assert code(edit(session, "a.txt", "two", "2")) == "FS_NOT_FOUND"
    ok(write(session, "a.txt", "recreated\n"))
    assert target.read_bytes() == b"recreated\n"
    assert no_temp_files(root)


@pytest.mark.parametrize("tool", ["write", "edit"])
def test_deleted_parent_directory_is_stale_then_absent_then_recreated(root: Path, session: Session, tool: str) -> None:
    target = root / "sub" / "dir" / "a.txt"
    target.parent.mkdir(parents=True)
    target.write_bytes(b"one\ntwo\n")
    ok(read(session, "sub/dir/a.txt"))
    shutil.rmtree(root / "sub")
    if tool == "write":
        result = write(session, "sub/dir/a.txt", "mine\n")
    else:
        result = edit(session, "sub/dir/a.txt", "two", "2")
    assert code(result) == "FS_STALE_VERSION"
    assert message(result).endswith(STALE_REMEDY)
    assert not (root / "sub").exists()
    assert code(read(session, "sub/dir/a.txt")) == "FS_NOT_FOUND"
    assert code(edit(session, "sub/dir/a.txt", "two", "2")) == "FS_NOT_FOUND"
    ok(write(session, "sub/dir/a.txt", "recreated\n"))
    assert target.read_bytes() == b"recreated\n"


def test_sessions_are_isolated(root: Path, workspace: Workspace) -> None:
    (root / "a.txt").write_bytes(b"one\ntwo\n")
    reader, other = workspace.session("A"), workspace.session("B")
    ok(read(reader, "a.txt"))
    assert code(edit(other, "a.txt", "two", "2")) == "FS_NOT_OBSERVED"
    assert code(write(other, "a.txt", "clobber\n")) == "FS_NOT_OBSERVED"
    assert (root / "a.txt").read_bytes() == b"one\ntwo\n"
    ok(edit(reader, "a.txt", "two", "2"))
    assert (root / "a.txt").read_bytes() == b"one\n2\n"


def test_same_key_is_the_same_session(root: Path, workspace: Workspace) -> None:
    (root / "a.txt").write_bytes(b"one\ntwo\n")
    ok(read(workspace.session("k"), "a.txt"))
    ok(edit(workspace.session("k"), "a.txt", "two", "2"))
    assert (root / "a.txt").read_bytes() == b"one\n2\n"


def test_stale_is_reported_before_match_errors(root: Path, session: Session) -> None:
    target = root / "a.txt"
    target.write_bytes(b"one\ntwo\n")
    ok(read(session, "a.txt"))
    target.write_bytes(b"one\nTWO\n")
    result = edit(session, "a.txt", "no such text", "x")
    assert code(result) == "FS_STALE_VERSION"
    assert target.read_bytes() == b"one\nTWO\n"


def test_touch_is_not_a_change(root: Path, session: Session) -> None:
    target = root / "a.txt"
    target.write_bytes(b"one\ntwo\n")
    ok(read(session, "a.txt"))
    before = target.stat()
    later = before.st_mtime_ns + 5_000_000_000
    os.utime(target, ns=(later, later))
    assert target.stat().st_mtime_ns != before.st_mtime_ns
    ok(edit(session, "a.txt", "two", "2"))
    assert target.read_bytes() == b"one\n2\n"


@pytest.mark.parametrize("how", ["in_place", "new_inode"])
def test_identical_rewrite_is_not_a_change(root: Path, session: Session, how: str) -> None:
    target = root / "a.txt"
    target.write_bytes(b"one\ntwo\n")
    ok(read(session, "a.txt"))
    before = target.stat()
    if how == "in_place":
        target.write_bytes(b"one\ntwo\n")
        later = before.st_mtime_ns + 5_000_000_000
        os.utime(target, ns=(later, later))
    else:
        (root / "copy.tmp").write_bytes(b"one\ntwo\n")
        os.replace(root / "copy.tmp", target)
        assert target.stat().st_ino != before.st_ino
    ok(edit(session, "a.txt", "two", "2"))
    assert target.read_bytes() == b"one\n2\n"


def test_same_size_rewrite_with_mtime_restored_is_a_change(root: Path, session: Session) -> None:
    target = root / "a.txt"
    target.write_bytes(b"one\ntwo\n")
    ok(read(session, "a.txt"))
    before = target.stat()
    target.write_bytes(b"one\nTWO\n")
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = target.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (before.st_size, before.st_mtime_ns, before.st_ino)
    result = edit(session, "a.txt", "one", "1")
    assert code(result) == "FS_STALE_VERSION"
    assert target.read_bytes() == b"one\nTWO\n"


# --- messages and the cause chain ---------------------------------------------------------------


def _six_lines() -> bytes:
    return b"".join(f"line {i}\n".encode() for i in range(1, 7))


def test_stale_message_names_the_changed_line(root: Path, session: Session) -> None:
    target = root / "a.txt"
    target.write_bytes(_six_lines())
    ok(read(session, "a.txt"))
    target.write_bytes(_six_lines().replace(b"line 3\n", b"line three\n"))
    result = edit(session, "a.txt", "line 6", "LINE 6")
    assert code(result) == "FS_STALE_VERSION"
    text = message(result)
    assert "a.txt" in text
    assert "line 3 changed" in text
    assert STALE_REMEDY in text
    assert target.read_bytes() == _six_lines().replace(b"line 3\n", b"line three\n")


def test_stale_message_names_the_changed_line_range(root: Path, session: Session) -> None:
    target = root / "a.txt"
    target.write_bytes(_six_lines())
    ok(read(session, "a.txt"))
    changed = _six_lines()
    for n in (3, 4, 5):
        changed = changed.replace(f"line {n}\n".encode(), f"LINE {n}\n".encode())
    target.write_bytes(changed)
    result = write(session, "a.txt", "mine\n")
    assert code(result) == "FS_STALE_VERSION"
    text = message(result)
    assert "lines 3–5 changed" in text
    assert STALE_REMEDY in text
    assert target.read_bytes() == changed


@pytest.mark.parametrize("change", ["one_line", "line_range", "deleted", "appeared"])
def test_stale_message_ends_with_the_remedy(root: Path, session: Session, change: str) -> None:
    """SPEC §9: ``FS_STALE_VERSION`` → ``… — re-read the file, then retry``, whatever the diagnostic."""
    target = root / "a.txt"
    if change == "appeared":
        assert code(read(session, "a.txt")) == "FS_NOT_FOUND"
        target.write_bytes(_six_lines())
    else:
        target.write_bytes(_six_lines())
        ok(read(session, "a.txt"))
        if change == "deleted":
            target.unlink()
        else:
            last = 3 if change == "one_line" else 5
            target.write_bytes(b"".join(f"line {i}{'!' if 3 <= i <= last else ''}\n".encode() for i in range(1, 7)))
    result = write(session, "a.txt", "mine\n")
    assert code(result) == "FS_STALE_VERSION"
    assert message(result).endswith(STALE_REMEDY), message(result)


def test_stale_cause_is_the_provider_error_without_the_remedy(root: Path, session: Session) -> None:
    target = root / "a.txt"
    target.write_bytes(_six_lines())
    ok(read(session, "a.txt"))
    target.write_bytes(_six_lines().replace(b"line 3\n", b"line three\n"))
    result = edit(session, "a.txt", "line 6", "LINE 6")
    original = cause(result)
    assert original.code == "FS_STALE_VERSION"
    assert result.exception is not None and result.exception.code == "FS_STALE_VERSION"
    assert "a.txt" in original.message
    assert "re-read" not in original.message
    assert original.message != message(result)
    assert message(result).startswith(original.message)


def test_not_observed_message_and_cause(root: Path, session: Session) -> None:
    (root / "a.txt").write_bytes(b"one\ntwo\n")
    result = edit(session, "a.txt", "two", "2")
    assert code(result) == "FS_NOT_OBSERVED"
    text = message(result)
    assert text.endswith(NOT_OBSERVED_REMEDY), text
    assert not text.endswith(STALE_REMEDY)
    original = cause(result)
    assert original.code == "FS_NOT_OBSERVED"
    assert "a.txt" in original.message
    assert "read the file, then retry" not in original.message
    assert text.startswith(original.message)


def test_not_observed_write_over_existing_message_and_cause(root: Path, session: Session) -> None:
    (root / "a.txt").write_bytes(b"one\n")
    result = write(session, "a.txt", "two\n")
    assert code(result) == "FS_NOT_OBSERVED"
    assert message(result).endswith(NOT_OBSERVED_REMEDY)
    original = cause(result)
    assert original.code == "FS_NOT_OBSERVED"
    assert "then retry" not in original.message
    assert message(result).startswith(original.message)


def test_result_dict_carries_the_code(root: Path, session: Session) -> None:
    (root / "a.txt").write_bytes(b"one\n")
    out = edit(session, "a.txt", "one", "1").to_dict()
    assert out["isError"] is True
    assert out["error"]["info"]["code"] == "FS_NOT_OBSERVED"
    assert out["content"][0]["text"] == out["error"]["message"]


# --- forget -------------------------------------------------------------------------------------


def test_forget_one_path(root: Path, session: Session) -> None:
    (root / "a.txt").write_bytes(b"a\n")
    (root / "b.txt").write_bytes(b"b\n")
    ok(read(session, "a.txt"))
    ok(read(session, "b.txt"))
    session.forget("a.txt")
    assert code(edit(session, "a.txt", "a", "A")) == "FS_NOT_OBSERVED"
    ok(edit(session, "b.txt", "b", "B"))
    assert (root / "a.txt").read_bytes() == b"a\n"
    assert (root / "b.txt").read_bytes() == b"B\n"


def test_forget_all(root: Path, workspace: Workspace) -> None:
    (root / "a.txt").write_bytes(b"a\n")
    (root / "b.txt").write_bytes(b"b\n")
    session, bystander = workspace.session("s"), workspace.session("bystander")
    for path in ("a.txt", "b.txt"):
        ok(read(session, path))
    ok(read(bystander, "b.txt"))
    session.forget()
    assert code(edit(session, "a.txt", "a", "A")) == "FS_NOT_OBSERVED"
    assert code(edit(session, "b.txt", "b", "B")) == "FS_NOT_OBSERVED"
    ok(edit(bystander, "b.txt", "b", "B"))  # another session's observations are untouched
    assert (root / "a.txt").read_bytes() == b"a\n"


def test_forget_an_absent_observation(root: Path, session: Session) -> None:
    assert code(read(session, "new.txt")) == "FS_NOT_FOUND"
    session.forget("new.txt")
    (root / "new.txt").write_bytes(b"appeared\n")
    # unseen again: writing over the file that appeared is NOT_OBSERVED, not STALE
    assert code(write(session, "new.txt", "mine\n")) == "FS_NOT_OBSERVED"
    assert (root / "new.txt").read_bytes() == b"appeared\n"


# --- the SQLite store ---------------------------------------------------------------------------


def test_sqlite_store_keeps_observations_for_a_resumed_session(root: Path, tmp_path: Path) -> None:
    store = tmp_path / "obs.sqlite"
    (root / "a.txt").write_bytes(b"one\ntwo\n")
    with Workspace(root, store=store) as first:
        ok(read(first.session("k"), "a.txt"))
    with Workspace(root, store=store) as second:
        assert code(edit(second.session("other"), "a.txt", "two", "2")) == "FS_NOT_OBSERVED"
        ok(edit(second.session("k"), "a.txt", "two", "2"))
    assert (root / "a.txt").read_bytes() == b"one\n2\n"


def test_sqlite_store_is_shared_by_open_workspaces(root: Path, tmp_path: Path) -> None:
    store = tmp_path / "obs.sqlite"
    (root / "a.txt").write_bytes(b"one\ntwo\nthree\n")
    with Workspace(root, store=store) as first, Workspace(root, store=store) as second:
        ok(read(first.session("k"), "a.txt"))
        ok(edit(second.session("k"), "a.txt", "two", "2"))
        # the edit in the second instance recorded the new version for the key: no re-read needed
        ok(edit(first.session("k"), "a.txt", "three", "3"))
        assert code(edit(second.session("other"), "a.txt", "one", "1")) == "FS_NOT_OBSERVED"
    assert (root / "a.txt").read_bytes() == b"one\n2\n3\n"


def test_sqlite_store_detects_staleness_across_instances(root: Path, tmp_path: Path) -> None:
    store = tmp_path / "obs.sqlite"
    (root / "a.txt").write_bytes(b"one\ntwo\n")
    with Workspace(root, store=store) as first, Workspace(root, store=store) as second:
        ok(read(first.session("a"), "a.txt"))
        ok(read(second.session("b"), "a.txt"))
        ok(edit(second.session("b"), "a.txt", "two", "2"))
        assert code(edit(first.session("a"), "a.txt", "one", "1")) == "FS_STALE_VERSION"
    assert (root / "a.txt").read_bytes() == b"one\n2\n"


# --- configuration gates ------------------------------------------------------------------------


def test_read_only_refuses_write_and_edit_but_allows_read(root: Path) -> None:
    target = root / "a.txt"
    target.write_bytes(b"one\ntwo\n")
    with Workspace(root, read_only=True) as ws:
        session = ws.session("s")
        ok(read(session, "a.txt"))
        for result in (
            write(session, "a.txt", "clobber\n"),
            edit(session, "a.txt", "two", "2"),
            write(session, "new.txt", "new\n"),
        ):
            assert code(result) == "FS_SANDBOX_DENIED"
            assert "read-only" in message(result)
    assert target.read_bytes() == b"one\ntwo\n"
    assert not (root / "new.txt").exists()
    assert sorted(p.name for p in root.iterdir()) == ["a.txt"]


def test_protected_pattern_refuses_writes(root: Path) -> None:
    (root / "sub").mkdir()
    (root / "sub" / "y.lock").write_bytes(b"locked\n")
    with Workspace(root, protected=["*.lock"]) as ws:
        session = ws.session("s")
        result = write(session, "x.lock", "nope\n")
        assert code(result) == "FS_SANDBOX_DENIED"
        assert "x.lock" in message(result)
        assert "protected" in message(result)
        ok(read(session, "sub/y.lock"))
        assert code(edit(session, "sub/y.lock", "locked", "open")) == "FS_SANDBOX_DENIED"
        assert code(write(session, "sub/y.lock", "open\n")) == "FS_SANDBOX_DENIED"
        ok(write(session, "x.txt", "fine\n"))
    assert not (root / "x.lock").exists()
    assert (root / "sub" / "y.lock").read_bytes() == b"locked\n"
    assert (root / "x.txt").read_bytes() == b"fine\n"
