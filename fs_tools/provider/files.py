"""The file provider: the only code that touches the disk.

It reads regular files through confined descriptors, versions them by content hash, and commits writes
atomically under a per-file lock, re-checking the expected version immediately before publication.
It states conditions (``FsError`` with details); it never writes advice for a model.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import fcntl
import logging
import os
import stat
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Literal

import xxhash

from fs_tools.errors import (
    Aborted,
    AlreadyExists,
    ContentTooLarge,
    DestinationNotFile,
    FsError,
    IntoItself,
    IoError,
    MissingParent,
    MissingPath,
    NeverReplaced,
    NotDirectory,
    NotEmpty,
    NotRegularFile,
    Raced,
    ReadTooLarge,
    SamePath,
    SandboxDenied,
    StaleVersion,
    TooLarge,
    Unstable,
    path_label,
)
from fs_tools.provider.cache import VersionCache
from fs_tools.provider.content import changed_lines, version_of
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
    Sink,
    Snapshot,
    Status,
    T,
    Walk,
)
from fs_tools.provider.locks import DEFAULT_LOCK_SECONDS, KeyedLocks, directory_lock
from fs_tools.provider.oserrors import os_errors
from fs_tools.provider.primitives import Primitives, require_plain_file
from fs_tools.provider.resolve import DIR_FLAGS, Resolved, Resolver, describe_kind, require_regular
from fs_tools.provider.tempfiles import Sweeper, create_temp, is_reserved_name, remove_orphans, temp_name
from fs_tools.provider.walk import (
    DIRECTORY,
    FILE,
    OTHER,
    SYMLINK,
    Entry,
    enter_ancestors,
    kind_of,
    read_child,
    start_directory,
    walk,
    walk_from,
)

log = logging.getLogger("fs_tools.provider")

_READ_ATTEMPTS = 3
_CHUNK = 1 << 20  # bytes read at once while streaming a file (a read holds a page, not the file)
DEFAULT_MAX_READ_BYTES = 1 << 30
# File timestamps as coarse as 2 s (FAT), 1 s (ext4 with 128-byte inodes, HFS+) or a 1-4 ms kernel
# tick (kernels before 6.13) cannot tell apart two changes within one tick, and a freed inode number is
# reused at once: an unchanged stat proves unchanged bytes only for a file last changed well before it
# was read (git's "racily clean" rule). A fresher file is hashed again. A timestamp with a fraction of a
# second comes from a filesystem that keeps fractions (granularity 10 ms or finer): a short margin
# covers it; a whole-second one may come from a coarse filesystem, and gets the long margin.
_RACY_NS = 3_000_000_000
_RACY_FINE_NS = 100_000_000


def _stat_vouches(snap: Snapshot) -> bool:
    """Whether an unchanged stat of the file would prove its bytes unchanged since ``snap``."""
    st = snap.stat
    changed = max(st.st_ctime_ns, st.st_mtime_ns)
    coarse = st.st_ctime_ns % 1_000_000_000 == 0 or st.st_mtime_ns % 1_000_000_000 == 0
    return changed + (_RACY_NS if coarse else _RACY_FINE_NS) < snap.taken_ns


def _same_file_state(a: os.stat_result, b: os.stat_result) -> bool:
    # ctime moves on every content change, even one that restores mtime, so an unchanged tuple proves
    # unchanged bytes; a changed tuple only means "hash again" (a touch is not a change).
    return (a.st_dev, a.st_ino, a.st_size, a.st_mtime_ns, a.st_ctime_ns) == (
        b.st_dev,
        b.st_ino,
        b.st_size,
        b.st_mtime_ns,
        b.st_ctime_ns,
    )


class _Collector:
    """A sink that keeps the bytes, refusing to grow past the provider's limit."""

    def __init__(self, provider: FileProvider, display: str) -> None:
        self._provider = provider
        self._display = display
        self._chunks: list[bytes] = []
        self._size = 0

    def feed(self, chunk: bytes) -> None:
        self._size += len(chunk)
        self._provider._check_size(self._size, self._display)  # the file grew while we read it
        self._chunks.append(chunk)

    def data(self) -> bytes:
        return b"".join(self._chunks)


@dataclasses.dataclass
class _Temp:
    """A complete, synced temp file beside its target, open and locked until published or discarded."""

    dir_fd: int
    fd: int
    name: str
    keep: tuple[int, int, int] | None  # the mode, owner and group it was given (None: a new file's)
    written: os.stat_result
    taken: bool = False  # a publish took it over: closing and removing it are then the publish's

    def discard(self) -> None:
        with contextlib.suppress(OSError):
            os.unlink(self.name, dir_fd=self.dir_fd)
        os.close(self.fd)


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
        self._primitives = primitives = Primitives.native() if primitives is None else primitives
        self._resolver = Resolver(roots, can_stage=primitives.can_stage())
        self.max_file_bytes = max_file_bytes
        self.max_read_bytes = max_read_bytes
        self.lock_timeout = lock_timeout
        # durable=False skips every fsync of a change (temp files and directories): still atomic (rename),
        # but a crash of the machine may lose a change reported done. For scratch workspaces and benchmarks.
        self.durable = durable
        self._locks = KeyedLocks(lock_timeout)
        self._cache = VersionCache()
        self._sweeper = Sweeper()
        self._listeners: tuple[ProviderListener, ...] = ()

    def close(self) -> None:
        self._sweeper.close()
        self._resolver.close()

    # --- the public face: one method per operation --------------------------------------------------

    @property
    def root_paths(self) -> tuple[str, ...]:
        """The roots as the host configured them (absolute), the primary first."""
        return tuple(root.configured for root in self._resolver.roots)

    @property
    def real_root_paths(self) -> tuple[str, ...]:
        """The roots' canonical forms, as file keys begin."""
        return tuple(root.real for root in self._resolver.roots)

    def key_of(self, path: str) -> str:
        """The canonical absolute path ``path`` names: the identity observations are kept under."""
        with os_errors(path_label(path)), self._resolve(path) as target:
            return target.key

    def relative_paths(self, key: str) -> tuple[str, ...]:
        """Every spelling of ``key`` relative to a root that holds it (nested roots give several)."""
        return tuple(self._resolver.relative_forms(key))

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
        display = path_label(path)
        with os_errors(display), self._resolve(path) as target:
            with self._locks.hold(target.key, cancel=cancel, display=display):
                found = self._scan(target, new_sink, unsettled_ok=True)
                if record is not None:
                    record(target.key, found[1] if found is not None else None)
            if record is not None:
                for listener in self._listeners:
                    listener.read_recorded(target.key)
            return target.key, found

    def current_version(self, path: str, while_locked: Callable[[], T]) -> tuple[T, str | None]:
        """The file's version now (None when it does not exist), and what ``while_locked`` returned under
        the file's lock — where no read or commit is between seeing a version and recording it."""
        display = path_label(path)
        with os_errors(display), self._resolve(path) as target, self._locks.hold(target.key, display=display):
            value = while_locked()
            found = self._scan(target, _Discard)
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
        display = path_label(path)
        with os_errors(display), contextlib.ExitStack() as stack:
            target = stack.enter_context(self._resolve(path))
            expected = gate.expect(self._state(target))
            if isinstance(content, bytes):
                self._check_content_size(len(content), display)  # refused before the disk is touched
            if expected is None and not target.parent_exists:
                _check_cancel(cancel, f"writing {display!r}")
                target = stack.enter_context(self._resolve(path, create_parents=True))
                expected = gate.expect(self._state(target))
            early: _Temp | None = None
            try:
                # New bytes are written to a temp and synced before the file's lock is taken: the lock is
                # held for the checks and the rename, never across an fsync (the directory's comes after).
                if isinstance(content, bytes):
                    early = self._early_temp(target, content, mode)
                with self._locks.hold(target.key, cancel=cancel, display=display):
                    before = None
                    if not isinstance(content, bytes):
                        before = self._current(target, expected)
                    data = content if isinstance(content, bytes) else content(before)  # type: ignore[arg-type]
                    _check_cancel(cancel, f"writing {display!r}")
                    after, replaced, made = self._commit(
                        target, data, expected=expected, basis=before, cancel=cancel, early=early, mode=mode
                    )
                    gate.record(target.key, after, before=replaced, made=made)
            except BaseException:
                target.remove_created_directories()  # a failed create leaves no empty directories behind
                raise
            finally:
                if early is not None and not early.taken:
                    early.discard()
            if early is not None and target.dir_fd is not None:  # the publish left the directory's sync to us
                self._sync_directory(target.dir_fd, display)
            return after
        raise AssertionError("unreachable")  # pragma: no cover - the with block returns or raises

    def _early_temp(self, target: Resolved, data: bytes, mode: int | None) -> _Temp | None:
        """The new bytes in a synced temp beside the file, made with the mode the file has now (a
        commit takes it only if the file still has that mode and owner under the lock); None where the
        file's directory is yet to be made."""
        if target.staged is not None or target.dir_fd is None or target.name is None:
            return None
        try:
            current = target.leaf_stat()
        except OSError:
            return None  # the commit, under the lock, says what is wrong
        if current is not None and not stat.S_ISREG(current.st_mode):
            return None
        return self._write_temp(target.dir_fd, data, _keep_of(current, mode))

    def _sync_directory(self, dir_fd: int, display: str, doing: str = "changing") -> None:
        """Make a change of ``dir_fd``'s entries durable (not when the provider is not durable)."""
        if self.durable:
            _sync_directory(dir_fd, display, doing)

    def _sync_created_directories(self, target: Resolved) -> None:
        if self.durable:
            _sync_created_directories(target)

    def _write_temp(self, dir_fd: int, data: bytes, keep: tuple[int, int, int] | None, *, sweep: bool = True) -> _Temp:
        """A new temp in ``dir_fd`` holding ``data``, with ``keep``'s mode and owner, synced to disk;
        it stays open (and so locked against sweepers) until it is published or discarded. ``sweep``
        first advances the removal of temps killed writers left in the directory."""
        if sweep:
            self._sweeper.sweep(dir_fd)
        fd, name = create_temp(dir_fd, 0o600 if keep is not None else 0o666)
        try:
            self._primitives.write_all(fd, data)
            if keep is not None:
                mode, uid, gid = keep
                if os.geteuid() == 0:
                    os.chown(fd, uid, gid)  # the descriptor form of chown (fchown)
                os.fchmod(fd, _without_set_id(mode))
            if self.durable:
                os.fsync(fd)
            return _Temp(dir_fd, fd, name, keep, os.fstat(fd))
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(name, dir_fd=dir_fd)
            os.close(fd)
            raise

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
        display = path_label(path)
        with contextlib.ExitStack() as stack:
            with os_errors(display):  # the caller's body, run at the yield, is not the provider's
                target = stack.enter_context(self._resolve(path))
                found = self._walk_start(target, files_too)
                if isinstance(found, Entry):
                    start: Walk = Walk(target.parts[:-1], iter(()), found)
                else:
                    stack.callback(os.close, found)
                    if enter is not None:
                        enter_ancestors(self._primitives, target, enter)
                    start = Walk(
                        target.parts,
                        walk_from(self._primitives, found, descend, enter=enter, sizes=sizes, start=target.parts),
                    )
            yield start

    def _walk_start(self, target: Resolved, files_too: bool) -> int | Entry:
        """A new descriptor of the directory ``target`` names, or (``files_too``) the regular file it is."""
        display = target.display
        current = target.leaf_stat()
        if current is None:
            raise MissingPath(f"{display!r} does not exist")
        if not stat.S_ISDIR(current.st_mode):
            if not files_too:
                raise NotDirectory(f"{display!r} is not a directory", details={"reason": "leaf"})
            require_regular(current, display)  # a FIFO or device is named as such, never opened
            assert target.dir_fd is not None and target.name is not None
            return Entry((target.name,), FILE, current.st_size, target.dir_fd)
        fd = start_directory(target)
        if fd is None:
            raise NotDirectory(f"{display!r} is not a directory", details={"reason": "leaf"})
        return fd

    def read_entry(self, entry: Entry, limit: int) -> tuple[bytes | None, int]:
        """The bytes of a regular file met on a walk, and its size; (None, size) when it is over
        ``limit`` bytes, (None, -1) when it vanished, changed kind or cannot be read since the walk saw
        it. Valid only while the walk is at that entry."""
        return read_child(self._primitives, entry.parent_fd, entry.name, limit)

    def remember(self, version: str, data: bytes) -> None:
        """Keep a version's bytes a while, so a later stale error can say which lines changed."""
        self._cache.put(version, data)

    def recall(self, version: str) -> bytes | None:
        """The bytes of ``version`` if they are still remembered (see ``remember``)."""
        return self._cache.get(version)

    @property
    def remember_limit(self) -> int:
        """The largest content ``remember`` keeps."""
        return self._cache.max_item

    def keep_contents_in(self, cache: VersionCache) -> None:
        """Remember contents in ``cache`` (a persistent one lets a later process say which lines changed)."""
        self._cache = cache

    def listen(self, listener: ProviderListener) -> Callable[[], None]:
        """Tell ``listener`` of the provider's moments (see ``ProviderListener``); returns the function
        that stops it."""
        self._listeners = (*self._listeners, listener)

        def stop() -> None:
            self._listeners = tuple(other for other in self._listeners if other is not listener)

        return stop

    def stat(self, path: str) -> Status:
        """What is at ``path`` (a symlink inside the roots is followed, as reads follow it); FS_NOT_FOUND
        when nothing is there."""
        display = path_label(path)
        with os_errors(display), self._resolve(path) as target:
            current = target.leaf_stat()
            if current is None:
                raise MissingPath(f"{display!r} does not exist")
            return Status(
                target.key,
                kind_of(current.st_mode),
                current.st_size,
                stat.S_IMODE(current.st_mode),
                current.st_mtime_ns,
                _identity(current),
            )

    def make_directory(self, path: str, gate: Callable[[FileState], None]) -> tuple[str, ...]:
        """Make the directory ``path`` and its missing parents; returns the keys of the directories made,
        outermost first (none when it already is one; an existing non-directory is FS_NOT_DIRECTORY).
        ``gate`` sees the directory first, and may refuse. A failed call leaves no directory it made."""
        display = path_label(path)
        bare = _without_trailing_slashes(path)
        with os_errors(display), contextlib.ExitStack() as stack:
            target = stack.enter_context(self._resolve(bare))
            gate(dataclasses.replace(self._state(target), kind=DIRECTORY))  # judged as the directory
            if target.name is None:  # the root, or a path that names an existing directory through '..'
                return ()
            if target.dir_fd is None:
                target = stack.enter_context(self._resolver.resolve(bare, create_parents=True, stage=False))
                gate(dataclasses.replace(self._state(target), kind=DIRECTORY))
            assert target.dir_fd is not None and target.name is not None
            try:
                os.mkdir(target.name, 0o777, dir_fd=target.dir_fd)
            except FileExistsError:
                current = target.leaf_stat()
                if current is not None and stat.S_ISDIR(current.st_mode):
                    return ()
                target.remove_created_directories()
                raise NotDirectory(
                    f"{display!r} already exists and is not a directory", details={"reason": "exists"}
                ) from None
            except BaseException:
                target.remove_created_directories()
                raise
            self._sync_created_directories(target)
            self._sync_directory(target.dir_fd, display)
            return (*target.made_keys(), target.key)

    def remove(self, path: str, gate: RemoveGate, *, cancel: CancelToken | None = None) -> str:
        """Remove the entry at ``path``: a regular file only while it is at the version ``gate.expect``
        names, a symlink as a link (never its target), a directory only when empty (FS_NOT_EMPTY with
        the number of its entries). Returns the kind removed. The root itself is never removed."""
        display = path_label(path)
        with os_errors(display), self._resolve_entry(path) as target:
            state = self._state(target)
            if not target.parts or self._is_root(target.key, state.kind == DIRECTORY):
                root = f"{display!r} is a workspace root (or holds one), which is never deleted"
                raise SandboxDenied(root, details={"reason": "root"})
            if not state.exists or target.dir_fd is None or target.name is None:
                gate.expect(state)  # a file the session saw, gone since, is stale; else not found
                raise MissingPath(f"{display!r} does not exist")
            if state.kind == OTHER:
                _refuse_special(target, "deleted")
            expected = gate.expect(state)
            with self._locks.hold(target.key, cancel=cancel, display=display):
                _check_cancel(cancel, f"deleting {display!r}")
                with directory_lock(target.dir_fd, self.lock_timeout, cancel, display):
                    kind, removed = self._remove_locked(target, state.kind, expected, cancel)
                gate.removed(target.key, before=removed)
            self._sync_directory(target.dir_fd, display)
            return kind

    def _remove_locked(
        self, target: Resolved, kind: str, expected: str | None, cancel: CancelToken | None
    ) -> tuple[str, Snapshot | None]:
        """Remove the entry under the directory's lock: the kind removed, and a regular file's snapshot
        as verified (its bytes empty when over the whole-file limit)."""
        display = target.display
        dir_fd, name = target.dir_fd, target.name
        assert dir_fd is not None and name is not None
        now = target.leaf_stat()
        if now is None:
            raise vanished(display)
        if kind_of(now.st_mode) != kind:
            raise StaleVersion(f"{display!r} was replaced by something else just now", details={"found": "modified"})
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
                    details={"entries": count},
                ) from exc
            return kind, None
        if kind != FILE or expected is None:  # a symlink: the link itself goes, never its target
            os.unlink(name, dir_fd=dir_fd)
            return kind, None
        verified = self._verified(target, now, expected)
        _check_cancel(cancel, f"deleting {display!r}")
        self._unlink_verified(dir_fd, name, verified, display)
        return kind, verified

    def _unlink_verified(self, dir_fd: int, name: str, verified: Snapshot, display: str) -> None:
        """Unlink ``name``, proving that what goes is the verified version: the file is first renamed to
        a reserved temp name (held and locked, so no sweeper takes it), checked there, then unlinked. A
        file another program saved in between is put back under its name and this is FS_STALE_VERSION."""
        holder = _hold(self._primitives, dir_fd, name)
        try:
            temp = temp_name()
            self._primitives.rename_no_replace(dir_fd, name, temp)
            if self._is_version(dir_fd, temp, verified):
                os.unlink(temp, dir_fd=dir_fd)
                return
            try:
                self._primitives.rename_no_replace(dir_fd, temp, name)
            except FileExistsError:  # a newer save took the name meanwhile: the one set aside is superseded
                with contextlib.suppress(OSError):
                    os.unlink(temp, dir_fd=dir_fd)
            except OSError as exc:
                log.error("a file saved during a delete is left under %r (errno %s)", temp, exc.errno)
            raise StaleVersion(
                f"{display!r} was replaced by another program just as it was being deleted; it is kept",
                details={"found": "modified"},
            )
        finally:
            if holder is not None:
                os.close(holder)

    def rename(
        self, source: str, destination: str, gate: MoveGate, *, overwrite: bool, cancel: CancelToken | None = None
    ) -> str:
        """Move the entry at ``source`` to ``destination`` (missing parents are made): a regular file only
        while it is at the version ``gate.expect_source`` names, a symlink as a link, a directory whole.
        An existing destination is replaced only when it is a regular file at the version
        ``gate.expect_destination`` names and ``overwrite`` is set (else FS_ALREADY_EXISTS); a directory
        or any other kind of entry there is never replaced. Across filesystems a file is copied
        atomically, then the source removed. Returns the kind moved."""
        shown = path_label(source)
        with contextlib.ExitStack() as stack:
            with os_errors(shown):
                src = stack.enter_context(self._resolve_entry(source))
                src_state = self._move_source(src, source, gate)
                expected_src = gate.expect_source(src_state)
            dst, expected_dst = self._move_destination(stack, destination, gate, cancel)
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
                        gate.check_inside(src_state, dataclasses.replace(self._state(dst), kind=DIRECTORY))
                    if src_state.kind == DIRECTORY and gate.checks_inside:
                        self._check_inside(src, dst, gate)
                    self._move(src, dst, src_state.kind, expected_src, expected_dst, overwrite, gate, cancel)
            except BaseException:
                dst.remove_created_directories()
                raise
            for fd in dict.fromkeys((src.dir_fd, dst.dir_fd)):
                assert fd is not None
                self._sync_directory(fd, shown)
            self._sync_created_directories(dst)
            return src_state.kind
        raise AssertionError("unreachable")  # pragma: no cover

    def _move_source(self, src: Resolved, source: str, gate: MoveGate) -> FileState:
        display = src.display
        state = self._state(src)
        if not src.parts or self._is_root(src.key, state.kind == DIRECTORY):
            raise SandboxDenied(
                f"{display!r} is a workspace root (or holds one), which is never moved", details={"reason": "root"}
            )
        if not state.exists or src.dir_fd is None:
            gate.expect_source(state)  # a file the session saw, gone since, is stale; else not found
            raise MissingPath(f"{display!r} does not exist")
        if state.kind == SYMLINK:
            with self._resolve(source):  # a link that leads outside every root is refused (SandboxDenied)
                pass
        elif state.kind == OTHER:
            _refuse_special(src, "moved")
        return state

    def _move_destination(
        self, stack: contextlib.ExitStack, destination: str, gate: MoveGate, cancel: CancelToken | None
    ) -> tuple[Resolved, str | None]:
        display = path_label(destination)
        with os_errors(display):
            dst = stack.enter_context(self._resolve_entry(destination))
            dst.display = display
            current = dst.leaf_stat() if dst.parts else os.stat(dst.root.fd)
            if current is not None and stat.S_ISLNK(current.st_mode):
                with self._resolve(destination):  # one that leads outside every root is that (SandboxDenied)
                    pass
            if current is not None and not stat.S_ISREG(current.st_mode):
                kind = describe_kind(current.st_mode)
                raise DestinationNotFile(
                    f"{display!r} is {kind}; a move never replaces one", kind=kind_of(current.st_mode)
                )
            expected = gate.expect_destination(self._state(dst))
            if current is None and dst.dir_fd is None:
                _check_cancel(cancel, f"moving to {display!r}")
                dst = stack.enter_context(
                    self._resolver.resolve(destination, create_parents=True, stage=False, follow_leaf=False)
                )
                dst.display = display
                expected = gate.expect_destination(self._state(dst))
            return dst, expected

    def _check_inside(self, src: Resolved, dst: Resolved, gate: MoveGate) -> None:
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
                gate.check_inside(self._entry_state(old, entry.kind), self._entry_state(new, entry.kind))
        finally:
            os.close(fd)

    def _entry_state(self, key: str, kind: str) -> FileState:
        relative = self.relative_paths(key)
        return FileState(key, path_label(relative[0] if relative else key), relative, True, None, kind)

    def _move(
        self,
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
                locks.enter_context(self._locks.hold(key, cancel=cancel, display=src.display))
            across = False
            verified: Snapshot | None = None
            with self._directories_locked(src.dir_fd, dst.dir_fd, cancel, src.display):
                # Held from the check to the rename: its inode number cannot be reused meanwhile.
                held = _hold(self._primitives, src.dir_fd, src.name) if kind == FILE else None
                if held is not None:
                    locks.callback(os.close, held)
                now = src.leaf_stat()
                if now is None or kind_of(now.st_mode) != kind:
                    raise vanished(src.display)
                if kind == FILE and expected_src is not None:
                    verified = self._verified(src, now, expected_src)
                replaced = self._check_destination(dst, expected_dst, overwrite)
                there = dst.leaf_stat()
                if there is not None and (there.st_dev, there.st_ino) == (now.st_dev, now.st_ino):
                    same = f"{src.display!r} and {dst.display!r} are the same file (hard links)"
                    raise SamePath(same)
                _check_cancel(cancel, f"moving {src.display!r}")
                try:
                    self._rename(src, dst, kind, replaced)
                except OSError as exc:
                    if exc.errno != errno.EXDEV:
                        raise
                    across = True
                if not across and held is not None and not _names(dst.dir_fd, dst.name, os.fstat(held)):
                    # a program that takes no lock saved the source just before the rename
                    _move_back(self._primitives, src, dst)
                    raise StaleVersion(
                        f"{src.display!r} was replaced by another program just as it was being moved; it is left "
                        "where it was",
                        details={"found": "modified"},
                    )
            if across:
                self._move_across(src, dst, kind, verified, expected_dst, replaced, cancel)
            gate.moved(
                src.key, dst.key, kind, moved=verified, replaced=replaced, made=dst.made_keys(), identity=_identity(now)
            )

    def _rename(self, src: Resolved, dst: Resolved, kind: str, replaced: Snapshot | None) -> None:
        """Rename ``src`` to ``dst``: without replacing anything, or — over the verified ``replaced`` —
        by swapping the two and proving that what was displaced is that version (else swapped back:
        another program's save of the destination is kept, and the move is FS_STALE_VERSION)."""
        assert src.dir_fd is not None and src.name is not None and dst.dir_fd is not None and dst.name is not None
        if replaced is None:
            _rename_no_replace(self._primitives, src, dst, kind)
            return
        if not self._primitives.exchange_between(src.dir_fd, src.name, dst.dir_fd, dst.name):
            os.rename(src.name, dst.name, src_dir_fd=src.dir_fd, dst_dir_fd=dst.dir_fd)
            return
        if self._is_version(src.dir_fd, src.name, replaced):
            os.unlink(src.name, dir_fd=src.dir_fd)  # the replaced file, displaced to the source's name
            return
        self._primitives.exchange_between(src.dir_fd, src.name, dst.dir_fd, dst.name)
        raise StaleVersion(
            f"{dst.display!r} was replaced by another program just as the move was being made; both are kept",
            details={"found": "modified"},
        )

    def _verified(self, target: Resolved, now: os.stat_result, expected: str) -> Snapshot:
        """The file, proven to be at ``expected`` (under its locks). A file over the whole-file limit is
        hashed without being kept (a move or delete needs its version, not its bytes)."""
        if now.st_size <= self.max_file_bytes:
            verified = self._check_expected(target, now, expected, None, strict=True)
            assert verified is not None
            return verified
        found = self._scan(target, _Discard)
        if found is None:
            raise vanished(target.display)
        scan = found[1]
        if scan.version != expected:
            raise StaleVersion(
                f"{target.display!r} has changed since this session last read it", details={"found": "modified"}
            )
        return Snapshot(data=b"", version=scan.version, stat=scan.stat, taken_ns=scan.taken_ns)

    def _check_destination(self, dst: Resolved, expected: str | None, overwrite: bool) -> Snapshot | None:
        """The file the move replaces at the destination, proven to be the expected version; None when
        there is none."""
        current = dst.leaf_stat()
        if current is None:
            if expected is not None:
                raise vanished(dst.display)
            return None
        if expected is None:
            raise StaleVersion(f"{dst.display!r} was created just now by someone else", details={"found": "exists"})
        verified = self._verified(dst, current, expected)
        if not overwrite:
            raise AlreadyExists(f"{dst.display!r} already exists", details={"reason": "exists"})
        return verified

    def _move_across(
        self,
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
        if verified.stat.st_size > self.max_file_bytes:
            self._check_size(verified.stat.st_size, src.display)  # copied through memory: the whole-file limit
        assert src.dir_fd is not None and src.name is not None and dst.dir_fd is not None and dst.name is not None
        keep = _keep_of(verified.stat)
        written, _ = self._publish(dst, verified.data, keep, expected=expected_dst, basis=None, cancel=cancel)
        try:
            with directory_lock(src.dir_fd, self.lock_timeout, cancel, src.display):
                self._unlink_verified(src.dir_fd, src.name, verified, src.display)
        except BaseException:
            self._restore_destination(dst, written, replaced, verified.version)
            raise

    def _restore_destination(
        self, dst: Resolved, written: os.stat_result, replaced: Snapshot | None, copied: str
    ) -> None:
        """After a failed move across filesystems: the destination as it was before the copy."""
        assert dst.dir_fd is not None and dst.name is not None
        if replaced is None:
            if _names(dst.dir_fd, dst.name, written):
                with contextlib.suppress(OSError):
                    os.unlink(dst.name, dir_fd=dst.dir_fd)  # the copy goes again: the source stays
            return
        if replaced.stat.st_size and not replaced.data:
            log.error("a failed move could not restore %r (too large to keep)", dst.display)
            return
        mode = _keep_of(replaced.stat)
        try:
            self._publish(dst, replaced.data, mode, expected=copied, basis=None, cancel=None)
        except (OSError, FsError) as exc:
            log.error("a failed move could not restore %r: %s", dst.display, exc)

    @contextlib.contextmanager
    def _directories_locked(self, first: int, second: int, cancel: CancelToken | None, display: str) -> Iterator[None]:
        """Both directories' OS locks, taken in one order (by device and inode) so two moves in opposite
        directions cannot deadlock; one lock when they are the same directory."""
        by_identity = {(st.st_dev, st.st_ino): fd for fd in (first, second) for st in (os.fstat(fd),)}
        with contextlib.ExitStack() as stack:
            for identity in sorted(by_identity):
                stack.enter_context(directory_lock(by_identity[identity], self.lock_timeout, cancel, display))
            yield

    # --- resolution ---------------------------------------------------------------------------------

    def _resolve(self, path: str, *, create_parents: bool = False) -> contextlib.AbstractContextManager[Resolved]:
        return self._resolver.resolve(path, create_parents=create_parents)

    @contextlib.contextmanager
    def _resolve_entry(self, path: str) -> Iterator[Resolved]:
        """``path`` resolved to the entry it names itself: a symlink at its end is not followed, and a
        path that names a directory through a trailing '/' or '..' is the directory's own entry."""
        bare = _without_trailing_slashes(path)
        with self._resolver.resolve(bare, follow_leaf=False) as target:
            target.display = path_label(path)
            if target.name is not None or not target.parts:
                yield target
                return
            inside = os.path.join(target.root.real, *target.parts)  # 'a/..': the entry the walk ended at
        with self._resolver.resolve(inside, follow_leaf=False) as again:
            again.display = target.display
            yield again

    def _is_root(self, key: str, directory: bool) -> bool:
        """Whether ``key`` is a root, or (a directory) holds one: never moved or deleted."""
        return any(real == key or (directory and real.startswith(key + "/")) for real in self.real_root_paths)

    def _state(self, target: Resolved) -> FileState:
        display = target.display
        current = target.leaf_stat()
        unreadable: FsError | None = None
        if current is not None:
            try:
                require_plain_file(current, display)
                self._check_size(current.st_size, display)
            except FsError as exc:
                unreadable = exc
        kind = kind_of(current.st_mode) if current is not None else ""
        return FileState(target.key, display, self.relative_paths(target.key), current is not None, unreadable, kind)

    def _current(self, target: Resolved, expected: str | None) -> Snapshot:
        """The file as it is now, which must still be the expected version."""
        display = target.display
        if expected is None:
            raise vanished(display)
        return self._snapshot_at(target, expected)

    def _snapshot_at(self, target: Resolved, expected: str) -> Snapshot:
        """A fresh snapshot of the file, which must be at ``expected`` (else vanished or stale)."""
        display = target.display
        now = self._snapshot(target)
        if now is None:
            raise vanished(display)
        if now.version != expected:
            raise self._stale(display, expected, now)
        return now

    # --- reading ------------------------------------------------------------------------------------

    def _snapshot(self, target: Resolved) -> Snapshot | None:
        """The file's current bytes and version, or None when it does not exist (``FS_TOO_LARGE`` over
        the limit, checked before reading)."""
        display = target.display
        found = self._scan(target, lambda: _Collector(self, display), bounded=True)
        if found is None:
            return None
        collector, scan = found
        snap = Snapshot(data=collector.data(), version=scan.version, stat=scan.stat, taken_ns=scan.taken_ns)
        self._cache.put(snap.version, snap.data)
        return snap

    def _scan(
        self,
        target: Resolved,
        new_sink: Callable[[], S],
        *,
        bounded: bool = False,
        unsettled_ok: bool = False,
    ) -> tuple[S, Scan] | None:
        """Feed the file's bytes, in order, to a fresh sink while hashing them; None when the file does
        not exist. If the file changes during the read, the read starts over with a new sink (and fails
        closed after a few attempts), so a version always belongs to exactly the bytes fed. ``bounded``
        refuses a file over the size limit before reading it. ``unsettled_ok`` returns the last attempt
        of a file that never held still, marked ``settled=False``: its bytes may be torn, so its version
        must not be recorded."""
        display = target.display
        for listener in self._listeners:
            listener.operation_started(target.key)
        last: tuple[S, Scan] | None = None
        for _ in range(_READ_ATTEMPTS):
            sink = new_sink()
            scan = self._scan_once(target, sink, bounded)
            if scan is None:
                return None
            if scan is False:
                continue
            if scan.settled:
                return sink, scan
            last = (sink, scan)
        if last is not None and unsettled_ok:
            return last
        raise Unstable(f"{display!r} kept changing while it was being read")

    def _scan_once(self, target: Resolved, sink: Sink, bounded: bool) -> Scan | Literal[False] | None:
        display = target.display
        if target.dir_fd is None:
            return None
        if target.name is None:
            require_regular(os.stat(target.dir_fd), display)  # a directory: raises
        assert target.name is not None
        started = time.time_ns()
        # With O_PATH the handle's stat is taken before anything is opened for reading and names the very
        # inode then opened: no separate lstat and no identity re-check. Elsewhere an lstat comes first,
        # so a FIFO or device is refused before any open, and the opened file must be the one seen.
        before = None
        if not self._primitives.reopen_through_proc:
            before = target.leaf_stat()
            if before is None:
                return None
            require_plain_file(before, display)
            if bounded:
                self._check_size(before.st_size, display)
        try:
            fd, opened = self._primitives.open_regular_with_stat(target.dir_fd, target.name, display)
        except FileNotFoundError:
            return None
        if before is not None and (opened.st_dev, opened.st_ino) != (before.st_dev, before.st_ino):
            os.close(fd)
            return False
        if opened.st_size > (self.max_file_bytes if bounded else self.max_read_bytes):
            os.close(fd)
            self._check_size(opened.st_size, display, reading=not bounded)
        try:
            hasher = xxhash.xxh3_128()
            size = 0
            # Never past the size the file had when it was opened: a file that keeps growing (another
            # process appending, or extending it sparsely) cannot keep the read, and the lock, forever.
            # Whole-file work (bounded: the file is kept anyway) reads it at once: no chunks to join.
            step = max(opened.st_size, 1) if bounded else _CHUNK
            while size < opened.st_size and (chunk := os.read(fd, min(step, opened.st_size - size))):
                hasher.update(chunk)
                size += len(chunk)
                sink.feed(chunk)
            after = os.fstat(fd)
        finally:
            os.close(fd)
        settled = _same_file_state(opened, after) and size == after.st_size  # else a writer raced the read
        return Scan(version=hasher.hexdigest(), stat=after, size=size, settled=settled, taken_ns=started)

    def _check_size(self, size: int, display: str, *, reading: bool = False) -> None:
        """FS_TOO_LARGE when a file of ``size`` bytes is over the limit for whole-file work (with
        ``reading``: over the limit for being read at all)."""
        limit = self.max_read_bytes if reading else self.max_file_bytes
        if size > limit:
            message = f"{display!r} is {size:,} bytes, over the {limit:,}-byte limit"
            if reading:
                raise ReadTooLarge(message, details={"size": size, "limit": limit, "subject": "read"})
            raise TooLarge(message, details={"size": size, "limit": limit})

    # --- writing ------------------------------------------------------------------------------------

    def _commit(
        self,
        target: Resolved,
        data: bytes,
        *,
        expected: str | None,
        basis: Snapshot | None = None,
        cancel: CancelToken | None = None,
        attempt: int = 0,
        early: _Temp | None = None,
        mode: int | None = None,
    ) -> tuple[Snapshot, Snapshot | None, tuple[str, ...]]:
        """Atomically replace the file if it is still at version ``expected``, or create it if ``expected``
        is None and it still does not exist; ``FS_STALE_VERSION`` otherwise. Returns the new snapshot,
        the one it replaced (None for a new file) and the keys of the parent directories it made.

        The caller holds ``self._locks.hold(target.key)``. ``basis`` is a snapshot already taken under
        that lock; the last check, under the directory's OS lock, trusts an unchanged stat of it only
        when the file was last changed well before the snapshot was read.
        """
        display = target.display
        for listener in self._listeners:
            listener.operation_started(target.key)
        self._check_content_size(len(data), display)
        if target.name is None:
            raise NotRegularFile(f"{display!r} is a directory, not a regular file", kind="directory")
        if target.dir_fd is None:
            if expected is not None:
                raise vanished(display)
            raise MissingParent(f"{display!r}: the parent directory does not exist")
        current = target.leaf_stat()
        basis = self._check_expected(target, current, expected, basis)
        for listener in self._listeners:
            listener.version_checked(target.key)
        if cancel is not None and cancel.is_set():
            raise Aborted(f"writing {display!r} was cancelled before anything was written")
        keep = _keep_of(current, mode)
        new_stat, replaced = self._publish(
            target, data, keep, expected=expected, basis=basis, cancel=cancel, early=early, sync=early is None
        )
        self._sync_created_directories(target)
        if target.staged is not None and not target.staged.published:
            return self._publish_staging(target, data, new_stat, cancel, attempt, mode)
        snap = Snapshot(data=data, version=version_of(data), stat=new_stat)
        self._cache.put(snap.version, data)
        return snap, replaced, target.made_keys()

    def _publish_staging(
        self,
        target: Resolved,
        data: bytes,
        written: os.stat_result,
        cancel: CancelToken | None,
        attempt: int,
        mode: int | None,
    ) -> tuple[Snapshot, Snapshot | None, tuple[str, ...]]:
        """The new file is complete inside its staged parent directories: publish the whole chain under
        its name by one no-replace rename. If a directory of that name appeared meanwhile (another
        writer creating a sibling), take the file out and commit it again into what is there now."""
        display = target.display
        staged = target.staged
        assert staged is not None and target.dir_fd is not None and target.name is not None
        appeared = False
        try:
            with directory_lock(staged.parent, self.lock_timeout, cancel, display):
                self._sweeper.sweep(staged.parent)  # where killed creators leave their staging
                done = self._primitives.rename_directory_no_replace(staged.parent, staged.name, staged.final)
        except FileExistsError:
            done, appeared = False, True
        except OSError:
            _withdraw_staged(target)
            raise
        except BaseException:
            if not staged.published and not _names(staged.parent, staged.final, os.fstat(staged.fd)):
                _withdraw_staged(target)
            raise
        if done:
            staged.published = True
            self._sync_directory(staged.parent, display, "creating")
            snap = Snapshot(data=data, version=version_of(data), stat=written)
            self._cache.put(snap.version, data)
            return snap, None, target.made_keys()
        _withdraw_staged(target)
        if attempt >= 3:
            raise Raced(f"{display!r}: its parent directories kept changing while it was being created")
        with self._resolver.resolve(target.key, create_parents=True, stage=appeared) as again:
            if again.key != target.key:  # a symlink appeared on the way: the gates judged another path
                raise Raced(f"{display!r}: a directory on the path changed while it was being created")
            try:
                return self._commit(again, data, expected=None, cancel=cancel, attempt=attempt + 1, mode=mode)
            except BaseException:
                again.remove_created_directories()
                raise

    def _check_content_size(self, size: int, display: str) -> None:
        """FS_TOO_LARGE when new content of ``size`` bytes is over the limit."""
        if size > self.max_file_bytes:
            raise ContentTooLarge(
                f"the new content for {display!r} is {size:,} bytes, over the {self.max_file_bytes:,}-byte limit",
                details={"size": size, "limit": self.max_file_bytes, "subject": "content"},
            )

    def _check_expected(
        self,
        target: Resolved,
        current: os.stat_result | None,
        expected: str | None,
        basis: Snapshot | None,
        strict: bool = False,
    ) -> Snapshot | None:
        """Raise unless the file is as expected; return the snapshot that proves it (if any).

        ``strict`` (the last check, under the directory lock) trusts an unchanged stat only where it
        proves unchanged bytes; the early check takes it as a hint, since the last one decides."""
        display = target.display
        if current is not None:
            require_plain_file(current, display)
        if expected is None:
            if current is not None:
                raise StaleVersion(f"{display!r} already exists", details={"found": "exists"})
            return None
        if current is None:
            raise vanished(display)
        if basis is None and not strict:
            return None  # the early look goes by the stat alone: the last check, under the lock, hashes
        if (
            basis is not None
            and basis.version == expected
            and _same_file_state(basis.stat, current)
            and (not strict or _stat_vouches(basis))
        ):
            return basis
        return self._snapshot_at(target, expected)

    def _stale(self, display: str, observed_version: str, now: Snapshot) -> StaleVersion:
        """The condition "changed since observed", with the changed lines when the old bytes are cached."""
        details: dict[str, object] = {"found": "modified", "now_version": now.version}
        old = self._cache.get(observed_version)
        if old is not None:
            change = changed_lines(old, now.data)
            if change is not None:
                details["lines"] = (change.first, change.last)
        stale = StaleVersion(f"{display!r} has changed since this session last read it", details=details)
        if old is not None:
            stale.contents = (old, now.data)  # what the lines read now, and how they changed: after the lock
        return stale

    def _publish(
        self,
        target: Resolved,
        data: bytes,
        keep: tuple[int, int, int] | None,
        *,
        expected: str | None,
        basis: Snapshot | None,
        cancel: CancelToken | None,
        early: _Temp | None = None,
        sync: bool = True,
    ) -> tuple[os.stat_result, Snapshot | None]:
        """Write a complete temp file, then — holding the directory's OS lock, which other processes and
        other workspaces respect too — re-check the expectation and rename it into place.

        ``keep`` is the replaced file's (mode, uid, gid), less the set-user-ID and set-group-ID bits
        (cleared as the kernel clears them when a file's content is written); a new file is created
        with mode 0o666 and the kernel applies the process umask, which is never read or changed here.
        Returns the temp's stat and the snapshot of the file it replaced, as verified (None: created).
        ``early`` is a temp already written (``_early_temp``): taken if it was made with ``keep`` in this
        directory, else left to its maker to discard. ``sync=False`` leaves the directory's fsync to the
        caller (done once the file's lock is released).
        """
        display = target.display
        dir_fd, name = target.dir_fd, target.name
        assert dir_fd is not None and name is not None
        temp: str | None = None
        published = False
        verified: Snapshot | None = None
        try:
            if early is not None and early.dir_fd == dir_fd and early.keep == keep and target.staged is None:
                early.taken = True
                fd, temp, written = early.fd, early.name, early.written
            else:
                made = self._write_temp(dir_fd, data, keep, sweep=target.staged is None)
                fd, temp, written = made.fd, made.name, made.written
            try:  # the temp stays open, and so locked against sweepers, until it is published
                # Inside staged parent directories no other writer can be (the staging is locked as ours).
                locked = (
                    directory_lock(dir_fd, self.lock_timeout, cancel, display)
                    if target.staged is None
                    else contextlib.nullcontext()
                )
                with locked:
                    verified = self._check_expected(target, target.leaf_stat(), expected, basis, True)
                    if cancel is not None and cancel.is_set():
                        raise Aborted(f"writing {display!r} was cancelled before it was published; the file is intact")
                    if expected is None:
                        try:
                            self._primitives.rename_no_replace(dir_fd, temp, name)
                        except FileExistsError as exc:  # a creator won the race: never clobber it
                            raise StaleVersion(f"{display!r} already exists", details={"found": "exists"}) from exc
                        published = True
                    elif verified is None:  # no version to prove (only when a benchmark switches the gate off)
                        os.rename(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
                        published = True
                    else:
                        published = True  # from here on, _replace alone decides what the temp name holds
                        self._replace(dir_fd, temp, name, verified, written, display)
            finally:
                os.close(fd)
        finally:
            if not published and temp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(temp, dir_fd=dir_fd)
        if sync:
            self._sync_directory(dir_fd, display)  # the rename is done; a failure to sync it is logged
        return written, verified

    def _replace(
        self, dir_fd: int, temp: str, name: str, verified: Snapshot, ours: os.stat_result, display: str
    ) -> None:
        """Put the temp in place of ``name``, proving that what it displaces is the verified version.

        A program that saves by rename between the last check and this rename would otherwise be
        overwritten unseen. Where the kernel can swap two names atomically the temp is swapped in and
        the file it displaced is checked: if it is not the one just verified, the two are swapped back,
        the other program's save is kept and this change is ``FS_STALE_VERSION``. Elsewhere it is a
        plain rename (the docs say what that leaves open). Once the swap is made, the temp name may hold
        another program's file, so this method alone decides what becomes of it.
        """
        # The file to be replaced, held and locked across the swap: once swapped it sits under the temp
        # name until settled, and a sweeper (another writer's) must not take it for an orphan.
        holder = _hold(self._primitives, dir_fd, name)
        try:
            self._swap_in(dir_fd, temp, name, verified, ours, display)
        finally:
            if holder is not None:
                os.close(holder)

    def _swap_in(
        self, dir_fd: int, temp: str, name: str, verified: Snapshot, ours: os.stat_result, display: str
    ) -> None:
        try:
            swapped = self._primitives.exchange(dir_fd, temp, name)
        except FileNotFoundError:  # deleted since the check: a rename would bring it back
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=dir_fd)
            raise vanished(display) from None
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=dir_fd)
            raise
        except BaseException:  # interrupted around the swap: settle what it did, then go on interrupting
            if _names(dir_fd, name, ours):
                self._settle_swap(dir_fd, temp, name, verified, ours, display)
            else:
                with contextlib.suppress(OSError):
                    os.unlink(temp, dir_fd=dir_fd)
            raise
        if not swapped:
            try:
                os.rename(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temp, dir_fd=dir_fd)
                raise
            return
        try:
            settled = self._settle_swap(dir_fd, temp, name, verified, ours, display)
        except BaseException:  # interrupted before the displaced file was proven ours to drop: keep theirs
            if _names(dir_fd, name, ours):
                _swap_back(self._primitives, dir_fd, temp, name, ours)
            raise
        if not settled:
            raise StaleVersion(
                f"{display!r} was replaced by another program just as this change was being saved",
                details={"found": "modified"},
            )

    def _settle_swap(
        self, dir_fd: int, temp: str, name: str, verified: Snapshot, ours: os.stat_result, display: str
    ) -> bool:
        """After the swap: keep it if the displaced file is the verified version (True), else swap back."""
        if self._is_version(dir_fd, temp, verified):
            try:
                os.unlink(temp, dir_fd=dir_fd)  # the replaced version
            except OSError as exc:  # published all the same; the leftover is an orphan for the sweeper
                log.warning("published %r, but the replaced file could not be removed: errno %s", display, exc.errno)
            return True
        _swap_back(self._primitives, dir_fd, temp, name, ours)
        return False

    def _is_version(self, dir_fd: int, name: str, verified: Snapshot) -> bool:
        """Whether ``name`` is the very file ``verified`` describes, with the same bytes; never raises."""
        try:
            now = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            before = verified.stat
            # A rename changes the inode's ctime, so ctime cannot be compared here; mtime and size can.
            same = (now.st_dev, now.st_ino, now.st_size, now.st_mtime_ns) == (
                before.st_dev,
                before.st_ino,
                before.st_size,
                before.st_mtime_ns,
            )
            if not same or not stat.S_ISREG(now.st_mode):
                return False
            if _stat_vouches(verified):
                return True
            fd, _ = self._primitives.open_regular_with_stat(dir_fd, name, name)
            try:  # never more than the verified size and a byte: a file that grows is not that version
                hasher = xxhash.xxh3_128()
                left = before.st_size + 1
                while left > 0 and (chunk := os.read(fd, min(_CHUNK, left))):
                    hasher.update(chunk)
                    left -= len(chunk)
            finally:
                os.close(fd)
            return left > 0 and hasher.hexdigest() == verified.version
        except (OSError, FsError):
            return False


class _Discard:
    def feed(self, chunk: bytes) -> None:
        pass


def _identity(info: os.stat_result) -> str:
    return f"{info.st_dev}:{info.st_ino}"


def _check_cancel(cancel: CancelToken | None, what: str) -> None:
    if cancel is not None and cancel.is_set():
        raise Aborted(f"{what} was cancelled before anything was written")


_NOUNS = {DIRECTORY: "directory", SYMLINK: "symlink"}
_MAX_MOVED_ENTRIES = 100_000  # entries below a moved directory checked against protected paths


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
        raise StaleVersion(created, details={"found": "exists"}) from exc


def _without_trailing_slashes(path: str) -> str:
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


def _refuse_special(target: Resolved, done: str) -> None:
    """A FIFO, socket or device is never moved or deleted: fs-tools works on files, directories and links."""
    display = target.display
    current = target.leaf_stat()
    kind = describe_kind(current.st_mode) if current is not None else "not a regular file"
    raise NotRegularFile(
        f"{display!r} is {kind}; only files, directories and symlinks are {done}", kind=kind
    )


def _sync_directory(dir_fd: int, display: str, doing: str = "changing") -> None:
    try:
        os.fsync(dir_fd)
    except OSError as exc:  # the change is made; some filesystems cannot sync a directory
        log.warning("directory fsync after %s %r failed: errno %s", doing, display, exc.errno)


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


def _hold(prims: Primitives, dir_fd: int, name: str) -> int | None:
    """A descriptor of the regular file ``name``, ``flock``ed where no one else holds it (either way a
    sweeper's non-blocking lock fails); None where it cannot be opened as one."""
    try:
        fd, _ = prims.open_regular_with_stat(dir_fd, name, name)
    except (OSError, FsError):
        return None
    with contextlib.suppress(OSError):  # held by another program already: that keeps sweepers off it too
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return fd


def _names(dir_fd: int, name: str, file: os.stat_result) -> bool:
    """Whether ``name`` is (still) the file ``file`` describes."""
    try:
        now = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return False
    return (now.st_dev, now.st_ino) == (file.st_dev, file.st_ino)


def _swap_back(prims: Primitives, dir_fd: int, temp: str, name: str, ours: os.stat_result) -> None:
    """Undo a swap: the other program's file back under ``name``, ours under the temp name, removed.

    If yet another save replaced ours under ``name`` meanwhile, that newest save is put back under
    ``name`` and the one it superseded is removed, as that save's own rename would have done. Never
    raises: what cannot be sorted out is left in place and logged."""
    try:
        if not prims.exchange(dir_fd, temp, name):
            raise OSError(errno.ENOTSUP, "the swap worked once and not again")
    except FileNotFoundError:  # the name is gone meanwhile: put theirs back under it
        with contextlib.suppress(OSError):
            prims.rename_no_replace(dir_fd, temp, name)
        return
    except OSError as exc:
        log.error("could not withdraw a stale change (errno %s); the other file is left under %r", exc.errno, temp)
        return
    try:
        if not _names(dir_fd, temp, ours):
            prims.exchange(dir_fd, temp, name)  # a newer save replaced ours: it goes back under the name
        os.unlink(temp, dir_fd=dir_fd)
    except OSError as exc:
        log.warning("withdrew a stale change, but cleaning up after it failed: errno %s", exc.errno)


def _withdraw_staged(target: Resolved) -> None:
    """Take a file published inside unpublished staging out again, and remove the staging."""
    assert target.dir_fd is not None and target.name is not None
    with contextlib.suppress(OSError):
        os.unlink(target.name, dir_fd=target.dir_fd)
    target.remove_created_directories()


def _keep_of(current: os.stat_result | None, mode: int | None = None) -> tuple[int, int, int] | None:
    """What a replacement keeps of the file it replaces: its mode, owner and group (None: a new file, as
    ``open`` makes it). ``mode`` replaces the mode, of a new file too (then owner and group are the
    process's: -1, unchanged); only permission bits, never set-ID or sticky (a mode from history may
    have been tampered with)."""
    if mode is not None:
        mode &= 0o777
    if current is not None:
        return stat.S_IMODE(current.st_mode) if mode is None else mode, current.st_uid, current.st_gid
    return (mode, -1, -1) if mode is not None else None


def _without_set_id(mode: int) -> int:
    """The mode less set-user-ID, and set-group-ID where group-execute is set (without it the bit marks
    mandatory locking, which the kernel keeps), as the kernel clears them when a file is written."""
    mode &= ~stat.S_ISUID
    if mode & stat.S_IXGRP:
        mode &= ~stat.S_ISGID
    return mode


def _sync_created_directories(target: Resolved) -> None:
    """fsync the parents of directories created for a new file, so their entries survive a crash too
    (the file's own directory is synced after the rename)."""
    display = target.display
    for parent in dict.fromkeys(fd for fd, _ in target.created):
        try:
            os.fsync(parent)
        except OSError as exc:
            log.warning("fsync of a directory created for %r failed: errno %s", display, exc.errno)


def vanished(display: str) -> StaleVersion:
    """The condition "the observed file is gone"."""
    return StaleVersion(f"{display!r} no longer exists", details={"found": "deleted"})
