"""The two kernel-specific primitives the provider prefers, and their portable fallbacks — chosen per
provider (``FileProvider(..., primitives=Primitives.portable())``), never process-wide.

- Opening only regular files: on Linux an ``O_PATH`` handle is checked with ``fstat`` and reopened
  through ``/proc/self/fd``; elsewhere the file is opened ``O_NONBLOCK | O_NOFOLLOW`` and checked after.
- Publishing without replacing: ``renameat2(RENAME_NOREPLACE)`` / ``renameatx_np(RENAME_EXCL)``;
  elsewhere (or where the filesystem refuses them) a hard link plus an unlink gives the same no-clobber
  guarantee. Either way a racing creator makes the publication fail with ``FileExistsError`` instead of
  being overwritten. The same calls swap two names atomically (``RENAME_EXCHANGE`` / ``RENAME_SWAP``),
  which lets a replace check what it displaced; where they cannot, ``exchange`` says so and the caller
  renames.

The fallbacks are what macOS and the BSDs run, and what an in-memory filesystem (pyfakefs, used by the
pytest kit's ``fst_fake_workspace``) supports: it emulates descriptors, ``dir_fd`` calls and ``O_NOFOLLOW``
but not ``/proc`` or raw system calls made through ``ctypes``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import functools
import logging
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass

from fs_tools.errors import Raced
from fs_tools.provider.resolve import require_regular

log = logging.getLogger("fs_tools.provider")

READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0)
_O_PATH: int = getattr(os, "O_PATH", 0)
_RENAME_NOREPLACE = 1  # linux/fs.h
_RENAME_EXCHANGE = 2  # linux/fs.h
_RENAME_EXCL = 0x4  # macOS sys/stdio.h
_RENAME_SWAP = 0x2  # macOS sys/stdio.h
_UNSUPPORTED = (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP)

NativeRename = tuple[Callable[..., int], int, int]  # the C function, its no-replace flag, its swap flag


def _load_native() -> NativeRename | None:
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


@dataclass(frozen=True)
class Primitives:
    """How one provider opens regular files, writes and publishes names: ``Primitives.native()`` (the
    default: what this kernel offers) or ``Primitives.portable()`` (the fallbacks only). A subclass is the
    seam for injecting a fault the kernel would give (``fs_tools.reference`` shows EACCES and ENOSPC so)."""

    reopen_through_proc: bool  # O_PATH + /proc/self/fd
    native_rename: NativeRename | None  # renameat2 / renameatx_np

    @staticmethod
    @functools.cache
    def native() -> Primitives:
        return Primitives(bool(_O_PATH) and os.path.isdir("/proc/self/fd"), _load_native())

    @staticmethod
    def portable() -> Primitives:
        return Primitives(False, None)

    # --- opening ----------------------------------------------------------------------------------

    def open_regular_with_stat(self, dir_fd: int, name: str, display: str) -> tuple[int, os.stat_result]:
        """Open ``name`` for reading only if it is a regular file, without ever opening anything else;
        with the file's stat taken on the way.

        An ``lstat`` before this call is not enough: a device or FIFO renamed into place afterwards would
        be opened, and opening a device can act (rewind a tape, arm a watchdog). On Linux an ``O_PATH``
        descriptor names the inode without opening it; only once ``fstat`` shows a regular file is it
        reopened for reading through ``/proc/self/fd``, which the kernel resolves to that same inode.
        """
        if self.reopen_through_proc:
            handle = os.open(name, _O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
            try:
                st = os.fstat(handle)
                require_plain_file(st, display)
                return os.open(f"/proc/self/fd/{handle}", os.O_RDONLY | os.O_CLOEXEC | os.O_NOCTTY), st
            finally:
                os.close(handle)
        fd = os.open(name, READ_FLAGS, dir_fd=dir_fd)  # O_NONBLOCK at least keeps a FIFO from hanging
        try:
            st = os.fstat(fd)
            require_regular(st, display)
        except BaseException:
            os.close(fd)
            raise
        return fd, st

    # --- writing ----------------------------------------------------------------------------------

    def write_all(self, fd: int, data: bytes) -> None:
        """Write every byte of ``data`` to ``fd`` (a new temp file), however many calls it takes."""
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            if written <= 0:  # pragma: no cover - os.write raises rather than returning 0 on regular files
                raise OSError(errno.EIO, "write returned no progress")
            view = view[written:]

    # --- publishing -------------------------------------------------------------------------------

    def rename_no_replace(self, dir_fd: int, source: str, target: str) -> None:
        """Rename ``source`` to ``target`` inside ``dir_fd``; ``FileExistsError`` if ``target`` exists."""
        if self._native_rename(dir_fd, source, dir_fd, target, swap=False):
            return
        os.link(source, target, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
        # The link is the publication: the file is there. Failing to drop the temp name must not turn
        # that into a reported failure; a leftover name is an orphan the next writer sweeps.
        try:
            os.unlink(source, dir_fd=dir_fd)
        except OSError as exc:
            log.warning("published, but the temp name could not be removed: errno %s", exc.errno)

    def exchange(self, dir_fd: int, first: str, second: str) -> bool:
        """Swap the files named ``first`` and ``second`` inside ``dir_fd`` atomically; False where the
        kernel or the filesystem cannot (nothing is changed then), ``OSError`` for any other failure
        (``FileNotFoundError`` when either name is missing)."""
        return self._native_rename(dir_fd, first, dir_fd, second, swap=True)

    def exchange_between(self, first_dir: int, first: str, second_dir: int, second: str) -> bool:
        """``exchange`` of ``first`` in ``first_dir`` and ``second`` in ``second_dir`` (one filesystem)."""
        return self._native_rename(first_dir, first, second_dir, second, swap=True)

    def can_stage(self) -> bool:
        """Whether new parent directories can be built under a temp name and published by a no-replace
        rename of a directory (the hard-link fallback cannot link directories)."""
        return self.native_rename is not None

    def rename_directory_no_replace(self, dir_fd: int, source: str, target: str) -> bool:
        """Rename the directory ``source`` to ``target`` inside ``dir_fd`` unless ``target`` exists
        (``FileExistsError``); False where the kernel or the filesystem cannot (nothing is changed)."""
        return self._native_rename(dir_fd, source, dir_fd, target, swap=False)

    def move_no_replace(self, source_dir: int, source: str, target_dir: int, target: str, *, directory: bool) -> None:
        """Rename ``source`` in ``source_dir`` to ``target`` in ``target_dir`` (on one filesystem) unless
        ``target`` exists (``FileExistsError``). Where the kernel cannot refuse atomically, a file is hard
        linked and then unlinked; a directory is renamed after a last look (the caller holds the target
        directory's lock, which every fs-tools writer respects)."""
        if self._native_rename(source_dir, source, target_dir, target, swap=False):
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

    def _native_rename(self, first_dir: int, first: str, second_dir: int, second: str, *, swap: bool) -> bool:
        """``renameat2`` / ``renameatx_np`` with the swap or the no-replace flag; False where unsupported
        (nothing is changed then), ``OSError`` for any other failure."""
        if self.native_rename is None:
            return False
        func, no_replace, exchange_flag = self.native_rename
        flag = exchange_flag if swap else no_replace
        if func(first_dir, os.fsencode(first), second_dir, os.fsencode(second), flag) == 0:
            return True
        err = ctypes.get_errno()
        if err in _UNSUPPORTED:
            return False
        raise OSError(err, os.strerror(err))


def require_plain_file(st: os.stat_result, display: str) -> None:
    """A regular file, not a symlink swapped in after resolution (which is never followed)."""
    if stat.S_ISLNK(st.st_mode):
        raise Raced(f"{display!r} was replaced by a symlink while it was being resolved")
    require_regular(st, display)
