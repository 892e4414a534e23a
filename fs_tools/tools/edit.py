"""The ``edit`` and ``multi_edit`` tools: literal replacements in a file this session has read."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field

from fs_tools import abilities, line_diff
from fs_tools.arguments import Deferred, FilePath, Text, ToolArgs, ToolOutputModel, Violation
from fs_tools.checks import syntax
from fs_tools.checks.placeholders import refuse_placeholders
from fs_tools.errors import (
    AmbiguousEdit,
    ContentTooLarge,
    EditNotFound,
    StaleVersion,
    TooLarge,
    ToolArgsError,
    path_label,
)
from fs_tools.gating import Committed, commit_gated
from fs_tools.matching.diagnosis import Miss
from fs_tools.matching.replace import Replacement, line_start, replace, told_apart
from fs_tools.provider import (
    ENCODING_NAMES,
    NOTEBOOK_HEAD,
    Snapshot,
    TextFile,
    as_text,
    as_utf8,
    count_lines,
    decode_text,
    may_be_notebook,
)
from fs_tools.rendering.lines import snippet_at
from fs_tools.rendering.quoting import quoted, short, text_of
from fs_tools.terms import pointer_term, term
from fs_tools.tools.base import Example, Tool, ToolContext, ToolOutput
from policy import Intent, Present

_PATH_DOC = "Path of the file: relative to the workspace root, or absolute inside a root."
_OLD_DOC = (
    "The exact text to replace, as it appears in the file (without read's line-number prefixes). "
    "Must occur exactly once unless replace_all is true."
)
_NEW_DOC = "The replacement text, inserted literally (no regex or $ expansion)."
_ALL_DOC = "Replace every occurrence instead of requiring a unique one. Default false."
_DRY_DOC = "Check the edit and return the unified diff it would make, changing nothing. Default false."
MAX_EDITS = 100  # per multi_edit call


def _differs(data: Mapping[str, Any]) -> list[Violation]:
    old, new = data.get("old_string"), data.get("new_string")
    if not (isinstance(old, str) and old and isinstance(new, str)):
        return []
    if old == new:  # alone, the edit answers it with where that text is (_unchanged)
        return [(("new_string",), Deferred("must differ from old_string"))]
    if old.replace("\r\n", "\n") == new.replace("\r\n", "\n"):
        return [(("new_string",), "must differ from old_string in more than line endings (edits keep the file's own)")]
    return []


class EditArgs(ToolArgs):
    file_path: FilePath = Field(description=_PATH_DOC)
    old_string: Text = Field(min_length=1, description=_OLD_DOC)
    new_string: Text = Field(description=_NEW_DOC)
    replace_all: bool = Field(False, description=_ALL_DOC)
    dry_run: bool = Field(False, description=_DRY_DOC)

    @classmethod
    def cross_field_violations(cls, data: Mapping[str, Any]) -> list[Violation]:
        return _differs(data)


class EditSpec(ToolArgs):
    old_string: Text = Field(min_length=1, description=_OLD_DOC)
    new_string: Text = Field(description=_NEW_DOC)
    replace_all: bool = Field(False, description=_ALL_DOC)

    @classmethod
    def cross_field_violations(cls, data: Mapping[str, Any]) -> list[Violation]:
        return _differs(data)


class MultiEditArgs(ToolArgs):
    file_path: FilePath = Field(description=_PATH_DOC)
    edits: list[EditSpec] = Field(
        min_length=1,
        description=f"Edits applied in order, each to the result of the previous; all or nothing. At most {MAX_EDITS}.",
        json_schema_extra={"maxItems": MAX_EDITS},
    )
    dry_run: bool = Field(False, description=_DRY_DOC)

    @classmethod
    def cross_field_violations(cls, data: Mapping[str, Any]) -> list[Violation]:
        edits = data.get("edits")
        if isinstance(edits, list) and len(edits) > MAX_EDITS:
            # Each edit searches the whole file under its lock: the bound keeps one call's hold short.
            return [
                (
                    ("edits",),
                    f"expected at most {MAX_EDITS} item(s), got {len(edits)}; split them over several multi_edit "
                    "calls (each call's result counts as read)",
                )
            ]
        return []


class SyntaxErrorValue(ToolOutputModel):
    line: int
    end_line: int
    message: str


class EditOutput(ToolOutputModel):
    path: str
    edits: int
    replacements: int
    first_line: int
    version: str
    syntax_errors: list[SyntaxErrorValue] = Field(default_factory=list)  # those this change introduced
    # stale="region": the lines that changed since the session's read, as [first, last], numbered as now
    changed_lines: list[list[int]] = Field(default_factory=list)
    dry_run: bool = False
    diff: str | None = None  # with dry_run: the unified diff the edit would make (patch -p1 applies it)


class _DryRun(Exception):
    """Raised by the edit's produce once the new bytes exist: the commit stops, nothing is written."""

    def __init__(self, before: Snapshot, after: bytes) -> None:
        super().__init__("dry run")
        self.before = before
        self.after = after


@dataclass
class _RegionCheck:
    """A region edit (``stale="region"``): each edit is applied to the text the session read as well,
    and must not touch a line that changed since; ``changed`` is what did, numbered as the file is now."""

    observed: bytes
    stale: StaleVersion
    changed: list[list[int]] = field(default_factory=list)
    check: Callable[[], None] | None = None  # raises once the call is cancelled: the diff runs under the lock
    # What differs between the read text and the file, as the file is numbered now: diffed once, at the first
    # edit, then moved past each edit (which lies in lines alike in both, so both texts change alike there)
    spans: list[tuple[int, int]] | None = None


@dataclass
class _Outcome:
    """What ``produce`` found under the lock: where each edit landed and the excerpt of the result to
    show, or the edit whose old_string was not found (diagnosed once the lock is released)."""

    applied: list[Replacement] = field(default_factory=list)
    excerpt: str = ""
    miss: Miss | None = None
    texts: tuple[bytes, bytes] | None = None  # the file before and after, for the syntax check
    region: _RegionCheck | None = None  # a region edit: the text the session read, and what changed
    ambiguous: tuple[str, str, AmbiguousEdit] | None = None  # (the text, old_string, the error): told apart after

    @property
    def first(self) -> int:
        return min(r.first_line for r in self.applied)

    @property
    def last(self) -> int:
        return self.applied[0].last_line if len(self.applied) == 1 else self.first


def _apply(
    snapshot: Snapshot,
    edits: Sequence[EditSpec | EditArgs],
    display: str,
    pointers: Sequence[str],
    limit: int,
    outcome: _Outcome,
) -> bytes:
    decoded = decode_text(snapshot.data, display)
    text, size, form = decoded.text, len(snapshot.data), TextFile("", decoded.bom, decoded.newline, decoded.encoding)
    del decoded  # only the current text is ever held: each edit's input goes when its result exists
    exact = limit
    if form.encoding != "utf-8":
        # The matcher counts UTF-8 bytes: for a UTF-16 or UTF-32 file it is given the text's UTF-8 size and
        # a limit no fitting edit can pass in UTF-8 (a character is at most 1.5 times as long in UTF-8 as in
        # UTF-16, never longer than in UTF-32), which still bounds what is built; the encoded result is
        # measured against the real limit at the end.
        size = len(text.encode("utf-8", "surrogatepass"))
        limit = limit * 3 // 2 if form.encoding.startswith("utf-16") else limit
    region = outcome.region
    seen = decode_text(region.observed, display).text if region is not None else ""
    for spec, pointer in zip(edits, pointers, strict=True):
        if spec.old_string == spec.new_string:
            _unchanged(text, spec.old_string, pointer)
        if region is not None:
            seen = _region_step(region, seen, text, spec, pointer, display, size, limit)
        try:
            text, done = replace(
                text,
                form.newline,
                spec.old_string,
                spec.new_string,
                replace_all=spec.replace_all,
                pointer=pointer,
                display=display,
                size=size,
                limit=limit,
            )
        except EditNotFound as exc:
            outcome.miss = Miss(text, spec.old_string, spec.new_string, exc)
            raise
        except AmbiguousEdit as exc:
            outcome.ambiguous = (text, spec.old_string, exc)
            raise
        outcome.applied.append(done)
        size = done.size
    if region is not None:
        spans = region.spans if region.spans is not None else _changed_spans(seen, text, region.check)
        region.changed = [list(span) for span in spans]
    outcome.excerpt = _excerpt(text, outcome.applied, outcome.first, outcome.last)  # a few lines: cheap
    data = form.encode(text)
    if len(data) > exact:
        edit = "the edit" if len(pointers) == 1 else "the edits"
        raise ContentTooLarge(
            f"{edit} would make {display!r} {len(data):,} bytes (in {ENCODING_NAMES[form.encoding]}), over the "
            f"{exact:,}-byte limit; nothing was written",
            details={"size": len(data), "limit": exact, "subject": "content", "pointer": pointers[-1] or "/"},
        )
    return data


def _unchanged(text: str, old: str, pointer: str) -> None:
    """new_string equal to old_string: ``INVALID_ARGS``, saying where the text already is (a model that
    meant to make sure of it learns it is there; one that forgot its change learns what to change). When
    the text is not in the file, the edit goes on to fail as not found, with its diagnosis."""
    now, needle = text.replace("\r\n", "\n"), old.replace("\r\n", "\n")
    at = now.find(needle)
    if at < 0:
        return
    first = now.count("\n", 0, at) + 1
    last = first + needle.rstrip("\n").count("\n")
    elsewhere = " (and elsewhere)" if now.find(needle, at + 1) >= 0 else ""
    shown = snippet_at(now, at, first, last, context=0, max_lines=_UNCHANGED_LINES)
    name, other = pointer_term(pointer, "new_string"), term("old_string")
    raise ToolArgsError(
        [
            f"{'' if name.startswith('/') else '/'}{name}: must differ from {other} — it is the same text, so the "
            f"edit would change nothing. That text is already in the file at line {first}{elsewhere}: if it is as "
            f"it should be, nothing is left to do; otherwise put the text you want there in {name}:\n{shown}"
        ]
    )


_UNCHANGED_LINES = 12


def _region_step(
    region: _RegionCheck,
    seen: str,
    text: str,
    spec: EditSpec | EditArgs,
    pointer: str,
    display: str,
    size: int,
    limit: int,
) -> str:
    """Check one edit of a region edit against the text the session read (``seen``) and the file now
    (``text``): it must match once in each, on lines that did not change; the read text with the edit
    made, for the next one."""
    label = pointer_term(pointer, "old_string")
    if spec.replace_all:
        raise region.stale  # every match would have to be checked: a region edit replaces one
    try:
        after, _ = replace(
            seen,
            "\n",
            spec.old_string,
            spec.new_string,
            replace_all=False,
            pointer=pointer,
            display=display,
            size=size,
            limit=limit,
        )
    except (EditNotFound, AmbiguousEdit, TooLarge):
        raise region.stale from None  # it was not the text the session read
    now, needle = text.replace("\r\n", "\n"), spec.old_string.replace("\r\n", "\n")
    at = now.find(needle)
    if at < 0:  # in the text the session read, not in the file now: those very lines changed
        raise region.stale.elsewhere(
            f"{display!r} has changed since this session last read it, in the lines {label} covers", region.stale.lines
        ) from region.stale
    first = now.count("\n", 0, at) + 1
    last = first + needle.count("\n")
    if region.spans is None:
        region.spans = _changed_spans(seen, now, region.check)
    for start, end in region.spans:
        if start <= last and end >= first:
            raise region.stale.elsewhere(
                f"{display!r} has changed since this session last read it, in the lines {label} covers "
                f"({'line ' + str(start) if start == end else f'lines {start}–{end}'})",
                (start, end),
            ) from region.stale
    grew = spec.new_string.replace("\r\n", "\n").count("\n") - needle.count("\n")
    region.spans = [(start + grew, end + grew) if start > last else (start, end) for start, end in region.spans]
    return after


def _changed_spans(before: str, after: str, check: Callable[[], None] | None = None) -> list[tuple[int, int]]:
    """The lines of ``after`` that differ from ``before``, as (first, last) pairs, 1-based; a removal is
    the line just after it. This runs under the file's lock, so its work is bounded near linear
    (``line_diff``): past its budget a stretch of changes is one span, which can only report more lines
    as changed (a region edit refused), never fewer."""
    a = before.replace("\r\n", "\n").split("\n")
    b = after.replace("\r\n", "\n").split("\n")
    spans: list[tuple[int, int]] = []
    for tag, _, _, j1, j2 in line_diff.opcodes(a, b, check=check):
        if tag == "equal":
            continue
        at = min(j1 + 1, max(1, len(b)))
        spans.append((at, max(at, j2)))
    return spans


def _run(
    ctx: ToolContext,
    path: str,
    edits: Sequence[EditSpec | EditArgs],
    pointers: Sequence[str],
    *,
    dry_run: bool = False,
) -> ToolOutput:
    display = path_label(path)
    outcome = _Outcome()
    if ctx.options.check_placeholders:
        for spec, pointer in zip(edits, pointers, strict=True):
            refuse_placeholders(spec.new_string, spec.old_string, pointer_term(pointer, "new_string"))

    checked = ctx.options.check_syntax and syntax.language_of(path) is not None

    def produce(snapshot: Snapshot) -> bytes:
        data = _apply(snapshot, edits, display, pointers, ctx.provider.max_file_bytes, outcome)
        if checked and ctx.options.refuse_syntax_errors and not dry_run:
            checked_texts = (as_utf8(snapshot.data), as_utf8(data))  # the parser reads UTF-8
            syntax.refuse(syntax.check(path, *checked_texts), "the edit" if len(edits) == 1 else "the edits")
        elif checked:
            outcome.texts = (as_utf8(snapshot.data), as_utf8(data))  # checked once the lock is released
        if dry_run:
            raise _DryRun(snapshot, data)  # gated, locked, checked and matched as for real; nothing published
        return data

    try:
        try:
            done = commit_gated(ctx, path, Intent.EDIT, produce)
        except StaleVersion as stale:
            if ctx.options.stale != "region" or dry_run or stale.found != "modified":
                raise
            done = _region_commit(ctx, path, produce, outcome, stale)
    except EditNotFound:
        if outcome.miss is None:
            raise
        # The lock is released by now: the diagnosis searches an immutable text, holding nothing.
        error = outcome.miss.diagnosed()
        if _notebook_text(outcome.miss.text):  # its read showed cells, not this JSON: say where cells change
            error = EditNotFound(error.message, findings=error.findings, notebook=True, details=error.details)
        raise error from None
    except AmbiguousEdit:
        if outcome.ambiguous is None:
            raise
        # After the lock too: which match the session most likely meant, and what tells them apart.
        text, needle, exc = outcome.ambiguous
        window = ctx.reads.last(ctx.session, ctx.provider.key_of(path)) if ctx.reads is not None else None
        read = (window[1], window[1] + window[2] - 1) if window is not None else None  # (offset, limit)
        raise told_apart(text, needle, exc, read) from None
    except _DryRun as trial:
        return _dry_run(ctx, path, outcome, trial)
    applied = outcome.applied
    count = sum(r.count for r in applied)
    what = f"{len(applied)} edits, {count} replacement(s)" if len(applied) > 1 else f"{count} replacement(s)"
    warning, errors = syntax.report(syntax.check(path, *outcome.texts) if outcome.texts else None)
    changed = outcome.region.changed if outcome.region is not None else []
    if changed:
        spans = ", ".join(str(a) if a == b else f"{a}–{b}" for a, b in changed[:10])
        warning += (
            f"\nThe file had changed since your read, but not in the lines you edited: lines {spans} "
            "changed (numbered as the file is now) — re-read those if you need them"
        )
    text = f"Edited {display!r}: {what}. The file now reads, around line {outcome.first}:\n{outcome.excerpt}{warning}"
    return ToolOutput(
        text=text,
        value={
            "path": path,
            "edits": len(applied),
            "replacements": count,
            "first_line": outcome.first,
            "version": done.after.version,
            "syntax_errors": errors,
            "changed_lines": changed,
        },
    )


def _notebook_text(text: str) -> bool:
    head = text[:NOTEBOOK_HEAD].encode("utf-8", "surrogatepass")
    return bool(may_be_notebook(head)) and '"nbformat"' in text and '"cells"' in text


def _region_commit(
    ctx: ToolContext, path: str, produce: Callable[[Snapshot], bytes], outcome: _Outcome, stale: StaleVersion
) -> Committed:
    """The edit again, against the file as it is now, when the session's read is still remembered: the
    lines the edit covers must be as the session read them (``_region_step``). Anything else is the
    stale error the strict edit got."""
    observation = ctx.store.get(ctx.session, ctx.provider.key_of(path))
    observed = ctx.provider.recall(observation.version) if isinstance(observation, Present) else None
    if observed is None:
        raise stale  # what the session read is no longer known: nothing to compare with
    _, version = ctx.provider.current_version(path, lambda: None)  # hashed under the file's lock
    if version is None:
        raise stale
    outcome.applied.clear()
    outcome.region = _RegionCheck(observed, stale, check=lambda: ctx.check_cancelled("edit"))
    return commit_gated(ctx, path, Intent.EDIT, produce, pinned=version)


def _excerpt(text: str, applied: Sequence[Replacement], first: int, last: int) -> str:
    """``snippet(split_lines(text), first, last)``, locating only the lines it shows (never a list of
    every line of the file)."""
    if len(applied) == 1:  # where the replacement starts is known
        return snippet_at(text, applied[0].position, first, last)
    total = count_lines(text)
    if first <= total:
        return snippet_at(text, line_start(text, first), first, last)
    start = max(1, first - 2)  # a later edit removed the line: show what is left of its surroundings
    return snippet_at(text, line_start(text, start), start, total, context=0) if start <= total else ""


def _dry_run(ctx: ToolContext, path: str, outcome: _Outcome, trial: _DryRun) -> ToolOutput:
    relative = ctx.provider.relative_paths(ctx.provider.key_of(path))
    shown = relative[0] if relative else path
    diff = unified_diff(trial.before.data, trial.after, shown, check=lambda: ctx.check_cancelled("edit"))
    count = sum(r.count for r in outcome.applied)
    text = f"Dry run: nothing was written. The edit would make {count} replacement(s) in {path_label(path)!r}:\n{diff}"
    if len(text) > MAX_DIFF_CHARS:
        text = text[:MAX_DIFF_CHARS] + "\n[… the diff is cut here; value.diff holds all of it]"
    return ToolOutput(
        text=text,
        value={
            "path": path,
            "edits": len(outcome.applied),
            "replacements": count,
            "first_line": outcome.first,
            "version": trial.before.version,
            "dry_run": True,
            "diff": diff,
        },
    )


MAX_DIFF_CHARS = 50_000


def unified_diff(before: bytes, after: bytes, path: str, check: Callable[[], None] | None = None) -> str:
    """The unified diff from ``before`` to ``after`` (as text: a UTF-16 or UTF-32 file's decoded) with ``a/``
    and ``b/`` headers, as ``patch -p1`` and ``git apply`` take it; a last line without a line ending is
    marked as diff marks it."""
    old = line_diff.patch_lines(as_text(before, "surrogateescape"))
    new = line_diff.patch_lines(as_text(after, "surrogateescape"))
    lines = line_diff.unified_diff(old, new, f"a/{path}", f"b/{path}", check=check)
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def run_edit(ctx: ToolContext, args: EditArgs) -> ToolOutput:
    return _run(ctx, args.file_path, [args], [""], dry_run=args.dry_run)


def run_multi_edit(ctx: ToolContext, args: MultiEditArgs) -> ToolOutput:
    pointers = [f"/edits/{i}" for i in range(len(args.edits))]
    return _run(ctx, args.file_path, args.edits, pointers, dry_run=args.dry_run)


def present_edit(args: Mapping[str, Any]) -> str | None:
    path, old, new = text_of(args, "file_path"), text_of(args, "old_string"), text_of(args, "new_string")
    flags = args.get("replace_all"), args.get("dry_run")
    if path is None or old is None or new is None or not all(f is None or isinstance(f, bool) for f in flags):
        return None
    scope = "every occurrence" if flags[0] is True else "1 occurrence"
    trial = ", dry run" if flags[1] is True else ""
    return f"edit {short(path)}: replace {quoted(old)} ({scope}{trial})"


def present_multi_edit(args: Mapping[str, Any]) -> str | None:
    path, edits = text_of(args, "file_path"), args.get("edits")
    if path is None or not isinstance(edits, list) or not all(isinstance(edit, Mapping) for edit in edits):
        return None
    trial = ", dry run" if args.get("dry_run") is True else ""
    return f"multi_edit {short(path)}: {len(edits)} edit(s){trial}"


_EDIT_PRECONDITIONS = (
    "The workspace is not read-only and the path is not protected. The session must have read the file, and "
    "the file must not have changed since."
)

EDIT = Tool(
    name="edit",
    title="Edit a file",
    abilities=(abilities.CHANGE_LINES,),
    description=(
        "Replace old_string with new_string in a file. Read the file first in this session (edits are "
        "refused on files you have not read or that changed since). old_string is matched literally and "
        "must be unique in the file: include enough surrounding lines, or set replace_all. Line endings "
        "and all untouched bytes are kept. dry_run shows the diff without writing."
    ),
    arguments=EditArgs,
    output=EditOutput,
    run=run_edit,
    read_only=False,
    checkable=True,
    preconditions=_EDIT_PRECONDITIONS,
    example=Example(
        {"file_path": "src/app.py", "old_string": '"hello "', "new_string": '"hi "'},
        setup=(("read", {"file_path": "src/app.py"}),),
    ),
    present=present_edit,
)

MULTI_EDIT = Tool(
    name="multi_edit",
    title="Edit a file in several places",
    description=(
        "Apply several edits to one file at once, in order, each seeing the result of the previous one. "
        "All or nothing: if any edit fails, nothing is written and the error names its index. Same rules "
        "as edit: read the file first; each old_string must be unique unless replace_all is set."
    ),
    arguments=MultiEditArgs,
    output=EditOutput,
    run=run_multi_edit,
    read_only=False,
    checkable=True,
    preconditions=_EDIT_PRECONDITIONS,
    example=Example(
        {
            "file_path": "notes.txt",
            "edits": [{"old_string": "one", "new_string": "1"}, {"old_string": "three", "new_string": "3"}],
        },
        setup=(("read", {"file_path": "notes.txt"}),),
    ),
    present=present_multi_edit,
)
