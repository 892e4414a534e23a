"""Literal, byte-preserving string replacement for edit and multi_edit.

Matching sees the text with CRLF as LF, so ``old_string`` written with ``\\n`` matches a CRLF file;
replacements are spliced into the original text, so every byte outside a match is kept.

It is bounded by the size of its input, not by a clock: a replacement's result size is computed from
the match count before any text is built, so an edit that would outgrow the size limit fails at once,
however many times it matches. Why an ``old_string`` does not match is ``diagnosis.py``'s question.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import Enum
from itertools import islice, product

from fs_tools.errors import AmbiguousEdit, ContentTooLarge, EditNotFound
from fs_tools.terms import pointer_term

MAX_REPORTED_MATCHES = 50
_CONTEXT_MATCHES = 5  # matches shown with the line before them
_CONTEXT_CHARS = 120
_CANDIDATE_LINES = 6
_CANDIDATE_CHARS = 200
_COMPARE_CHARS = 300  # similarity is judged on at most this much of a line
_CUTOFF = 0.5
# The similarity search's fixed budget: lines visited, characters compared, candidates scored in full.
# On a 16 MB file it takes a small fraction of a second; lines sharing the anchor's rarest words are
# visited first, so a near-miss far down a large file is still found.
_LINE_BUDGET = 50_000
_COMPARE_BUDGET = 1_000_000
_SCORE_BUDGET = 200
_RARE_TOKENS = 8  # the anchor's longest words, counted over the whole file to find its rarest
_BLOCK = 1 << 16  # characters split into lines at a time, so no list of every line is ever held
_PIECES = 4096  # pieces joined at a time when splicing one by one


@dataclass(frozen=True)
class Replacement:
    """Where one edit landed in the text it produced: how many replacements, the 1-based lines the
    first one spans, where it starts, and the encoded size of the new text."""

    count: int
    first_line: int
    last_line: int
    position: int  # where in the new text the first replacement starts
    size: int  # bytes, as the file will hold them (BOM included)


def replace(
    text: str,
    newline: str,
    old: str,
    new: str,
    *,
    replace_all: bool,
    pointer: str,
    display: str,
    size: int,
    limit: int,
) -> tuple[str, Replacement]:
    """Replace ``old`` by ``new`` literally in ``text`` (``size`` bytes as encoded); the new text and
    where the edit landed. ``EditNotFound`` / ``AmbiguousEdit`` when ``old`` does not match once, and
    ``TooLarge`` — before anything is built — when the result would exceed ``limit`` bytes.

    ``pointer`` is the edit's JSON pointer (``/edits/2``), empty for a lone edit; messages name it.
    """
    label = pointer_term(pointer, "old_string")
    needle = old.replace("\r\n", "\n")
    insert = new.replace("\r\n", "\n")
    if newline == "\r\n":
        insert = insert.replace("\n", "\r\n")
    view = MatchView(text, needle, insert)
    start = view.first()
    if start < 0:
        raise EditNotFound(f"{label} was not found in {display!r}", details={"pointer": label})
    unique = view.searched.find(needle, start + len(needle)) < 0  # one search for a unique edit
    count = 1 if unique else view.count()
    if count > 1 and not replace_all:
        lines = view.lines(MAX_REPORTED_MATCHES)
        raise AmbiguousEdit(
            f"{label} occurs {count} times in {display!r}",
            count=count,
            lines=lines,
            context=match_contexts(view.searched, lines, needle),
            details={"pointer": label},
        )
    first_line = view.searched.count("\n", 0, start) + 1
    begin, end = view.span(start, first_line)
    grows = _encoded_length(insert) - _encoded_length(needle)
    after = size + grows - (end - begin - len(needle)) if unique else _size_after(view, count, size, limit)
    if after > limit:
        edit = f"edit {pointer}" if pointer else "the edit"
        raise ContentTooLarge(
            f"{edit} would make {display!r} {after:,} bytes ({count:,} replacement(s)), over the "
            f"{limit:,}-byte limit; nothing was written",
            details={"size": after, "limit": limit, "subject": "content", "pointer": pointer or "/"},
        )
    result = "".join((text[:begin], insert, text[end:])) if unique else view.rebuilt()
    # Exact however the matches sat: the CRs they covered are the characters the result lacks.
    covered = len(text) + count * (len(insert) - len(needle)) - len(result)
    return result, Replacement(
        count=count,
        first_line=first_line,
        last_line=first_line + insert.count("\n"),
        position=begin,  # the text before the first match is unchanged
        size=size + count * grows - covered,
    )


def match_contexts(text: str, lines: list[int], needle: str) -> list[list[tuple[int, str]]]:
    """For the first few matches, the line before the match, its first line and the line after it:
    the neighbours that can tell the matches apart."""
    extra = needle.rstrip("\n").count("\n")  # lines the match runs on past its first
    out = []
    for line in lines[:_CONTEXT_MATCHES]:
        begin = line_start(text, max(1, line - 1))
        wanted = {line - 1, line, line + extra + 1}
        rows = text[begin : after_newlines(text, begin, extra + 3)].split("\n")[: extra + 3]
        numbered = [(n, row) for n, row in enumerate(rows, max(1, line - 1)) if n in wanted]
        out.append([(n, row[:_CONTEXT_CHARS] + ("…" if len(row) > _CONTEXT_CHARS else "")) for n, row in numbered])
    return out


_ENCLOSING_LINES = 200  # lines looked up from a match for what encloses it
_HEADING = re.compile(r"^(?:#{1,6} \S|\[[^\]\n]+\]\s*$|\\(?:sub)*section\{)")


def told_apart(text: str, needle: str, exc: AmbiguousEdit, read: tuple[int, int] | None) -> AmbiguousEdit:
    """An ambiguous edit told more fully, for the model to pick the match it meant: the matches inside the
    lines the session last read (``read``) come first and the first of them is ``likely``; each match
    shown (the first few, so ranked) with the line before and after it and the line that encloses it — the
    nearest less indented line above (its function, block or key), or at the left margin the section
    heading above it. Bounded by count: a few matches, a few hundred lines up from each."""
    lines = list(exc.lines)
    text = text.replace("\r\n", "\n") if "\r\n" in text else text
    needle = needle.replace("\r\n", "\n")
    if read is not None:
        read = (read[0], min(read[1], text.count("\n") + 1))
    inside = [n for n in lines if read is not None and read[0] <= n <= read[1]]
    if read is not None and not inside and exc.count > len(lines):
        # hundreds of matches, and the ones listed are not where the session read: one search there
        at = text.find(needle, line_start(text, read[0]), line_start(text, read[1] + 1))
        if at >= 0:
            inside = [text.count("\n", 0, at) + 1]
    ranked = inside + [n for n in lines if n not in inside]
    contexts = match_contexts(text, ranked, needle)
    for context, line in zip(contexts, ranked, strict=False):
        enclosing = _enclosing(text, line)
        if enclosing is not None and enclosing[0] < line - 1:
            context.insert(0, enclosing)
    return AmbiguousEdit(
        exc.message,
        count=exc.count,
        lines=lines,
        context=contexts,
        likely=inside[0] if inside and len(inside) < exc.count else None,
        read=read,
        details=exc.details,
    )


def _enclosing(text: str, line: int) -> tuple[int, str] | None:
    """The line that encloses 1-based ``line``: the nearest non-blank line above it that is less indented,
    or, for a line at the left margin, the nearest heading above it (Markdown, INI, LaTeX)."""
    end = line_start(text, line)
    stop = text.find("\n", end)
    own = text[end : stop if stop >= 0 else len(text)]
    depth = len(own) - len(own.lstrip(" \t"))
    number = line
    while number > 1 and line - number < _ENCLOSING_LINES:
        begin = text.rfind("\n", 0, max(0, end - 1)) + 1
        row = text[begin : end - 1] if end > 0 else ""
        number -= 1
        end = begin
        if not row.strip():
            continue
        lead = len(row) - len(row.lstrip(" \t"))
        if (depth and lead < depth) or (not depth and _HEADING.match(row)):
            return number, row[:_CONTEXT_CHARS] + ("…" if len(row) > _CONTEXT_CHARS else "")
    return None


def _size_after(view: MatchView, count: int, size: int, limit: int) -> int:
    """The result's encoded size, by arithmetic, before it is built: each match swaps its own bytes (a
    byte more than the needle for each CRLF it covers) for the insert's."""
    grows = _encoded_length(view.insert) - _encoded_length(view.needle)
    if view.layout is Layout.DIRECT:
        return size + count * grows
    if view.layout is Layout.CRLF:
        return size + count * (grows - view.needle.count("\n"))  # each of the needle's LFs is a CRLF
    if view.forms is not None:
        return size + count * grows - view.forms.crlfs_matched()
    most = size + count * grows  # counting the CRLFs means walking every match: only when it matters
    return most if most <= limit else most - view.crlfs_walked()


def _encoded_length(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8"))


class Layout(Enum):
    """How a needle's matches sit in the original text."""

    DIRECT = "direct"  # the needle cannot meet a CRLF (or there is none): replace in the original as it is
    CRLF = "crlf"  # every line break is CRLF, and every one the insert adds: replace with LF, then restore
    MIXED = "mixed"  # both kinds of line break: see ``_Forms``, else map each match back one by one


class MatchView:
    """``needle`` (LF line breaks) looked for in ``original`` seen with CRLF as LF, and ``insert``
    spliced in its place so every byte outside a match is kept."""

    def __init__(self, original: str, needle: str, insert: str) -> None:
        self.original, self.needle, self.insert = original, needle, insert
        if ("\n" not in needle and "\r" not in needle) or "\r\n" not in original:
            self.layout, self.searched = Layout.DIRECT, original
            return
        self.searched = original.replace("\r\n", "\n")
        crlfs = len(original) - len(self.searched)
        uniform = self.searched.count("\n") == crlfs and insert.count("\n") == insert.count("\r\n")
        self.layout = Layout.CRLF if uniform else Layout.MIXED

    @functools.cached_property
    def forms(self) -> _Forms | None:
        return _Forms.of(self.original, self.needle) if self.layout is Layout.MIXED else None

    def count(self) -> int:
        return self.searched.count(self.needle)

    def first(self) -> int:
        return self.searched.find(self.needle)

    def positions(self) -> Iterator[int]:
        """Start positions (in ``searched``) of non-overlapping matches, left to right."""
        start = self.searched.find(self.needle)
        while start >= 0:
            yield start
            start = self.searched.find(self.needle, start + len(self.needle))

    def lines(self, limit: int) -> list[int]:
        """The line numbers of the first ``limit`` matches, counted in one pass."""
        found: list[int] = []
        line, counted = 1, 0
        for start in islice(self.positions(), limit):
            line += self.searched.count("\n", counted, start)
            counted = start
            found.append(line)
        return found

    def span(self, start: int, line: int) -> tuple[int, int]:
        """Where the match at ``start`` of ``searched`` (on 1-based ``line``) lies in the original."""
        end = start + len(self.needle)
        if self.layout is Layout.DIRECT:
            return start, end
        if self.layout is Layout.CRLF:  # every line break before a place lost its CR
            return start + line - 1, end + line - 1 + self.needle.count("\n")
        walk = _Walk(self.original, self.searched)
        return walk.to_original(start), walk.to_original(end)

    def crlfs_walked(self) -> int:
        """How many CRLFs all the matches cover in the original, walking them one by one."""
        return sum((end - begin) - len(self.needle) for begin, end in self._spans())

    def rebuilt(self) -> str:
        if self.layout is Layout.DIRECT:
            return self.original.replace(self.needle, self.insert)
        if self.layout is Layout.CRLF:
            swapped = self.searched.replace(self.needle, self.insert.replace("\r\n", "\n"))
            return swapped.replace("\n", "\r\n")
        if self.forms is not None:
            return self.forms.rebuilt(self.insert)
        return _joined(self._pieces())

    def _spans(self) -> Iterator[tuple[int, int]]:
        walk = _Walk(self.original, self.searched)
        for start in self.positions():
            yield walk.to_original(start), walk.to_original(start + len(self.needle))

    def _pieces(self) -> Iterator[str]:
        cursor = 0
        for begin, end in self._spans():
            yield self.original[cursor:begin]
            yield self.insert
            cursor = end
        yield self.original[cursor:]


_SPARE = [chr(c) for c in (*range(0x01, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20))]  # control characters
_MAX_FORM_LFS = 4  # 16 forms at most
_MAX_FORM_NEEDLE = 4096  # a longer needle matches at most len(text) / 4096 times: walking them is cheap


@dataclass(frozen=True)
class _Forms:
    """A text with mixed line endings as ``marked``: each CRLF one spare character ``crlf``, so it lines
    up with the CRLF-as-LF view. The needle takes a few forms in it (each of its LFs an LF or ``crlf``),
    and when the needle cannot overlap itself its matches are exactly the forms' occurrences: each
    form is counted and replaced on its own, by C-level searches, however many matches there are."""

    marked: str
    crlf: str
    mark: str  # a second spare character: what each match becomes until the insert takes its place
    counts: list[tuple[str, int]]  # the forms that occur, with how often

    @classmethod
    def of(cls, original: str, needle: str) -> _Forms | None:
        lfs = needle.count("\n")
        if lfs > _MAX_FORM_LFS or len(needle) > _MAX_FORM_NEEDLE or _overlaps_itself(needle):
            return None
        spare = list(islice((c for c in _SPARE if c not in needle and c not in original), 2))
        if len(spare) < 2:
            return None
        crlf, mark = spare
        marked = original.replace("\r\n", crlf)
        head, *rest = needle.split("\n")
        counts = []
        for ends in product(("\n", crlf), repeat=lfs):
            form = head + "".join(end + part for end, part in zip(ends, rest, strict=True))
            if found := marked.count(form):
                counts.append((form, found))
        return cls(marked, crlf, mark, counts)

    def crlfs_matched(self) -> int:
        return sum(found * form.count(self.crlf) for form, found in self.counts)

    def rebuilt(self, insert: str) -> str:
        text = self.marked
        for form, _ in self.counts:
            text = text.replace(form, self.mark)
        return text.replace(self.crlf, "\r\n").replace(self.mark, insert)


def _overlaps_itself(needle: str) -> bool:
    """Whether two occurrences of ``needle`` can overlap: whether it has a proper border (a prefix that
    is also a suffix), by the Knuth-Morris-Pratt failure function."""
    failure = [0] * len(needle)
    border = 0
    for i in range(1, len(needle)):
        while border and needle[i] != needle[border]:
            border = failure[border - 1]
        if needle[i] == needle[border]:
            border += 1
        failure[i] = border
    return border > 0


class _Walk:
    """Maps increasing positions of the CRLF-as-LF view back to the original text, walking forward
    line by line: no index of every CRLF is built."""

    def __init__(self, original: str, normalized: str) -> None:
        self.original, self.normalized = original, normalized
        self.at = 0  # a place in ``normalized`` at a line start (or 0) ...
        self.was = 0  # ... and the same place in ``original``

    def to_original(self, position: int) -> int:
        lines = self.normalized.count("\n", self.at, position)
        if lines:
            after = after_newlines(self.original, self.was, lines)
            self.at += (after - self.was) - self.original.count("\r\n", self.was, after)
            self.was = after
        return self.was + (position - self.at)  # the rest of the way is within one line: no CRLF


def after_newlines(text: str, start: int, count: int) -> int:
    """The position just after the ``count``-th LF at or after ``start`` (``len(text)`` if there are
    fewer): whole blocks are skipped with one C-level count each, not walked line by line."""
    while count > 16:
        stop = min(len(text), start + _BLOCK)
        found = text.count("\n", start, stop)
        if found >= count or stop == len(text):
            break
        count -= found
        start = stop
    for _ in range(count):
        newline = text.find("\n", start)
        if newline < 0:
            return len(text)
        start = newline + 1
    return start


def line_start(text: str, line: int) -> int:
    """Where 1-based ``line`` starts in ``text`` (``len(text)`` past the last line)."""
    return after_newlines(text, 0, line - 1) if line > 1 else 0


def _joined(pieces: Iterable[str]) -> str:
    """``"".join(pieces)`` without holding every piece at once: many small pieces cost far more memory
    as objects than as text, so they are joined a few thousand at a time."""
    chunks: list[str] = []
    batch: list[str] = []
    for piece in pieces:
        batch.append(piece)
        if len(batch) >= _PIECES:
            chunks.append("".join(batch))
            batch.clear()
    chunks.append("".join(batch))
    return "".join(chunks)
