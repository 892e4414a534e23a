"""The provider's locks: one per file key within the process, and a directory's ``flock`` across
processes — every wait bounded (``FS_BUSY``) and cancellable (``FS_ABORTED``)."""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
import time
from collections.abc import Callable, Iterator

from fs_tools.errors import Aborted, Busy
from fs_tools.provider.face import CancelToken

DEFAULT_LOCK_SECONDS = 5.0


class KeyedLocks:
    """One lock per file key, created on demand and dropped when nobody holds or waits for it.

    A wait is bounded by ``timeout`` seconds (then ``FS_BUSY``) and ends early, with ``FS_ABORTED``,
    when the caller's cancel token is set."""

    def __init__(self, timeout: float = DEFAULT_LOCK_SECONDS) -> None:
        self.timeout = timeout
        self._guard = threading.Lock()
        self._locks: dict[str, tuple[threading.Lock, list[int]]] = {}

    @contextlib.contextmanager
    def hold(self, key: str, *, cancel: CancelToken | None = None, display: str = "the file") -> Iterator[None]:
        with self._guard:
            lock, users = self._locks.setdefault(key, (threading.Lock(), [0]))
            users[0] += 1
        try:
            holder = "another call in this process"
            _wait_for(lambda pause: lock.acquire(timeout=pause), self.timeout, cancel, display, holder)
            try:
                yield
            finally:
                lock.release()
        finally:
            with self._guard:
                users[0] -= 1
                if users[0] == 0:
                    del self._locks[key]


def _wait_for(
    attempt: Callable[[float], bool], timeout: float, cancel: CancelToken | None, display: str, holder: str
) -> None:
    """Call ``attempt(pause)`` until it succeeds (it may block up to ``pause`` seconds itself), the
    cancel token is set (``Aborted``) or ``timeout`` seconds pass (``Busy``)."""
    deadline = time.monotonic() + timeout
    pause = 0.001
    while not attempt(0):
        if cancel is not None and cancel.is_set():
            raise Aborted(f"waiting for the lock on {display!r} was cancelled before anything was written")
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise Busy(
                f"{display!r} is locked by {holder} (waited {timeout:g} s); nothing was written",
                details={"waited": timeout},
            )
        if attempt(min(pause, remaining)):
            return
        pause = min(pause * 2, 0.05)


@contextlib.contextmanager
def directory_lock(dir_fd: int, timeout: float, cancel: CancelToken | None, display: str) -> Iterator[None]:
    """An exclusive ``flock`` on a fresh open of the directory: a new open file description, so it
    excludes every other holder — another thread's descriptor, another workspace, another process.

    The wait is bounded (``FS_BUSY``) and cancellable: a program that holds the lock and never lets go
    (a stopped process, ``flock -x dir sleep``) cannot hang the caller."""
    fd = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=dir_fd)

    def attempt(pause: float) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if pause > 0:
                time.sleep(pause)
            return False
        return True

    try:
        _wait_for(attempt, timeout, cancel, display, "another writer holding its directory's lock")
        yield
    finally:
        os.close(fd)  # closing the last descriptor of the description releases the lock
