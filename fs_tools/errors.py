"""The whole error vocabulary of fs-tools, readable top to bottom as a tree.

Every structured failure carries a stable ``code`` (public API: adding one is a minor change, renaming
one is breaking) and ``name`` (the name of the class that carries the code). A condition more specific
than its code (``IntoItself`` is an ``IoError``) is a subclass without a code of its own: it keeps its
parent's code and name, and the boundary finds its remedy by class, most specific first. Lower layers
state conditions; the model-facing boundary (``fs_tools.boundary``) appends the one correct recovery.

    HarnessError
    ├── ToolError                       (the tool runtime)
    │   ├── ToolArgsError               INVALID_ARGS
    │   ├── UnknownTool                 UNKNOWN_TOOL
    │   ├── InvalidToolOutput           INVALID_TOOL_OUTPUT
    │   ├── ToolTimeout                 TOOL_TIMEOUT
    │   ├── ToolAbortedBeforeDispatch   TOOL_ABORTED_BEFORE_DISPATCH
    │   ├── ToolAborted                 TOOL_ABORTED
    │   ├── InternalError               INTERNAL_ERROR
    │   ├── StoreUnavailable            STORE_UNAVAILABLE
    │   └── HistoryTrimmed              HISTORY_TRIMMED
    └── FsError                         (the provider and the gates)
        ├── NotFound                    FS_NOT_FOUND
        │   ├── MissingPath
        │   │   ├── NoFileToEdit
        │   │   │   └── SeenAbsent
        │   │   └── MissingParent
        │   └── OffsetPastEnd
        ├── NotDirectory                FS_NOT_DIRECTORY
        ├── NotRegularFile              FS_NOT_REGULAR_FILE
        │   └── DestinationNotFile
        ├── NotText                     FS_NOT_TEXT
        ├── TooLarge                    FS_TOO_LARGE
        │   ├── ContentTooLarge
        │   ├── ReadTooLarge
        │   ├── ImageTooLarge
        │   ├── PdfTooLarge
        │   └── NotebookTooLarge
        ├── PermissionDenied            FS_PERMISSION_DENIED
        ├── SandboxDenied               FS_SANDBOX_DENIED
        │   ├── OutsideRoots
        │   │   └── SymlinkOutside
        │   └── ReservedName
        ├── NoSpace                     FS_NO_SPACE
        ├── IoError                     FS_IO_ERROR
        │   ├── Raced
        │   ├── Unstable
        │   ├── SamePath
        │   ├── IntoItself
        │   └── ReaderFault
        ├── NotObserved                 FS_NOT_OBSERVED
        ├── StaleVersion                FS_STALE_VERSION
        ├── EditNotFound                FS_EDIT_NOT_FOUND
        ├── AmbiguousEdit               FS_AMBIGUOUS_EDIT
        ├── Busy                        FS_BUSY
        ├── Aborted                     FS_ABORTED
        ├── NotEmpty                    FS_NOT_EMPTY
        ├── AlreadyExists               FS_ALREADY_EXISTS
        │   └── NeverReplaced
        ├── OmissionPlaceholder         FS_OMISSION_PLACEHOLDER
        └── IntroducedSyntaxError       FS_SYNTAX_ERROR
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, ClassVar, Literal, Self

_EMPTY: Mapping[str, Any] = MappingProxyType({})
MAX_PATH_LABEL = 160


def path_label(path: str) -> str:
    """A path as messages name it: whole when short, its two ends when long (messages stay short)."""
    return path if len(path) <= MAX_PATH_LABEL else f"{path[:90]}…{path[-60:]}"


Renderer = Callable[["HarnessError", Mapping[str, Any], Mapping[str, str]], str]


@dataclass(frozen=True)
class Remedy:
    """How a model recovers from one kind of failure: in one sentence (the error reference shows it), and
    — where the error says more — ``render(error, details, offered)``, the message with its recovery
    appended (``offered``: the abilities on offer, each to how the model calls the tool that has it)."""

    summary: str
    render: Renderer | None = None


@dataclass(frozen=True)
class ErrorInfo:
    """The structured face of a failure: what a host or a model receives."""

    name: str
    code: str
    message: str


class HarnessError(Exception):
    """Root of every structured failure: a message and a stable code."""

    default_code: ClassVar[str] = "INTERNAL_ERROR"
    # A condition a tool states may carry its own remedy; the boundary's table has the shared ones.
    remedy: ClassVar[Remedy | None] = None

    def __init__(self, message: str, code: str | None = None, details: Mapping[str, Any] | None = None):
        super().__init__(message)
        self.message = message
        self.code = code or self.default_code
        self.details: Mapping[str, Any] = details if details is not None else _EMPTY

    @property
    def info(self) -> ErrorInfo:
        return ErrorInfo(name=coded_class(type(self)).__name__, code=self.code, message=self.message)

    def __str__(self) -> str:
        return self.message

    def restated(self, message: str) -> Self:
        """The same condition with the same facts, in other words (a remedy appended, another name for the
        path): no constructor runs again, so a condition's keyword facts are kept as they are."""
        again = type(self).__new__(type(self), message)
        again.__dict__.update(vars(self))
        again.message = message
        again.args = (message,)
        return again

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled with its facts as they are (a condition's constructor may take them as keywords)."""
        facts = {
            name: dict(value) if isinstance(value, MappingProxyType) else value for name, value in vars(self).items()
        }
        return (_rebuilt, (type(self), self.args, facts))


def _rebuilt(cls: type[HarnessError], args: tuple[Any, ...], facts: dict[str, Any]) -> HarnessError:
    error = cls.__new__(cls, *args)
    error.args = args
    error.__dict__.update(facts)
    return error


# --- the tool runtime ---------------------------------------------------------------------------


class ToolError(HarnessError):
    """A failure of the tool runtime rather than of the filesystem."""


class ToolArgsError(ToolError):
    """The arguments failed validation; ``violations`` lists each one, in declaration order."""

    default_code = "INVALID_ARGS"

    def __init__(self, violations: Sequence[str]):
        self.violations: list[str] = list(violations)
        super().__init__("invalid arguments: " + "; ".join(self.violations))


class UnknownTool(ToolError):
    """No tool has that name."""

    default_code = "UNKNOWN_TOOL"


class InvalidToolOutput(ToolError):
    """A tool body returned a value that fails its declared output schema (a bug guard)."""

    default_code = "INVALID_TOOL_OUTPUT"


class ToolTimeout(ToolError):
    """A tool with a time budget ran past it."""

    default_code = "TOOL_TIMEOUT"


class ToolAbortedBeforeDispatch(ToolError):
    """The call was cancelled before its body started; nothing was read or written."""

    default_code = "TOOL_ABORTED_BEFORE_DISPATCH"


class ToolAborted(ToolError):
    """The call was cancelled while running; nothing half-written remains."""

    default_code = "TOOL_ABORTED"


class InternalError(ToolError):
    """An unexpected exception in a tool body; the traceback goes to the host's log."""

    default_code = "INTERNAL_ERROR"


class StoreUnavailable(ToolError):
    """The session's observation store could not be read or written (locked, full disk, gone)."""

    default_code = "STORE_UNAVAILABLE"


# --- the provider and the gates -----------------------------------------------------------------


class HistoryTrimmed(ToolError):
    """History no longer reaches the mark (or keeps the bytes) a rewind needs: older entries were dropped
    to keep the history store within its budget."""

    default_code = "HISTORY_TRIMMED"


class FsError(HarnessError):
    """A filesystem condition, stated by the provider or by a gate."""

    default_code = "FS_IO_ERROR"


class NotFound(FsError):
    """The file or a parent directory does not exist, or an offset lies past the end of the file."""

    default_code = "FS_NOT_FOUND"


class MissingPath(NotFound):
    """Nothing is at the path (the session may have found it absent, or moved or deleted it)."""

    did_you_mean: tuple[str, ...] = ()  # the closest existing paths, where some were found

    def suggest(self, paths: Sequence[str]) -> None:
        """Name ``paths`` as the closest existing ones (in ``details`` too, for hosts)."""
        self.did_you_mean = tuple(paths)
        self.details = {**self.details, "did_you_mean": list(paths)}


class NoFileToEdit(MissingPath):
    """An edit of a file that does not exist (a new file is written, not edited)."""


class SeenAbsent(NoFileToEdit):
    """An edit of a file this session found absent, or moved or deleted itself."""


class MissingParent(MissingPath):
    """A directory on the path does not exist."""


class OffsetPastEnd(NotFound):
    """An ``offset`` past the last line of the file (or the last cell of a notebook)."""

    def __init__(self, message: str, *, offset: int, total_lines: int) -> None:
        super().__init__(message, details={"offset": offset, "total_lines": total_lines})
        self.offset = offset
        self.total_lines = total_lines


class NotDirectory(FsError):
    """A path component that must be a directory is not one."""

    default_code = "FS_NOT_DIRECTORY"


class NotRegularFile(FsError):
    """The target is a directory, FIFO, socket or device."""

    default_code = "FS_NOT_REGULAR_FILE"

    def __init__(self, message: str, *, kind: str | None = None, details: Mapping[str, Any] | None = None) -> None:
        facts = {**(details or {}), **({"kind": kind} if kind is not None else {})}
        super().__init__(message, details=facts)
        self.kind = facts.get("kind")  # what is there ("directory", "fifo", ...), where it is known


class DestinationNotFile(NotRegularFile):
    """A move's destination is an existing directory, FIFO, socket or device, which a move never replaces."""


class NotText(FsError):
    """The file is binary or not valid UTF-8."""

    default_code = "FS_NOT_TEXT"

    def __init__(
        self,
        message: str,
        *,
        appears: str | None = None,  # what it appears to be, in words ("a PNG image")
        family: str | None = None,  # what kind of thing that is ("image", "encoding"): the remedy follows it
        encoding: str | None = None,  # iconv's name of the encoding it appears to be in
        offset: int | None = None,  # where decoding failed
    ) -> None:
        facts = {"appears": appears, "family": family, "encoding": encoding, "offset": offset}
        super().__init__(message, details={name: value for name, value in facts.items() if value is not None})
        self.appears = appears
        self.family = family
        self.encoding = encoding
        self.offset = offset


class TooLarge(FsError):
    """The file or the content exceeds a configured size limit."""

    default_code = "FS_TOO_LARGE"


class ContentTooLarge(TooLarge):
    """New content (a write's, or what an edit or a patch makes) is over the host's limit for a file."""


class ReadTooLarge(TooLarge):
    """The file is over the largest size fs-tools reads at all."""


class ImageTooLarge(TooLarge):
    """An image is too large to decode within fs-tools' bounds."""


class PdfTooLarge(TooLarge):
    """A PDF could not be read within fs-tools' bounds."""


class NotebookTooLarge(TooLarge):
    """A notebook is too large to parse and change."""


class PermissionDenied(FsError):
    """The operating system refused access."""

    default_code = "FS_PERMISSION_DENIED"


class SandboxDenied(FsError):
    """The path leaves every root, or a read-only / protected-path rule refuses it."""

    default_code = "FS_SANDBOX_DENIED"


class OutsideRoots(SandboxDenied):
    """The path names a place outside every root (``..`` past the root, or an absolute path elsewhere)."""


class SymlinkOutside(OutsideRoots):
    """A symlink on the path leads outside every root."""


class ReservedName(SandboxDenied):
    """The path uses a name reserved for fs-tools' own temp files."""


class NoSpace(FsError):
    """The device is full, a quota is reached, or the file is too big for it; the original is intact."""

    default_code = "FS_NO_SPACE"


class IoError(FsError):
    """Any other operating-system failure."""

    default_code = "FS_IO_ERROR"


class Raced(IoError):
    """The path changed under the call while it was being resolved or created; a retry sees it settled."""


class Unstable(IoError):
    """The file kept changing while it was being read."""


class SamePath(IoError):
    """A move's source and destination are the same file."""


class IntoItself(IoError):
    """A directory cannot be moved into itself."""


class ReaderFault(IoError):
    """fs-tools' bounded reader of a file (an image, a PDF) failed: a fault in fs-tools, not in the call."""


class NotObserved(FsError):
    """A write over, or an edit of, an existing file this session has not read."""

    default_code = "FS_NOT_OBSERVED"


Found = Literal["modified", "deleted", "exists", "replaced", "moved"]


@dataclass(frozen=True)
class Writer:
    """The session whose recorded change made a stale file as it is now, and the tool it used."""

    session: str
    tool: str = ""


class StaleVersion(FsError):
    """The file changed, appeared or vanished since this session last observed it."""

    default_code = "FS_STALE_VERSION"
    # (the bytes observed, the bytes now), where both are known: for the facts a message states about the
    # change, found once the file's lock is released (never shown as they are, dropped once used)
    contents: tuple[bytes, bytes] | None = None
    # What is known of the change, each where it is known (in ``details`` too, for hosts):
    found: Found | None = None  # what was found instead of the version observed
    lines: tuple[int, int] | None = None  # the first and last changed line (last < first: lines removed)
    now_version: str | None = None  # the version there now
    now: tuple[tuple[int, str], ...] = ()  # the changed lines as they read now (the first few)
    whitespace_only: bool = False  # only whitespace changed: a formatter, an editor on save
    after_own_change: bool = False  # the version observed is the one this session's own last change made
    writer: Writer | None = None  # whose recorded change made the file as it is now

    def __init__(
        self,
        message: str,
        *,
        found: Found | None = None,
        lines: tuple[int, int] | None = None,
        now_version: str | None = None,
        details: Mapping[str, Any] | None = None,  # more, for hosts (a host's own subclass may add some)
    ) -> None:
        super().__init__(message, details=details)
        self.learn(found=found, lines=lines, now_version=now_version)

    def learn(
        self,
        *,
        found: Found | None = None,
        lines: tuple[int, int] | None = None,
        now_version: str | None = None,
        now: Sequence[tuple[int, str]] = (),
        whitespace_only: bool = False,
        after_own_change: bool = False,
        writer: Writer | None = None,
    ) -> None:
        """Add what became known of the change (the facts given; the others stay as they are)."""
        facts: dict[str, Any] = {}
        if found is not None:
            self.found = facts["found"] = found
        if lines is not None:
            self.lines = lines
            facts["lines"] = lines
        if now_version is not None:
            self.now_version = facts["now_version"] = now_version
        if now:
            self.now = tuple(now)
            facts["now"] = list(self.now)
        if whitespace_only:
            self.whitespace_only = facts["whitespace_only"] = True
        if after_own_change:
            self.after_own_change = True
            facts["since"] = "own_change"
        if writer is not None:
            self.writer = writer
            facts["writer"] = {"session": writer.session, "tool": writer.tool}
        if facts:
            self.details = {**self.details, **facts}

    def elsewhere(self, message: str, lines: tuple[int, int] | None = None) -> StaleVersion:
        """The same change, said of other lines (``lines``, or none named: where they are unknown)."""
        again = self.restated(message)
        again.lines, again.now = lines, ()
        kept = {name: value for name, value in self.details.items() if name not in ("lines", "now")}
        again.details = {**kept, **({"lines": lines} if lines is not None else {})}
        again.contents = None
        return again


class EditNotFound(FsError):
    """``old_string`` does not occur in the file."""

    default_code = "FS_EDIT_NOT_FOUND"
    # The near-miss diagnosis (fs_tools.matching.diagnosis): where the closest text is and how old_string
    # differs from it, the structured details SPEC §9 has the matching layer compute and the boundary word
    # (fs_tools.boundary.near_miss); in ``details`` too, for hosts.
    findings: Mapping[str, Any] = _EMPTY
    notebook: bool = False  # the file is a Jupyter notebook, whose cells a read showed, not this JSON

    def __init__(
        self,
        message: str,
        *,
        findings: Mapping[str, Any] | None = None,
        notebook: bool = False,
        details: Mapping[str, Any] | None = None,
    ) -> None:
        facts = {**(findings or {}), **(details or {}), **({"notebook": True} if notebook else {})}
        super().__init__(message, details=facts)
        self.findings = MappingProxyType(dict(findings)) if findings else _EMPTY
        self.notebook = notebook


class AmbiguousEdit(FsError):
    """``old_string`` occurs more than once and ``replace_all`` is false."""

    default_code = "FS_AMBIGUOUS_EDIT"

    def __init__(
        self,
        message: str,
        *,
        count: int | None = None,  # (None: as many as ``lines``)
        lines: Sequence[int] = (),
        context: Sequence[Sequence[tuple[int, str]]] = (),
        likely: int | None = None,
        read: tuple[int, int] | None = None,
        details: Mapping[str, Any] | None = None,
    ) -> None:
        count = len(lines) if count is None else count
        facts: dict[str, Any] = {"count": count, "lines": list(lines), "context": [list(c) for c in context]}
        if read is not None:
            facts["read"] = list(read)
        if likely is not None:
            facts["likely"] = likely
        super().__init__(message, details={**(details or {}), **facts})
        self.count = count  # how many times it occurs
        self.lines = tuple(lines)  # the lines of the first few matches
        self.context = tuple(tuple(c) for c in context)  # each shown match's lines around it, the likeliest first
        self.likely = likely  # the match in the lines this session last read, where one of several is
        self.read = read  # the lines this session last read (first, last), where it read a part


class Busy(FsError):
    """Another writer held the file's or its directory's lock for longer than the host's lock timeout."""

    default_code = "FS_BUSY"


class Aborted(FsError):
    """A provider operation was cancelled before it committed anything."""

    default_code = "FS_ABORTED"


class NotEmpty(FsError):
    """``delete`` of a directory that still has entries."""

    default_code = "FS_NOT_EMPTY"
    entries: int | None = None  # how many, where they were counted

    def __init__(self, message: str, *, entries: int | None = None, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(message, details={**(details or {}), **({"entries": entries} if entries is not None else {})})
        self.entries = entries


class AlreadyExists(FsError):
    """``move`` onto an existing file without ``overwrite``."""

    default_code = "FS_ALREADY_EXISTS"


class NeverReplaced(AlreadyExists):
    """An existing file that a directory or a symlink would replace: never, ``overwrite`` or not."""


class OmissionPlaceholder(FsError):
    """New text would replace existing code with a comment standing for code left out (``# ... rest of
    code unchanged``)."""

    default_code = "FS_OMISSION_PLACEHOLDER"


class IntroducedSyntaxError(FsError):
    """The change would introduce syntax errors, and the workspace refuses such changes
    (``Workspace(refuse_syntax_errors=True)``)."""

    default_code = "FS_SYNTAX_ERROR"


def _all_error_classes() -> list[type[HarnessError]]:
    found: list[type[HarnessError]] = []
    pending: list[type[HarnessError]] = [HarnessError]
    while pending:
        cls = pending.pop(0)
        found.append(cls)
        pending.extend(cls.__subclasses__())
    return found


def coded_class(cls: type[HarnessError]) -> type[HarnessError]:
    """The class that carries ``cls``'s code: itself, or the nearest ancestor that declares one."""
    return next(c for c in cls.__mro__ if "default_code" in vars(c))  # HarnessError declares one


def error_codes() -> dict[str, type[HarnessError]]:
    """Every stable code and the class that carries it (for references and tests)."""
    return {
        cls.default_code: cls
        for cls in _all_error_classes()
        if cls not in (HarnessError, ToolError, FsError) and "default_code" in vars(cls)
    }
