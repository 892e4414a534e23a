"""The two kernel-specific primitives the provider prefers, and a switch to their portable fallbacks.

- Opening only regular files: on Linux an ``O_PATH`` handle is checked with ``fstat`` and reopened
  through ``/proc/self/fd``; elsewhere the file is opened ``O_NONBLOCK | O_NOFOLLOW`` and checked after.
- Publishing without replacing: ``renameat2(RENAME_NOREPLACE)`` / ``renameatx_np(RENAME_EXCL)``;
  elsewhere a hard link plus an unlink.

The fallbacks are what macOS and the BSDs run, and what an in-memory filesystem (pyfakefs, used by the
pytest kit's ``fst_fake_workspace``) supports: it emulates descriptors, ``dir_fd`` calls and ``O_NOFOLLOW``
but not ``/proc`` or raw system calls made through ``ctypes``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from fs_tools.provider import files, publish


@contextlib.contextmanager
def portable_primitives() -> Iterator[None]:
    """Use the portable fallbacks inside this block (process-wide: meant for tests)."""
    saved = files._PROC_FD, publish._NATIVE
    files._PROC_FD, publish._NATIVE = False, None
    try:
        yield
    finally:
        files._PROC_FD, publish._NATIVE = saved
