"""Resolution corner cases: several roots, symlinks between them, missing directories with `..`, failed
creates, deep paths, and the process state a workspace must not touch."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from fs_tools import Workspace
from fs_tools.provider import files
from fs_tools.provider.resolve import MAX_DEPTH


def _tree(base: Path) -> dict[str, bytes | None]:
    return {
        str(p.relative_to(base)): (p.read_bytes() if p.is_file() and not p.is_symlink() else None)
        for p in sorted(base.rglob("*"))
    }


def _code(result: object) -> str | None:
    error = getattr(result, "error", None)
    return None if error is None else str(error.code)


def test_protected_paths_hold_under_every_spelling_of_nested_roots(tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    (outer / "sub").mkdir(parents=True)
    (outer / "sub" / "secret.txt").write_text("keep\n")
    with Workspace([outer, outer / "sub"], protected=["sub/secret.txt"]) as ws:
        session = ws.session("s")
        for spelling in ("sub/secret.txt", str(outer / "sub" / "secret.txt")):
            assert not session.call("read", {"file_path": spelling}).is_error
            result = session.call("write", {"file_path": spelling, "content": "pwned\n"})
            assert _code(result) == "FS_SANDBOX_DENIED", (spelling, result.text)
    assert (outer / "sub" / "secret.txt").read_text() == "keep\n"


@pytest.mark.parametrize("target", ["../b/g.txt", "../a/f.txt"])
def test_a_relative_symlink_that_climbs_out_and_lands_in_a_root_is_followed(tmp_path: Path, target: str) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "f.txt").write_text("in a\n")
    (b / "g.txt").write_text("in b\n")
    (a / "link").symlink_to(target)
    with Workspace([a, b]) as ws:
        session = ws.session("s")
        read = session.call("read", {"file_path": "link"})
        assert not read.is_error, read.text
        edit = session.call("edit", {"file_path": "link", "old_string": "in", "new_string": "still in"})
        assert not edit.is_error, edit.text
    landed = (a / target).resolve()
    assert landed.read_text().startswith("still in ")
    assert (a / "link").is_symlink() and os.readlink(a / "link") == target


def test_a_relative_symlink_that_climbs_out_of_every_root_is_refused(tmp_path: Path) -> None:
    a = tmp_path / "a"
    a.mkdir()
    (tmp_path / "outside.txt").write_text("secret\n")
    (a / "link").symlink_to("../outside.txt")
    with Workspace(a) as ws:
        result = ws.session("s").call("read", {"file_path": "link"})
    assert _code(result) == "FS_SANDBOX_DENIED"
    assert "secret" not in result.text and str(tmp_path) not in result.text


def test_a_path_through_a_missing_directory_and_dotdot_records_nothing(tmp_path: Path) -> None:
    (tmp_path / "b.txt").write_text("b\n")
    with Workspace(tmp_path) as ws:
        session = ws.session("s")
        assert not session.call("read", {"file_path": "b.txt"}).is_error
        assert _code(session.call("read", {"file_path": "nope/../b.txt"})) == "FS_NOT_FOUND"
        assert not session.call("edit", {"file_path": "b.txt", "old_string": "b", "new_string": "c"}).is_error
        assert _code(session.call("write", {"file_path": "nope/../c.txt", "content": "c"})) == "FS_NOT_FOUND"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.txt"]


def test_a_failed_create_removes_the_directories_it_made(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_space(fd: int, data: bytes) -> int:
        raise OSError(28, "No space left on device")

    with Workspace(tmp_path) as ws:
        session = ws.session("s")
        monkeypatch.setattr(files.os, "write", no_space)
        result = session.call("write", {"file_path": "x/y/z/f.txt", "content": "data\n"})
        monkeypatch.undo()
        assert _code(result) == "FS_NO_SPACE"
        assert list(tmp_path.iterdir()) == []
        (tmp_path / "x").mkdir()  # a directory that was there before stays
        monkeypatch.setattr(files.os, "write", no_space)
        assert _code(session.call("write", {"file_path": "x/new/f.txt", "content": "data\n"})) == "FS_NO_SPACE"
    assert _tree(tmp_path) == {"x": None}


def test_oversized_content_is_refused_before_any_directory_is_made(tmp_path: Path) -> None:
    with Workspace(tmp_path, max_file_bytes=10) as ws:
        result = ws.session("s").call("write", {"file_path": "x/y/f.txt", "content": "0123456789abc"})
    assert _code(result) == "FS_TOO_LARGE" and "13" in result.text and "10" in result.text
    assert list(tmp_path.iterdir()) == []


def test_a_path_deeper_than_the_limit_is_refused_and_leaves_nothing(tmp_path: Path) -> None:
    deep = "a/" * (MAX_DEPTH + 5) + "f.txt"
    with Workspace(tmp_path) as ws:
        result = ws.session("s").call("write", {"file_path": deep, "content": "x"})
    assert _code(result) == "FS_IO_ERROR" and "too deep" in result.text
    assert len(result.text) < 600  # the path is shortened in the message
    assert list(tmp_path.iterdir()) == []


def test_creating_a_workspace_and_files_never_changes_the_process_umask(tmp_path: Path) -> None:
    previous = os.umask(0o077)
    try:
        seen: list[int] = []
        stop = threading.Event()

        def watch() -> None:
            while not stop.is_set():
                mask = os.umask(0o077)  # read (and restore) the umask the way the process sees it
                seen.append(mask)

        watcher = threading.Thread(target=watch)
        watcher.start()
        try:
            for i in range(20):
                with Workspace(tmp_path) as ws:
                    assert not ws.session("s").call("write", {"file_path": f"f{i}.txt", "content": "x"}).is_error
        finally:
            stop.set()
            watcher.join()
        assert set(seen) == {0o077}
        assert {(tmp_path / f"f{i}.txt").stat().st_mode & 0o777 for i in range(20)} == {0o600}
    finally:
        os.umask(previous)


def test_a_file_that_never_holds_still_is_shown_but_not_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "log.txt"
    target.write_text("one\ntwo\n")
    real_read = os.read

    def appending_read(fd: int, size: int) -> bytes:
        chunk = real_read(fd, size)
        if chunk and os.lseek(fd, 0, os.SEEK_CUR) == len(chunk):
            with open(target, "a") as log:  # a writer appends while every read attempt is in progress
                log.write("more\n")
        return chunk

    with Workspace(tmp_path) as ws:
        session = ws.session("s")
        monkeypatch.setattr(files.os, "read", appending_read)
        result = session.call("read", {"file_path": "log.txt"})
        monkeypatch.undo()
        assert not result.is_error, result.text
        assert "1\tone" in result.text and "not recorded" in result.text
        assert result.value["version"] is None
        edit = session.call("edit", {"file_path": "log.txt", "old_string": "one", "new_string": "1"})
        assert _code(edit) == "FS_NOT_OBSERVED"
