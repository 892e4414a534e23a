"""What every provider operation works with, and the small facts they share.

A provider operation is a function of a ``Disk`` and of what the confined walker resolved a path to —
the descriptor of the directory that holds the leaf and the leaf's name (``Resolved``) — in the shape
of Go's ``os.Root`` operations (``doInRoot(root, name, func(parent, name))``). ``FileProvider`` is a
thin face that resolves a path and hands the result to one of them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import logging
import os
import stat
from collections.abc import Iterator

from fs_tools.errors import (
    Aborted,
    ContentTooLarge,
    FsError,
    NotRegularFile,
    ReadTooLarge,
    StaleVersion,
    TooLarge,
    path_label,
)
from fs_tools.provider.cache import VersionCache
from fs_tools.provider.face import CancelToken, FileState, ProviderListener
from fs_tools.provider.locks import KeyedLocks
from fs_tools.provider.primitives import Primitives, require_plain_file
from fs_tools.provider.resolve import Resolved, Resolver, describe_kind
from fs_tools.provider.tempfiles import Sweeper
from fs_tools.provider.walk import kind_of

log = logging.getLogger("fs_tools.provider")


@dataclasses.dataclass(eq=False)
class Disk:
    """The confined roots, the limits, the per-file locks, the remembered contents and the listeners:
    one per provider, shared by all its operations."""

    primitives: Primitives
    resolver: Resolver
    max_file_bytes: int
    max_read_bytes: int
    lock_timeout: float
    # durable=False skips every fsync of a change (temp files and directories): still atomic (rename),
    # but a crash of the machine may lose a change reported done. For scratch workspaces and benchmarks.
    durable: bool
    locks: KeyedLocks
    cache: VersionCache
    sweeper: Sweeper
    listeners: tuple[ProviderListener, ...] = ()

    def resolve(self, path: str, *, create_parents: bool = False) -> contextlib.AbstractContextManager[Resolved]:
        """``path`` resolved through the roots, a symlink at its end followed while it stays inside."""
        return self.resolver.resolve(path, create_parents=create_parents)

    @contextlib.contextmanager
    def resolve_entry(self, path: str) -> Iterator[Resolved]:
        """``path`` resolved to the entry it names itself: a symlink at its end is not followed, and a
        path that names a directory through a trailing '/' or '..' is the directory's own entry."""
        bare = without_trailing_slashes(path)
        with self.resolver.resolve(bare, follow_leaf=False) as target:
            target.display = path_label(path)
            if target.name is not None or not target.parts:
                yield target
                return
            inside = os.path.join(target.root.real, *target.parts)  # 'a/..': the entry the walk ended at
        with self.resolver.resolve(inside, follow_leaf=False) as again:
            again.display = target.display
            yield again

    def relative_paths(self, key: str) -> tuple[str, ...]:
        """Every spelling of ``key`` relative to a root that holds it (nested roots give several)."""
        return tuple(self.resolver.relative_forms(key))

    def is_root(self, key: str, directory: bool) -> bool:
        """Whether ``key`` is a root, or (a directory) holds one: never moved or deleted."""
        return any(root.real == key or (directory and root.real.startswith(key + "/")) for root in self.resolver.roots)

    def state(self, target: Resolved) -> FileState:
        """What a gate is shown of ``target``: whether it exists, its kind, why it cannot be read whole."""
        display = target.display
        current = target.leaf_stat()
        unreadable: FsError | None = None
        if current is not None:
            try:
                require_plain_file(current, display)
                self.check_size(current.st_size, display)
            except FsError as exc:
                unreadable = exc
        kind = kind_of(current.st_mode) if current is not None else ""
        return FileState(target.key, display, self.relative_paths(target.key), current is not None, unreadable, kind)

    def entry_state(self, key: str, kind: str) -> FileState:
        """What a gate is shown of an entry met below a directory (it exists; its bytes are not read)."""
        relative = self.relative_paths(key)
        return FileState(key, path_label(relative[0] if relative else key), relative, True, None, kind)

    def check_size(self, size: int, display: str, *, reading: bool = False) -> None:
        """FS_TOO_LARGE when a file of ``size`` bytes is over the limit for whole-file work (with
        ``reading``: over the limit for being read at all)."""
        limit = self.max_read_bytes if reading else self.max_file_bytes
        if size > limit:
            message = f"{display!r} is {size:,} bytes, over the {limit:,}-byte limit"
            if reading:
                raise ReadTooLarge(message, details={"size": size, "limit": limit, "subject": "read"})
            raise TooLarge(message, details={"size": size, "limit": limit})

    def check_content_size(self, size: int, display: str) -> None:
        """FS_TOO_LARGE when new content of ``size`` bytes is over the limit."""
        if size > self.max_file_bytes:
            raise ContentTooLarge(
                f"the new content for {display!r} is {size:,} bytes, over the {self.max_file_bytes:,}-byte limit",
                details={"size": size, "limit": self.max_file_bytes, "subject": "content"},
            )

    def started(self, key: str) -> None:
        """Tell the listeners an operation on ``key`` began (a read or a commit)."""
        for listener in self.listeners:
            listener.operation_started(key)

    def sync_directory(self, dir_fd: int, display: str, doing: str = "changing") -> None:
        """Make a change of ``dir_fd``'s entries durable (not when the provider is not durable)."""
        if not self.durable:
            return
        try:
            os.fsync(dir_fd)
        except OSError as exc:  # the change is made; some filesystems cannot sync a directory
            log.warning("directory fsync after %s %r failed: errno %s", doing, display, exc.errno)

    def sync_created_directories(self, target: Resolved) -> None:
        """fsync the parents of directories created for a new file, so their entries survive a crash
        too (the file's own directory is synced after the rename)."""
        if not self.durable:
            return
        for parent in dict.fromkeys(fd for fd, _ in target.created):
            try:
                os.fsync(parent)
            except OSError as exc:
                log.warning("fsync of a directory created for %r failed: errno %s", target.display, exc.errno)


def vanished(display: str) -> StaleVersion:
    """The condition "the observed file is gone"."""
    return StaleVersion(f"{display!r} no longer exists", found="deleted")


def check_cancel(cancel: CancelToken | None, what: str) -> None:
    if cancel is not None and cancel.is_set():
        raise Aborted(f"{what} was cancelled before anything was written")


def identity(info: os.stat_result) -> str:
    return f"{info.st_dev}:{info.st_ino}"


def without_trailing_slashes(path: str) -> str:
    """``path`` less trailing '/' and '/.' (they only insist on a directory): the entry itself is meant,
    so a symlink named with a trailing slash is the link, not the directory it leads to."""
    bare = path
    while True:
        trimmed = bare.rstrip("/")
        if trimmed.endswith("/."):
            trimmed = trimmed[:-2]
        elif trimmed == ".":
            trimmed = ""
        if trimmed == bare:
            return bare
        if not trimmed:
            return "/" if path.startswith("/") else "."
        bare = trimmed


def refuse_special(target: Resolved, done: str) -> None:
    """A FIFO, socket or device is never moved or deleted: fs-tools works on files, directories and links."""
    current = target.leaf_stat()
    kind = describe_kind(current.st_mode) if current is not None else "not a regular file"
    raise NotRegularFile(f"{target.display!r} is {kind}; only files, directories and symlinks are {done}", kind=kind)


def hold(prims: Primitives, dir_fd: int, name: str) -> int | None:
    """A descriptor of the regular file ``name``, ``flock``ed where no one else holds it (either way a
    sweeper's non-blocking lock fails); None where it cannot be opened as one."""
    try:
        fd, _ = prims.open_regular_with_stat(dir_fd, name, name)
    except (OSError, FsError):
        return None
    with contextlib.suppress(OSError):  # held by another program already: that keeps sweepers off it too
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return fd


def names(dir_fd: int, name: str, file: os.stat_result) -> bool:
    """Whether ``name`` is (still) the file ``file`` describes."""
    try:
        now = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return False
    return (now.st_dev, now.st_ino) == (file.st_dev, file.st_ino)


def keep_of(current: os.stat_result | None, mode: int | None = None) -> tuple[int, int, int] | None:
    """What a replacement keeps of the file it replaces: its mode, owner and group (None: a new file, as
    ``open`` makes it). ``mode`` replaces the mode, of a new file too (then owner and group are the
    process's: -1, unchanged); only permission bits, never set-ID or sticky (a mode from history may
    have been tampered with)."""
    if mode is not None:
        mode &= 0o777
    if current is not None:
        return stat.S_IMODE(current.st_mode) if mode is None else mode, current.st_uid, current.st_gid
    return (mode, -1, -1) if mode is not None else None
