"""Publication of a finished temp file under its final name without replacing anything there.

Linux has ``renameat2(RENAME_NOREPLACE)`` and macOS ``renameatx_np(RENAME_EXCL)``; where neither
exists (or the filesystem refuses them) a hard link plus unlink gives the same no-clobber guarantee.
Either way, a racing creator makes this fail with ``FileExistsError`` instead of being overwritten.
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
_RENAME_EXCL = 0x4  # macOS sys/stdio.h


def _load_native() -> tuple[Callable[..., int], int] | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
    except OSError:  # pragma: no cover - no C library to load
        return None
    for symbol, flag in (("renameat2", _RENAME_NOREPLACE), ("renameatx_np", _RENAME_EXCL)):
        func = getattr(libc, symbol, None)
        if func is not None:
            func.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
            func.restype = ctypes.c_int
            return func, flag
    return None


_NATIVE = _load_native()


def rename_no_replace(dir_fd: int, source: str, target: str) -> None:
    """Rename ``source`` to ``target`` inside ``dir_fd``; ``FileExistsError`` if ``target`` exists."""
    if _NATIVE is not None:
        func, flag = _NATIVE
        if func(dir_fd, os.fsencode(source), dir_fd, os.fsencode(target), flag) == 0:
            return
        err = ctypes.get_errno()
        if err not in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
            raise OSError(err, os.strerror(err))
    os.link(source, target, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
    # The link is the publication: the file is there. Failing to drop the temp name must not turn that
    # into a reported failure; a leftover name is an orphan the next writer sweeps.
    try:
        os.unlink(source, dir_fd=dir_fd)
    except OSError as exc:
        log.warning("published, but the temp name could not be removed: errno %s", exc.errno)
