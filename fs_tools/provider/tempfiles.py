"""Temp files for atomic writes: created beside their target under a fresh random name, locked while a
writer holds them, and removed by a later writer once nobody holds them (a writer killed mid-write
leaves an orphan that no lock protects)."""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import logging
import os
import re
import secrets
import stat
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from fs_tools.errors import IoError

log = logging.getLogger("fs_tools.provider")

TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
TEMP_SUFFIX = ".fs-tools.tmp"
STAGING_SUFFIX = ".fs-tools.dir"
# Temp files, and the temp directories new parent directories are built under (staging): hidden from
# every listing and search, and reserved (no model-sent path may name one).
TEMP_NAME = re.compile(r"\.[0-9a-f]{16}\.fs-tools\.(?:tmp|dir)")
_STAGING_ENTRIES = 4096  # an orphaned staging tree is ours: a chain of directories and a file or two
_STAGING_DEPTH = 300  # deeper than any chain a resolution can build (255 levels)
_ATTEMPTS = 8
_SWEEP_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0)


def temp_name() -> str:
    # short and fixed-length, so a 255-byte target name never makes it overflow
    return f".{secrets.token_hex(8)}.fs-tools.tmp"


def create_temp(dir_fd: int, mode: int) -> tuple[int, str]:
    """A new temp file in ``dir_fd``, open for writing and exclusively locked.

    A name that is taken is never reused (``O_EXCL``): another is drawn. A temp that a sweeper removed
    in the instant between our create and our lock is noticed (no links left) and replaced.
    """
    for _ in range(_ATTEMPTS):
        name = temp_name()
        try:
            fd = os.open(name, TEMP_FLAGS, mode, dir_fd=dir_fd)
        except FileExistsError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            if os.fstat(fd).st_nlink > 0:
                return fd, name
        except BaseException:  # the caller never learns the name: clean up here, whatever interrupted us
            with contextlib.suppress(OSError):
                os.unlink(name, dir_fd=dir_fd)
            os.close(fd)
            raise
        os.close(fd)
    raise IoError(
        f"could not create a temp file: {_ATTEMPTS} fresh names were all taken", details={"reason": "temp_names"}
    )


def remove_orphans(dir_fd: int) -> int:
    """Remove temp files in ``dir_fd`` that no writer holds; the number removed."""
    names = os.listdir(dir_fd)
    temps = sum(remove_if_orphan(dir_fd, name) for name in names if is_temp_name(name))
    return temps + sum(remove_if_orphan_staging(dir_fd, name) for name in names if is_staging_name(name))


def is_temp_name(name: str) -> bool:
    """A temp file's name (``.<16 hex>.fs-tools.tmp``)."""
    return name.endswith(TEMP_SUFFIX) and TEMP_NAME.fullmatch(name) is not None


def is_staging_name(name: str) -> bool:
    """A staging directory's name (``.<16 hex>.fs-tools.dir``)."""
    return name.endswith(STAGING_SUFFIX) and TEMP_NAME.fullmatch(name) is not None


def is_reserved_name(name: str) -> bool:
    """A name fs-tools uses for its own temps: never listed, searched, or reachable by a model's path
    (in any letter case: on a case-insensitive filesystem ``.ABC….FS-TOOLS.TMP`` is the same file)."""
    folded = name.lower()
    return folded.endswith((TEMP_SUFFIX, STAGING_SUFFIX)) and TEMP_NAME.fullmatch(folded) is not None


def create_staging(dir_fd: int) -> tuple[int, str]:
    """A new, empty staging directory in ``dir_fd``, open and exclusively locked; its descriptor and
    name. Between the mkdir and the lock another process's sweeper may probe it (and hold its lock for
    a moment) or even remove it as an orphan: then a fresh name is drawn, and the sweeper, or a later
    one, removes the abandoned one."""
    for _ in range(_ATTEMPTS):
        name = f".{secrets.token_hex(8)}{STAGING_SUFFIX}"
        try:
            os.mkdir(name, 0o777, dir_fd=dir_fd)
        except FileExistsError:
            continue
        try:
            fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
        except FileNotFoundError:
            continue  # swept already
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if os.fstat(fd).st_nlink > 0:
                return fd, name
        except BlockingIOError:
            pass  # a sweeper is looking at it: leave it to that sweeper
        except BaseException:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.rmdir(name, dir_fd=dir_fd)
            raise
        os.close(fd)
    raise IoError(
        f"could not create a temp directory: {_ATTEMPTS} fresh names were all taken or swept",
        details={"reason": "temp_names"},
    )


def remove_if_orphan_staging(dir_fd: int, name: str) -> bool:
    """Remove the staging tree ``name`` if no live writer holds it; whether it was removed. Only
    directories and regular files are expected inside; links are removed as links, never followed."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC  # a symlink or a file: not ours
    fd = _lock_unheld(dir_fd, name, flags, stat.S_ISDIR)
    if fd is None:
        return False
    try:
        if not empty_tree(fd):
            return False
        os.rmdir(name, dir_fd=dir_fd)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def _lock_unheld(dir_fd: int, name: str, flags: int, kind: Callable[[int], bool]) -> int | None:
    """``name`` opened and exclusively locked, if it is of ``kind``, no live writer holds it and it is
    still the entry under that name once locked; else None. The caller closes the descriptor."""
    try:
        fd = os.open(name, flags, dir_fd=dir_fd)
    except OSError:
        return None  # gone already, or not something we may open
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # BlockingIOError: a live writer holds it
        held = os.fstat(fd)
        current = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if kind(held.st_mode) and (held.st_dev, held.st_ino) == (current.st_dev, current.st_ino):
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def empty_tree(fd: int) -> bool:
    """Remove everything inside the staging directory ``fd`` (ours: directories and a file or two);
    False, leaving the rest, past a bound on entries or depth."""
    return _empty_tree(fd, [_STAGING_ENTRIES], depth=0)


def _empty_tree(fd: int, budget: list[int], depth: int) -> bool:
    """Remove everything inside the directory ``fd``; False (leaving the rest) past the budget."""
    if depth > _STAGING_DEPTH:
        return False
    with os.scandir(fd) as listing:
        entries = list(itertools.islice(listing, budget[0] + 1))
    for entry in entries:
        budget[0] -= 1
        if budget[0] < 0:
            return False
        if entry.is_dir(follow_symlinks=False):
            child = os.open(entry.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            try:
                if not _empty_tree(child, budget, depth + 1):
                    return False
            finally:
                os.close(child)
            os.rmdir(entry.name, dir_fd=fd)
        else:
            os.unlink(entry.name, dir_fd=fd)
    return True


def remove_if_orphan(dir_fd: int, name: str) -> bool:
    """Remove the temp ``name`` if it is a regular file no writer holds; whether it was removed."""
    try:
        if not stat.S_ISREG(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode):
            return False  # only our own temps are regular files: a FIFO or device is never opened
    except OSError:
        return False
    fd = _lock_unheld(dir_fd, name, _SWEEP_FLAGS, stat.S_ISREG)
    if fd is None:
        return False
    try:
        os.unlink(name, dir_fd=dir_fd)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


class _DirectoryScan:
    """A sweep of one directory in progress: its own descriptor and a directory stream on it."""

    def __init__(self, dir_fd: int, mtime_ns: int) -> None:
        self.mtime_ns = mtime_ns  # the directory's mtime when the sweep began
        # A fresh open, not a dup: a dup would share the caller's file offset, which the stream moves.
        self.fd = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=dir_fd)
        try:
            self.entries = os.scandir(self.fd)
        except BaseException:
            os.close(self.fd)
            raise

    def step(self, budget: int, keep: str | None = None) -> tuple[int, bool]:
        """Look at up to ``budget`` entries; the orphans removed, and whether the sweep is complete.
        ``keep`` is the caller's own temp (where ``flock`` is emulated, as by pyfakefs, its lock does
        not keep it from the sweeper)."""
        removed = 0
        for _ in range(budget):
            entry = next(self.entries, None)
            if entry is None:
                return removed, True
            if entry.name == keep:
                continue
            if is_temp_name(entry.name):
                removed += remove_if_orphan(self.fd, entry.name)
            elif is_staging_name(entry.name):
                removed += remove_if_orphan_staging(self.fd, entry.name)
        return removed, False

    def close(self) -> None:
        self.entries.close()
        os.close(self.fd)


class Sweeper:
    """Removes orphaned temps (left by killed writers) on the write path, a bounded batch of directory
    entries per write, so the first write into a directory of 20,000 entries costs about what any
    write costs, and a small directory is swept whole by its first write.

    A directory is swept once the first time it is written to, and again on a write more than
    ``interval`` seconds after the last sweep ended if its mtime moved since (a killed writer's temp
    moves it): an orphan left later does not survive every later write. ``remembered`` bounds the
    directories kept in mind and ``open_scans`` the sweeps in progress (each holds a descriptor).
    """

    def __init__(self, interval: float = 60.0, batch: int = 256, remembered: int = 4096, open_scans: int = 16) -> None:
        self.interval = interval
        self.batch = batch
        self._remembered = remembered
        self._open_scans = open_scans
        self._done: OrderedDict[tuple[int, int], tuple[float, int]] = OrderedDict()
        self._scans: OrderedDict[tuple[int, int], _DirectoryScan] = OrderedDict()
        self._guard = threading.Lock()

    def sweep(self, dir_fd: int, keep: str | None = None) -> None:
        """Advance the sweep of ``dir_fd``'s directory if one is due (never removing ``keep``, the
        caller's own temp); never fails the caller."""
        try:
            with self._guard:
                removed = self._advance(dir_fd, keep)
        except OSError as exc:  # sweeping is housekeeping: never a reason to fail a write
            log.warning("could not sweep orphaned temp files: errno %s", exc.errno)
            return
        if removed:
            log.info("removed %d orphaned temp file(s)", removed)

    def close(self) -> None:
        with self._guard:
            while self._scans:
                _, scan = self._scans.popitem()
                scan.close()

    def _advance(self, dir_fd: int, keep: str | None) -> int:
        st = os.fstat(dir_fd)
        key, now = (st.st_dev, st.st_ino), time.monotonic()
        scan = self._scans.get(key)
        if scan is None:
            last = self._done.get(key)
            if last is not None and (now - last[0] < self.interval or last[1] == st.st_mtime_ns):
                return 0
            scan = self._scans[key] = _DirectoryScan(dir_fd, st.st_mtime_ns)
            while len(self._scans) > self._open_scans:
                _, oldest = self._scans.popitem(last=False)
                oldest.close()
        try:
            removed, complete = scan.step(self.batch, keep)
        except BaseException:
            del self._scans[key]
            scan.close()
            raise
        if complete:
            del self._scans[key]
            scan.close()
            self._done[key] = (now, scan.mtime_ns)
            self._done.move_to_end(key)
            while len(self._done) > self._remembered:
                self._done.popitem(last=False)
        return removed
