"""The provider's public face: what the layers above may know of it, and nothing more.

A ``Provider`` is one object with one method per operation (read into a sink, commit against an
expected version, walk a tree, read an entry met on the walk, …). Each method resolves its path through
the one confined walker, takes its own lock and maps operating-system errors in one place; nothing above
it holds a descriptor, a lock or a cache, or catches ``OSError``. ``FileProvider`` is the real one; the
pytest kit watches it through ``listen`` (a public seam, never a patched method).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Protocol, TypeVar, runtime_checkable

from fs_tools.errors import FsError
from fs_tools.provider.walk import Entry


class CancelToken(Protocol):
    def is_set(self) -> bool: ...


class Sink(Protocol):
    """Receives a file's bytes, chunk by chunk, during a read."""

    def feed(self, chunk: bytes) -> None: ...


S = TypeVar("S", bound=Sink)
T = TypeVar("T")


@dataclass(frozen=True)
class Snapshot:
    """The exact bytes of a file at one moment, their version, and the stat that vouches for them."""

    data: bytes
    version: str
    stat: os.stat_result
    taken_ns: int = 0  # wall-clock time when the read began; 0: unknown


@dataclass(frozen=True)
class Scan:
    """The version and stat of the exact bytes a read fed to its sink. ``settled`` is False for a file
    that never held still while it was read: its bytes may be torn, so its version must not be recorded."""

    version: str
    stat: os.stat_result
    size: int
    settled: bool = True
    taken_ns: int = 0


@dataclass(frozen=True)
class FileState:
    """What a gate may know of the file a commit is about to change: its identity, every spelling of
    it relative to a root (nested roots give several), whether it exists, and — for a file no read can
    observe (a directory, a FIFO, one over the size limit) — why not."""

    key: str  # the canonical absolute path: the identity observations are kept under
    display: str  # the path as the caller gave it, shortened for messages
    relative_paths: tuple[str, ...]
    exists: bool
    unreadable: FsError | None = None
    kind: str = ""  # FILE, DIRECTORY, SYMLINK or OTHER (walk's kinds); "" when it does not exist


class Gate(Protocol):
    """The policy side of a commit, asked by the provider at the right moments."""

    def expect(self, file: FileState) -> str | None:
        """The version the file must still have (None: it must not exist); raise to refuse."""
        ...

    def record(self, key: str, after: Snapshot, *, before: Snapshot | None = None, made: tuple[str, ...] = ()) -> None:
        """The commit is published; called under the file's lock, before any other call may see it.
        ``before`` is the file it replaced, as verified (None: the commit created it); ``made`` the keys
        of the parent directories made for it, outermost first."""
        ...


class RemoveGate(Protocol):
    """The policy side of a removal."""

    def expect(self, file: FileState) -> str | None:
        """The version a regular file must still have (None for a symlink or a directory, which are
        removed as they are); raise to refuse."""
        ...

    def removed(self, key: str, *, before: Snapshot | None = None) -> None:
        """The entry is gone; called under its lock. ``before`` is a regular file's last snapshot, as
        verified (its bytes empty when over the whole-file limit); None for any other kind."""
        ...


class MoveGate(Protocol):
    """The policy side of a move."""

    def expect_source(self, file: FileState) -> str | None:
        """The version the source, a regular file, must still have (None for a symlink or a directory,
        moved as they are); raise to refuse."""
        ...

    def expect_destination(self, file: FileState) -> str | None:
        """For a destination that does not exist: raise to refuse (read-only, protected), else None. For
        an existing regular file: the version it must still have to be replaced; raise to refuse."""
        ...

    def check_inside(self, source: FileState, destination: FileState) -> None:
        """For a moved directory: one entry below it, as it is now and as it will be; raise to refuse."""
        ...

    @property
    def checks_inside(self) -> bool:
        """Whether ``check_inside`` needs to see every entry below a moved directory."""
        ...

    def moved(
        self,
        source_key: str,
        destination_key: str,
        kind: str,
        *,
        moved: Snapshot | None = None,
        replaced: Snapshot | None = None,
        made: tuple[str, ...] = (),
        identity: str = "",
    ) -> None:
        """The move of an entry of ``kind`` is done; called under both locks. ``moved`` is a regular file's
        snapshot and ``replaced`` the file it replaced at the destination, as verified (bytes empty when
        over the whole-file limit); ``made`` the keys of the destination's parent directories made;
        ``identity`` the entry's device and inode (as ``stat`` gives them)."""
        ...


@dataclass(frozen=True)
class Status:
    """What ``stat`` finds at a path (a symlink inside the roots followed, as reads follow it)."""

    key: str
    kind: str  # FILE, DIRECTORY, SYMLINK or OTHER
    size: int
    mode: int  # the permission bits
    mtime_ns: int
    identity: str = ""  # device and inode: which entry it is, whatever its name or content


@dataclass(frozen=True)
class Walk:
    """A walk's start, below its root, and either its entries or — for a start that is a regular file,
    when files were asked for — that one file."""

    start: tuple[str, ...]
    entries: Iterator[Entry]
    file: Entry | None = None


# Reads one file of a directory the walk is about to list, by name and at most ``limit`` bytes; None
# when there is no such regular file or it cannot be read.
ReadChild = Callable[[str, int], "bytes | None"]
# Sees a directory — its path below the root, and a way to read its files — before the walk lists it.
Enter = Callable[[tuple[str, ...], ReadChild], None]


class ProviderListener(Protocol):
    """Moments of the provider's own work, for tests that must act at one (the pytest kit's
    ``ConcurrentWriter``). Called on the working thread; a listener must not call back into the provider."""

    def operation_started(self, key: str) -> None:
        """A read of ``key``'s bytes or a commit to it begins."""
        ...

    def read_recorded(self, key: str) -> None:
        """An observing read of ``key`` has recorded what it saw (the file's lock is released)."""
        ...

    def version_checked(self, key: str) -> None:
        """A commit to ``key`` has checked the expected version; the publication follows."""
        ...


@runtime_checkable
class Provider(Protocol):
    """Confined, versioned access to the files under a workspace's roots."""

    @property
    def max_file_bytes(self) -> int: ...

    @property
    def max_read_bytes(self) -> int: ...

    @property
    def root_paths(self) -> tuple[str, ...]: ...

    @property
    def real_root_paths(self) -> tuple[str, ...]: ...

    def key_of(self, path: str) -> str: ...

    def relative_paths(self, key: str) -> tuple[str, ...]: ...

    def read(
        self,
        path: str,
        new_sink: Callable[[], S],
        *,
        record: Callable[[str, Scan | None], None] | None = None,
        cancel: CancelToken | None = None,
    ) -> tuple[str, tuple[S, Scan] | None]: ...

    def current_version(self, path: str, while_locked: Callable[[], T]) -> tuple[T, str | None]: ...

    def commit(
        self,
        path: str,
        gate: Gate,
        content: bytes | Callable[[Snapshot], bytes],
        *,
        cancel: CancelToken | None = None,
        mode: int | None = None,
    ) -> Snapshot: ...

    def walk(
        self,
        path: str,
        *,
        descend: Callable[[Entry], bool],
        enter: Enter | None = None,
        sizes: bool = True,
        files_too: bool = False,
    ) -> AbstractContextManager[Walk]: ...

    def read_entry(self, entry: Entry, limit: int) -> tuple[bytes | None, int]: ...

    def stat(self, path: str) -> Status: ...

    def make_directory(self, path: str, gate: Callable[[FileState], None]) -> tuple[str, ...]: ...

    def remove(self, path: str, gate: RemoveGate, *, cancel: CancelToken | None = None) -> str: ...

    def rename(
        self, source: str, destination: str, gate: MoveGate, *, overwrite: bool, cancel: CancelToken | None = None
    ) -> str: ...

    def remember(self, version: str, data: bytes) -> None: ...

    def recall(self, version: str) -> bytes | None: ...

    @property
    def remember_limit(self) -> int: ...

    def listen(self, listener: ProviderListener) -> Callable[[], None]: ...

    def close(self) -> None: ...
