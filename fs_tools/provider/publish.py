"""Publication of a finished temp file under its final name: without replacing anything there, or by
swapping it with what is there.

Linux has ``renameat2(RENAME_NOREPLACE)`` and macOS ``renameatx_np(RENAME_EXCL)``; where neither
exists (or the filesystem refuses them) a hard link plus unlink gives the same no-clobber guarantee.
Either way, a racing creator makes this fail with ``FileExistsError`` instead of being overwritten.
The same calls swap two names atomically (``RENAME_EXCHANGE`` / ``RENAME_SWAP``), which lets a replace
check what it displaced; where they cannot, ``exchange`` says so and the caller renames.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import logging
import os
from collections.abc import Callable

log = logging.getLogger("fs_tools.provider")

_RENAME_NOREPLACE = 1  # linux/fs.h
_RENAME_EXCHANGE = 2  # linux/fs.h
_RENAME_EXCL = 0x4  # macOS sys/stdio.h
_RENAME_SWAP = 0x2  # macOS sys/stdio.h
_UNSUPPORTED = (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP)


def _load_native() -> tuple[Callable[..., int], int, int] | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
    except OSError:  # pragma: no cover - no C library to load
        return None
    for symbol, no_replace, swap in (
        ("renameat2", _RENAME_NOREPLACE, _RENAME_EXCHANGE),
        ("renameatx_np", _RENAME_EXCL, _RENAME_SWAP),
    ):
        func = getattr(libc, symbol, None)
        if func is not None:
            func.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
            func.restype = ctypes.c_int
            return func, no_replace, swap
    return None


_NATIVE = _load_native()


def rename_no_replace(dir_fd: int, source: str, target: str) -> None:
    """Rename ``source`` to ``target`` inside ``dir_fd``; ``FileExistsError`` if ``target`` exists."""
    if _native_rename(dir_fd, source, dir_fd, target, swap=False):
        return
    os.link(source, target, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
    # The link is the publication: the file is there. Failing to drop the temp name must not turn that
    # into a reported failure; a leftover name is an orphan the next writer sweeps.
    try:
        os.unlink(source, dir_fd=dir_fd)
    except OSError as exc:
        log.warning("published, but the temp name could not be removed: errno %s", exc.errno)


def exchange(dir_fd: int, first: str, second: str) -> bool:
    """Swap the files named ``first`` and ``second`` inside ``dir_fd`` atomically; False where the
    kernel or the filesystem cannot (nothing is changed then), ``OSError`` for any other failure
    (``FileNotFoundError`` when either name is missing)."""
    return _native_rename(dir_fd, first, dir_fd, second, swap=True)


def exchange_between(first_dir: int, first: str, second_dir: int, second: str) -> bool:
    """``exchange`` of ``first`` in ``first_dir`` and ``second`` in ``second_dir`` (one filesystem)."""
    return _native_rename(first_dir, first, second_dir, second, swap=True)


def can_stage() -> bool:
    """Whether new parent directories can be built under a temp name and published by a no-replace
    rename of a directory (the hard-link fallback cannot link directories)."""
    return _NATIVE is not None


def rename_directory_no_replace(dir_fd: int, source: str, target: str) -> bool:
    """Rename the directory ``source`` to ``target`` inside ``dir_fd`` unless ``target`` exists
    (``FileExistsError``); False where the kernel or the filesystem cannot (nothing is changed)."""
    return _native_rename(dir_fd, source, dir_fd, target, swap=False)


def move_no_replace(source_dir: int, source: str, target_dir: int, target: str, *, directory: bool) -> None:
    """Rename ``source`` in ``source_dir`` to ``target`` in ``target_dir`` (on one filesystem) unless
    ``target`` exists (``FileExistsError``). Where the kernel cannot refuse atomically, a file is hard
    linked and then unlinked; a directory is renamed after a last look (the caller holds the target
    directory's lock, which every fs-tools writer respects)."""
    if _native_rename(source_dir, source, target_dir, target, swap=False):
        return
    if directory:
        try:
            os.stat(target, dir_fd=target_dir, follow_symlinks=False)
        except FileNotFoundError:
            os.rename(source, target, src_dir_fd=source_dir, dst_dir_fd=target_dir)
            return
        raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST))
    os.link(source, target, src_dir_fd=source_dir, dst_dir_fd=target_dir, follow_symlinks=False)
    os.unlink(source, dir_fd=source_dir)


def _native_rename(first_dir: int, first: str, second_dir: int, second: str, *, swap: bool) -> bool:
    """``renameat2`` / ``renameatx_np`` with the swap or the no-replace flag; False where unsupported
    (nothing is changed then), ``OSError`` for any other failure."""
    if _NATIVE is None:
        return False
    func, no_replace, exchange_flag = _NATIVE
    if func(first_dir, os.fsencode(first), second_dir, os.fsencode(second), exchange_flag if swap else no_replace) == 0:
        return True
    err = ctypes.get_errno()
    if err in _UNSUPPORTED:
        return False
    raise OSError(err, os.strerror(err))
