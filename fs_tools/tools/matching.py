"""Literal, byte-preserving string replacement for edit and multi_edit, and the diagnostics that teach a
model what went wrong when ``old_string`` does not match.

Matching runs on a view of the text in which CRLF is LF, so ``old_string`` written with ``\\n`` matches a
CRLF file; replacements are spliced into the original text, so every byte outside a match is kept.
"""

from __future__ import annotations

import bisect
import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fs_tools.errors import AmbiguousEdit, EditNotFound

MAX_REPORTED_MATCHES = 50
_CANDIDATE_LINES = 6
_CANDIDATE_CHARS = 200


@dataclass(frozen=True)
class Replacement:
    """The outcome of one edit: the new text, how many replacements, and where (1-based lines of the
    new text) the first one landed."""

    text: str
    count: int
    first_line: int
    last_line: int


class MatchView:
    """The text with CRLF seen as LF, and the map back to positions in the original."""

    def __init__(self, original: str) -> None:
        self.original = original
        if "\r\n" in original:
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
    """Where the closest candidate is and, when it is one of the usual slips, what kind of slip."""
    hay_lines = haystack.split("\n")
    for kind, on_needle, on_haystack in _CHECKS:
        changed_needle = on_needle(needle)
        if not changed_needle.strip():
            continue
        changed_haystack = on_haystack(haystack)
        position = changed_haystack.find(changed_needle)
        if position >= 0:
            line = changed_haystack.count("\n", 0, position) + 1
            span = changed_needle.count("\n") + 1
            if kind == "indentation" and _differs_in_tabs(needle, hay_lines[line - 1 : line - 1 + span]):
                kind = "tabs_vs_spaces"
            return {"kind": kind, "line": line, "candidate": _candidate(hay_lines, line, span)}
    return _nearest(hay_lines, needle)


def _differs_in_tabs(needle: str, candidate: list[str]) -> bool:
    def indents(lines: list[str]) -> str:
        return "".join(line[: len(line) - len(line.lstrip())] for line in lines)

    ours, theirs = indents(needle.split("\n")), indents(candidate)
    return ("\t" in ours) != ("\t" in theirs)


def _nearest(hay_lines: list[str], needle: str) -> dict[str, Any]:
    needle_lines = needle.split("\n")
    anchor = next((line.strip() for line in needle_lines if line.strip()), "")
    if not anchor or not hay_lines:
        return {"kind": None}
    stripped = [line.strip() for line in hay_lines]
    close = difflib.get_close_matches(anchor, stripped, n=5, cutoff=0.5)
    best: tuple[float, int] | None = None
    span = len(needle_lines)
    for text in close:
        index = stripped.index(text)
        window = "\n".join(hay_lines[index : index + span])
        ratio = difflib.SequenceMatcher(None, window, needle, autojunk=False).ratio()
        if best is None or ratio > best[0]:
            best = (ratio, index + 1)
    if best is None:
        return {"kind": None}
    return {
        "kind": "similar",
        "line": best[1],
        "similarity": round(best[0], 2),
        "candidate": _candidate(hay_lines, best[1], span),
    }


def _candidate(hay_lines: list[str], line: int, span: int) -> list[tuple[int, str]]:
    stop = min(len(hay_lines), line - 1 + min(span, _CANDIDATE_LINES))
    return [
        (n, hay_lines[n - 1][:_CANDIDATE_CHARS] + ("…" if len(hay_lines[n - 1]) > _CANDIDATE_CHARS else ""))
        for n in range(line, stop + 1)
    ]
