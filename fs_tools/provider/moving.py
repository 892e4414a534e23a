"""Moving an entry within the roots: a file only while it is the version the gate expects, a link as
a link, a directory whole; an existing destination replaced only when it is a file at the version the
gate expects. Across filesystems a file is copied atomically, then its source removed."""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import logging
import os
import stat
from collections.abc import Iterator

from fs_tools.errors import (
    AlreadyExists,
    DestinationNotFile,
    FsError,
    IntoItself,
    IoError,
    MissingPath,
    NeverReplaced,
    SamePath,
    SandboxDenied,
    StaleVersion,
    path_label,
)
from fs_tools.provider import publishing, versions
from fs_tools.provider.disk import Disk, check_cancel, hold, identity, keep_of, names, refuse_special, vanished
from fs_tools.provider.face import CancelToken, FileState, MoveGate, Snapshot
from fs_tools.provider.locks import directory_lock
from fs_tools.provider.oserrors import os_errors
from fs_tools.provider.primitives import Primitives
from fs_tools.provider.removing import unlink_verified
from fs_tools.provider.resolve import DIR_FLAGS, Resolved, describe_kind
from fs_tools.provider.walk import DIRECTORY, FILE, OTHER, SYMLINK, kind_of, walk

log = logging.getLogger("fs_tools.provider")

_NOUNS = {DIRECTORY: "directory", SYMLINK: "symlink"}
_MAX_MOVED_ENTRIES = 100_000  # entries below a moved directory checked against protected paths


def rename(
    disk: Disk, source: str, destination: str, gate: MoveGate, *, overwrite: bool, cancel: CancelToken | None = None
) -> str:
    """``FileProvider.rename``: both ends resolved here, the source's entry first (the destination's
    missing parents are made only once the source and the destination are judged)."""
    shown = path_label(source)
    with contextlib.ExitStack() as stack:
        with os_errors(shown):
            src = stack.enter_context(disk.resolve_entry(source))
            src_state = _move_source(disk, src, source, gate)
            expected_src = gate.expect_source(src_state)
        dst, expected_dst = _move_destination(disk, stack, destination, gate, cancel)
        try:
            if src.key == dst.key:
                raise SamePath(f"{shown!r} and {dst.display!r} are the same file")
            if src_state.kind == DIRECTORY and dst.key.startswith(src.key + "/"):
                raise IntoItself(f"{shown!r} cannot be moved into itself")
            if src_state.kind != FILE and expected_dst is not None:
                raise NeverReplaced(
                    f"{dst.display!r} is a file; a {_NOUNS.get(src_state.kind, 'entry')} never replaces a file"
                )
            with os_errors(shown):
                if src_state.kind == DIRECTORY:  # the destination is judged as the directory it becomes
                    gate.check_inside(src_state, dataclasses.replace(disk.state(dst), kind=DIRECTORY))
                if src_state.kind == DIRECTORY and gate.checks_inside:
                    _check_inside(disk, src, dst, gate)
                _move(disk, src, dst, src_state.kind, expected_src, expected_dst, overwrite, gate, cancel)
        except BaseException:
            dst.remove_created_directories()
            raise
        for fd in dict.fromkeys((src.dir_fd, dst.dir_fd)):
            assert fd is not None
            disk.sync_directory(fd, shown)
        disk.sync_created_directories(dst)
        return src_state.kind
    raise AssertionError("unreachable")  # pragma: no cover


def _move_source(disk: Disk, src: Resolved, source: str, gate: MoveGate) -> FileState:
    display = src.display
    state = disk.state(src)
    if not src.parts or disk.is_root(src.key, state.kind == DIRECTORY):
        raise SandboxDenied(
            f"{display!r} is a workspace root (or holds one), which is never moved", details={"reason": "root"}
        )
    if not state.exists or src.dir_fd is None:
        gate.expect_source(state)  # a file the session saw, gone since, is stale; else not found
        raise MissingPath(f"{display!r} does not exist")
    if state.kind == SYMLINK:
        with disk.resolve(source):  # a link that leads outside every root is refused (SandboxDenied)
            pass
    elif state.kind == OTHER:
        refuse_special(src, "moved")
    return state


def _move_destination(
    disk: Disk, stack: contextlib.ExitStack, destination: str, gate: MoveGate, cancel: CancelToken | None
) -> tuple[Resolved, str | None]:
    display = path_label(destination)
    with os_errors(display):
        dst = stack.enter_context(disk.resolve_entry(destination))
        dst.display = display
        current = dst.leaf_stat() if dst.parts else os.stat(dst.root.fd)
        if current is not None and stat.S_ISLNK(current.st_mode):
            with disk.resolve(destination):  # one that leads outside every root is that (SandboxDenied)
                pass
        if current is not None and not stat.S_ISREG(current.st_mode):
            kind = describe_kind(current.st_mode)
            raise DestinationNotFile(f"{display!r} is {kind}; a move never replaces one", kind=kind_of(current.st_mode))
        expected = gate.expect_destination(disk.state(dst))
        if current is None and dst.dir_fd is None:
            check_cancel(cancel, f"moving to {display!r}")
            dst = stack.enter_context(
                disk.resolver.resolve(destination, create_parents=True, stage=False, follow_leaf=False)
            )
            dst.display = display
            expected = gate.expect_destination(disk.state(dst))
        return dst, expected


def _check_inside(disk: Disk, src: Resolved, dst: Resolved, gate: MoveGate) -> None:
    """Show the gate every entry below a directory about to move, as it is and as it will be."""
    assert src.dir_fd is not None and src.name is not None
    fd = os.open(src.name, DIR_FLAGS, dir_fd=src.dir_fd)
    try:
        for count, entry in enumerate(walk(fd, lambda _: True, sizes=False)):
            if count >= _MAX_MOVED_ENTRIES:
                raise IoError(
                    f"{src.display!r} holds more than {_MAX_MOVED_ENTRIES:,} entries to check against the "
                    "protected paths; move smaller directories",
                    details={"reason": "too_many"},
                )
            old, new = os.path.join(src.key, *entry.parts), os.path.join(dst.key, *entry.parts)
            gate.check_inside(disk.entry_state(old, entry.kind), disk.entry_state(new, entry.kind))
    finally:
        os.close(fd)


def _move(
    disk: Disk,
    src: Resolved,
    dst: Resolved,
    kind: str,
    expected_src: str | None,
    expected_dst: str | None,
    overwrite: bool,
    gate: MoveGate,
    cancel: CancelToken | None,
) -> None:
    """Under both files' locks and both directories' locks: check both ends, then rename; the gate
    learns of the move before the files' locks are released."""
    assert src.dir_fd is not None and src.name is not None and dst.dir_fd is not None and dst.name is not None
    with contextlib.ExitStack() as locks:
        for key in sorted({src.key, dst.key}):
            locks.enter_context(disk.locks.hold(key, cancel=cancel, display=src.display))
        across = False
        verified: Snapshot | None = None
        with _directories_locked(disk, src.dir_fd, dst.dir_fd, cancel, src.display):
            # Held from the check to the rename: its inode number cannot be reused meanwhile.
            held = hold(disk.primitives, src.dir_fd, src.name) if kind == FILE else None
            if held is not None:
                locks.callback(os.close, held)
            now = src.leaf_stat()
            if now is None or kind_of(now.st_mode) != kind:
                raise vanished(src.display)
            if kind == FILE and expected_src is not None:
                verified = versions.verified(disk, src, now, expected_src)
            replaced = _check_destination(disk, dst, expected_dst, overwrite)
            there = dst.leaf_stat()
            if there is not None and (there.st_dev, there.st_ino) == (now.st_dev, now.st_ino):
                same = f"{src.display!r} and {dst.display!r} are the same file (hard links)"
                raise SamePath(same)
            check_cancel(cancel, f"moving {src.display!r}")
            try:
                _rename(disk, src, dst, kind, replaced)
            except OSError as exc:
                if exc.errno != errno.EXDEV:
                    raise
                across = True
            if not across and held is not None and not names(dst.dir_fd, dst.name, os.fstat(held)):
                # a program that takes no lock saved the source just before the rename
                _move_back(disk.primitives, src, dst)
                raise StaleVersion(
                    f"{src.display!r} was replaced by another program just as it was being moved; it is left "
                    "where it was",
                    found="modified",
                )
        if across:
            _move_across(disk, src, dst, kind, verified, expected_dst, replaced, cancel)
        gate.moved(
            src.key, dst.key, kind, moved=verified, replaced=replaced, made=dst.made_keys(), identity=identity(now)
        )


def _rename(disk: Disk, src: Resolved, dst: Resolved, kind: str, replaced: Snapshot | None) -> None:
    """Rename ``src`` to ``dst``: without replacing anything, or — over the verified ``replaced`` —
    by swapping the two and proving that what was displaced is that version (else swapped back:
    another program's save of the destination is kept, and the move is FS_STALE_VERSION)."""
    assert src.dir_fd is not None and src.name is not None and dst.dir_fd is not None and dst.name is not None
    if replaced is None:
        _rename_no_replace(disk.primitives, src, dst, kind)
        return
    if not disk.primitives.exchange_between(src.dir_fd, src.name, dst.dir_fd, dst.name):
        os.rename(src.name, dst.name, src_dir_fd=src.dir_fd, dst_dir_fd=dst.dir_fd)
        return
    if versions.is_version(disk, src.dir_fd, src.name, replaced):
        os.unlink(src.name, dir_fd=src.dir_fd)  # the replaced file, displaced to the source's name
        return
    disk.primitives.exchange_between(src.dir_fd, src.name, dst.dir_fd, dst.name)
    raise StaleVersion(
        f"{dst.display!r} was replaced by another program just as the move was being made; both are kept",
        found="modified",
    )


def _check_destination(disk: Disk, dst: Resolved, expected: str | None, overwrite: bool) -> Snapshot | None:
    """The file the move replaces at the destination, proven to be the expected version; None when
    there is none."""
    current = dst.leaf_stat()
    if current is None:
        if expected is not None:
            raise vanished(dst.display)
        return None
    if expected is None:
        raise StaleVersion(f"{dst.display!r} was created just now by someone else", found="exists")
    verified = versions.verified(disk, dst, current, expected)
    if not overwrite:
        raise AlreadyExists(f"{dst.display!r} already exists", details={"reason": "exists"})
    return verified


def _move_across(
    disk: Disk,
    src: Resolved,
    dst: Resolved,
    kind: str,
    verified: Snapshot | None,
    expected_dst: str | None,
    replaced: Snapshot | None,
    cancel: CancelToken | None,
) -> None:
    """A file on another filesystem: published at the destination by the atomic write, then the
    source removed while it is still the version copied. If that fails, the destination is put back
    as it was (the copy withdrawn, or the replaced file written back) and the source stays."""
    if kind != FILE or verified is None:
        raise IoError(
            f"{src.display!r} is on another filesystem than {dst.display!r}; only files move across filesystems",
            details={"errno": errno.EXDEV},
        )
    if verified.stat.st_size > disk.max_file_bytes:
        disk.check_size(verified.stat.st_size, src.display)  # copied through memory: the whole-file limit
    assert src.dir_fd is not None and src.name is not None and dst.dir_fd is not None and dst.name is not None
    keep = keep_of(verified.stat)
    written, _ = publishing.publish(disk, dst, verified.data, keep, expected=expected_dst, basis=None, cancel=cancel)
    try:
        with directory_lock(src.dir_fd, disk.lock_timeout, cancel, src.display):
            unlink_verified(disk, src.dir_fd, src.name, verified, src.display)
    except BaseException:
        _restore_destination(disk, dst, written, replaced, verified.version)
        raise


def _restore_destination(
    disk: Disk, dst: Resolved, written: os.stat_result, replaced: Snapshot | None, copied: str
) -> None:
    """After a failed move across filesystems: the destination as it was before the copy."""
    assert dst.dir_fd is not None and dst.name is not None
    if replaced is None:
        if names(dst.dir_fd, dst.name, written):
            with contextlib.suppress(OSError):
                os.unlink(dst.name, dir_fd=dst.dir_fd)  # the copy goes again: the source stays
        return
    if replaced.stat.st_size and not replaced.data:
        log.error("a failed move could not restore %r (too large to keep)", dst.display)
        return
    mode = keep_of(replaced.stat)
    try:
        publishing.publish(disk, dst, replaced.data, mode, expected=copied, basis=None, cancel=None)
    except (OSError, FsError) as exc:
        log.error("a failed move could not restore %r: %s", dst.display, exc)


@contextlib.contextmanager
def _directories_locked(
    disk: Disk, first: int, second: int, cancel: CancelToken | None, display: str
) -> Iterator[None]:
    """Both directories' OS locks, taken in one order (by device and inode) so two moves in opposite
    directions cannot deadlock; one lock when they are the same directory."""
    by_identity = {(st.st_dev, st.st_ino): fd for fd in (first, second) for st in (os.fstat(fd),)}
    with contextlib.ExitStack() as stack:
        for identity in sorted(by_identity):
            stack.enter_context(directory_lock(by_identity[identity], disk.lock_timeout, cancel, display))
        yield


def _move_back(prims: Primitives, src: Resolved, dst: Resolved) -> None:
    """Undo a rename that moved what it had not verified (never over a file that took the old name)."""
    assert src.dir_fd is not None and src.name is not None and dst.dir_fd is not None and dst.name is not None
    try:
        prims.move_no_replace(dst.dir_fd, dst.name, src.dir_fd, src.name, directory=False)
    except OSError as exc:
        log.error("a file saved during a move is left at %r (errno %s)", dst.display, exc.errno)


def _rename_no_replace(prims: Primitives, src: Resolved, dst: Resolved, kind: str) -> None:
    assert src.dir_fd is not None and src.name is not None and dst.dir_fd is not None and dst.name is not None
    try:
        prims.move_no_replace(src.dir_fd, src.name, dst.dir_fd, dst.name, directory=kind == DIRECTORY)
    except FileExistsError as exc:  # a creator won the race: never clobber it
        created = f"{dst.display!r} was created just now by someone else"
        raise StaleVersion(created, found="exists") from exc
