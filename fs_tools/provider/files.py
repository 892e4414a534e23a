"""The file provider: the only code that touches the disk.

It reads regular files through confined descriptors, versions them by content hash, and commits writes
atomically under a per-file lock, re-checking the expected version immediately before publication.
It states conditions (``FsError`` with details); it never writes advice for a model.

``FileProvider`` is a thin face: each method resolves its path through the confined walker and hands
what it found (the parent directory's descriptor and the leaf's name) to one operation — reading and
proving versions in ``versions``, committing in ``publishing``, deleting in ``removing``, moving in
``moving``, directories in ``directories`` — all working on the provider's one ``Disk``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Sequence

from fs_tools.errors import path_label
from fs_tools.provider import directories, moving, publishing, removing, versions
from fs_tools.provider.cache import VersionCache
from fs_tools.provider.disk import Disk, without_trailing_slashes
from fs_tools.provider.face import (
    CancelToken,
    Enter,
    FileState,
    Gate,
    MoveGate,
    ProviderListener,
    RemoveGate,
    S,
    Scan,
    Snapshot,
    Status,
    T,
    Walk,
)
from fs_tools.provider.locks import DEFAULT_LOCK_SECONDS, KeyedLocks
from fs_tools.provider.oserrors import os_errors
from fs_tools.provider.primitives import Primitives
from fs_tools.provider.resolve import Resolver
from fs_tools.provider.tempfiles import Sweeper
from fs_tools.provider.walk import Entry, enter_ancestors, read_child, walk_from

DEFAULT_MAX_READ_BYTES = 1 << 30


class FileProvider:
    """Confined, versioned file access over a fixed set of roots."""

    def __init__(
        self,
        roots: Sequence[str | os.PathLike[str]],
        *,
        max_file_bytes: int = 16 << 20,
        max_read_bytes: int | None = None,
        lock_timeout: float = DEFAULT_LOCK_SECONDS,
        primitives: Primitives | None = None,
        durable: bool = True,
    ) -> None:
        if max_read_bytes is None:  # by default at least 1 GiB, and never below the whole-file limit
            max_read_bytes = max(DEFAULT_MAX_READ_BYTES, max_file_bytes)
        if max_file_bytes < 1:
            raise ValueError(f"max_file_bytes must be positive, got {max_file_bytes!r}")
        if max_read_bytes < max_file_bytes:
            raise ValueError(
                f"max_read_bytes ({max_read_bytes!r}) must be at least max_file_bytes ({max_file_bytes!r})"
            )
        if not lock_timeout > 0:
            raise ValueError(f"lock_timeout must be a positive number of seconds, got {lock_timeout!r}")
        if not isinstance(durable, bool):
            raise ValueError(f"durable must be True or False, got {durable!r}")
        primitives = Primitives.native() if primitives is None else primitives
        self.disk = Disk(
            primitives=primitives,
            resolver=Resolver(roots, can_stage=primitives.can_stage()),
            max_file_bytes=max_file_bytes,
            max_read_bytes=max_read_bytes,
            lock_timeout=lock_timeout,
            durable=durable,
            locks=KeyedLocks(lock_timeout),
            cache=VersionCache(),
            sweeper=Sweeper(),
        )

    def close(self) -> None:
        self.disk.sweeper.close()
        self.disk.resolver.close()

    @property
    def max_file_bytes(self) -> int:
        """The largest file worked on whole (edited, hashed into memory, written)."""
        return self.disk.max_file_bytes

    @property
    def max_read_bytes(self) -> int:
        """The largest file read at all (streamed a page at a time)."""
        return self.disk.max_read_bytes

    @property
    def lock_timeout(self) -> float:
        return self.disk.lock_timeout

    @property
    def durable(self) -> bool:
        return self.disk.durable

    # --- the public face: one method per operation --------------------------------------------------

    @property
    def root_paths(self) -> tuple[str, ...]:
        """The roots as the host configured them (absolute), the primary first."""
        return tuple(root.configured for root in self.disk.resolver.roots)

    @property
    def real_root_paths(self) -> tuple[str, ...]:
        """The roots' canonical forms, as file keys begin."""
        return tuple(root.real for root in self.disk.resolver.roots)

    def key_of(self, path: str) -> str:
        """The canonical absolute path ``path`` names: the identity observations are kept under."""
        with os_errors(path_label(path)), self.disk.resolve(path) as target:
            return target.key

    def relative_paths(self, key: str) -> tuple[str, ...]:
        """Every spelling of ``key`` relative to a root that holds it (nested roots give several)."""
        return self.disk.relative_paths(key)

    def read(
        self,
        path: str,
        new_sink: Callable[[], S],
        *,
        record: Callable[[str, Scan | None], None] | None = None,
        cancel: CancelToken | None = None,
    ) -> tuple[str, tuple[S, Scan] | None]:
        """Feed the file's bytes to a fresh sink while hashing them: the file's key, and the sink with the
        scan (None when the file does not exist). ``record`` (an observing read) is handed the key and
        the scan under the file's lock, so no commit can slip between what was read and what is recorded;
        a file that never held still is returned with ``settled=False`` rather than refused."""
        disk, display = self.disk, path_label(path)
        with os_errors(display), disk.resolve(path) as target:
            with disk.locks.hold(target.key, cancel=cancel, display=display):
                found = versions.scan(disk, target, new_sink, unsettled_ok=True)
                if record is not None:
                    record(target.key, found[1] if found is not None else None)
            if record is not None:
                for listener in disk.listeners:
                    listener.read_recorded(target.key)
            return target.key, found

    def current_version(self, path: str, while_locked: Callable[[], T]) -> tuple[T, str | None]:
        """The file's version now (None when it does not exist), and what ``while_locked`` returned under
        the file's lock — where no read or commit is between seeing a version and recording it."""
        disk, display = self.disk, path_label(path)
        with os_errors(display), disk.resolve(path) as target, disk.locks.hold(target.key, display=display):
            value = while_locked()
            found = versions.scan(disk, target, versions.Discard)
            return value, (found[1].version if found is not None else None)

    def commit(
        self,
        path: str,
        gate: Gate,
        content: bytes | Callable[[Snapshot], bytes],
        *,
        cancel: CancelToken | None = None,
        mode: int | None = None,
    ) -> Snapshot:
        """Publish new bytes for ``path`` atomically, if the file is still as ``gate.expect`` says.

        ``content`` is the new bytes (a write), or a function of the current snapshot (an edit: the file
        must exist, and its bytes are read under the lock and checked against the expected version before
        the function runs). Missing parent directories of a new file are created, and removed again if the
        commit fails. ``gate.record`` learns the new version before the file's lock is released, with the
        bytes it replaced (as verified under the lock) and the directories made for it.

        A replacement keeps the mode, owner and group of the file it replaces, and a new file is made as
        ``open`` makes one (0o666 less the umask) — unless ``mode`` is given: the permission bits the file
        gets, exactly, whatever the umask (a file put back as it was: an undo, a rewind)."""
        disk = self.disk
        with os_errors(path_label(path)), contextlib.ExitStack() as stack:
            target = stack.enter_context(disk.resolve(path))
            return publishing.commit(
                disk,
                target,
                gate,
                content,
                with_parents=lambda: stack.enter_context(disk.resolve(path, create_parents=True)),
                cancel=cancel,
                mode=mode,
            )
        raise AssertionError("unreachable")  # pragma: no cover - the with block returns or raises

    @contextlib.contextmanager
    def walk(
        self,
        path: str,
        *,
        descend: Callable[[Entry], bool],
        enter: Enter | None = None,
        sizes: bool = True,
        files_too: bool = False,
    ) -> Iterator[Walk]:
        """Walk the directory ``path`` names (see ``walk.walk``): entries below it in sorted, depth-first
        order, never through a symlink. ``enter`` sees every directory from the root down to the start
        first, then each one the walk enters. A regular file as the start is FS_NOT_DIRECTORY, or with
        ``files_too`` the walk's one ``file``."""
        prims = self.disk.primitives
        with contextlib.ExitStack() as stack:
            with os_errors(path_label(path)):  # the caller's body, run at the yield, is not the provider's
                target = stack.enter_context(self.disk.resolve(path))
                found = directories.walk_start(target, files_too)
                if isinstance(found, Entry):
                    start: Walk = Walk(target.parts[:-1], iter(()), found)
                else:
                    stack.callback(os.close, found)
                    if enter is not None:
                        enter_ancestors(prims, target, enter)
                    start = Walk(
                        target.parts,
                        walk_from(prims, found, descend, enter=enter, sizes=sizes, start=target.parts),
                    )
            yield start

    def read_entry(self, entry: Entry, limit: int) -> tuple[bytes | None, int]:
        """The bytes of a regular file met on a walk, and its size; (None, size) when it is over
        ``limit`` bytes, (None, -1) when it vanished, changed kind or cannot be read since the walk saw
        it. Valid only while the walk is at that entry."""
        return read_child(self.disk.primitives, entry.parent_fd, entry.name, limit)

    def remember(self, version: str, data: bytes) -> None:
        """Keep a version's bytes a while, so a later stale error can say which lines changed."""
        self.disk.cache.put(version, data)

    def recall(self, version: str) -> bytes | None:
        """The bytes of ``version`` if they are still remembered (see ``remember``)."""
        return self.disk.cache.get(version)

    @property
    def remember_limit(self) -> int:
        """The largest content ``remember`` keeps."""
        return self.disk.cache.max_item

    def keep_contents_in(self, cache: VersionCache) -> None:
        """Remember contents in ``cache`` (a persistent one lets a later process say which lines changed)."""
        self.disk.cache = cache

    def listen(self, listener: ProviderListener) -> Callable[[], None]:
        """Tell ``listener`` of the provider's moments (see ``ProviderListener``); returns the function
        that stops it."""
        disk = self.disk
        disk.listeners = (*disk.listeners, listener)

        def stop() -> None:
            disk.listeners = tuple(other for other in disk.listeners if other is not listener)

        return stop

    def stat(self, path: str) -> Status:
        """What is at ``path`` (a symlink inside the roots is followed, as reads follow it); FS_NOT_FOUND
        when nothing is there."""
        with os_errors(path_label(path)), self.disk.resolve(path) as target:
            return directories.status(target)

    def make_directory(self, path: str, gate: Callable[[FileState], None]) -> tuple[str, ...]:
        """Make the directory ``path`` and its missing parents; returns the keys of the directories made,
        outermost first (none when it already is one; an existing non-directory is FS_NOT_DIRECTORY).
        ``gate`` sees the directory first, and may refuse. A failed call leaves no directory it made."""
        disk, bare = self.disk, without_trailing_slashes(path)
        with os_errors(path_label(path)), contextlib.ExitStack() as stack:
            target = stack.enter_context(disk.resolve(bare))
            return directories.make_directory(
                disk,
                target,
                gate,
                display=path_label(path),
                with_parents=lambda: stack.enter_context(disk.resolver.resolve(bare, create_parents=True, stage=False)),
            )
        raise AssertionError("unreachable")  # pragma: no cover

    def remove(self, path: str, gate: RemoveGate, *, cancel: CancelToken | None = None) -> str:
        """Remove the entry at ``path``: a regular file only while it is at the version ``gate.expect``
        names, a symlink as a link (never its target), a directory only when empty (FS_NOT_EMPTY with
        the number of its entries). Returns the kind removed. The root itself is never removed."""
        with os_errors(path_label(path)), self.disk.resolve_entry(path) as target:
            return removing.remove(self.disk, target, gate, cancel)

    def rename(
        self, source: str, destination: str, gate: MoveGate, *, overwrite: bool, cancel: CancelToken | None = None
    ) -> str:
        """Move the entry at ``source`` to ``destination`` (missing parents are made): a regular file only
        while it is at the version ``gate.expect_source`` names, a symlink as a link, a directory whole.
        An existing destination is replaced only when it is a regular file at the version
        ``gate.expect_destination`` names and ``overwrite`` is set (else FS_ALREADY_EXISTS); a directory
        or any other kind of entry there is never replaced. Across filesystems a file is copied
        atomically, then the source removed. Returns the kind moved."""
        return moving.rename(self.disk, source, destination, gate, overwrite=overwrite, cancel=cancel)
