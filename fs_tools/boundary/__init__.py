"""The model-facing error boundary.

Lower layers state conditions with structured ``details``; here they become prose a model can act on:
the diagnostics are rendered, the one correct recovery is appended, the code is kept, and the original
error is chained as ``__cause__``. Anything unexpected becomes ``INTERNAL_ERROR`` (traceback to the log).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from fs_tools import abilities
from fs_tools.boundary import near_miss
from fs_tools.errors import (
    Aborted,
    AlreadyExists,
    AmbiguousEdit,
    Busy,
    ContentTooLarge,
    DestinationNotFile,
    EditNotFound,
    HarnessError,
    HistoryTrimmed,
    ImageTooLarge,
    InternalError,
    IntoItself,
    IntroducedSyntaxError,
    InvalidToolOutput,
    IoError,
    MissingPath,
    NeverReplaced,
    NoFileToEdit,
    NoSpace,
    NotDirectory,
    NotebookTooLarge,
    NotEmpty,
    NotFound,
    NotObserved,
    NotRegularFile,
    NotText,
    OffsetPastEnd,
    OmissionPlaceholder,
    OutsideRoots,
    PdfTooLarge,
    PermissionDenied,
    Raced,
    ReaderFault,
    ReadTooLarge,
    Remedy,
    ReservedName,
    SamePath,
    SandboxDenied,
    StaleVersion,
    StoreUnavailable,
    ToolAborted,
    ToolAbortedBeforeDispatch,
    TooLarge,
    ToolArgsError,
    ToolTimeout,
    UnknownTool,
    Unstable,
)
from fs_tools.terms import speaking, term

log = logging.getLogger("fs_tools.boundary")

STALE_REMEDY = "re-read the file, then retry"
NOT_OBSERVED_REMEDY = "read the file, then retry"


def remediate(exc: HarnessError, offered: Mapping[str, str] | None = None) -> HarnessError:
    """The model-facing form of ``exc``: same class and code, rendered details and remedy appended,
    ``exc`` chained as the cause. Errors with nothing to add pass through unchanged. ``offered`` maps
    the abilities of the tools on offer (``fs_tools.abilities``) to how the model calls the tool that
    has each: a remedy suggests only what is on offer, and never names a tool itself."""
    if isinstance(exc, Aborted):
        aborted = ToolAborted(f"{exc.message}; nothing was changed")
        aborted.__cause__ = exc
        return aborted
    render = remedy_for(type(exc)).render
    if render is None:
        return exc
    shown = dict(offered or {})
    with speaking(exc.details.get("terms")):  # an error may name its arguments its own way (a patch's hunk)
        message = render(exc, exc.details, shown)
    if message == exc.message:
        return exc
    out = exc.restated(message)
    out.__cause__ = exc
    out.__traceback__ = None
    return out


def internal(exc: BaseException, tool: str) -> InternalError:
    log.error("unexpected exception in tool %r", tool, exc_info=exc)
    error = InternalError(
        f"internal error in tool {tool!r} ({type(exc).__name__}); the call did not complete and "
        "nothing was half-written. If it persists, report it to the host."
    )
    error.__cause__ = exc
    return error


def _stale(exc: HarnessError, details: Mapping[str, Any], offered: Mapping[str, str]) -> str:
    if not isinstance(exc, StaleVersion):  # pragma: no cover - the remedy of StaleVersion only
        return f"{exc.message} — {STALE_REMEDY}"
    cause = _stale_cause(exc)
    if exc.lines is not None:
        first, last = exc.lines
        if last < first:
            change = f"lines were removed before line {first}"
        else:
            change = f"line {first} changed" if first == last else f"lines {first}–{last} changed"
        head = f"{exc.message} ({change}{cause}; re-reading from {term('offset')} {max(1, first - 2)} is enough)"
        now = exc.now
        if not now:
            return f"{head} — {STALE_REMEDY}"
        # the lines as they are now, then the remedy, which ends the message as it ends every other one
        shown = near_miss.excerpt(now)
        if len(now) == 1:
            return f"{head}; line {first} now reads:\n{shown}\n — {STALE_REMEDY}"
        more = f" (the first {len(now)} of them)" if last - first + 1 > len(now) else ""
        return f"{head}; those lines now read{more}:\n{shown}\n — {STALE_REMEDY}"
    if exc.found == "deleted":
        return f"{exc.message} (it was deleted or moved) — {STALE_REMEDY}"
    said = f" ({cause.removeprefix(', ')})" if cause else ""
    return f"{exc.message}{said} — {STALE_REMEDY}"


def _stale_cause(exc: StaleVersion) -> str:
    """Why the file changed, where it is known: after the session's own last change of it, by which other
    session (its recorded change made the file as it is), and whether only whitespace changed (what a
    formatter or an editor on save does)."""
    own = ", after this session's own change of it" if exc.after_own_change else ""
    writer = exc.writer
    if writer is not None:
        tool = f" (its {writer.tool[:40]})" if writer.tool else ""
        by = f"by session {writer.session[:60]!r}{tool}"
        only = ", only whitespace" if exc.whitespace_only else ""
        return f"{own}{only}, {by}"
    if exc.whitespace_only:
        return f"{own}, only whitespace: a formatter or an editor on save"
    if own:
        return f"{own}: by another writer"
    return ""


def _not_observed(exc: HarnessError, details: Mapping[str, Any], offered: Mapping[str, str]) -> str:
    how = offered.get(abilities.OBSERVE)
    if how is not None and not NOT_OBSERVED_REMEDY.startswith(f"{how} "):  # the remedy's verb does not name it
        return f"{exc.message} — read the file ({how}), then retry"
    return f"{exc.message} — {NOT_OBSERVED_REMEDY}"


def _nothing_applied(details: Mapping[str, Any]) -> str:
    pointer = str(details.get("pointer", ""))
    return " (no edit was applied; the file is unchanged)" if pointer.startswith(f"/{term('edits')}/") else ""


def _ambiguous(exc: HarnessError, details: Mapping[str, Any], offered: Mapping[str, str]) -> str:
    if not isinstance(exc, AmbiguousEdit):  # pragma: no cover - the remedy of AmbiguousEdit only
        return exc.message
    where = ", at lines " + ", ".join(str(n) for n in exc.lines) if exc.lines else ""  # (a host's may name none)
    if exc.lines and exc.count > len(exc.lines):
        where += f" and {exc.count - len(exc.lines)} more"
    shown = near_miss.ambiguity_excerpt(exc.context)
    meant = (
        f"; the one at line {exc.likely} is in the lines this session last read ({exc.read[0]}–{exc.read[1]})"
        if exc.likely is not None and exc.read is not None
        else ""
    )
    return (
        f"{exc.message}{where}{meant}{_nothing_applied(details)}{shown or ' '}— add a neighbouring "
        f"line that differs to {term('old_string')} so it matches once{_replace_all()}"
    )


def _replace_all() -> str:
    """The way out of an ambiguous match that replaces them all, where the call has one."""
    name = term("replace_all")
    return f", or set {name} to true to replace every occurrence" if name else ""


def _not_found_edit(exc: HarnessError, details: Mapping[str, Any], offered: Mapping[str, str]) -> str:
    if not isinstance(exc, EditNotFound):  # pragma: no cover - the remedy of EditNotFound only
        return exc.message
    message = near_miss.not_found_message(exc.message + _nothing_applied(details), exc.findings)
    cells = offered.get(abilities.CHANGE_CELLS)
    if exc.notebook and cells is not None:
        message += (
            f"\nThe file is a Jupyter notebook: its JSON holds each line of a cell as a quoted string, so text copied "
            f"from the view of its cells is not in it — change a cell with {cells}"
        )
    return message


def _destination_not_file(exc: HarnessError, details: Mapping[str, Any], offered: Mapping[str, str]) -> str:
    return f"{exc.message} — give the full new path as {term('destination')} (e.g. 'dir/name'), or choose another"


def _not_regular(exc: HarnessError, details: Mapping[str, Any], offered: Mapping[str, str]) -> str:
    entries = offered.get(abilities.SEE_ENTRIES)
    if isinstance(exc, NotRegularFile) and exc.kind == "directory" and entries is not None:
        return f"{exc.message} — use {entries} to see its entries"
    return exc.message


def _not_found(exc: HarnessError, details: Mapping[str, Any], offered: Mapping[str, str]) -> str:
    return _did_you_mean(exc, details) or exc.message


def _no_file_to_edit(exc: HarnessError, details: Mapping[str, Any], offered: Mapping[str, str]) -> str:
    create = offered.get(abilities.CREATE)
    if create is None:
        return _not_found(exc, details, offered)
    suggested = _did_you_mean(exc, details)
    if suggested:
        return f"{suggested} (to create a new file, use {create})"
    return f"{exc.message} — to create it, use {create}"


def _did_you_mean(exc: HarnessError, details: Mapping[str, Any]) -> str | None:
    """The message with the closest existing paths the workspace found (``did_you_mean``), if any."""
    suggested = list(exc.did_you_mean) if isinstance(exc, MissingPath) else []
    if not suggested:
        return None
    listed = f"{suggested[0]!r}" if len(suggested) == 1 else "one of " + ", ".join(repr(p) for p in suggested)
    return f"{exc.message} — did you mean {listed}?"


def _offset_past_end(exc: HarnessError, details: Mapping[str, Any], offered: Mapping[str, str]) -> str:
    total = exc.total_lines if isinstance(exc, OffsetPastEnd) else 0
    if total == 0:
        return f"{exc.message} — the file is empty; read it without {term('offset')}"
    return f"{exc.message} — give {term('offset')} a value between 1 and {total}"


_NOT_TEXT_STEP = {
    "image": "fs-tools shows PNG, JPEG, GIF and WebP images only; ask the user what it shows, or leave it alone",
    "broken-image": "it may be cut short or still being written: leave it alone, or ask the user for a good copy",
    "broken-pdf": "it may be cut short or use features fs-tools cannot read: ask the user for a text version",
    "encrypted-pdf": "ask the user for an unencrypted copy or a text version",
    "document": "read shows its text page by page, but it cannot be edited or written as text",
    "not-notebook": "read shows it as text: fix it there with an edit, or ask the user",
    "broken-text": "it may be cut short or still being written: read it again later, or ask the user for a good copy",
    "binary-text": "it is not text in that encoding: leave it alone, or ask the user what it is",
    "archive": "it is not text to read or edit: leave it alone, or ask the user what is in it",
    "binary": "it is a program or a database, not text: leave it alone",
    "media": "it is audio or video, not text: leave it alone",
    "utf16": (
        "fs-tools reads and edits UTF-8, and UTF-16 and UTF-32 that begin with a BOM; this one has none: ask the "
        "user to convert it to UTF-8"
    ),
    "encoding": "fs-tools reads and edits UTF-8 (and UTF-16 or UTF-32 with a BOM): ask the user to convert it to UTF-8",
}


def _not_text(exc: HarnessError, details: Mapping[str, Any], offered: Mapping[str, str]) -> str:
    if not isinstance(exc, NotText):  # pragma: no cover - the remedy of NotText and its kin only
        return exc.message
    appears, family = exc.appears, exc.family
    if family in ("not-notebook", "broken-text", "binary-text"):
        return f"{exc.message} — {_NOT_TEXT_STEP[str(family)]}"
    if family == "encoding" and exc.encoding:
        step = f"{_NOT_TEXT_STEP['encoding']} (for example: iconv -f {exc.encoding} -t UTF-8)"
        return f"{exc.message}; it appears to be {appears} — {step}"
    if not appears:
        return f"{exc.message} — it is not UTF-8 text: leave it alone, or ask the user what it is"
    return f"{exc.message}; it appears to be {appears} — {_NOT_TEXT_STEP.get(str(family), 'leave it alone')}"


def _content_too_large(exc: HarnessError, details: Mapping[str, Any], offered: Mapping[str, str]) -> str:
    if details.get("pointer"):
        return f"{exc.message} — the host limits files to that size; make the edit smaller, or split the file"
    return f"{exc.message} — the host limits files to that size; write less content per file"


def _image_too_large(exc: HarnessError, details: Mapping[str, Any], offered: Mapping[str, str]) -> str:
    return f"{exc.message} — ask the user for a smaller copy, or for what it shows"


def _notebook_too_large(exc: HarnessError, details: Mapping[str, Any], offered: Mapping[str, str]) -> str:
    return (
        f"{exc.message} — a notebook that large cannot be changed here; ask the user to clear its outputs "
        "(jupyter nbconvert --clear-output --inplace) or to make the change"
    )


def _pdf_too_large(exc: HarnessError, details: Mapping[str, Any], offered: Mapping[str, str]) -> str:
    return f"{exc.message} — read fewer pages at a time with pages, or ask the user for a text version"


def _read_too_large(exc: HarnessError, details: Mapping[str, Any], offered: Mapping[str, str]) -> str:
    search = offered.get(abilities.SEARCH)
    if search is not None:
        return f"{exc.message} for reading — use {search} to find what you need in it, or ask the user"
    return f"{exc.message} for reading — ask the user for the part you need"


def _too_large(exc: HarnessError, details: Mapping[str, Any], offered: Mapping[str, str]) -> str:
    return (
        f"{exc.message} — edit and write work on files up to the limit; read still pages through "
        f"larger files with {term('offset')} and {term('limit')}"
    )


def _outside(exc: HarnessError, details: Mapping[str, Any], offered: Mapping[str, str]) -> str:
    return f'{exc.message} — use a path inside the workspace, relative to its root (like "src/app.py")'


def _reserved(exc: HarnessError, details: Mapping[str, Any], offered: Mapping[str, str]) -> str:
    return f"{exc.message} — use another file name"


def _raced(exc: HarnessError, details: Mapping[str, Any], offered: Mapping[str, str]) -> str:
    return f"{exc.message} — retry the call"


def _unstable(exc: HarnessError, details: Mapping[str, Any], offered: Mapping[str, str]) -> str:
    return f"{exc.message} — something keeps writing to it; wait until it settles, then read it again"


def _same_path(exc: HarnessError, details: Mapping[str, Any], offered: Mapping[str, str]) -> str:
    return f"{exc.message} — nothing to move; give a {term('destination')} that is another path"


def _into_itself(exc: HarnessError, details: Mapping[str, Any], offered: Mapping[str, str]) -> str:
    return f"{exc.message} — choose a destination outside it"


def _reader_fault(exc: HarnessError, details: Mapping[str, Any], offered: Mapping[str, str]) -> str:
    return f"{exc.message} — a fault in fs-tools, not in the call: retry once, then report it to the host"


def _never_replaced(exc: HarnessError, details: Mapping[str, Any], offered: Mapping[str, str]) -> str:
    return f"{exc.message} — choose another {term('destination')}"


def _already_exists(exc: HarnessError, details: Mapping[str, Any], offered: Mapping[str, str]) -> str:
    return (
        f"{exc.message} — to replace it, pass {term('overwrite')}=true (you have read it); or choose another "
        f"{term('destination')}"
    )


def _not_empty(exc: HarnessError, details: Mapping[str, Any], offered: Mapping[str, str]) -> str:
    entries = offered.get(abilities.SEE_ENTRIES)
    if entries is not None:
        return f"{exc.message} — delete its entries first ({entries} shows them)"
    return f"{exc.message} — delete its entries first"


def _syntax(exc: HarnessError, details: Mapping[str, Any], offered: Mapping[str, str]) -> str:
    return f"{exc.message} — fix that in the new text and send the change again"


def _placeholder(exc: HarnessError, details: Mapping[str, Any], offered: Mapping[str, str]) -> str:
    if str(details.get("pointer", "")) == term("new_source"):
        return f"{exc.message} — write out the code it stands for: new_source is the cell's whole new source"
    change = offered.get(abilities.CHANGE_LINES)
    if str(details.get("pointer", "")) == term("content") and change is not None:
        return (
            f"{exc.message} — write out the code it stands for, or change only the lines you mean with "
            f"{change} (its {term('old_string')} covering just them)"
        )
    return (
        f"{exc.message} — write out the code it stands for, or make {term('old_string')} cover only the lines you "
        "change"
    )


def _busy(exc: HarnessError, details: Mapping[str, Any], offered: Mapping[str, str]) -> str:
    return f"{exc.message} — another program is writing there; retry the call in a moment"


# The remedies of the shared conditions. A condition a tool states may carry its own (``remedy`` on its
# class); an error class without either takes its nearest ancestor's.
REMEDIES: dict[type[HarnessError], Remedy] = {
    HarnessError: Remedy("The message says what went wrong; retry once, then ask the user."),
    ToolArgsError: Remedy(
        "Fix every argument the message names (each violation is listed, with a did-you-mean for "
        "misspelt names) and call again.",
    ),
    UnknownTool: Remedy("Call one of the tools the message lists (a close match is suggested)."),
    InvalidToolOutput: Remedy(
        "Nothing to fix in the call: report it to the host; it is a bug in fs-tools.",
    ),
    ToolTimeout: Remedy(
        "Narrow the search (a smaller path, a glob) or make the pattern more specific; the matches found "
        "so far are included.",
    ),
    ToolAbortedBeforeDispatch: Remedy("Nothing happened; call again if the work is still wanted."),
    ToolAborted: Remedy("Nothing was changed; call again if the work is still wanted."),
    InternalError: Remedy(
        "The call did not complete and nothing was half-written; retry once, then report it to the host.",
    ),
    StoreUnavailable: Remedy("Retry the call in a moment; if it keeps failing, tell the user."),
    HistoryTrimmed: Remedy(
        "Nothing was changed: rewind to a later mark (history lists the ones kept), or tell the user."
    ),
    NotFound: Remedy(
        "Check the path with list or glob; to create a file, use write; for an offset, use one within "
        "the file's line count.",
        _not_found,
    ),
    NoFileToEdit: Remedy("Check the path with list or glob; to create the file, use write.", _no_file_to_edit),
    OffsetPastEnd: Remedy("Give an offset within the file's line count (the message says it).", _offset_past_end),
    NotDirectory: Remedy("Use the path of a directory (list shows what is where)."),
    NotRegularFile: Remedy("Read files only; use list to see a directory's entries.", _not_regular),
    DestinationNotFile: Remedy(
        "Give the full new path as destination (a directory is never replaced), or choose another.",
        _destination_not_file,
    ),
    NotText: Remedy(
        "fs-tools reads and edits UTF-8 text, shows PNG, JPEG, GIF and WebP images and reads PDFs' text; the "
        "message says what else the file appears to be — leave it alone or ask the user.",
        _not_text,
    ),
    TooLarge: Remedy(
        "Edit and write work on files up to the host's limit; read still pages through larger files with "
        "offset and limit.",
        _too_large,
    ),
    ContentTooLarge: Remedy(
        "Make the change smaller, or split the file: the host limits a file's size.", _content_too_large
    ),
    ReadTooLarge: Remedy("Search the file with grep for what you need, or ask the user.", _read_too_large),
    ImageTooLarge: Remedy("Ask the user for a smaller copy of the image, or for what it shows.", _image_too_large),
    PdfTooLarge: Remedy("Read fewer pages at a time, or ask the user for a text version.", _pdf_too_large),
    NotebookTooLarge: Remedy(
        "Ask the user to clear the notebook's outputs, or to make the change.", _notebook_too_large
    ),
    PermissionDenied: Remedy(
        "The operating system refuses access; ask the user or choose another file.",
    ),
    SandboxDenied: Remedy(
        "Use a path inside the workspace, relative to its root; a read-only workspace or a protected "
        "path cannot be changed.",
    ),
    OutsideRoots: Remedy("Use a path inside the workspace, relative to its root.", _outside),
    ReservedName: Remedy("Use another file name: fs-tools keeps names like it for its temp files.", _reserved),
    NoSpace: Remedy("The original file is intact; free space or ask the user before retrying."),
    IoError: Remedy(
        "The message says what the operating system reported; retry once, then ask the user.",
    ),
    Raced: Remedy("Retry the call: the path changed while it ran.", _raced),
    Unstable: Remedy("Something keeps writing to the file; wait until it settles, then read it again.", _unstable),
    SamePath: Remedy("Nothing to move: give a destination that is another path.", _same_path),
    IntoItself: Remedy("Choose a destination outside the directory being moved.", _into_itself),
    ReaderFault: Remedy("A fault in fs-tools, not in the call: retry once, then report it to the host.", _reader_fault),
    NotObserved: Remedy("Read the file in this session, then retry the write or edit.", _not_observed),
    StaleVersion: Remedy(
        "Read the file again (the message says which lines changed), then redo the change against what is there now.",
        _stale,
    ),
    EditNotFound: Remedy(
        "Read the file again and copy old_string exactly from it; the message shows the closest text and "
        "how it differs.",
        _not_found_edit,
    ),
    AmbiguousEdit: Remedy(
        "Include more surrounding lines in old_string so it matches once, or set replace_all to replace "
        "every occurrence.",
        _ambiguous,
    ),
    Busy: Remedy("Nothing was changed; another program is writing there. Retry the call in a moment.", _busy),
    Aborted: Remedy("Nothing was committed; through a tool this surfaces as TOOL_ABORTED."),
    NotEmpty: Remedy("Delete the directory's entries first (list shows them), then the directory.", _not_empty),
    IntroducedSyntaxError: Remedy(
        "Fix the syntax the message names (line and what the parser found) and send the change again; "
        "nothing was written.",
        _syntax,
    ),
    OmissionPlaceholder: Remedy(
        "Write out the code the placeholder stands for; to change part of a file, edit only the lines you "
        "change (an old_string covering just them).",
        _placeholder,
    ),
    AlreadyExists: Remedy(
        "Pass overwrite=true to replace a file you have read, or choose another destination.", _already_exists
    ),
    NeverReplaced: Remedy(
        "Choose another destination: a directory or a symlink never replaces a file.", _never_replaced
    ),
}


def remedy_for(cls: type[HarnessError]) -> Remedy:
    """The remedy of ``cls`` — its own (``cls.remedy``), or its entry here — or its nearest ancestor's."""
    for ancestor in cls.__mro__:
        own = vars(ancestor).get("remedy")
        found = own if isinstance(own, Remedy) else REMEDIES.get(ancestor)
        if found is not None:
            return found
    raise AssertionError("HarnessError has a remedy")  # pragma: no cover
