"""Translation of operating-system failures into the provider's vocabulary.

Messages are built from ``errno`` and the path the caller supplied, never from ``str(OSError)``, which
could carry a resolved path outside the roots.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator

from fs_tools.errors import (
    FsError,
    IoError,
    NoSpace,
    NotDirectory,
    NotFound,
    NotRegularFile,
    PermissionDenied,
)

_NO_SPACE = {errno.ENOSPC, errno.EFBIG, getattr(errno, "EDQUOT", errno.ENOSPC)}
_PERMISSION = {errno.EACCES, errno.EPERM, errno.EROFS}


def map_os_error(exc: OSError, display: str) -> FsError:
    """The FsError for an OSError met while working on ``display`` (the path as the caller gave it)."""
    code = exc.errno
    reason = os.strerror(code) if code is not None else "unknown error"
    details = {"errno": code}
    if code == errno.ENOENT:
        return NotFound(f"{display!r} does not exist", details=details)
    if code == errno.ENOTDIR:
        return NotDirectory(f"{display!r}: a component of the path is not a directory", details=details)
    if code == errno.EISDIR:
        return NotRegularFile(f"{display!r} is a directory, not a regular file", kind="directory")
    if code in _PERMISSION:
        return PermissionDenied(f"{display!r}: permission denied by the operating system ({reason})", details=details)
    if code in _NO_SPACE:
        return NoSpace(f"{display!r}: no space left to write ({reason}); the original file is intact", details=details)
    if code == errno.ELOOP:
        return IoError(f"{display!r}: too many levels of symbolic links", details=details)
    if code == errno.ENAMETOOLONG:
        return IoError(f"{display!r}: a file name or the path is too long", details=details)
    return IoError(f"{display!r}: {reason}", details=details)


@contextlib.contextmanager
def os_errors(display: str) -> Iterator[None]:
    """The one seam where the operating system's errors become the provider's: every public operation
    runs inside it, and the path the caller gave is attached on the way out."""
    try:
        yield
    except OSError as exc:
        raise map_os_error(exc, display) from exc
