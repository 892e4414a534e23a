"""The ``apply_patch`` tool: a Codex patch or a unified diff, gated per file, applied all or nothing.

In three passes, so that nothing is written unless everything can be (SPEC §14): the patch is parsed
(a malformed one is INVALID_ARGS naming its line); every file it touches passes its gates (an update or
a delete needs the file observed at its current version; an add or a move never replaces a file the
session has not observed at its current version) and the files to change are read; every hunk is
located, each after the previous one, by its context and removed lines — exactly, or but for trailing
whitespace and line endings, nothing looser. Only then is each file committed, against the version its
gate checked; if a commit still fails (another writer came in between), the files already committed
are put back as they were (their bytes and modes; a file rewritten keeps its owner and group, and like
any write is a new inode), and the error says so.

A hunk that does not match is ``FS_EDIT_NOT_FOUND`` taught as ``edit`` teaches it (the same diagnosis,
in the hunk's words); one that matches in several places is ``FS_AMBIGUOUS_EDIT`` unless its ``@@``
context or its line numbers pick one.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field

from fs_tools.arguments import Text, ToolArgs, ToolOutputModel
from fs_tools.checks import syntax
from fs_tools.checks.placeholders import refuse_placeholders
from fs_tools.errors import (
    AmbiguousEdit,
    ContentTooLarge,
    EditNotFound,
    FsError,
    HarnessError,
    IoError,
    MissingParent,
    MissingPath,
    NotRegularFile,
    OmissionPlaceholder,
    SeenAbsent,
    ToolArgsError,
    path_label,
)
from fs_tools.gating import Checked, PinnedGate, SessionGate, capture, check_replace, mode_of
from fs_tools.line_diff import Work
from fs_tools.line_index import LineIndex, OutOfWork, TooCommon
from fs_tools.matching.diagnosis import Miss
from fs_tools.matching.replace import match_contexts
from fs_tools.patches import FileChange, Hunk, parse_patch, patch_line
from fs_tools.provider import DIRECTORY, FILE, FileState, Snapshot, TextFile, as_utf8, decode_text
from fs_tools.rendering.quoting import short, text_of
from fs_tools.terms import speaking, term
from fs_tools.tools.base import Example, Tool, ToolContext, ToolOutput
from fs_tools.tools.delete import RemovalGate
from fs_tools.tools.edit import SyntaxErrorValue
from policy import Intent

MAX_CANDIDATES = 1000  # places one hunk is compared at, at most


class ApplyPatchArgs(ToolArgs):
    patch: Text = Field(
        min_length=1,
        description=(
            "The patch: '*** Begin Patch' … '*** End Patch' (Codex format: '*** Add File: p', "
            "'*** Update File: p' with '@@' hunks, '*** Delete File: p') or a unified diff (git diff)."
        ),
    )


class PatchedFile(ToolOutputModel):
    path: str
    action: str  # added, updated, deleted
    moved_to: str | None = None
    version: str | None = None  # the new version; None for a deleted file
    syntax_errors: list[SyntaxErrorValue] = Field(default_factory=list)  # those the patch introduced


class ApplyPatchOutput(ToolOutputModel):
    files: list[PatchedFile]


class _Checked(Exception):
    """Raised by a checking removal gate once the real gates have passed: the provider stops, nothing is done."""

    def __init__(self, file: FileState, expected: str | None) -> None:
        super().__init__("checked")
        self.file = file
        self.expected = expected


class _RemoveCheckOnly:
    def __init__(self, inner: RemovalGate) -> None:
        self.inner = inner

    def expect(self, file: FileState) -> str | None:
        expected = self.inner.expect(file)
        raise _Checked(file, expected)

    def removed(self, key: str, *, before: Snapshot | None = None) -> None:  # pragma: no cover - never called
        raise AssertionError("a check-only gate never removes")


@dataclass
class _Plan:
    """One file change, checked: what is there now and what it will be."""

    change: FileChange
    before: Snapshot | None = None  # an update's (or a move's source) bytes, as its gate checked them
    data: bytes = b""  # the new bytes of an add, an update or a move's destination
    replaces: bool = False  # an add or a move onto an existing file (the session observed it)
    replaced_before: bytes | None = None  # that file's bytes, to put back if the patch is undone
    syntax: syntax.Check | None = None  # the syntax errors the new bytes bring, when checked
    done: list[str] = field(default_factory=list)  # the steps committed so far, for undoing


def run_apply_patch(ctx: ToolContext, args: ApplyPatchArgs) -> ToolOutput:
    changes = parse_patch(args.patch)
    _refuse_repeats(ctx, changes)
    plans = [_Plan(change) for change in changes]
    for plan in plans:  # every gate before any matching
        _check(ctx, plan)
    for plan in plans:
        _match(ctx, plan)
    ctx.check_cancelled("apply_patch")
    if ctx.check_only:
        raise Checked()
    files = _commit_all(ctx, plans)
    warnings = ""
    for plan, item in zip(plans, files, strict=True):
        warning, errors = syntax.report(plan.syntax)
        item["syntax_errors"] = errors
        if errors or warning:
            warnings += f"\n{path_label(str(item.get('moved_to') or item['path']))!r}:{warning}"
    return ToolOutput(text=_summary(files) + warnings, value={"files": files})


def _refuse_repeats(ctx: ToolContext, changes: list[FileChange]) -> None:
    """A file named twice (two sections, or a move onto another's path) would be gated against a version
    the patch itself changes: refused before anything is read."""
    seen: dict[str, int] = {}
    for change in changes:
        if change.move_to is not None and ctx.provider.key_of(change.move_to) == ctx.provider.key_of(change.path):
            raise ToolArgsError(
                [
                    f"/{term('patch')}: {patch_line(change.line)}: *** Move to names {change.path!r} itself; leave "
                    "it out to change the file where it is"
                ]
            )
        for path in (change.path, change.move_to):
            if path is None:
                continue
            key = ctx.provider.key_of(path)
            if key in seen:
                raise ToolArgsError(
                    [
                        f"/{term('patch')}: {patch_line(change.line)}: {path!r} is changed again (first at "
                        f"{patch_line(seen[key])}); put all of a file's hunks in one section"
                    ]
                )
            seen[key] = change.line


def _check(ctx: ToolContext, plan: _Plan) -> None:
    change = plan.change
    if change.kind == "delete":
        try:
            ctx.provider.remove(change.path, _RemoveCheckOnly(RemovalGate(ctx)), cancel=ctx.cancel)
        except _Checked as checked:
            if not checked.file.exists:
                raise MissingPath(f"{checked.file.display!r} does not exist") from None
            if checked.file.kind == DIRECTORY:
                raise NotRegularFile(
                    f"{checked.file.display!r} is a directory; *** Delete File deletes a file",
                    details={"kind": "directory", "reason": "delete"},
                ) from None
            if checked.file.kind != FILE:
                raise NotRegularFile(
                    f"{checked.file.display!r} is not a regular file; *** Delete File deletes a file",
                    details={"reason": "delete"},
                ) from None
        plan.before = capture(ctx, change.path)  # its bytes, to write back if the patch is undone
        return
    if change.kind == "add":
        plan.replaces, plan.replaced_before = _check_target(ctx, change.path)
        return
    try:
        plan.before = capture(ctx, change.path)
    except MissingPath as exc:
        if isinstance(exc, MissingParent | SeenAbsent):  # not "Update File of a new file": said as it is
            raise
        raise MissingPath(
            f"{path_label(change.path)!r} does not exist: *** Update File changes an existing file "
            f"(to create it, use '*** Add File: {change.path}')",
        ) from exc
    if change.move_to is not None:
        plan.replaces, plan.replaced_before = _check_target(ctx, change.move_to)


def _check_target(ctx: ToolContext, path: str) -> tuple[bool, bytes | None]:
    """The gates of writing ``path`` (an add, a move's destination): free, or a file the session observed
    at its current version (then its bytes, to put back if the patch is undone)."""
    kind = "a patch can add or move a file only to a path that is free or holds a file"
    found = check_replace(ctx, path, kind=kind, reason="patch_target")
    return (False, None) if found is None else (True, found.data)


# --- locating hunks -------------------------------------------------------------------------------


WORK_PER_LINE = 32  # locating one file's hunks may spend this many comparisons per line of the file and its hunks
WORK_FLOOR = 250_000  # ... and this many more, so that small files never come near the bound


@dataclass
class _Patched:
    """A file being patched. Hunks are located in its lines as read (``texts`` and ``endings``), which
    never change, and the result is built beside them: ``out_*`` holds it up to the line ``done`` of the
    file as read. A line index per way of comparing lines is made on first use and serves every hunk."""

    texts: list[str]  # without line endings
    endings: list[str]  # "\n", "\r\n", or "" for a last line without one
    newline: str
    work: Work  # shared by every search in this file
    trailer: str = ""  # a lone "\r" ending the file: kept after the last line while a hunk leaves that line be
    out_texts: list[str] = field(default_factory=list)
    out_endings: list[str] = field(default_factory=list)
    done: int = 0
    indexes: dict[str, LineIndex] = field(default_factory=dict)

    @property
    def delta(self) -> int:
        """The lines the hunks so far added (or removed, when negative): a line number in the result is the
        line's number in the file as read plus this."""
        return len(self.out_texts) - self.done

    def index(self, level: str) -> LineIndex:
        """The index of the lines compared ``exact``, or but for trailing whitespace, or for all surrounding
        whitespace (``stripped``, how an @@ line is found)."""
        found = self.indexes.get(level)
        if found is None:
            keys = self.texts if level == "exact" else [_NORMAL[level](text) for text in self.texts]
            found = self.indexes[level] = LineIndex(keys, self.work)
        return found

    def result_before(self, stop: int) -> list[str]:
        """The result's lines, up to the line ``stop`` of the file as read (for the errors that look back)."""
        return self.out_texts + self.texts[self.done : max(self.done, stop)]

    def splice(self, at: int, hunk: Hunk, old: int) -> None:
        """Put ``hunk`` in place of the ``old`` lines at ``at``: its context lines keep the file's own
        bytes, its new lines take the file's line ending, and the file's last line keeps its line ending,
        or loses it, as the hunk says."""
        texts, endings, out_texts, out_endings = self.texts, self.endings, self.out_texts, self.out_endings
        out_texts += texts[self.done : at]
        out_endings += endings[self.done : at]
        start, end = len(out_texts), at + old
        was_last = end == len(texts)
        last_ending = endings[-1] if at < len(texts) else (out_endings[-1] if out_endings else "\n")
        bare_before = was_last and last_ending == ""
        index = at
        for sign, text in hunk.ops:
            if sign == " ":
                out_texts.append(texts[index])
                out_endings.append(endings[index])
                index += 1
            elif sign == "-":
                index += 1
            else:
                out_texts.append(text.rstrip("\r"))
                out_endings.append(self.newline)
        self.done = end
        if was_last and out_texts:
            bare = (bare_before and not hunk.old_ends_file_bare) or hunk.new_ends_file_bare
            # only the line before the hunk (the file's last until now) or its own lines may lack an ending
            for line in range(max(start - 1, 0), len(out_endings) - 1):
                out_endings[line] = out_endings[line] or self.newline
            out_endings[-1] = "" if bare else (out_endings[-1] or self.newline)
            if not (old and hunk.ops[-1][0] == " " and out_endings[-1] == endings[-1]):
                self.trailer = ""  # the last line changed, moved or got another ending: as it always was, no CR
        else:
            for line in range(start, len(out_endings)):
                out_endings[line] = out_endings[line] or self.newline

    def result(self) -> str:
        texts = self.out_texts + self.texts[self.done :]
        endings = self.out_endings + self.endings[self.done :]
        return "".join(map(operator.add, texts, endings)) + self.trailer


_NORMAL = {"trailing": str.rstrip, "stripped": str.strip}


def _match(ctx: ToolContext, plan: _Plan) -> None:
    change = plan.change
    if change.kind == "delete":
        return
    if change.kind == "add":
        plan.data = change.content.encode("utf-8")
    else:
        assert plan.before is not None
        display = path_label(change.path)
        decoded = decode_text(plan.before.data, display)
        texts, endings, trailer = _split(decoded.text)
        budget = WORK_PER_LINE * (len(texts) + sum(len(hunk.ops) for hunk in change.hunks)) + WORK_FLOOR
        work = Work(budget, lambda: ctx.check_cancelled("apply_patch"))
        patched = _Patched(texts, endings, decoded.newline, work, trailer)
        cursor = 0  # where the next hunk may start, in the file as read
        for hunk in change.hunks:
            ctx.check_cancelled("apply_patch")
            spent_before = budget - work.left  # by the hunks before this one (and the indexes they made)
            if ctx.options.check_placeholders:
                try:
                    pointer = f"/{term('patch')}: {_where(change, hunk)}, its new"
                    refuse_placeholders("\n".join(hunk.new), "\n".join(hunk.old), pointer)
                except OmissionPlaceholder as exc:
                    exc.details = {**exc.details, "terms": _hunk_terms(hunk)}
                    raise
            try:
                cursor = _apply_hunk(patched, hunk, cursor, decoded, change)
            except OutOfWork as exc:
                raise _out_of_work(change, hunk, decoded, exc, budget, spent_before) from exc
        plan.data = TextFile("", decoded.bom, decoded.newline, decoded.encoding).encode(patched.result())
    target = change.move_to or change.path
    limit = ctx.provider.max_file_bytes
    if len(plan.data) > limit:
        raise ContentTooLarge(
            f"the patch would make {path_label(target)!r} {len(plan.data):,} bytes, over the {limit:,}-byte limit; "
            "nothing was written",
            details={"size": len(plan.data), "limit": limit, "subject": "content", "pointer": f"/{term('patch')}"},
        )
    _check_syntax(ctx, plan, target)


def _check_syntax(ctx: ToolContext, plan: _Plan, target: str) -> None:
    """The syntax errors the patch brings into the file (SPEC §15): refused, or kept for the report."""
    if not ctx.options.check_syntax or syntax.language_of(target) is None:
        return
    before = plan.before.data if plan.before is not None else plan.replaced_before
    found = syntax.check(target, as_utf8(before) if before is not None else None, as_utf8(plan.data))
    if ctx.options.refuse_syntax_errors:
        syntax.refuse(found, f"the patch of {path_label(target)!r}")
    plan.syntax = found


def _split(text: str) -> tuple[list[str], list[str], str]:
    """The lines of ``text`` without their endings, the endings ("" for a last line without one), and a
    lone "\r" at the very end. That "\r" (most often what is left of a cut CRLF) is neither a line
    ending nor text: the last line is matched without it, and a file ending "\n\r" has no line for it."""
    pieces = text.split("\n")
    last = pieces.pop()  # the text after the last line break: "" when the file ends with one
    trailer = "\r" if last.endswith("\r") else ""
    last = last[: len(last) - len(trailer)]
    if "\r" in text:
        texts = [piece[:-1] if piece.endswith("\r") else piece for piece in pieces]
        endings = ["\r\n" if piece.endswith("\r") else "\n" for piece in pieces]
    else:
        texts, endings = pieces, ["\n"] * len(pieces)
    if last:
        texts.append(last)
        endings.append("")
    return texts, endings, trailer


def _apply_hunk(patched: _Patched, hunk: Hunk, cursor: int, decoded: TextFile, change: FileChange) -> int:
    """Splice ``hunk`` into the result at its one place at or after ``cursor`` (both in the file as read);
    where the next one may start."""
    old = [text.rstrip("\r") for text in hunk.old]
    if hunk.context is not None:
        cursor = _seek_context(patched, hunk, cursor, decoded, change)
    if not old:
        total = len(patched.texts)
        at = total if hunk.old_start is None else min(max(hunk.old_start - 1, cursor), total)
    else:
        at = _locate(patched, old, hunk, cursor, decoded, change)
    patched.splice(at, hunk, len(old))
    return at + len(old)


def _seek_context(patched: _Patched, hunk: Hunk, cursor: int, decoded: TextFile, change: FileChange) -> int:
    """Past the line the hunk's ``@@`` text names (exactly, or but for surrounding whitespace)."""
    assert hunk.context is not None
    wanted = hunk.context.strip()
    found = patched.index("stripped").first(wanted, cursor)
    if found is not None:
        return found + 1
    before = patched.result_before(cursor)  # before the previous hunk: said so, since hunks go in file order
    earlier = next((index for index, text in enumerate(before) if text.strip() == wanted), None)
    if earlier is not None:
        raise _not_found(
            change,
            hunk,
            decoded,
            f"its @@ line {hunk.context!r} is at line {earlier + 1}, before the previous hunk; hunks must be "
            "in file order",
        )
    raise _not_found(change, hunk, decoded, f"its @@ line {hunk.context!r} is not in the file")


def _locate(patched: _Patched, old: list[str], hunk: Hunk, cursor: int, decoded: TextFile, change: FileChange) -> int:
    """The one place of ``old`` at or after ``cursor`` in the file as read: found exactly, or but for
    trailing whitespace; at the end for ``*** End of File``; the nearest to its line number for a unified
    hunk; the first after its ``@@`` line; otherwise it must be the only one."""
    for level in ("exact", "trailing"):
        index = patched.index(level)  # the forgiving one is made only on a miss
        wanted = old if level == "exact" else [text.rstrip() for text in old]
        if hunk.end_of_file:
            at = len(index.keys) - len(wanted)
            if at >= cursor and index.keys[at:] == wanted:
                return at
            continue
        if hunk.old_start is not None:
            nearest = index.nearest(wanted, cursor, hunk.old_start - 1)
            if nearest is not None:
                return nearest
            continue
        found = index.places(wanted, cursor, 2)
        if len(found) == 1 or (found and hunk.context is not None):
            return found[0]  # the only one, or the first after its @@ line
        if found:
            places = index.places(wanted, cursor, MAX_CANDIDATES)
            raise _ambiguous(change, hunk, decoded, [at + patched.delta for at in places])
    trailing = [text.rstrip() for text in old]
    before = [text.rstrip() for text in patched.result_before(cursor + len(old))]
    earlier = LineIndex(before, patched.work).places(trailing, 0, 1)
    blank_tail = len(old) - len(list(itertools.dropwhile(lambda t: not t.strip(), reversed(old))))
    trimmed = trailing[:-blank_tail] if blank_tail and len(old) > blank_tail else []
    if trimmed and patched.index("trailing").places(trimmed, cursor, 1):
        raise _not_found(
            change,
            hunk,
            decoded,
            f"it ends with {blank_tail} blank line(s) the file does not have there (a line with nothing on it, "
            "not even the ' ' of a context line, is a blank context line); remove them",
        )
    if earlier and cursor + patched.delta:
        raise _not_found(
            change,
            hunk,
            decoded,
            f"its lines are at line {earlier[0] + 1}, before the previous hunk's; hunks must be in file order",
        )
    raise _not_found(change, hunk, decoded, None)


def _out_of_work(
    change: FileChange, hunk: Hunk, decoded: TextFile, exc: OutOfWork, budget: int, spent_before: int
) -> EditNotFound:
    """The refusal past the bound: this hunk's own lines are too common when it spent most of the bound
    itself; otherwise the patch as a whole passed the bound at this hunk, and the hunks from this one on
    can go in a patch of their own (which gets a bound of its own)."""
    facts: dict[str, Any] = {"bound": budget, "spent_before": spent_before}
    rarest = ""
    if isinstance(exc, TooCommon):
        facts["places"] = exc.places
        # no places when the bound ran out as the hunk's lines were being looked up, before any try
        counted = f", is at {exc.places:,} places" if exc.places else ""
        if spent_before * 2 < budget:
            why = (
                f"every line of it is common in the file (even its rarest, {exc.line[:80]!r}{counted}), and trying "
                f"it at each place passed the bound of {budget:,} comparisons for this file; add to it a line near "
                "the change that occurs once in the file"
            )
            return _with_facts(_not_found(change, hunk, decoded, why), facts)
        rarest = f"; this one's rarest line, {exc.line[:80]!r}{counted}" if exc.places else ""
    before = hunk.number - 1
    why = (
        f"locating the file's hunks passed the bound of {budget:,} comparisons for this file at this hunk (the "
        f"{before:,} before it spent {spent_before:,}{rarest}); apply hunks 1-{before} as one patch and the rest "
        "as another, or add to each hunk a line near its change that occurs once in the file"
    )
    return _with_facts(_not_found(change, hunk, decoded, why), facts)


def _with_facts(error: EditNotFound, facts: dict[str, Any]) -> EditNotFound:
    error.details = {**error.details, **facts}
    return error


def _where(change: FileChange, hunk: Hunk) -> str:
    return f"hunk {hunk.number} of {path_label(change.path)!r} ({patch_line(hunk.line)})"


def _hunk_terms(hunk: Hunk) -> dict[str, str]:
    return {"old_string": f"hunk {hunk.number}", "new_string": f"hunk {hunk.number}'s new text", "replace_all": ""}


def _not_found(change: FileChange, hunk: Hunk, decoded: TextFile, why: str | None) -> EditNotFound:
    display = path_label(change.path)
    head = f"/{term('patch')}: {_where(change, hunk)} does not match {display!r}"
    if why is not None:
        return EditNotFound(
            f"{head}: {why} (nothing was written: a patch applies whole or not at all)",
            details={"pointer": f"/{term('patch')}", "terms": _hunk_terms(hunk)},
        )
    error = EditNotFound(f"{head} (nothing was written: a patch applies whole or not at all)")
    old = "\n".join(text.rstrip("\r") for text in hunk.old)
    new = "\n".join(text.rstrip("\r") for text in hunk.new)
    with speaking(_hunk_terms(hunk)):
        diagnosed = Miss(decoded.text, old, new, error).diagnosed()
    diagnosed.details = {**diagnosed.details, "pointer": f"/{term('patch')}", "terms": _hunk_terms(hunk)}
    return diagnosed


def _ambiguous(change: FileChange, hunk: Hunk, decoded: TextFile, found: list[int]) -> AmbiguousEdit:
    text = decoded.text.replace("\r\n", "\n")
    numbers = [at + 1 for at in found[:50]]
    needle = "\n".join(text.rstrip("\r") for text in hunk.old)
    return AmbiguousEdit(
        f"/{term('patch')}: {_where(change, hunk)} matches "
        f"{'more than ' if len(found) >= MAX_CANDIDATES else ''}{len(found)} places in {path_label(change.path)!r} "
        "(nothing was written)",
        count=len(found),
        lines=numbers,
        context=match_contexts(text, numbers, needle),
        details={"pointer": f"/{term('patch')}", "terms": _hunk_terms(hunk)},
    )


# --- committing -----------------------------------------------------------------------------------


def _commit_all(ctx: ToolContext, plans: list[_Plan]) -> list[dict[str, Any]]:
    files: list[dict[str, Any]] = []
    finished: list[_Plan] = []
    try:
        for plan in plans:
            files.append(_commit(ctx, plan))
            finished.append(plan)
    except HarnessError as exc:
        left = _undo(ctx, [*finished, plan] if plan.done else finished)
        if left:
            raise IoError(
                f"{exc.message}; the patch was being applied and could not be undone everywhere: "
                f"{', '.join(repr(path_label(p)) for p in left)} may be left changed — read them before going on",
                details={"reason": "partial"},
            ) from exc
        if isinstance(exc, FsError):
            exc.message = f"{exc.message} (the files the patch had changed were put back; nothing is changed)"
            exc.args = (exc.message,)
        raise
    return files


def _commit(ctx: ToolContext, plan: _Plan) -> dict[str, Any]:
    change = plan.change
    ctx.changed(ctx.provider.key_of(change.path))
    if change.kind == "delete":
        ctx.provider.remove(change.path, RemovalGate(ctx), cancel=ctx.cancel)
        plan.done.append("removed")
        return {"path": change.path, "action": "deleted", "moved_to": None, "version": None}
    if change.kind == "add":
        after = ctx.provider.commit(change.path, SessionGate(ctx, Intent.WRITE), plan.data, cancel=ctx.cancel)
        plan.done.append("written")
        return {"path": change.path, "action": "added", "moved_to": None, "version": after.version}
    assert plan.before is not None
    if change.move_to is None:
        gate = PinnedGate(ctx, Intent.EDIT, plan.before.version)
        after = ctx.provider.commit(change.path, gate, plan.data, cancel=ctx.cancel)
        plan.done.append("written")
        return {"path": change.path, "action": "updated", "moved_to": None, "version": after.version}
    moving = SessionGate(ctx, Intent.WRITE)
    mode = None if plan.replaces else mode_of(plan.before)  # a moved file keeps its mode, as git's, if new there
    after = ctx.provider.commit(change.move_to, moving, plan.data, cancel=ctx.cancel, mode=mode)
    plan.done.append("moved_in")
    ctx.provider.remove(change.path, RemovalGate(ctx), cancel=ctx.cancel)
    plan.done.append("removed")
    return {"path": change.path, "action": "updated", "moved_to": change.move_to, "version": after.version}


def _undo(ctx: ToolContext, plans: list[_Plan]) -> list[str]:
    """Put back what ``plans`` committed, newest first; the paths that could not be."""
    left: list[str] = []
    for plan in reversed(plans):
        change = plan.change
        try:
            for step in reversed(plan.done):
                _undo_step(ctx, plan, step)
        except HarnessError:
            left.append(change.move_to or change.path)
    return left


def _undo_step(ctx: ToolContext, plan: _Plan, step: str) -> None:
    change = plan.change
    if step == "removed":  # a delete, or a move's source: written back from the bytes the gate checked
        assert plan.before is not None  # captured when its gate was checked
        gate, mode = SessionGate(ctx, Intent.WRITE), mode_of(plan.before)  # with the mode it had: 0600 stays
        ctx.provider.commit(change.path, gate, plan.before.data, cancel=None, mode=mode)
        return
    target = change.move_to if step == "moved_in" and change.move_to is not None else change.path
    if change.kind == "update" and step == "written":
        assert plan.before is not None
        ctx.provider.commit(target, SessionGate(ctx, Intent.EDIT), plan.before.data, cancel=None)
    elif plan.replaces and plan.replaced_before is not None:
        ctx.provider.commit(target, SessionGate(ctx, Intent.EDIT), plan.replaced_before, cancel=None)
    else:
        ctx.provider.remove(target, RemovalGate(ctx), cancel=None)


def _summary(files: list[dict[str, Any]]) -> str:
    marks = {"added": "A", "updated": "M", "deleted": "D"}
    rows = []
    for item in files:
        path = path_label(str(item["path"]))
        if item.get("moved_to"):
            rows.append(f"M {path!r} → {path_label(str(item['moved_to']))!r}")
        else:
            rows.append(f"{marks[str(item['action'])]} {path!r}")
    return "Success. Updated the following files:\n" + "\n".join(rows)


def present_apply_patch(args: Mapping[str, Any]) -> str | None:
    patch = text_of(args, "patch") or text_of(args, "input")
    if patch is None:
        return None
    return f"apply_patch ({short(str(patch.count(chr(10)) + 1))} patch lines)"


APPLY_PATCH = Tool(
    name="apply_patch",
    title="Apply a patch",
    description=(
        "Apply a patch to one or more files, all or nothing. Codex format: '*** Begin Patch', then per file "
        "'*** Add File: path' (lines prefixed '+'), '*** Delete File: path', or '*** Update File: path' "
        "(optional '*** Move to: new'), its hunks introduced by '@@' (optionally followed by a line that "
        "locates it) with lines prefixed ' ' (context), '-' (removed) or '+' (added), then '*** End Patch'. "
        "A unified diff (git diff) works too. Read every file you update, delete or replace first in this "
        "session; hunks must match the file exactly (trailing spaces and line endings aside)."
    ),
    arguments=ApplyPatchArgs,
    output=ApplyPatchOutput,
    run=run_apply_patch,
    read_only=False,
    checkable=True,
    preconditions=(
        "Every file it updates or deletes, and every existing file an add or a move replaces, was read in "
        "this session and has not changed since; the workspace is not read-only and no path is protected."
    ),
    example=Example(
        {"patch": ("*** Begin Patch\n*** Update File: notes.txt\n@@\n one\n-two\n+2\n three\n*** End Patch\n")},
        setup=(("read", {"file_path": "notes.txt"}),),
    ),
    present=present_apply_patch,
    terms={"patch": "patch"},
)
