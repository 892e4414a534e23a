"""Atomic writes on a real directory (SPEC §7 write, §8 "Writes are atomic").

Faults are injected by patching the ``os`` functions the provider calls (CI runs as root, so chmod
cannot produce EACCES); every test asserts on the disk afterwards: bytes, mode, inode, no stray temp.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from fs_tools import Session, Workspace
from tests.support.faults import cause_errnos, mutate

TEMP_GLOB = "*.fs-tools.tmp"
PROVIDER_OS = "fs_tools.provider.files.os"  # the os module as the provider sees it
EDQUOT = getattr(errno, "EDQUOT", errno.ENOSPC)


# --- helpers --------------------------------------------------------------------------------------------


def temps_under(base: Path) -> list[Path]:
    return sorted(base.rglob(TEMP_GLOB))


@pytest.fixture(autouse=True)
def _no_temp_left_behind(tmp_path: Path) -> Iterator[None]:
    """Whatever a test does, no temp file may remain anywhere under tmp_path afterwards."""
    yield
    assert temps_under(tmp_path) == []


def read_ok(session: Session, path: str) -> None:
    result = session.call("read", {"file_path": path})
    assert not result.is_error, result.text


def mode_of(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def current_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# --- mode ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", [0o640, 0o600, 0o755, 0o444], ids=oct)
@pytest.mark.parametrize("tool", ["write", "edit", "multi_edit"])
def test_replacing_keeps_the_existing_mode(mode: int, tool: str, root: Path, session: Session) -> None:
    target = root / "f.txt"
    target.write_bytes(b"old text\n")
    os.chmod(target, mode)
    read_ok(session, "f.txt")

    result = mutate(session, tool, "f.txt", "old", "new")

    assert not result.is_error, result.text
    assert b"new" in target.read_bytes()
    assert mode_of(target) == mode


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o077, 0o002], ids=oct)
def test_new_file_gets_the_default_mode(umask: int, root: Path) -> None:
    previous = os.umask(umask)
    try:
        with Workspace(root) as ws:
            result = ws.session("s").call("write", {"file_path": "deep/er/new.txt", "content": "x"})
    finally:
        os.umask(previous)
    assert not result.is_error, result.text
    assert mode_of(root / "deep" / "er" / "new.txt") == 0o666 & ~umask
    assert stat.S_ISDIR(os.lstat(root / "deep").st_mode)


def test_new_file_mode_follows_the_process_umask_by_default(root: Path, session: Session) -> None:
    result = session.call("write", {"file_path": "new.txt", "content": "x"})
    assert not result.is_error, result.text
    assert mode_of(root / "new.txt") == 0o666 & ~current_umask()


# --- content ---------------------------------------------------------------------------------------------

CONTENTS = {
    "no-trailing-newline": "no newline at the end",
    "crlf": "one\r\ntwo\r\n",
    "bom": "\ufeffwith a BOM\n",
    "bom-crlf": "\ufeffa\r\nb",
    "mixed-endings": "a\r\nb\nc\rd",
    "lone-cr": "\r",
    "blank-lines": "\n\n\n",
    "tabs-and-trailing-spaces": "\tx  \n  \ty\t\n",
    "unicode": "café 😀 – ∑\n",
    "nul-inside": "a\0b",
    "empty": "",
}


@pytest.mark.parametrize("content", list(CONTENTS.values()), ids=list(CONTENTS))
def test_created_content_is_byte_exact(content: str, root: Path, session: Session) -> None:
    result = session.call("write", {"file_path": "f.txt", "content": content})
    assert not result.is_error, result.text
    assert (root / "f.txt").read_bytes() == content.encode("utf-8")
    assert result.value["bytes_written"] == len(content.encode("utf-8"))


@pytest.mark.parametrize("content", list(CONTENTS.values()), ids=list(CONTENTS))
def test_replaced_content_is_byte_exact(content: str, root: Path, session: Session) -> None:
    (root / "f.txt").write_bytes(b"before\r\n")
    read_ok(session, "f.txt")
    result = session.call("write", {"file_path": "f.txt", "content": content})
    assert not result.is_error, result.text
    assert (root / "f.txt").read_bytes() == content.encode("utf-8")


# --- parents ---------------------------------------------------------------------------------------------


def test_missing_parent_directories_are_created_inside_the_root(root: Path, session: Session, tmp_path: Path) -> None:
    before = sorted(os.listdir(tmp_path))
    result = session.call("write", {"file_path": "a/b/c/new.txt", "content": "deep\n"})
    assert not result.is_error, result.text
    assert (root / "a" / "b" / "c" / "new.txt").read_bytes() == b"deep\n"
    for directory in (root / "a", root / "a" / "b", root / "a" / "b" / "c"):
        assert stat.S_ISDIR(os.lstat(directory).st_mode)
    assert sorted(os.listdir(tmp_path)) == before
    assert sorted(os.listdir(tmp_path / "outside")) == ["secret.txt"]


def test_missing_parents_of_an_absolute_path_inside_the_root_are_created(root: Path, session: Session) -> None:
    result = session.call("write", {"file_path": str(root / "x" / "y.txt"), "content": "abs\n"})
    assert not result.is_error, result.text
    assert (root / "x" / "y.txt").read_bytes() == b"abs\n"


def test_a_file_as_a_parent_is_not_a_directory(root: Path, session: Session) -> None:
    (root / "f.txt").write_bytes(b"file\n")
    result = session.call("write", {"file_path": "f.txt/child.txt", "content": "x"})
    assert result.error is not None and result.error.code == "FS_NOT_DIRECTORY", result.text
    assert (root / "f.txt").read_bytes() == b"file\n"
    assert sorted(os.listdir(root)) == ["f.txt"]


# --- long names ------------------------------------------------------------------------------------------

LONG_NAMES = {
    "ascii-255": "n" * 251 + ".txt",
    "multibyte-255": "é" * 125 + "x.txt",
    "dotfile-255": "." + "d" * 254,
}


@pytest.mark.parametrize("name", list(LONG_NAMES.values()), ids=list(LONG_NAMES))
def test_a_255_byte_name_can_be_created_and_edited(name: str, root: Path, session: Session) -> None:
    assert len(name.encode("utf-8")) == 255
    created = session.call("write", {"file_path": f"sub/{name}", "content": "alpha\nbeta\n"})
    assert not created.is_error, created.text
    target = root / "sub" / name
    assert target.read_bytes() == b"alpha\nbeta\n"

    edited = session.call("edit", {"file_path": f"sub/{name}", "old_string": "alpha", "new_string": "gamma"})
    assert not edited.is_error, edited.text
    multi = mutate(session, "multi_edit", f"sub/{name}", "beta", "delta")
    assert not multi.is_error, multi.text
    replaced = session.call("write", {"file_path": f"sub/{name}", "content": "omega\n"})
    assert not replaced.is_error, replaced.text
    assert target.read_bytes() == b"omega\n"
    assert os.listdir(root / "sub") == [name]


def test_a_256_byte_name_is_invalid_args(root: Path, session: Session) -> None:
    result = session.call("write", {"file_path": "n" * 252 + ".txt", "content": "x"})
    assert result.error is not None and result.error.code == "INVALID_ARGS", result.text
    assert result.text.startswith("invalid arguments: /file_path: ")
    assert os.listdir(root) == []


# --- the atomic protocol, observed from inside -----------------------------------------------------------


def test_target_keeps_its_old_bytes_until_publication_and_the_temp_is_a_sibling(
    root: Path, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    (root / "sub").mkdir()
    target = root / "sub" / "f.txt"
    target.write_bytes(b"old bytes\n")
    read_ok(session, "sub/f.txt")
    real_fsync = os.fsync
    seen: list[tuple[bool, bytes, list[str]]] = []

    def watching_fsync(fd: int) -> None:
        is_dir = stat.S_ISDIR(os.fstat(fd).st_mode)
        seen.append((is_dir, target.read_bytes(), sorted(p.name for p in (root / "sub").glob(TEMP_GLOB))))
        real_fsync(fd)

    monkeypatch.setattr(f"{PROVIDER_OS}.fsync", watching_fsync)
    result = session.call("write", {"file_path": "sub/f.txt", "content": "new bytes\n"})
    monkeypatch.undo()

    assert not result.is_error, result.text
    assert target.read_bytes() == b"new bytes\n"
    file_syncs = [i for i, (is_dir, _, _) in enumerate(seen) if not is_dir]
    dir_syncs = [i for i, (is_dir, _, _) in enumerate(seen) if is_dir]
    assert file_syncs, "the temp file was never fsynced"
    assert all(seen[i][1] == b"old bytes\n" for i in file_syncs), "the target changed before publication"
    assert all(len(seen[i][2]) == 1 for i in file_syncs), "the temp file is not beside the target"
    assert dir_syncs, "the directory was not fsynced after the rename"
    assert dir_syncs[-1] > file_syncs[-1]
    assert seen[dir_syncs[-1]][1] == b"new bytes\n"


def test_short_writes_still_produce_the_full_content(
    root: Path, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    content = "".join(f"line {i} é😀\r\n" for i in range(2000))
    real_write = os.write
    calls: list[int] = []

    def short_write(fd: int, data: Any) -> int:
        calls.append(len(data))
        return real_write(fd, bytes(data[:7]))

    monkeypatch.setattr(f"{PROVIDER_OS}.write", short_write)
    created = session.call("write", {"file_path": "f.txt", "content": content})
    edited = session.call("edit", {"file_path": "f.txt", "old_string": "line 1999", "new_string": "LAST"})
    monkeypatch.undo()

    assert not created.is_error, created.text
    assert not edited.is_error, edited.text
    assert (root / "f.txt").read_bytes() == content.replace("line 1999", "LAST").encode("utf-8")
    assert len(calls) >= len(content.encode("utf-8")) // 7


# --- fault injection -------------------------------------------------------------------------------------

FAULTS = [
    pytest.param(syscall, err, code, id=f"{syscall}-{errno.errorcode[err]}")
    for syscall in ("write", "fsync", "rename", "fchmod")
    for err, code in (
        (errno.ENOSPC, "FS_NO_SPACE"),
        (EDQUOT, "FS_NO_SPACE"),
        (errno.EIO, "FS_IO_ERROR"),
        (errno.EACCES, "FS_PERMISSION_DENIED"),
    )
]


def failing(syscall: str, err: int, calls: list[str]) -> Callable[..., Any]:
    def fail(*args: Any, **kwargs: Any) -> Any:
        calls.append(syscall)
        raise OSError(err, os.strerror(err))

    return fail


@pytest.mark.parametrize("tool", ["write", "edit", "multi_edit"])
@pytest.mark.parametrize(("syscall", "err", "code"), FAULTS)
def test_a_failed_replace_leaves_the_original_intact(
    syscall: str, err: int, code: str, tool: str, root: Path, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = root / "f.txt"
    target.write_bytes(b"old line\r\nsecond\n")
    os.chmod(target, 0o640)
    before = os.stat(target)
    read_ok(session, "f.txt")
    calls: list[str] = []

    monkeypatch.setattr(f"{PROVIDER_OS}.{syscall}", failing(syscall, err, calls))
    if syscall == "rename":  # where the kernel can, a replace is published by swapping the two names
        monkeypatch.setattr("fs_tools.provider.Primitives.exchange", failing(syscall, err, calls))
    result = mutate(session, tool, "f.txt", "old line", "new line")
    monkeypatch.undo()

    assert calls, f"os.{syscall} was never called"
    assert result.error is not None and result.error.code == code, result.text
    assert "'f.txt'" in result.text
    assert err in cause_errnos(result)
    assert target.read_bytes() == b"old line\r\nsecond\n"
    after = os.stat(target)
    assert (after.st_ino, stat.S_IMODE(after.st_mode)) == (before.st_ino, 0o640)
    assert temps_under(root) == []
    assert sorted(os.listdir(root)) == ["f.txt"]

    retry = mutate(session, tool, "f.txt", "old line", "new line")  # the observation is still valid
    assert not retry.is_error, retry.text
    assert b"new line" in target.read_bytes()
    assert mode_of(target) == 0o640


@pytest.mark.parametrize(("syscall", "err", "code"), [p for p in FAULTS if p.values[0] in ("write", "fsync")])
def test_a_failed_create_leaves_nothing(
    syscall: str, err: int, code: str, root: Path, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    (root / "keep.txt").write_bytes(b"keep\n")
    calls: list[str] = []

    monkeypatch.setattr(f"{PROVIDER_OS}.{syscall}", failing(syscall, err, calls))
    result = session.call("write", {"file_path": "new.txt", "content": "fresh\n"})
    monkeypatch.undo()

    assert calls, f"os.{syscall} was never called"
    assert result.error is not None and result.error.code == code, result.text
    assert sorted(os.listdir(root)) == ["keep.txt"]

    retry = session.call("write", {"file_path": "new.txt", "content": "fresh\n"})
    assert not retry.is_error, retry.text
    assert (root / "new.txt").read_bytes() == b"fresh\n"


def test_a_failed_directory_fsync_after_publication_is_not_a_failure(
    root: Path, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_fsync = os.fsync

    def fsync_files_only(fd: int) -> None:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, os.strerror(errno.EINVAL))
        real_fsync(fd)

    monkeypatch.setattr(f"{PROVIDER_OS}.fsync", fsync_files_only)
    result = session.call("write", {"file_path": "f.txt", "content": "data\n"})
    monkeypatch.undo()

    assert not result.is_error, result.text  # the rename happened: reporting failure would be a lie
    assert (root / "f.txt").read_bytes() == b"data\n"


# --- a creator racing a create ---------------------------------------------------------------------------


def racing_fsync(target: Path, data: bytes, fired: list[int]) -> Callable[[int], None]:
    """os.fsync that, the first time it is called, creates ``target`` as another process would."""
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        if not fired:
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(target, "xb") as racer:
                racer.write(data)
            fired.append(os.stat(target).st_ino)
        real_fsync(fd)

    return fsync


@pytest.mark.parametrize("path", ["new.txt", "fresh/dir/new.txt"])
def test_a_racing_creator_is_not_clobbered_by_an_unseen_session(
    path: str, root: Path, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = root / path
    fired: list[int] = []

    monkeypatch.setattr(f"{PROVIDER_OS}.fsync", racing_fsync(target, b"racer's bytes\n", fired))
    result = session.call("write", {"file_path": path, "content": "mine\n"})
    monkeypatch.undo()

    assert fired, "the race was never staged: os.fsync was not called"
    assert result.error is not None and result.error.code == "FS_NOT_OBSERVED", result.text
    assert target.read_bytes() == b"racer's bytes\n"
    assert os.stat(target).st_ino == fired[0]
    assert sorted(os.listdir(target.parent)) == ["new.txt"]

    again = session.call("write", {"file_path": path, "content": "mine\n"})
    assert again.error is not None and again.error.code == "FS_NOT_OBSERVED", again.text
    assert target.read_bytes() == b"racer's bytes\n"


def test_a_racing_creator_is_not_clobbered_after_a_read_found_nothing(
    root: Path, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = root / "new.txt"
    missing = session.call("read", {"file_path": "new.txt"})
    assert missing.error is not None and missing.error.code == "FS_NOT_FOUND", missing.text
    fired: list[int] = []

    monkeypatch.setattr(f"{PROVIDER_OS}.fsync", racing_fsync(target, b"racer\n", fired))
    result = session.call("write", {"file_path": "new.txt", "content": "mine\n"})
    monkeypatch.undo()

    assert fired
    assert result.error is not None and result.error.code == "FS_STALE_VERSION", result.text
    assert target.read_bytes() == b"racer\n"
    assert os.stat(target).st_ino == fired[0]


def test_a_creator_racing_the_final_check_is_not_clobbered(
    root: Path, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The racer appears right after the last look at the target before publication (the lstat that
    re-checks "still absent"), so only a no-replace publication can keep its bytes."""
    target = root / "new.txt"
    real_fsync, real_stat = os.fsync, os.stat
    temp_synced: list[int] = []
    fired: list[int] = []

    def note_fsync(fd: int) -> None:
        temp_synced.append(fd)
        real_fsync(fd)

    def racing_stat(path: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return real_stat(path, *args, **kwargs)
        finally:
            if temp_synced and not fired and path == "new.txt" and kwargs.get("dir_fd") is not None:
                with open(target, "xb") as racer:
                    racer.write(b"racer\n")
                fired.append(real_stat(target).st_ino)

    monkeypatch.setattr(f"{PROVIDER_OS}.fsync", note_fsync)
    monkeypatch.setattr(f"{PROVIDER_OS}.stat", racing_stat)
    result = session.call("write", {"file_path": "new.txt", "content": "mine\n"})
    monkeypatch.undo()

    assert fired, "the race was never staged: the target was not looked at after the temp was written"
    assert result.error is not None and result.error.code == "FS_NOT_OBSERVED", result.text
    assert target.read_bytes() == b"racer\n"
    assert os.stat(target).st_ino == fired[0]
    assert sorted(os.listdir(root)) == ["new.txt"]
