"""Directories: what is at a path, making one (with its parents), and where a walk starts."""

from __future__ import annotations

import dataclasses
import os
import stat
from collections.abc import Callable

from fs_tools.errors import MissingPath, NotDirectory
from fs_tools.provider.disk import Disk, identity
from fs_tools.provider.face import FileState, Status
from fs_tools.provider.resolve import Resolved, require_regular
from fs_tools.provider.walk import DIRECTORY, FILE, Entry, kind_of, start_directory


def status(target: Resolved) -> Status:
    """``FileProvider.stat`` on the resolved ``target``."""
    now = target.leaf_stat()
    if now is None:
        raise MissingPath(f"{target.display!r} does not exist")
    return Status(
        target.key,
        kind_of(now.st_mode),
        now.st_size,
        stat.S_IMODE(now.st_mode),
        now.st_mtime_ns,
        identity(now),
    )


def make_directory(
    disk: Disk,
    target: Resolved,
    gate: Callable[[FileState], None],
    *,
    display: str,
    with_parents: Callable[[], Resolved],
) -> tuple[str, ...]:
    """``FileProvider.make_directory`` on the resolved ``target`` (named ``display`` in messages);
    ``with_parents`` resolves the path again, making its missing parents."""
    gate(dataclasses.replace(disk.state(target), kind=DIRECTORY))  # judged as the directory
    if target.name is None:  # the root, or a path that names an existing directory through '..'
        return ()
    if target.dir_fd is None:
        target = with_parents()
        gate(dataclasses.replace(disk.state(target), kind=DIRECTORY))
    assert target.dir_fd is not None and target.name is not None
    try:
        os.mkdir(target.name, 0o777, dir_fd=target.dir_fd)
    except FileExistsError:
        now = target.leaf_stat()
        if now is not None and stat.S_ISDIR(now.st_mode):
            return ()
        target.remove_created_directories()
        raise NotDirectory(f"{display!r} already exists and is not a directory", details={"reason": "exists"}) from None
    except BaseException:
        target.remove_created_directories()
        raise
    disk.sync_created_directories(target)
    disk.sync_directory(target.dir_fd, display)
    return (*target.made_keys(), target.key)


def walk_start(target: Resolved, files_too: bool) -> int | Entry:
    """A new descriptor of the directory ``target`` names, or (``files_too``) the regular file it is."""
    display = target.display
    now = target.leaf_stat()
    if now is None:
        raise MissingPath(f"{display!r} does not exist")
    if not stat.S_ISDIR(now.st_mode):
        if not files_too:
            raise NotDirectory(f"{display!r} is not a directory", details={"reason": "leaf"})
        require_regular(now, display)  # a FIFO or device is named as such, never opened
        assert target.dir_fd is not None and target.name is not None
        return Entry((target.name,), FILE, now.st_size, target.dir_fd)
    fd = start_directory(target)
    if fd is None:
        raise NotDirectory(f"{display!r} is not a directory", details={"reason": "leaf"})
    return fd
