"""Confined directory walks for the discovery tools.

Walks start from a resolved directory and descend only through real directories opened with
``O_NOFOLLOW | O_DIRECTORY`` relative to their parent's descriptor: a symlink is reported as one entry
and never descended, whatever it points at, so nothing outside a root is ever listed or read.
Temp files of atomic writes and staging directories (live or orphaned, and anything else under such a
name) are never listed, searched or entered: their partial bytes are nobody's content.
"""

from __future__ import annotations

import errno
import operator
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fs_tools.errors import FsError, IoError
from fs_tools.provider.primitives import Primitives
from fs_tools.provider.resolve import DIR_FLAGS, MAX_DEPTH, Resolved
from fs_tools.provider.tempfiles import is_reserved_name

if TYPE_CHECKING:  # face.py imports this module's Entry
    from fs_tools.provider.face import Enter as ShowDirectory

MAX_WALK_DEPTH = MAX_DEPTH  # directory levels held open at once during a walk

FILE, DIRECTORY, SYMLINK, OTHER = "file", "directory", "symlink", "other"
_NAME = operator.attrgetter("name")  # a listing's sort key, called in C


@dataclass(frozen=True)
class Entry:
    """One directory entry met by a walk. ``parent_fd`` is valid only until the walk moves on."""

    parts: tuple[str, ...]  # path below the walk's start, this entry's name last
    kind: str
    size: int
    parent_fd: int

    @property
    def name(self) -> str:
        return self.parts[-1]

    @property
    def depth(self) -> int:
        return len(self.parts)


# Decides, for a directory entry, whether to descend into it.
Descend = Callable[[Entry], bool]
# Sees a directory (its parts below the start, and its descriptor) before the walk lists it.
Enter = Callable[[tuple[str, ...], int], None]


def kind_of(mode: int) -> str:
    if stat.S_ISREG(mode):
        return FILE
    if stat.S_ISDIR(mode):
        return DIRECTORY
    if stat.S_ISLNK(mode):
        return SYMLINK
    return OTHER


def start_directory(target: Resolved) -> int | None:
    """A new descriptor for the directory ``target`` names, or None when it names something else."""
    if target.dir_fd is None:
        return None
    if target.name is None:
        return os.open(".", DIR_FLAGS, dir_fd=target.dir_fd)
    st = os.stat(target.name, dir_fd=target.dir_fd, follow_symlinks=False)
    if not stat.S_ISDIR(st.st_mode):
        return None
    return os.open(target.name, DIR_FLAGS, dir_fd=target.dir_fd)


def walk(
    directory_fd: int,
    descend: Descend,
    *,
    enter: Enter | None = None,
    sizes: bool = True,
    prefix: tuple[str, ...] = (),
) -> Iterator[Entry]:
    """Entries below ``directory_fd`` in sorted, depth-first order; ``descend`` chooses which
    directories to enter, and ``enter`` sees each directory (its parts and descriptor) before its
    entries. Without ``sizes`` the kind comes from the directory listing itself (no ``stat`` per entry;
    ``size`` is -1). Entries that vanish or change kind mid-walk are skipped, and so is every entry with
    a name fs-tools reserves for its temps (``TEMP_NAME``: temp files, staging directories), whatever
    its kind."""
    if enter is not None:
        enter(prefix, directory_fd)
    try:
        with os.scandir(directory_fd) as scan:
            listed = sorted(scan, key=_NAME)
    except OSError:
        return
    for item in listed:
        name = item.name
        if is_reserved_name(name):
            continue  # a write in progress, or one a killed writer left: not a file of the workspace
        try:
            if sizes:
                st = os.stat(name, dir_fd=directory_fd, follow_symlinks=False)
                kind, size = kind_of(st.st_mode), st.st_size
            else:
                kind, size = _kind_of(item), -1
        except OSError:
            continue
        entry = Entry(parts=(*prefix, name), kind=kind, size=size, parent_fd=directory_fd)
        yield entry
        if entry.kind != DIRECTORY or not descend(entry):
            continue
        if len(entry.parts) >= MAX_WALK_DEPTH:
            raise IoError(
                f"the tree is deeper than {MAX_WALK_DEPTH} directory levels below the search start; "
                "search a subdirectory",
                details={"reason": "too_deep"},
            )
        try:
            child = os.open(name, DIR_FLAGS, dir_fd=directory_fd)
        except OSError as exc:
            if exc.errno in (errno.EMFILE, errno.ENFILE):  # out of descriptors: say so, never a silent gap
                raise IoError(
                    "too many open files while walking the tree; search a smaller directory",
                    details={"errno": exc.errno},
                ) from exc
            continue  # swapped for a link or removed since the listing: never followed
        try:
            yield from walk(child, descend, enter=enter, sizes=sizes, prefix=entry.parts)
        finally:
            os.close(child)


def _kind_of(item: os.DirEntry[str]) -> str:
    # the listing's own type field (no system call on Linux); a stale answer is harmless, because files
    # are opened and directories entered with O_NOFOLLOW and checked again on their descriptors
    if item.is_symlink():
        return SYMLINK
    if item.is_dir(follow_symlinks=False):
        return DIRECTORY
    if item.is_file(follow_symlinks=False):
        return FILE
    return OTHER


# --- reading small files met on a walk -----------------------------------------------------------


def read_child(
    prims: Primitives, dir_fd: int, name: str, limit: int, *, truncate: bool = False
) -> tuple[bytes | None, int]:
    """The bytes of the regular file ``name`` in ``dir_fd`` and its size: (None, size) over ``limit``
    bytes (with ``truncate``: its first ``limit`` bytes instead), (None, -1) when it is not a regular
    file or cannot be read. Never opens a FIFO or a device; never raises."""
    try:
        fd, st = prims.open_regular_with_stat(dir_fd, name, name)
    except (OSError, FsError):
        return None, -1
    try:
        if st.st_size > limit and not truncate:
            return None, st.st_size
        return _read_up_to(fd, min(st.st_size, limit), limit), st.st_size
    except OSError:
        return None, -1
    finally:
        os.close(fd)


def _read_up_to(fd: int, expected: int, limit: int) -> bytes:
    """The file's bytes: the size fstat promised, or (for a file growing meanwhile) what arrives at
    once, never more than ``limit``."""
    chunks = []
    size = 0
    while size < limit and (chunk := os.read(fd, max(min(expected + 1, limit - size), 1))):
        chunks.append(chunk)
        size += len(chunk)
        if len(chunk) <= expected:
            break  # the size fstat promised has arrived; a file growing meanwhile is read as it was
        expected = 0
    return b"".join(chunks)


def reader(prims: Primitives, dir_fd: int) -> Callable[[str, int], bytes | None]:
    def read(name: str, limit: int) -> bytes | None:
        return read_child(prims, dir_fd, name, limit, truncate=True)[0]

    return read


def enter_ancestors(prims: Primitives, target: Resolved, enter: ShowDirectory) -> None:
    """Show ``enter`` each directory from the root down to (not including) the walk's start."""
    fd = os.dup(target.root.fd)
    try:
        for depth in range(len(target.parts)):
            enter(target.parts[:depth], reader(prims, fd))
            child = os.open(target.parts[depth], DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = child
    except OSError:
        pass  # the start was resolved a moment ago; a directory changing now only hides its files
    finally:
        os.close(fd)


def walk_from(
    prims: Primitives,
    fd: int,
    descend: Callable[[Entry], bool],
    *,
    enter: ShowDirectory | None,
    sizes: bool,
    start: tuple[str, ...],
) -> Iterator[Entry]:
    seen = None if enter is None else (lambda prefix, dir_fd: enter((*start, *prefix), reader(prims, dir_fd)))
    return walk(fd, descend, enter=seen, sizes=sizes)
