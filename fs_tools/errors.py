"""The whole error vocabulary of fs-tools, readable top to bottom as a tree.

Every structured failure carries a stable ``code`` (public API: adding one is a minor change, renaming
one is breaking) and ``name`` (the class name). Lower layers state conditions; the model-facing boundary
(``fs_tools.boundary``) appends the one correct recovery and renders ``details`` into prose.

    HarnessError
    ├── ToolError                       (the tool runtime)
    │   ├── ToolArgsError               INVALID_ARGS
    │   ├── UnknownTool                 UNKNOWN_TOOL
    │   ├── InvalidToolOutput           INVALID_TOOL_OUTPUT
    │   ├── ToolTimeout                 TOOL_TIMEOUT
    │   ├── ToolAbortedBeforeDispatch   TOOL_ABORTED_BEFORE_DISPATCH
    │   ├── ToolAborted                 TOOL_ABORTED
    │   ├── InternalError               INTERNAL_ERROR
    │   └── StoreUnavailable            STORE_UNAVAILABLE
    └── FsError                         (the provider and the gates)
        ├── NotFound                    FS_NOT_FOUND
        ├── NotDirectory                FS_NOT_DIRECTORY
        ├── NotRegularFile              FS_NOT_REGULAR_FILE
        ├── NotText                     FS_NOT_TEXT
        ├── TooLarge                    FS_TOO_LARGE
        ├── PermissionDenied            FS_PERMISSION_DENIED
        ├── SandboxDenied               FS_SANDBOX_DENIED
        ├── NoSpace                     FS_NO_SPACE
        ├── IoError                     FS_IO_ERROR
        ├── NotObserved                 FS_NOT_OBSERVED
        ├── StaleVersion                FS_STALE_VERSION
        ├── EditNotFound                FS_EDIT_NOT_FOUND
        ├── AmbiguousEdit               FS_AMBIGUOUS_EDIT
        ├── Busy                        FS_BUSY
        └── Aborted                     FS_ABORTED
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, ClassVar

_EMPTY: Mapping[str, Any] = MappingProxyType({})
MAX_PATH_LABEL = 160


def path_label(path: str) -> str:
    """A path as messages name it: whole when short, its two ends when long (messages stay short)."""
    return path if len(path) <= MAX_PATH_LABEL else f"{path[:90]}…{path[-60:]}"


@dataclass(frozen=True)
class ErrorInfo:
    """The structured face of a failure: what a host or a model receives."""

    name: str
    code: str
    message: str


class HarnessError(Exception):
    """Root of every structured failure: a message and a stable code."""

    default_code: ClassVar[str] = "INTERNAL_ERROR"
    recovery: ClassVar[str] = (
        ""  # how a model recovers, in one sentence (documentation; the boundary words the message)
    )

    def __init__(self, message: str, code: str | None = None, details: Mapping[str, Any] | None = None):
        super().__init__(message)
        self.message = message
        self.code = code or self.default_code
        self.details: Mapping[str, Any] = details if details is not None else _EMPTY

    @property
    def info(self) -> ErrorInfo:
        return ErrorInfo(name=type(self).__name__, code=self.code, message=self.message)

    def __str__(self) -> str:
        return self.message


# --- the tool runtime ---------------------------------------------------------------------------


class ToolError(HarnessError):
    """A failure of the tool runtime rather than of the filesystem."""


class ToolArgsError(ToolError):
    """The arguments failed validation; ``violations`` lists each one, in declaration order."""

    default_code = "INVALID_ARGS"
    recovery = (
        "Fix every argument the message names (each violation is listed, with a did-you-mean for misspelt "
        "names) and call again."
    )

    def __init__(self, violations: Sequence[str]):
        self.violations: list[str] = list(violations)
        super().__init__("invalid arguments: " + "; ".join(self.violations))


class UnknownTool(ToolError):
    """No tool has that name."""

    default_code = "UNKNOWN_TOOL"
    recovery = "Call one of the tools the message lists (a close match is suggested)."


class InvalidToolOutput(ToolError):
    """A tool body returned a value that fails its declared output schema (a bug guard)."""

    default_code = "INVALID_TOOL_OUTPUT"
    recovery = "Nothing to fix in the call: report it to the host; it is a bug in fs-tools."


class ToolTimeout(ToolError):
    """A tool with a time budget ran past it."""

    default_code = "TOOL_TIMEOUT"
    recovery = (
        "Narrow the search (a smaller path, a glob) or make the pattern more specific; the matches found so "
        "far are included."
    )


class ToolAbortedBeforeDispatch(ToolError):
    """The call was cancelled before its body started; nothing was read or written."""

    default_code = "TOOL_ABORTED_BEFORE_DISPATCH"
    recovery = "Nothing happened; call again if the work is still wanted."


class ToolAborted(ToolError):
    """The call was cancelled while running; nothing half-written remains."""

    default_code = "TOOL_ABORTED"
    recovery = "Nothing was changed; call again if the work is still wanted."


class InternalError(ToolError):
    """An unexpected exception in a tool body; the traceback goes to the host's log."""

    default_code = "INTERNAL_ERROR"
    recovery = "The call did not complete and nothing was half-written; retry once, then report it to the host."


class StoreUnavailable(ToolError):
    """The session's observation store could not be read or written (locked, full disk, gone)."""

    default_code = "STORE_UNAVAILABLE"
    recovery = "Retry the call in a moment; if it keeps failing, tell the user."


# --- the provider and the gates -----------------------------------------------------------------


class FsError(HarnessError):
    """A filesystem condition, stated by the provider or by a gate."""

    default_code = "FS_IO_ERROR"


class NotFound(FsError):
    """The file or a parent directory does not exist, or an offset lies past the end of the file."""

    default_code = "FS_NOT_FOUND"
    recovery = (
        "Check the path with list or glob; to create a file, use write; for an offset, use one within the "
        "file's line count."
    )


class NotDirectory(FsError):
    """A path component that must be a directory is not one."""

    default_code = "FS_NOT_DIRECTORY"
    recovery = "Use the path of a directory (list shows what is where)."


class NotRegularFile(FsError):
    """The target is a directory, FIFO, socket or device."""

    default_code = "FS_NOT_REGULAR_FILE"
    recovery = "Read files only; use list to see a directory's entries."


class NotText(FsError):
    """The file is binary or not valid UTF-8."""

    default_code = "FS_NOT_TEXT"
    recovery = "fs-tools edits UTF-8 text only; leave the file alone or ask the user."


class TooLarge(FsError):
    """The file or the content exceeds a configured size limit."""

    default_code = "FS_TOO_LARGE"
    recovery = (
        "Edit and write work on files up to the host's limit; read still pages through larger files with "
        "offset and limit."
    )


class PermissionDenied(FsError):
    """The operating system refused access."""

    default_code = "FS_PERMISSION_DENIED"
    recovery = "The operating system refuses access; ask the user or choose another file."


class SandboxDenied(FsError):
    """The path leaves every root, or a read-only / protected-path rule refuses it."""

    default_code = "FS_SANDBOX_DENIED"
    recovery = (
        "Use a path inside the workspace, relative to its root; a read-only workspace or a protected path "
        "cannot be changed."
    )


class NoSpace(FsError):
    """The device is full, a quota is reached, or the file is too big for it; the original is intact."""

    default_code = "FS_NO_SPACE"
    recovery = "The original file is intact; free space or ask the user before retrying."


class IoError(FsError):
    """Any other operating-system failure."""

    default_code = "FS_IO_ERROR"
    recovery = "The message says what the operating system reported; retry once, then ask the user."


class NotObserved(FsError):
    """A write over, or an edit of, an existing file this session has not read."""

    default_code = "FS_NOT_OBSERVED"
    recovery = "Read the file in this session, then retry the write or edit."


class StaleVersion(FsError):
    """The file changed, appeared or vanished since this session last observed it."""

    default_code = "FS_STALE_VERSION"
    recovery = (
        "Read the file again (the message says which lines changed), then redo the change against what is there now."
    )


class EditNotFound(FsError):
    """``old_string`` does not occur in the file."""

    default_code = "FS_EDIT_NOT_FOUND"
    recovery = (
        "Read the file again and copy old_string exactly from it; the message shows the closest text and how "
        "it differs."
    )


class AmbiguousEdit(FsError):
    """``old_string`` occurs more than once and ``replace_all`` is false."""

    default_code = "FS_AMBIGUOUS_EDIT"
    recovery = (
        "Include more surrounding lines in old_string so it matches once, or set replace_all to replace "
        "every occurrence."
    )


class Busy(FsError):
    """Another writer held the file's or its directory's lock for longer than the host's lock timeout."""

    default_code = "FS_BUSY"
    recovery = "Nothing was changed; another program is writing there. Retry the call in a moment."


class Aborted(FsError):
    """A provider operation was cancelled before it committed anything."""

    default_code = "FS_ABORTED"
    recovery = "Nothing was committed; through a tool this surfaces as TOOL_ABORTED."


def _all_error_classes() -> list[type[HarnessError]]:
    found: list[type[HarnessError]] = []
    pending: list[type[HarnessError]] = [HarnessError]
    while pending:
        cls = pending.pop(0)
        found.append(cls)
        pending.extend(cls.__subclasses__())
    return found


def error_codes() -> dict[str, type[HarnessError]]:
    """Every stable code and the class that carries it (for references and tests)."""
    return {cls.default_code: cls for cls in _all_error_classes() if cls not in (HarnessError, ToolError, FsError)}

