"""Deleting an entry: a file only while it is the version the gate expects, a link as a link, a
directory only when empty — under the file's lock and its directory's."""

from __future__ import annotations

import contextlib
import errno
import logging
import os

from fs_tools.errors import MissingPath, NotEmpty, SandboxDenied, StaleVersion
from fs_tools.provider import versions
from fs_tools.provider.disk import Disk, check_cancel, hold, refuse_special, vanished
from fs_tools.provider.face import CancelToken, RemoveGate, Snapshot
from fs_tools.provider.locks import directory_lock
from fs_tools.provider.resolve import DIR_FLAGS, Resolved
from fs_tools.provider.tempfiles import is_reserved_name, remove_orphans, temp_name
from fs_tools.provider.walk import DIRECTORY, FILE, OTHER, kind_of

log = logging.getLogger("fs_tools.provider")


def remove(disk: Disk, target: Resolved, gate: RemoveGate, cancel: CancelToken | None) -> str:
    """``FileProvider.remove`` on the entry ``target`` names itself (a symlink not followed)."""
    display = target.display
    state = disk.state(target)
    if not target.parts or disk.is_root(target.key, state.kind == DIRECTORY):
        root = f"{display!r} is a workspace root (or holds one), which is never deleted"
        raise SandboxDenied(root, details={"reason": "root"})
    if not state.exists or target.dir_fd is None or target.name is None:
        gate.expect(state)  # a file the session saw, gone since, is stale; else not found
        raise MissingPath(f"{display!r} does not exist")
    if state.kind == OTHER:
        refuse_special(target, "deleted")
    expected = gate.expect(state)
    with disk.locks.hold(target.key, cancel=cancel, display=display):
        check_cancel(cancel, f"deleting {display!r}")
        with directory_lock(target.dir_fd, disk.lock_timeout, cancel, display):
            kind, removed = _remove_locked(disk, target, state.kind, expected, cancel)
        gate.removed(target.key, before=removed)
    disk.sync_directory(target.dir_fd, display)
    return kind


def _remove_locked(
    disk: Disk, target: Resolved, kind: str, expected: str | None, cancel: CancelToken | None
) -> tuple[str, Snapshot | None]:
    """Remove the entry under the directory's lock: the kind removed, and a regular file's snapshot as
    verified (its bytes empty when over the whole-file limit)."""
    display = target.display
    dir_fd, name = target.dir_fd, target.name
    assert dir_fd is not None and name is not None
    now = target.leaf_stat()
    if now is None:
        raise vanished(display)
    if kind_of(now.st_mode) != kind:
        raise StaleVersion(f"{display!r} was replaced by something else just now", found="modified")
    if kind == DIRECTORY:
        try:
            os.rmdir(name, dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                raise
            count = _count_entries(dir_fd, name)  # what killed writers left there is swept, not counted
            if count == 0:
                os.rmdir(name, dir_fd=dir_fd)
                return kind, None
            raise NotEmpty(
                f"{display!r} is a directory with {count:,} entr{'y' if count == 1 else 'ies'}; "
                "only an empty directory is deleted",
                entries=count,
            ) from exc
        return kind, None
    if kind != FILE or expected is None:  # a symlink: the link itself goes, never its target
        os.unlink(name, dir_fd=dir_fd)
        return kind, None
    proven = versions.verified(disk, target, now, expected)
    check_cancel(cancel, f"deleting {display!r}")
    unlink_verified(disk, dir_fd, name, proven, display)
    return kind, proven


def unlink_verified(disk: Disk, dir_fd: int, name: str, proven: Snapshot, display: str) -> None:
    """Unlink ``name``, proving that what goes is the verified version: the file is first renamed to a
    reserved temp name (held and locked, so no sweeper takes it), checked there, then unlinked. A file
    another program saved in between is put back under its name and this is FS_STALE_VERSION."""
    holder = hold(disk.primitives, dir_fd, name)
    try:
        temp = temp_name()
        disk.primitives.rename_no_replace(dir_fd, name, temp)
        if versions.is_version(disk, dir_fd, temp, proven):
            os.unlink(temp, dir_fd=dir_fd)
            return
        try:
            disk.primitives.rename_no_replace(dir_fd, temp, name)
        except FileExistsError:  # a newer save took the name meanwhile: the one set aside is superseded
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=dir_fd)
        except OSError as exc:
            log.error("a file saved during a delete is left under %r (errno %s)", temp, exc.errno)
        raise StaleVersion(
            f"{display!r} was replaced by another program just as it was being deleted; it is kept",
            found="modified",
        )
    finally:
        if holder is not None:
            os.close(holder)


def _count_entries(dir_fd: int, name: str) -> int:
    """The direct entries of the directory ``name`` that are the workspace's: orphaned temps and staging
    that killed writers left there are removed first, and live ones (a write in progress) not counted."""
    try:
        fd = os.open(name, DIR_FLAGS, dir_fd=dir_fd)
    except OSError:
        return 0
    try:
        remove_orphans(fd)
        with os.scandir(fd) as entries:
            return sum(1 for entry in entries if not is_reserved_name(entry.name))
    except OSError:
        return 0
    finally:
        os.close(fd)
