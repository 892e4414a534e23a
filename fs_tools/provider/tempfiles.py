"""Temp files for atomic writes: created beside their target under a fresh random name, locked while a
writer holds them, and removed by a later writer once nobody holds them (a writer killed mid-write
leaves an orphan that no lock protects)."""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import secrets
import stat

from fs_tools.errors import IoError

TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
TEMP_NAME = re.compile(r"\.[0-9a-f]{16}\.fs-tools\.tmp")
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
    removed = 0
    with os.scandir(dir_fd) as entries:
        names = [entry.name for entry in entries if TEMP_NAME.fullmatch(entry.name)]
    for name in names:
        try:
            seen = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            if not stat.S_ISREG(seen.st_mode):
                continue  # only our own temps are regular files: a FIFO or device is never opened
            fd = os.open(name, _SWEEP_FLAGS, dir_fd=dir_fd)
        except OSError:
            continue  # gone already, or not something we may open
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # a live writer holds it
            held = os.fstat(fd)
            current = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            if stat.S_ISREG(held.st_mode) and (held.st_dev, held.st_ino) == (current.st_dev, current.st_ino):
                os.unlink(name, dir_fd=dir_fd)
                removed += 1
        except OSError:
            continue
        finally:
            os.close(fd)
    return removed
