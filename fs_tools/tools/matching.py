"""Literal, byte-preserving string replacement for edit and multi_edit, and the diagnostics that teach a
model what went wrong when ``old_string`` does not match.

Matching runs on a view of the text in which CRLF is LF, so ``old_string`` written with ``\\n`` matches a
CRLF file; replacements are spliced into the original text, so every byte outside a match is kept.
"""

from __future__ import annotations

import bisect
import difflib
import heapq
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from itertools import accumulate, chain
from typing import Any

from fs_tools.errors import AmbiguousEdit, EditNotFound

MAX_REPORTED_MATCHES = 50
_CANDIDATE_LINES = 6
_CANDIDATE_CHARS = 200
_COMPARE_CHARS = 300  # similarity is judged on at most this much of a line
_CUTOFF = 0.5
_SEARCH_SECONDS = 0.25  # the similarity search runs under the file's lock: keep it short


@dataclass(frozen=True)
class Replacement:
    """The outcome of one edit: the new text, how many replacements, and where (1-based lines of the
    new text) the first one landed."""

    text: str
    count: int
    first_line: int
    last_line: int
    position: int = 0  # where in ``text`` the first replacement starts


class MatchView:
    """The text with CRLF seen as LF, and the map back to positions in the original."""

    def __init__(self, original: str) -> None:
        self.original = original
        if "\r" in original and "\r\n" in original:  # a one-character search first: much faster
            self.normalized = original.replace("\r\n", "\n")
            self._crlf = [m.start() - i for i, m in enumerate(re.finditer("\r\n", original))]
        else:
            self.normalized = original
            self._crlf = []

    def to_original(self, position: int) -> int:
        return position + bisect.bisect_left(self._crlf, position)

    def line_of(self, position: int) -> int:
        return self.normalized.count("\n", 0, position) + 1


def find_all(haystack: str, needle: str) -> list[int]:
    """Start positions of non-overlapping occurrences, left to right."""
    found: list[int] = []
    start = haystack.find(needle)
    while start >= 0:
        found.append(start)
        start = haystack.find(needle, start + len(needle))
    return found


def replace(text: str, newline: str, old: str, new: str, *, replace_all: bool, label: str, display: str) -> Replacement:
    """Replace ``old`` by ``new`` literally; raise EditNotFound / AmbiguousEdit with diagnostics.

    ``label`` names the argument in messages (``old_string`` or ``/edits/2/old_string``).
    """
    view = MatchView(text)
    needle = old.replace("\r\n", "\n")
    positions = find_all(view.normalized, needle)
    if not positions:
        details = diagnose(view.normalized, needle)
        details["pointer"] = label
        raise EditNotFound(f"{label} was not found in {display!r}", details=details)
    if len(positions) > 1 and not replace_all:
        lines = [view.line_of(p) for p in positions[:MAX_REPORTED_MATCHES]]
        raise AmbiguousEdit(
            f"{label} occurs {len(positions)} times in {display!r}",
            details={"count": len(positions), "lines": lines, "pointer": label},
        )
    insert = new.replace("\r\n", "\n")
    if newline == "\r\n":
        insert = insert.replace("\n", "\r\n")
    pieces: list[str] = []
    cursor = 0
    for start in positions:
        begin = view.to_original(start)
        pieces.append(text[cursor:begin])
        pieces.append(insert)
        cursor = view.to_original(start + len(needle))
    pieces.append(text[cursor:])
    first_line = view.line_of(positions[0])
    added = insert.count("\n")
    return Replacement(
        text="".join(pieces),
        count=len(positions),
        first_line=first_line,
        last_line=first_line + added,
        position=len(pieces[0]),  # the text before the first match is unchanged
    )


# --- diagnostics for "not found" ------------------------------------------------------------------

_LINE_NUMBER_PREFIX = re.compile(r"^\s*\d+(\t|→|:\s| \| ?)")
_CURLY = str.maketrans({"‘": "'", "’": "'", "‚": "'", "‛": "'", "“": '"', "”": '"', "„": '"', "‟": '"'})
_SPACES = re.compile(r"[ \t]+")


def _per_line(transform: Callable[[str], str]) -> Callable[[str], str]:
    return lambda text: "\n".join(transform(line) for line in text.split("\n"))


def _strip_line_numbers(text: str) -> str:
    lines = text.split("\n")
    if not all(_LINE_NUMBER_PREFIX.match(line) for line in lines if line):
        return text
    return "\n".join(_LINE_NUMBER_PREFIX.sub("", line, count=1) for line in lines)


# Each check: the kind of difference, how to transform the needle, how to transform the haystack.
# Every transform keeps the line count, so a position in the transformed text maps to a line number.
_CHECKS: list[tuple[str, Callable[[str], str], Callable[[str], str]]] = [
    ("line_number_prefix", _strip_line_numbers, lambda t: t),
    ("line_endings", lambda t: t.replace("\r", "\n"), lambda t: t.replace("\r", "\n")),
    ("line_endings", lambda t: t.replace("\r", ""), lambda t: t.replace("\r", "")),
    ("quotes", lambda t: t.translate(_CURLY), lambda t: t.translate(_CURLY)),
    ("indentation", _per_line(str.lstrip), _per_line(str.lstrip)),
    ("whitespace", _per_line(lambda s: _SPACES.sub(" ", s).strip()), _per_line(lambda s: _SPACES.sub(" ", s).strip())),
]


def diagnose(haystack: str, needle: str) -> dict[str, Any]:
    """Where the closest candidate is and, when it is one of the usual slips, what kind of slip.

    Bounded: the transforms are linear, and the similarity search stops at a time budget, because it
    runs under the file's lock.
    """
    hay_lines = haystack.split("\n")
    for kind, on_needle, on_haystack in _CHECKS:
        changed_needle = on_needle(needle)
        if not changed_needle.strip():
            continue
        changed_haystack = on_haystack(haystack)
        position = changed_haystack.find(changed_needle)
        if position < 0:
            continue
        # Transforms that keep every character's place keep line numbers of the original text.
        counted = haystack if len(changed_haystack) == len(haystack) else changed_haystack
        line = counted.count("\n", 0, position) + 1
        span = max(1, min(changed_needle.count("\n") + 1, len(hay_lines) - line + 1))
        if kind == "indentation" and _differs_in_tabs(needle, hay_lines[line - 1 : line - 1 + span]):
            kind = "tabs_vs_spaces"
        if kind == "line_endings":
            kind = "cr_in_old_string" if "\r" in needle else "cr_in_file"
        return {"kind": kind, "line": line, "candidate": _candidate(hay_lines, line, span)}
    return _nearest(haystack, hay_lines, needle)


def _differs_in_tabs(needle: str, candidate: list[str]) -> bool:
    def indents(lines: list[str]) -> str:
        return "".join(line[: len(line) - len(line.lstrip())] for line in lines)

    ours, theirs = indents(needle.split("\n")), indents(candidate)
    return ("\t" in ours) != ("\t" in theirs)


def _nearest(haystack: str, hay_lines: list[str], needle: str, budget: float = _SEARCH_SECONDS) -> dict[str, Any]:
    """The lines most like ``needle``: its first non-blank line against every line (cut to a few hundred
    characters), then the best few windows against the whole needle (also cut)."""
    needle_lines = needle.split("\n")
    anchor = next((line.strip() for line in needle_lines if line.strip()), "")[:_COMPARE_CHARS]
    if not anchor:
        return {"kind": None}
    matcher = difflib.SequenceMatcher()
    matcher.set_seq2(anchor)
    scored: list[tuple[float, int]] = []
    seen: set[int] = set()
    deadline = time.monotonic() + budget
    # Lines that share the anchor's rarest words first (found at C speed), then every line in order
    # while the budget lasts; so a large file still finds a far-away near-miss.
    for count, index in enumerate(chain(_lines_sharing_rare_words(haystack, hay_lines, anchor), range(len(hay_lines)))):
        if count % 256 == 0 and time.monotonic() > deadline:
            break
        if index in seen:
            continue
        seen.add(index)
        text = hay_lines[index].strip()[:_COMPARE_CHARS]
        if not text:
            continue
        matcher.set_seq1(text)
        if matcher.real_quick_ratio() >= _CUTOFF and matcher.quick_ratio() >= _CUTOFF:
            ratio = matcher.ratio()
            if ratio >= _CUTOFF:
                heapq.heappush(scored, (ratio, -index))
                if len(scored) > 5:
                    heapq.heappop(scored)
    span = len(needle_lines)
    best: tuple[float, int] | None = None
    for _, negative in scored:
        index = -negative
        window = "\n".join(hay_lines[index : index + span])[: _COMPARE_CHARS * 4]
        ratio = difflib.SequenceMatcher(None, window, needle[: _COMPARE_CHARS * 4]).ratio()
        if best is None or ratio > best[0] or (ratio == best[0] and index + 1 < best[1]):
            best = (ratio, index + 1)
    if best is None:
        return {"kind": None}
    return {
        "kind": "similar",
        "line": best[1],
        "similarity": round(best[0], 2),
        "candidate": _candidate(hay_lines, best[1], span),
    }


def _lines_sharing_rare_words(
    haystack: str, hay_lines: list[str], anchor: str, words: int = 3, hits: int = 50
) -> list[int]:
    tokens = {t for t in re.findall(r"\w{3,}", anchor)}
    counted = sorted((haystack.count(t), t) for t in tokens)
    starts = list(accumulate((len(line) + 1 for line in hay_lines), initial=0))
    found: list[int] = []
    for count, token in counted[:words]:
        if count == 0:
            continue
        position = haystack.find(token)
        for _ in range(min(count, hits)):
            found.append(bisect.bisect_right(starts, position) - 1)
            position = haystack.find(token, position + 1)
    return found


def _candidate(hay_lines: list[str], line: int, span: int) -> list[tuple[int, str]]:
    stop = min(len(hay_lines), line - 1 + min(span, _CANDIDATE_LINES))
    return [
        (n, hay_lines[n - 1][:_CANDIDATE_CHARS] + ("…" if len(hay_lines[n - 1]) > _CANDIDATE_CHARS else ""))
        for n in range(line, stop + 1)
    ]
