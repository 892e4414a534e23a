"""Reading a file while hashing it, and proving it is still the version a gate expects.

Every function here works on what the confined walker resolved (``Resolved``: the parent directory's
descriptor and the leaf's name) under the caller's locks; none takes a lock itself.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable
from typing import Literal

import xxhash

from fs_tools.errors import FsError, StaleVersion, Unstable
from fs_tools.provider.content import changed_lines
from fs_tools.provider.disk import Disk, vanished
from fs_tools.provider.face import S, Scan, Sink, Snapshot
from fs_tools.provider.primitives import require_plain_file
from fs_tools.provider.resolve import Resolved, require_regular

READ_ATTEMPTS = 3
CHUNK = 1 << 20  # bytes read at once while streaming a file (a read holds a page, not the file)
# File timestamps as coarse as 2 s (FAT), 1 s (ext4 with 128-byte inodes, HFS+) or a 1-4 ms kernel
# tick (kernels before 6.13) cannot tell apart two changes within one tick, and a freed inode number is
# reused at once: an unchanged stat proves unchanged bytes only for a file last changed well before it
# was read (git's "racily clean" rule). A fresher file is hashed again. A timestamp with a fraction of a
# second comes from a filesystem that keeps fractions (granularity 10 ms or finer): a short margin
# covers it; a whole-second one may come from a coarse filesystem, and gets the long margin.
_RACY_NS = 3_000_000_000
_RACY_FINE_NS = 100_000_000


def stat_vouches(snap: Snapshot) -> bool:
    """Whether an unchanged stat of the file would prove its bytes unchanged since ``snap``."""
    st = snap.stat
    changed = max(st.st_ctime_ns, st.st_mtime_ns)
    coarse = st.st_ctime_ns % 1_000_000_000 == 0 or st.st_mtime_ns % 1_000_000_000 == 0
    return changed + (_RACY_NS if coarse else _RACY_FINE_NS) < snap.taken_ns


def same_file_state(a: os.stat_result, b: os.stat_result) -> bool:
    # ctime moves on every content change, even one that restores mtime, so an unchanged tuple proves
    # unchanged bytes; a changed tuple only means "hash again" (a touch is not a change).
    return (a.st_dev, a.st_ino, a.st_size, a.st_mtime_ns, a.st_ctime_ns) == (
        b.st_dev,
        b.st_ino,
        b.st_size,
        b.st_mtime_ns,
        b.st_ctime_ns,
    )


class Collector:
    """A sink that keeps the bytes, refusing to grow past the whole-file limit."""

    def __init__(self, disk: Disk, display: str) -> None:
        self._disk = disk
        self._display = display
        self._chunks: list[bytes] = []
        self._size = 0

    def feed(self, chunk: bytes) -> None:
        self._size += len(chunk)
        self._disk.check_size(self._size, self._display)  # the file grew while we read it
        self._chunks.append(chunk)

    def data(self) -> bytes:
        return b"".join(self._chunks)


class Discard:
    """A sink that keeps nothing: the version is wanted, not the bytes."""

    def feed(self, chunk: bytes) -> None:
        pass


def scan(
    disk: Disk,
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
    disk.started(target.key)
    last: tuple[S, Scan] | None = None
    for _ in range(READ_ATTEMPTS):
        sink = new_sink()
        found = _scan_once(disk, target, sink, bounded)
        if found is None:
            return None
        if found is False:
            continue
        if found.settled:
            return sink, found
        last = (sink, found)
    if last is not None and unsettled_ok:
        return last
    raise Unstable(f"{target.display!r} kept changing while it was being read")


def _scan_once(disk: Disk, target: Resolved, sink: Sink, bounded: bool) -> Scan | Literal[False] | None:
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
    if not disk.primitives.reopen_through_proc:
        before = target.leaf_stat()
        if before is None:
            return None
        require_plain_file(before, display)
        if bounded:
            disk.check_size(before.st_size, display)
    try:
        fd, opened = disk.primitives.open_regular_with_stat(target.dir_fd, target.name, display)
    except FileNotFoundError:
        return None
    if before is not None and (opened.st_dev, opened.st_ino) != (before.st_dev, before.st_ino):
        os.close(fd)
        return False
    if opened.st_size > (disk.max_file_bytes if bounded else disk.max_read_bytes):
        os.close(fd)
        disk.check_size(opened.st_size, display, reading=not bounded)
    try:
        hasher = xxhash.xxh3_128()
        size = 0
        # Never past the size the file had when it was opened: a file that keeps growing (another
        # process appending, or extending it sparsely) cannot keep the read, and the lock, forever.
        # Whole-file work (bounded: the file is kept anyway) reads it at once: no chunks to join.
        step = max(opened.st_size, 1) if bounded else CHUNK
        while size < opened.st_size and (chunk := os.read(fd, min(step, opened.st_size - size))):
            hasher.update(chunk)
            size += len(chunk)
            sink.feed(chunk)
        after = os.fstat(fd)
    finally:
        os.close(fd)
    settled = same_file_state(opened, after) and size == after.st_size  # else a writer raced the read
    return Scan(version=hasher.hexdigest(), stat=after, size=size, settled=settled, taken_ns=started)


def snapshot(disk: Disk, target: Resolved) -> Snapshot | None:
    """The file's current bytes and version, or None when it does not exist (``FS_TOO_LARGE`` over
    the limit, checked before reading)."""
    display = target.display
    found = scan(disk, target, lambda: Collector(disk, display), bounded=True)
    if found is None:
        return None
    collector, done = found
    snap = Snapshot(data=collector.data(), version=done.version, stat=done.stat, taken_ns=done.taken_ns)
    disk.cache.put(snap.version, snap.data)
    return snap


def snapshot_at(disk: Disk, target: Resolved, expected: str) -> Snapshot:
    """A fresh snapshot of the file, which must be at ``expected`` (else vanished or stale)."""
    now = snapshot(disk, target)
    if now is None:
        raise vanished(target.display)
    if now.version != expected:
        raise stale(disk, target.display, expected, now)
    return now


def current(disk: Disk, target: Resolved, expected: str | None) -> Snapshot:
    """The file as it is now, which must still be the expected version."""
    if expected is None:
        raise vanished(target.display)
    return snapshot_at(disk, target, expected)


def check_expected(
    disk: Disk,
    target: Resolved,
    now: os.stat_result | None,
    expected: str | None,
    basis: Snapshot | None,
    strict: bool = False,
) -> Snapshot | None:
    """Raise unless the file (``now``: its stat) is as expected; return the snapshot that proves it.

    ``strict`` (the last check, under the directory lock) trusts an unchanged stat only where it
    proves unchanged bytes; the early check takes it as a hint, since the last one decides."""
    display = target.display
    if now is not None:
        require_plain_file(now, display)
    if expected is None:
        if now is not None:
            raise StaleVersion(f"{display!r} already exists", found="exists")
        return None
    if now is None:
        raise vanished(display)
    if basis is None and not strict:
        return None  # the early look goes by the stat alone: the last check, under the lock, hashes
    if (
        basis is not None
        and basis.version == expected
        and same_file_state(basis.stat, now)
        and (not strict or stat_vouches(basis))
    ):
        return basis
    return snapshot_at(disk, target, expected)


def verified(disk: Disk, target: Resolved, now: os.stat_result, expected: str) -> Snapshot:
    """The file, proven to be at ``expected`` (under its locks). A file over the whole-file limit is
    hashed without being kept (a move or delete needs its version, not its bytes)."""
    if now.st_size <= disk.max_file_bytes:
        proven = check_expected(disk, target, now, expected, None, strict=True)
        assert proven is not None
        return proven
    found = scan(disk, target, Discard)
    if found is None:
        raise vanished(target.display)
    done = found[1]
    if done.version != expected:
        raise StaleVersion(f"{target.display!r} has changed since this session last read it", found="modified")
    return Snapshot(data=b"", version=done.version, stat=done.stat, taken_ns=done.taken_ns)


def stale(disk: Disk, display: str, observed_version: str, now: Snapshot) -> StaleVersion:
    """The condition "changed since observed", with the changed lines when the old bytes are cached."""
    old = disk.cache.get(observed_version)
    change = changed_lines(old, now.data) if old is not None else None
    condition = StaleVersion(
        f"{display!r} has changed since this session last read it",
        found="modified",
        now_version=now.version,
        lines=(change.first, change.last) if change is not None else None,
    )
    if old is not None:
        condition.contents = (old, now.data)  # what the lines read now, and how they changed: after the lock
    return condition


def is_version(disk: Disk, dir_fd: int, name: str, proven: Snapshot) -> bool:
    """Whether ``name`` is the very file ``proven`` describes, with the same bytes; never raises."""
    try:
        now = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        before = proven.stat
        # A rename changes the inode's ctime, so ctime cannot be compared here; mtime and size can.
        same = (now.st_dev, now.st_ino, now.st_size, now.st_mtime_ns) == (
            before.st_dev,
            before.st_ino,
            before.st_size,
            before.st_mtime_ns,
        )
        if not same or not stat.S_ISREG(now.st_mode):
            return False
        if stat_vouches(proven):
            return True
        fd, _ = disk.primitives.open_regular_with_stat(dir_fd, name, name)
        try:  # never more than the verified size and a byte: a file that grows is not that version
            hasher = xxhash.xxh3_128()
            left = before.st_size + 1
            while left > 0 and (chunk := os.read(fd, min(CHUNK, left))):
                hasher.update(chunk)
                left -= len(chunk)
        finally:
            os.close(fd)
        return left > 0 and hasher.hexdigest() == proven.version
    except (OSError, FsError):
        return False
