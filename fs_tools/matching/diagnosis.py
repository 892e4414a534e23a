"""Why an ``old_string`` was not found: the near-miss diagnosis (SPEC §15).

It states facts — where the closest region is, and each difference by kind, line, column and code
point — as structured details; the boundary words them. It is deterministic and bounded by size,
never by a clock: the whole text is only ever searched by C-level ``str.find`` for a handful of
needles, and every comparison after that is confined to a small window of lines. It runs on an
immutable text after the file's lock is released (see ``Miss``).

The order of the questions:

1. Transforms of ``old_string`` alone that make it match exactly: a line-number prefix copied from a
   read (any common format), over-escaping (a literal ``\\n``, doubled backslashes, ``\\"``, escaped
   backticks, HTML entities), a stray carriage return.
2. Whether the edit is already applied (``new_string`` is in the file).
3. The region: lines of the file holding ``old_string``'s words, voted for by each of its lines, then
   ``old_string``'s lines aligned with the region's on their normalised form. Each aligned pair that
   differs is classified (tabs vs spaces, mixed indentation, depth, trailing whitespace, inner
   whitespace, invisible or look-alike characters, line endings); blank-line runs of another length and
   lines that are not there at all are named with which lines of ``old_string`` match where.
4. When no line shares a word: the most similar lines, by a budgeted similarity search.
"""

from __future__ import annotations

import bisect
import difflib
import heapq
import html
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import chain, pairwise
from typing import Any

from fs_tools.checks.placeholders import is_placeholder
from fs_tools.errors import EditNotFound
from fs_tools.matching.replace import after_newlines

_CANDIDATE_LINES = 20  # a region this long is shown whole: the model copies old_string from it
_CUT_LINES = 8  # a longer one: this many lines from its first difference
_CANDIDATE_BUDGET = 1_600  # characters of a whole region shown; past them it is cut like a long one
_CANDIDATE_CHARS = 200
_MAX_DIFFERENCES = 4
_WORDS_PER_LINE = 6  # of a line's longest words, at most: the first of every line is looked for first
_MAX_TOKENS = 10  # words of old_string searched for in the whole text, longest first
_TOKEN_HITS = 40  # occurrences of each word looked at
_WINDOW_EXTRA = 12  # lines of slack around a voted region (blank lines added or dropped)
_MAX_ALIGNED = 400  # lines of old_string compared line by line
_NEAR_PAIRS = 300  # line pairs judged for similarity in one diagnosis
_EXPLAINED_OPS = 12  # places two lines differ in, at most, for the difference to be named
_RESHAPE_BLOCK = 40  # lines on either side of an unmatched block tried for wrapping
_RESHAPE_LINES = 5  # lines a wrapped or joined line may have become
_WITHIN_LINE = 12  # characters of new_string, at least, found inside a line to count as applied there
_ANCHORS = 8  # old_string's longest lines looked for whole in the text
_ANCHOR_CHARS = 8  # and at least this long
_ANCHOR_HITS = 8
_RUNNER_UP = 0.8  # votes, against the best place's, for a second place to be compared too
_ANCHOR_REACH = 8_192  # characters around the first line found once, where the others are looked for
_ANCHOR_SCANS = 5  # of them, searches that run to the end of the text

# The similarity fallback's fixed budget: lines visited, characters compared, candidates scored in full.
_COMPARE_CHARS = 300
_CUTOFF = 0.5
_LINE_BUDGET = 600  # lines compared one by one from the top; past them, lines sharing rare parts
_COMPARE_BUDGET = 60_000
_PIECES = 12  # three-character pieces of the anchor looked for past the budget
_FULL_SCANS = 4  # searches of the whole text for a rare or absent word, per diagnosis
_PIECE_HITS = 20
_SCORE_BUDGET = 200
_RARE_TOKENS = 8
_BLOCK = 1 << 16


@dataclass(frozen=True)
class Miss:
    """An ``old_string`` that does not occur, with the text it was looked for in. The text is an
    immutable snapshot, so the diagnosis can run after the file's lock is released."""

    text: str
    old: str
    new: str
    error: EditNotFound

    def diagnosed(self) -> EditNotFound:
        haystack = self.text.replace("\r\n", "\n") if "\r\n" in self.text else self.text
        found = diagnose(haystack, self.old.replace("\r\n", "\n"), self.new.replace("\r\n", "\n"))
        return EditNotFound(self.error.message, findings=found, details=self.error.details)


# --- 1. transforms of old_string alone --------------------------------------------------------------

# Line-number prefixes as read tools print them; each takes the number and exactly one separator, so
# the indentation after it is kept. The first format every non-blank line carries wins.
_PREFIXES: list[tuple[str, re.Pattern[str]]] = [
    ("number_tab", re.compile(r"^ *\d+\t")),  # cat -n, fs-tools read: "    12\t"
    ("number_arrow", re.compile(r"^ *\d+→")),  # "    12→"
    ("padded_pipe", re.compile(r"^\d+\| ")),  # "00012| "
    ("number_pipe", re.compile(r"^ *\d+ ?\| ")),  # "  12 | "
    ("l_number", re.compile(r"^L\d+: ?")),  # "L12: "
    ("number_colon", re.compile(r"^ *\d+: ")),  # "12: "
    ("number_colon_bare", re.compile(r"^ *\d+:")),  # "12:"
]


def _prefix_form(needle: str) -> tuple[str, str, str] | None:
    """(format, first prefix as written, old_string without the prefixes) when every non-blank line of
    ``needle`` starts with a line-number prefix of one format."""
    lines = needle.split("\n")
    filled = [line for line in lines if line.strip()]
    if not filled:
        return None
    for name, pattern in _PREFIXES:
        if all(pattern.match(line) for line in filled):
            first = pattern.match(filled[0])
            assert first is not None
            numbers = [int(re.sub(r"\D", "", found.group(0))) for line in lines if (found := pattern.match(line))]
            if len(numbers) > 1 and any(b != a + 1 for a, b in pairwise(numbers)):
                continue  # a read numbers its lines one after another: these are the text's own (YAML keys)
            stripped = "\n".join(pattern.sub("", line, count=1) for line in lines)
            return name, first.group(0), stripped
    return None


_ENTITY = re.compile(r"&(?:[a-zA-Z]+|#\d+|#x[0-9a-fA-F]+);")
_ESCAPED = re.compile(r"\\([`$\"'\\{}])")


def _unescapes(needle: str) -> Iterator[tuple[str, str]]:
    """(what was over-escaped, old_string as meant) for each way ``needle`` may have been escaped once
    too often, most specific first."""
    if "\\" in needle:
        if "\\n" in needle or "\\t" in needle:
            full = needle.replace("\\\\", "\x00").replace("\\n", "\n").replace("\\t", "\t").replace("\\r", "")
            full = full.replace('\\"', '"').replace("\\'", "'").replace("\\`", "`").replace("\x00", "\\")
            yield ("\\n" if "\\n" in needle else "\\t"), full
        if "\\n" in needle:  # only the line breaks: the file's own escapes (\\, \", \ref) copied as they are
            yield "\\n", needle.replace("\\n", "\n")
        if '\\"' in needle or "\\'" in needle:
            yield '\\"' if '\\"' in needle else "\\'", needle.replace('\\"', '"').replace("\\'", "'")
        if "\\`" in needle:
            yield "\\`", needle.replace("\\`", "`")
        if "\\\\" in needle:
            yield "\\\\", needle.replace("\\\\", "\\")
    if "\\" in needle:  # everything at once: a template literal with \` and \${, a JSON-escaped string
        unescaped = _ESCAPED.sub(r"\1", needle)
        if unescaped != needle:
            yield "backslashes", unescaped
    if _ENTITY.search(needle):
        unescaped = html.unescape(needle)
        if unescaped != needle:
            yield "html_entity", unescaped


def _under_escapes(needle: str) -> Iterator[tuple[str, str]]:
    """(the escape the file has, old_string as the file would have it) for each way ``needle`` may have
    been escaped once too few: a tab, quote, backslash or line break where the file's text (a string in
    code, a JSON value) has the escape sequence."""
    if "\\" in needle:
        yield "\\\\", needle.replace("\\", "\\\\")
    if '"' in needle:
        yield '\\"', needle.replace('"', '\\"')
    if "\t" in needle.lstrip("\t "):
        yield "\\t", _INNER_TAB.sub(r"\\t", needle)
    if "\n" in needle.strip("\n"):
        yield "\\n", needle.replace("\n", "\\n")


_INNER_TAB = re.compile(r"(?<=[^\t\n])\t")  # a tab after other text on its line, not indentation


# --- characters ------------------------------------------------------------------------------------

_INVISIBLE = {0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF, 0x00AD, 0x180E}
_LOOKALIKE = {
    **{c: " " for c in (0x00A0, 0x1680, *range(0x2000, 0x200B), 0x202F, 0x205F, 0x3000)},
    **{c: "'" for c in (0x2018, 0x2019, 0x201A, 0x201B, 0x2032, 0x00B4)},
    **{c: '"' for c in (0x201C, 0x201D, 0x201E, 0x201F, 0x2033, 0x00AB, 0x00BB)},
    **{c: "-" for c in (0x2010, 0x2011, 0x2012, 0x2013, 0x2014, 0x2015, 0x2212)},
    0x2026: "...",
}
_PLAIN = str.maketrans({**{c: None for c in _INVISIBLE}, **_LOOKALIKE, 0x0D: None})
# The same, keeping every character's place: look-alikes become their ASCII character (the first of it).
_PLAIN_SAME_LENGTH = str.maketrans({c: plain[0] for c, plain in _LOOKALIKE.items()})
_PART_TRIES = 2_000
_WORD = re.compile(r"\w{3,}")  # any script's letters: a Cyrillic or CJK old_string has words too
_WORD_PART = re.compile(r"[^\W\d_]{3,}|\d{3,}")
_PIECE = re.compile(r"\w{3}")
_BLANKS = re.compile(r"[ \t]+")
_DASHES = re.compile(r"-{2,}")  # an em dash may stand for "--" as well as "-"


def _key(line: str) -> str:
    """A line as compared for alignment: look-alike characters as ASCII, invisible and private-use ones
    and CRs gone, whitespace runs as one space, no leading or trailing whitespace."""
    plain = line.translate(_PLAIN)
    if not plain.isascii():
        plain = _PRIVATE.sub("", plain)
    return _DASHES.sub("-", _BLANKS.sub(" ", plain)).strip()


_PRIVATE = re.compile("[\ue000-\uf8ff\U000f0000-\U000ffffd\U00100000-\U0010fffd]")


def _hidden(char: str) -> bool:
    """An invisible character, or a private-use one (an icon font's glyph, no character anywhere else)."""
    return ord(char) in _INVISIBLE or _PRIVATE.match(char) is not None


def code_point(char: str) -> str:
    return f"U+{ord(char):04X}"


def char_name(char: str) -> str:
    if unicodedata.category(char) == "Co":
        return "PRIVATE USE CHARACTER"
    return unicodedata.name(char, "CONTROL CHARACTER" if ord(char) < 0x20 else "UNNAMED CHARACTER")


# --- the diagnosis ---------------------------------------------------------------------------------


def diagnose(haystack: str, needle: str, new: str = "") -> dict[str, Any]:
    """Where the closest candidate is and how ``needle`` differs from it (see the module's docstring).

    ``haystack`` and ``needle`` have LF line breaks. The result's ``kind`` is the main difference (None
    when nothing similar was found); ``differences`` lists the facts; ``candidate`` the lines."""
    total = haystack.count("\n") + 1
    finder = _Finder(haystack)
    prefix = _prefix_form(needle)
    working = needle
    found: dict[str, Any] = {}
    if prefix is not None:
        form, sample, working = prefix
        found = {"prefix": sample, "prefix_format": form}
        position = haystack.find(working) if working.strip() else -1
        if position >= 0:
            return {"kind": "line_number_prefix", **_located(finder, position, working, total), **found}
    for escaped, meant in _unescapes(working):
        position = haystack.find(meant) if meant.strip() else -1
        if position >= 0:
            return {"kind": "over_escaped", "escape": escaped, **_located(finder, position, meant, total), **found}
    for escape, meant in _under_escapes(working):
        position = haystack.find(meant) if meant.strip() else -1
        if position >= 0:
            return {"kind": "under_escaped", "escape": escape, **_located(finder, position, meant, total), **found}
    elided = _placeholder_gap(finder, working, total)
    if elided is not None:
        return {**elided, **found}
    if "\r" in working:
        for meant in (working.replace("\r", ""), working.replace("\r", "\n")):
            position = haystack.find(meant) if meant.strip() else -1
            if position >= 0:
                return {"kind": "cr_in_old_string", **_located(finder, position, meant, total), **found}
    elif "\n" in working and "\r" in haystack:  # a file whose lines break at a bare CR
        position = haystack.find(working.replace("\n", "\r"))
        if position >= 0:
            return {"kind": "cr_in_file", **_located(finder, position, working, total), **found}
    region = _region(finder, working, total)
    compared = _compare(finder, working, region, total) if region is not None else None
    if region is not None and region.second is not None:
        other = _compare(finder, working, region.second, total)
        if other is not None and _explained(other) > _explained(compared):
            region, compared = region.second, other
    if compared is None or compared.get("kind") in ("partial", "similar"):
        applied = _already_applied(finder, working, new, total, region)
        if applied is not None:
            return {"kind": "already_applied", **applied, **found}
    if region is not None:
        if compared is None and region.weight >= 0.5:
            compared = _similar_in(finder, working, region, total)
        if compared is not None:
            if found:  # the prefix is named first; the rest still applies to old_string without it
                compared = {**compared, "kind": "line_number_prefix", "also": compared.get("kind"), **found}
            return compared
    nearest = _nearest(finder, working)
    if found and nearest.get("kind"):
        nearest = {**nearest, "kind": "line_number_prefix", "also": "similar"}
    return {**nearest, **found}


def _placeholder_gap(finder: _Finder, needle: str, total: int) -> dict[str, Any] | None:
    """An omission placeholder line in ``needle`` (``# ... existing code ...``) between text that is in
    the file as written, before it and after it, with other lines between: the lines it stands for.
    An edit replaces exactly the text it is given, so those lines must be in old_string."""
    lines = needle.split("\n")
    marks = [i for i, line in enumerate(lines[:_MAX_ALIGNED]) if line.strip() and is_placeholder(line)]
    if len(marks) != 1 or not 0 < marks[0] < len(lines) - 1:
        return None
    mark = marks[0]
    head, tail = "\n".join(lines[:mark]), "\n".join(lines[mark + 1 :])
    if not head.strip() or not tail.strip():
        return None
    haystack = finder.haystack
    best: tuple[int, int, int] | None = None  # (lines between, where head is, where tail is)
    begin = haystack.find(head)
    tries = 0
    while begin >= 0 and tries < _TOKEN_HITS:  # each place of the text before it, with the nearest tail after
        tries += 1
        after = begin + len(head)
        if not ((begin == 0 or haystack[begin - 1] == "\n") and haystack.startswith("\n", after)):
            begin = haystack.find(head, begin + 1)  # whole lines only
            continue
        end = haystack.find(tail, after + 1)
        while end >= 0 and haystack[end - 1] != "\n" and tries < _TOKEN_HITS:
            tries += 1
            end = haystack.find(tail, end + 1)
        if end < 0 or haystack[end - 1] != "\n":
            break
        gap = haystack.count("\n", after, end)
        if best is None or gap < best[0]:
            best = (gap, begin, end)
        begin = haystack.find(head, begin + 1)
    if best is None:
        return None
    _, begin, end = best
    first = finder.line_of(begin)
    gap_from, gap_to = first + mark, finder.line_of(end) - 1
    if gap_to < gap_from:
        return None
    last = gap_to + tail.count("\n") + 1
    span = max(1, min(last - first + 1, total - first + 1))
    return {
        "kind": "placeholder",
        "line": first,
        "old_line": mark + 1,
        "placeholder": lines[mark].strip(),
        "stands_for": [gap_from, gap_to],
        "candidate": _candidate(haystack, finder.offset_of(first), first, span),
    }


def _explained(compared: dict[str, Any] | None) -> int:
    """How many of old_string's lines an alignment matched: all of them but for what it names, or those
    of a partial one (its runs)."""
    if compared is None:
        return -1
    if compared.get("missing_lines") is None and compared.get("extra_lines") is None:
        return 1 << 20
    return sum(b - a + 1 for a, b, _ in compared.get("matched_lines") or [])


def _already_applied(finder: _Finder, needle: str, new: str, total: int, near: _Region | None) -> dict[str, Any] | None:
    """Where ``new`` is in the text — exactly, or but for whitespace (an editor trimmed trailing spaces
    on save, a formatter re-indented) — when it is substantial and not part of ``needle``: the edit
    looks applied already (an agent retrying an edit that succeeded, or the same change made twice).
    Its words that old_string lacks are looked for first (searches the region already paid for are
    not repeated): one that is not in the text ends the question. It must be whole lines (not a part of
    a more indented one), and where old_string's own region is, when it has one."""
    meant = new.strip("\n")
    if len(_key(meant)) < 6 or meant in needle or meant.count("\n") > _MAX_ALIGNED:
        return None
    had = set(_WORD.findall(needle))
    fresh = sorted(set(_WORD.findall(meant)) - had, key=lambda w: (-len(w), w))[:2]
    if any(finder.absent(word) for word in fresh):
        return None
    haystack = finder.haystack

    def where_old_was(line: int) -> bool:
        return near is None or near.start <= line <= near.stop

    position = haystack.find(meant)
    inside: dict[str, Any] | None = None  # a part of a line, where old_string's own words are
    hits = 0
    while position >= 0 and hits < _TOKEN_HITS:
        hits += 1
        starts = (
            position == 0
            or haystack[position - 1] == "\n"
            or (not meant[:1].isspace() and haystack[haystack.rfind("\n", 0, position) + 1 : position].isspace())
        )
        end = position + len(meant)
        ends = end == len(haystack) or haystack[end] in "\r\n" or meant.endswith("\n")
        if starts and ends:
            located = _located(finder, position, meant, total)
            if where_old_was(located["line"]):
                return located
        elif inside is None and "\n" not in meant and len(meant) >= _WITHIN_LINE:
            located = _located(finder, position, meant, total)
            # inside a line: where old_string's own words are, or the only place it is at all
            if (near is not None and near.start <= located["line"] <= near.stop) or (
                hits == 1 and haystack.find(meant, position + 1) < 0
            ):
                inside = located
        position = haystack.find(meant, position + 1)
    if inside is not None:
        return {**inside, "within_line": True}
    region = _region(finder, meant, total)
    if region is None:
        return None
    compared = _compare(finder, meant, region, total)
    if compared is None or compared.get("missing_lines") or compared.get("kind") not in _LOOSE:
        return None
    if not where_old_was(compared["line"]):
        return None
    return {"loosely": True, "line": compared["line"], "candidate": compared["candidate"]}


_LOOSE = {"trailing_whitespace", "whitespace", "indentation", "tabs_vs_spaces", "mixed_indentation", "blank_lines"}


def _located(finder: _Finder, position: int, text: str, total: int) -> dict[str, Any]:
    haystack = finder.haystack
    line = finder.line_of(position)
    offset = haystack.rfind("\n", 0, position) + 1
    span = max(1, min(text.count("\n") + 1, total - line + 1))
    return {"line": line, "candidate": _candidate(haystack, offset, line, span)}


class _Finder:
    """Where words occur in the text: each word searched once (C-level ``str.find``), at most ``limit``
    hits, and at most ``_FULL_SCANS`` searches that run to the end of the text (a rare or absent
    word): past that budget a word counts as absent. The budget is in searches, not seconds, so the
    same call always gets the same answer."""

    def __init__(self, haystack: str) -> None:
        self.haystack = haystack
        self._found: dict[str, list[int]] = {}
        self.full_scans = 0
        self._starts = [0]  # offsets of line starts already counted to, and their line numbers
        self._numbers = [1]

    def line_of(self, position: int) -> int:
        """The 1-based line holding ``position``, counted from the nearest line already known."""
        at = bisect.bisect_right(self._starts, position) - 1
        number = self._numbers[at] + self.haystack.count("\n", self._starts[at], position)
        self._remember(self.haystack.rfind("\n", 0, position) + 1, number)
        return number

    def offset_of(self, line: int) -> int:
        """Where 1-based ``line`` starts (the text's length past its last line)."""
        at = bisect.bisect_right(self._numbers, line) - 1
        offset = after_newlines(self.haystack, self._starts[at], line - self._numbers[at])
        if offset < len(self.haystack) or line == self._numbers[at]:
            self._remember(offset, line)
        return offset

    def _remember(self, offset: int, number: int) -> None:
        at = bisect.bisect_left(self._starts, offset)
        if at == len(self._starts) or self._starts[at] != offset:
            self._starts.insert(at, offset)
            self._numbers.insert(at, number)

    def absent(self, word: str) -> bool:
        """Whether ``word`` is nowhere in the text (one search of it, past the budget if need be)."""
        if word not in self._found and self.full_scans >= _FULL_SCANS:
            return self.haystack.find(word) < 0
        return not self.positions(word, 1)

    def positions(self, word: str, limit: int) -> list[int]:
        if word in self._found:
            return self._found[word][:limit]
        if self.full_scans >= _FULL_SCANS:
            return []
        found: list[int] = []
        position = self.haystack.find(word)
        while position >= 0 and len(found) < limit:
            found.append(position)
            position = self.haystack.find(word, position + len(word))
        if len(found) < limit:
            self.full_scans += 1  # the search ran to the end of the text
        self._found[word] = found
        return found


@dataclass(frozen=True)
class _Region:
    start: int  # first line of the window (1-based)
    stop: int  # last line of the window
    voted: int  # the line old_string's first line most likely is
    weight: float  # the votes for it (a word found once in the file weighs 1)
    second: _Region | None = None  # another place nearly as well voted for, compared too


def _region(finder: _Finder, needle: str, total: int) -> _Region | None:
    """The lines of the text that ``needle``'s lines point at: its longest words (and the parts of
    its identifiers) are looked for in the whole text (C-level finds, a bounded number of hits), and
    each hit on a line votes for where ``needle`` would start if that line were its line — a rare word
    (few hits) weighs more than a common one."""
    needle_lines = needle.split("\n")[:_MAX_ALIGNED]
    ranks: list[tuple[int, int, str, int]] = []  # (rank within its line, -length, word, needle line)
    taken: set[str] = set()
    hits = _anchor_hits(finder, needle_lines)  # (position in the text, needle line, weight)
    settled = _settled(finder, hits)
    for index, line in enumerate([] if settled else needle_lines):
        plain = _key(line)  # an invisible character inside a word does not split it
        found = set(_WORD.findall(plain)) | set(_WORD_PART.findall(plain))
        for rank, word in enumerate(sorted(found, key=lambda w: (-len(w), w))[:_WORDS_PER_LINE]):
            if word not in taken:
                taken.add(word)
                ranks.append((rank, -len(word), word, index))
    if not ranks and not hits:
        return None
    for _, _, word, index in sorted(ranks)[:_MAX_TOKENS]:  # each line's longest word first
        positions = finder.positions(word, _TOKEN_HITS)
        hits.extend((p, index, 1.0 / len(positions)) for p in positions)
    if not hits:
        return None
    hits.sort()
    weights: dict[tuple[int, int], float] = {}  # (start, needle line) -> its best word's weight
    for position, index, weight in hits:
        key = (finder.line_of(position) - index, index)
        weights[key] = max(weights.get(key, 0.0), weight)
    votes: dict[int, float] = {}
    for (start, _), weight in weights.items():
        votes[start] = votes.get(start, 0.0) + weight
    # Nearby starts (a blank line more or less) pool their votes; the earliest best start wins ties.
    pooled = {s: sum(votes.get(s + d, 0.0) for d in range(-3, 4)) for s in votes}
    ranked = sorted(pooled, key=lambda s: (-round(pooled[s], 9), -round(votes[s], 9), s))
    best = ranked[0]
    start = max(1, best - _WINDOW_EXTRA // 2)
    stop = min(total, max(start, best + len(needle_lines) + _WINDOW_EXTRA))
    # The next best place, far enough not to be the same window, when it is nearly as well voted for:
    # the alignment decides between the two (a document that holds one text twice, told apart only by
    # lines too short or common to vote).
    other = next((s for s in ranked[1:] if abs(s - best) > len(needle_lines) + _WINDOW_EXTRA // 2), None)
    second = None
    if other is not None and pooled[other] >= _RUNNER_UP * pooled[best]:
        other_start = max(1, other - _WINDOW_EXTRA // 2)
        other_stop = min(total, max(other_start, other + len(needle_lines) + _WINDOW_EXTRA))
        second = _Region(other_start, other_stop, other, pooled[other])
    return _Region(start, stop, best, pooled[best], second)


def _anchor_hits(finder: _Finder, needle_lines: list[str]) -> list[tuple[int, int, float]]:
    """Votes of ``needle``'s longest lines found whole in the text, but for the whitespace around them
    (the lines a near miss left alone: most of them, whatever the mistake). A line found once weighs
    2, more than any word; each is one search, a few of them at most (``_ANCHOR_SCANS`` to the end)."""
    longest = sorted(
        {line.strip(" \t\r") for line in needle_lines if len(line.strip()) >= _ANCHOR_CHARS},
        key=lambda line: (-len(line), line),
    )
    index_of: dict[str, int] = {}
    for index, line in enumerate(needle_lines):
        index_of.setdefault(line.strip(" \t\r"), index)
    haystack = finder.haystack
    out: list[tuple[int, int, float]] = []
    scans = 0
    lo, hi = 0, len(haystack)  # once a line is found once, the others are looked for around it only
    for anchor in longest[:_ANCHORS]:
        if scans >= _ANCHOR_SCANS:
            break
        found: list[int] = []
        position = haystack.find(anchor, lo, hi)
        while position >= 0 and len(found) < _ANCHOR_HITS:
            begin = haystack.rfind("\n", 0, position) + 1
            end = haystack.find("\n", position + len(anchor))
            end = len(haystack) if end < 0 else end
            if not haystack[begin:position].strip(" \t") and not haystack[position + len(anchor) : end].strip(" \t\r"):
                found.append(position)
            position = haystack.find(anchor, end, hi)
        if position < 0 and (lo, hi) == (0, len(haystack)):
            scans += 1  # the search ran to the end of the text
        out.extend((p, index_of[anchor], 2.0 / len(found)) for p in found)
        if len(found) == 1 and (lo, hi) == (0, len(haystack)):
            reach = 2 * sum(len(line) + 1 for line in needle_lines) + _ANCHOR_REACH
            lo, hi = max(0, found[0] - reach), min(len(haystack), found[0] + reach)
    return out


def _settled(finder: _Finder, anchors: list[tuple[int, int, float]]) -> bool:
    """Two or more of old_string's lines each found once, where old_string would start at about the same
    line (a blank line more or less): where it is, is settled without its words."""
    starts = [finder.line_of(p) - index for p, index, weight in anchors if weight == 2.0]
    return len(starts) >= 2 and max(starts) - min(starts) <= 3


def _window_lines(finder: _Finder, start: int, stop: int) -> list[str]:
    offset, end = finder.offset_of(start), finder.offset_of(stop + 1)
    return finder.haystack[offset:end].split("\n")[: stop - start + 1]


def _compare(finder: _Finder, needle: str, region: _Region, total: int) -> dict[str, Any] | None:
    """``needle``'s lines aligned with the region's, and each difference named."""
    mine = needle.split("\n")[:_MAX_ALIGNED]
    theirs = _window_lines(finder, region.start, region.stop)
    mine_keys = [_key(line) for line in mine]
    their_keys = [_key(line) for line in theirs]
    # Aligned on their non-blank lines: a blank line matches any other, so it would pull the alignment
    # off; runs of blank lines of another length are named afterwards (_blank_runs).
    mine_filled = [i for i, key in enumerate(mine_keys) if key]
    theirs_filled = [j for j, key in enumerate(their_keys) if key]
    # Aligned on their words: a line whose quotes, escapes or punctuation differ (\" for ", a curly
    # quote, \\ for \) still holds its place, and is compared with the file's line afterwards.
    mine_align = [_align_key(key) for key in mine_keys]
    their_align = [_align_key(key) for key in their_keys]
    matcher = difflib.SequenceMatcher(
        None, [mine_align[i] for i in mine_filled], [their_align[j] for j in theirs_filled], autojunk=False
    )
    pairs: list[tuple[int, int]] = []  # (needle line index, window line index)
    replaced: list[tuple[list[int], list[int]]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            pairs.extend((mine_filled[a], theirs_filled[b]) for a, b in zip(range(i1, i2), range(j1, j2), strict=True))
        elif tag == "replace":
            replaced.append(([mine_filled[a] for a in range(i1, i2)], [theirs_filled[b] for b in range(j1, j2)]))
    reshaped, reshaped_lines = _reshaped(mine, theirs, replaced, region.start)
    anchors = [(fact["old_lines"][0] - 1, fact["line"] - region.start) for fact in reshaped]
    pairs = _closest(pairs, mine_align, their_align, anchors)
    pairs, cut = _with_fragments(mine_keys, their_keys, pairs, theirs)
    filled = [i for i, key in enumerate(mine_keys) if key]
    if not pairs:
        return _reshaped_only(finder, mine, theirs, mine_filled, theirs_filled, region.start, total)
    # pairs whose words agree but whose text differs otherwise: named as a line most like the file's
    loose = {i: j for i, j in pairs if i not in cut and mine_keys[i] != their_keys[j]}
    for i, j in sorted(loose.items()):  # the line's words are the file's line's, but wrapped otherwise
        fact = _rejoined(mine, theirs, i, j, region.start)
        if fact is not None:
            reshaped.append(fact)
            reshaped_lines |= set(range(fact["old_lines"][0], fact["old_lines"][-1] + 1))
            del loose[i]
    reshaped.sort(key=lambda fact: fact["old_lines"][0])
    matched_filled = [i for i, j in pairs if mine_keys[i] and i not in loose]
    last_i = len(mine) - 1
    differences: list[dict[str, Any]] = []
    for i, j in pairs:
        if i in loose:
            continue
        file_line = cut.get(i, theirs[j])
        found = _line_differences(mine[i], file_line, i + 1, region.start + j, first=i == 0, last=i == last_i)
        if i in cut and i == 0:  # a part of the file's line: columns count from the line's start
            for difference in found:
                if "column" in difference:
                    difference["column"] += theirs[j].find(file_line)
        differences.extend(found)
    for i, j in _blank_pairs(mine_keys, pairs):  # blank lines between aligned ones, where runs agree
        differences.extend(_line_differences(mine[i], theirs[j], i + 1, region.start + j))
    differences.extend(_indentation_mix(mine, theirs, pairs, region.start))
    blank = _blank_runs(mine_keys, their_keys, pairs, region.start)
    differences.extend(blank)
    missing = [i for i in filled if i not in set(matched_filled)]
    near: list[dict[str, Any]] = []
    for i, j in sorted(loose.items()):
        explained = _explain(mine[i], theirs[j])
        near.append({"old_line": i + 1, "line": region.start + j, **({"what": explained} if explained else {})})
    budget = _NEAR_PAIRS  # similarity is judged on a fixed number of line pairs, each cut short
    for lines_mine, lines_theirs in replaced:
        for offset, i in enumerate(lines_mine):
            if not mine_keys[i] or budget <= 0:
                continue
            # the file's lines where this one would be, counted from either end of the block, and one
            # either side of each
            back = len(lines_theirs) - (len(lines_mine) - offset)
            around = sorted(
                set(lines_theirs[max(0, offset - 1) : offset + 2]) | set(lines_theirs[max(0, back - 1) : back + 2])
            )
            budget -= len(around)
            best = max(
                (
                    (
                        difflib.SequenceMatcher(
                            None, mine_keys[i][:_COMPARE_CHARS], their_keys[j][:_COMPARE_CHARS]
                        ).ratio(),
                        j,
                    )
                    for j in around
                ),
                default=(0.0, -1),
            )
            if best[0] >= _CUTOFF:
                found_near = {"old_line": i + 1, "line": region.start + best[1], "similarity": round(best[0], 2)}
                explained = _explain(mine[i], theirs[best[1]])
                near.append({**found_near, **({"what": explained} if explained else {})})
    near = [n for n in near if n["old_line"] not in reshaped_lines]
    ladder = _ladder(mine, theirs, mine_keys, their_keys, pairs, region.start)
    if ladder is not None:  # the closing lines' own differences are the ladder's: not named one by one
        closing = set(range(ladder["old_line"] - 1, len(mine)))
        differences = [d for d in differences if d["old_line"] - 1 not in closing]
        reshaped_lines |= {i + 1 for i in closing}
    kinds = _kinds(differences)
    # Where old_string as a whole lies: from where its first line belongs to where its last line does.
    first_i, first_at = min(pairs)
    final_i, final_at = max(pairs)
    line = max(1, region.start + first_at - first_i)
    end = min(total, region.start + final_at + (len(mine) - 1 - final_i))
    if mine_keys[-1] and final_i != len(mine) - 1:  # its last line was not found: one more line of the file
        end = min(total, end + 1)
    for fact in reshaped:  # a line of the file joined or split: where it is, not where its line count says
        lines = fact.get("lines") or [fact["line"]]
        if fact["old_lines"][0] == 1:
            line = lines[0]
        if fact["old_lines"][-1] == len(mine):
            end = lines[-1]
    if ladder is not None:
        end = max(end, ladder["lines"][-1]) if ladder["old_has"] < ladder["file_has"] else ladder["lines"][-1]
    span = max(1, end - line + 1)
    result: dict[str, Any] = {
        "line": line,
        "differences": _focused(differences),
        "candidate": _candidate_around(finder, line, span, differences, near),
    }
    if reshaped:
        result["reshaped"] = reshaped[:_MAX_DIFFERENCES]
    if ladder is not None:
        result["ladder"] = ladder
    missing = [i for i in missing if i + 1 not in reshaped_lines]
    if missing:
        # Every missing line has a like line where it belongs: a typo or a small change, not lines
        # that are not there.
        alike = {n["old_line"] for n in near}
        result["kind"] = "similar" if all(i + 1 in alike for i in missing) else "partial"
        result["matched_lines"] = _runs([(i + 1, region.start + j) for i, j in pairs if mine_keys[i]])
        result["missing_lines"] = [i + 1 for i in missing]
        result["near"] = near[:_MAX_DIFFERENCES]
        if kinds:
            result["kinds"] = kinds
        return result
    if ladder is not None:
        result["kind"] = "closers"
        return result
    if reshaped:
        result["kind"] = reshaped[0]["kind"]
        return result
    between = _lines_between(mine_keys, their_keys, pairs, region.start)
    if between:  # every line is there, but the file has others among them
        result["kind"] = "partial"
        result["matched_lines"] = _runs([(i + 1, region.start + j) for i, j in pairs if mine_keys[i]])
        result["extra_lines"] = between
        return result
    if not kinds:
        return None  # every line matches on its key and nothing differs: not a miss this can explain
    result["kind"] = kinds[0]
    if len(kinds) > 1:
        result["kinds"] = kinds
    return result


def _align_key(key: str) -> str:
    """What two lines must share to be aligned: their words (letters, digits, underscores) in order; a
    line of punctuation alone (a brace, a rule) is its key."""
    words = _NOT_WORD.sub(" ", key).strip()
    return words if words else key


_NOT_WORD = re.compile(r"\W+")


def _closest(
    pairs: list[tuple[int, int]], mine_align: list[str], their_align: list[str], anchors: list[tuple[int, int]]
) -> list[tuple[int, int]]:
    """Aligned lines moved next to the lines they belong with: the alignment takes the earliest of like
    lines (the first ``{`` of the window), but a line standing alone before the next aligned one (or the
    next line of the file old_string has wrapped otherwise: ``anchors``) belongs with the closest like
    line before it."""
    out = sorted(pairs)
    marks = sorted(set(out) | set(anchors))
    for k in range(len(out) - 1, -1, -1):
        i, j = out[k]
        following = [(i2, j2) for i2, j2 in marks if i2 > i and j2 > j]
        if not following:
            continue
        i2, j2 = following[0]
        if (i2, j2) == (i + 1, j + 1):
            continue
        for later in range(j2 - 1, j, -1):
            if their_align[later] == mine_align[i]:
                out[k] = (i, later)
                marks = sorted((set(marks) - {(i, j)}) | {(i, later)})
                break
    return out


def _rejoined(mine: list[str], theirs: list[str], i: int, j: int, start: int) -> dict[str, Any] | None:
    """old_string's line ``i``, aligned with the file's line ``j`` by its words, is that line joined with
    the file's next lines (a brace or bracket of theirs, which has no words), or the start of it wrapped
    over old_string's next lines."""
    mine_tight, their_tight = _tight(mine[i]), _tight(theirs[j])
    if mine_tight.startswith(their_tight):
        joined = their_tight
        for last in range(j + 1, min(j + _RESHAPE_LINES, len(theirs))):
            joined += _tight(theirs[last])
            if joined == mine_tight:
                return {"kind": "joined", "old_lines": [i + 1], "line": start + j, "lines": [start + j, start + last]}
            if not mine_tight.startswith(joined):
                break
    if their_tight.startswith(mine_tight):
        joined = mine_tight
        for last in range(i + 1, min(i + _RESHAPE_LINES, len(mine))):
            joined += _tight(mine[last])
            if joined == their_tight:
                return {"kind": "wrapped", "old_lines": [i + 1, last + 1], "line": start + j}
            if not their_tight.startswith(joined):
                break
    return None


def _reshaped_only(
    finder: _Finder,
    mine: list[str],
    theirs: list[str],
    mine_filled: list[int],
    theirs_filled: list[int],
    start: int,
    total: int,
) -> dict[str, Any] | None:
    """No line of old_string is a line of the window: maybe every one is the file's lines wrapped otherwise."""
    facts, explained = _reshaped(mine, theirs, [(mine_filled, theirs_filled)], start)
    if not facts or any(i + 1 not in explained for i in mine_filled):
        return None
    first = facts[0].get("lines", [facts[0]["line"]])[0]
    last = facts[-1].get("lines", [facts[-1]["line"]])[-1]
    return {
        "kind": facts[0]["kind"],
        "line": first,
        "reshaped": facts[:_MAX_DIFFERENCES],
        "differences": [],
        "candidate": _candidate(finder.haystack, finder.offset_of(first), first, max(1, min(last, total) - first + 1)),
    }


def _tight(line: str) -> str:
    """A line with no whitespace at all, look-alikes as ASCII: what is left when it is wrapped otherwise."""
    return "".join(_key(line).split())


def _reshaped(
    mine: list[str], theirs: list[str], replaced: list[tuple[list[int], list[int]]], start: int
) -> tuple[list[dict[str, Any]], set[int]]:
    """Lines of old_string that are the file's lines broken otherwise: one line of the file split in
    two or more (re-wrapped, or split where the file's line has \\n), or two or more of its lines joined
    in one. Only lines the alignment left unmatched are tried, a few lines at a time. Returns the facts
    and old_string's lines (1-based) they explain."""
    facts: list[dict[str, Any]] = []
    explained: set[int] = set()
    for lines_mine, lines_theirs in replaced:
        if len(lines_mine) > _RESHAPE_BLOCK or len(lines_theirs) > _RESHAPE_BLOCK:
            continue
        free_mine, free_theirs = set(lines_mine), set(lines_theirs)
        tight = {j: _tight(theirs[j]) for j in lines_theirs}

        def run(lines: list[str], free: set[int], first: int) -> Iterator[int]:
            """Ends of runs from ``first`` of free or blank lines (two to five lines)."""
            for last in range(first + 1, min(first + _RESHAPE_LINES, len(lines))):
                if last not in free and lines[last].strip():
                    return
                if lines[last].strip():
                    yield last

        for i in lines_mine:
            if i not in free_mine:
                continue
            for k in run(mine, free_mine, i):
                joined, escaped = _tight("".join(mine[i : k + 1])), _tight("\\n".join(mine[i : k + 1]))
                j = next((j for j in lines_theirs if j in free_theirs and tight[j] in (joined, escaped)), None)
                if j is not None:
                    kind = "wrapped" if tight[j] == joined else "split_at_escape"
                    facts.append({"kind": kind, "old_lines": [i + 1, k + 1], "line": start + j})
                    free_mine -= set(range(i, k + 1))
                    free_theirs.discard(j)
                    break
        for i in lines_mine:
            if i not in free_mine:
                continue
            mine_tight = _tight(mine[i])
            for j in lines_theirs:
                if j not in free_theirs or not mine_tight.startswith(tight[j]):
                    continue
                ends = run(theirs, free_theirs, j)
                last = next((end for end in ends if _tight("".join(theirs[j : end + 1])) == mine_tight), None)
                if last is not None:
                    facts.append(
                        {"kind": "joined", "old_lines": [i + 1], "line": start + j, "lines": [start + j, start + last]}
                    )
                    free_mine.discard(i)
                    free_theirs -= set(range(j, last + 1))
                    break
        explained |= {i + 1 for i in set(lines_mine) - free_mine}
    facts.sort(key=lambda fact: fact["old_lines"][0])
    return facts, explained


_CLOSING = re.compile(r"^\s*(?:[\])}]+[;,)]*|end|fi|done|esac|\\end\{\w+\})\s*$")


def _ladder(
    mine: list[str],
    theirs: list[str],
    mine_keys: list[str],
    their_keys: list[str],
    pairs: list[tuple[int, int]],
    start: int,
) -> dict[str, Any] | None:
    """old_string ends with a run of closing lines (``}``, ``)``, ``end``) of another length than the
    file's run after the same line: a level of the ladder left out or added."""
    filled = [i for i, key in enumerate(mine_keys) if key]
    closing = 0
    while closing < len(filled) and _CLOSING.match(mine[filled[len(filled) - 1 - closing]]):
        closing += 1
    if closing == 0 or closing == len(filled):
        return None
    body = filled[len(filled) - 1 - closing]
    partner = dict(pairs).get(body)
    if partner is None:
        return None
    theirs_closing = []
    for j in range(partner + 1, len(theirs)):
        if not their_keys[j]:
            continue
        if not _CLOSING.match(theirs[j]):
            break
        theirs_closing.append(j)
    if not theirs_closing:
        return None
    shifted: dict[str, Any] = {}
    if len(theirs_closing) == closing:  # as many: the same ladder, unless each is deeper (or shallower)
        mine_closing = filled[len(filled) - closing :]
        shifts = {
            len(_leading(mine[i]).expandtabs(4)) - len(_leading(theirs[j]).expandtabs(4))
            for i, j in zip(mine_closing, theirs_closing, strict=True)
        }
        if not (all(n > 0 for n in shifts) or all(n < 0 for n in shifts)):
            return None
        shifted = {"deeper": min(shifts) > 0, "columns": abs(min(shifts)) if len(shifts) == 1 else None}
    return {
        "kind": "closers",
        "line": start + theirs_closing[0],
        "old_line": body + 2,
        "old_has": closing,
        "file_has": len(theirs_closing),
        **({"shifted": shifted} if shifted else {}),
        "lines": [start + theirs_closing[0], start + theirs_closing[-1]],
    }


def _explain(mine: str, theirs: str) -> dict[str, Any] | None:
    """What tells a line of old_string from the file's line most like it, when it is one small thing:
    a word spelled otherwise (both words), a character one side has instead of or besides the other's
    (by code point: a private-use one, a curly quote for an escaped one), or a backslash escape one side
    has and the other lacks."""
    a, b = mine.strip()[:_COMPARE_CHARS], theirs.strip()[:_COMPARE_CHARS]
    if a == b:
        return None
    ops = [op for op in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if op[0] != "equal"]
    if not ops or len(ops) > _EXPLAINED_OPS:
        return None
    escapes = [_escape(a, b, op) for op in ops]
    if all(escapes):
        side, escape = escapes[0] or ("", "")
        if all(found == (side, escape) for found in escapes):
            return {"kind": "escape", "side": side, "escape": escape, "column": ops[0][3] + 1}
    if len(ops) > 3:
        return None
    _, i1, i2, j1, j2 = ops[0]
    x, y = a[i1:i2], b[j1:j2]
    if all(_one_unusual(a[op[1] : op[2]]) or _one_unusual(b[op[3] : op[4]]) for op in ops):
        char, side, instead = (x, "old_string", y) if _one_unusual(x) else (y, "file", x)
        return {
            "kind": "character",
            "side": side,
            "char": char,
            "code_point": code_point(char),
            "name": char_name(char),
            "instead_of": instead,
            "column": j1 + 1,
        }
    words_a = {_word_at(a, op[1], op[2]) for op in ops}
    words_b = {_word_at(b, op[3], op[4]) for op in ops}
    if len(words_a) == 1 and len(words_b) == 1:
        (word_a,), (word_b,) = words_a, words_b
        if word_a and word_b and word_a != word_b:
            return {"kind": "word", "old_has": word_a, "file_has": word_b, "column": b.find(word_b) + 1}
    return None


def _escape(a: str, b: str, op: tuple[str, int, int, int, int]) -> tuple[str, str] | None:
    """(the side with the backslash, the escape sequence) when ``op`` is one side's escape of the
    other's character: ``\\"`` for ``"``, ``\\t`` for a tab, ``\\\\`` for ``\\``."""
    _, i1, i2, j1, j2 = op
    x, y = a[i1:i2], b[j1:j2]
    for plain, extra, side, text, at in ((x, y, "file", b, j2), (y, x, "old_string", a, i2)):
        if extra == "\\" and not plain:  # a backslash only one side has, before the next character
            doubled = text[at : at + 1] == "\\" or text[at - 2 : at - 1] == "\\"  # \\ for \: either one
            return side, "\\\\" if doubled else "\\" + text[at : at + 1]
        if extra in ("\\n", "\\t") and plain == {"\\n": "\n", "\\t": "\t"}[extra]:
            return side, extra
    return None


def _one_unusual(text: str) -> bool:
    """One character that is not ASCII, or an ASCII control character."""
    return len(text) == 1 and (not text.isascii() or (not text.isprintable() and text != "\t"))


def _word_at(text: str, begin: int, end: int) -> str:
    """The word (letters, digits, underscores) around ``text[begin:end]``."""
    while begin > 0 and (text[begin - 1].isalnum() or text[begin - 1] == "_"):
        begin -= 1
    while end < len(text) and (text[end].isalnum() or text[end] == "_"):
        end += 1
    return text[begin:end]


def _similar_in(finder: _Finder, needle: str, region: _Region, total: int) -> dict[str, Any] | None:
    """The region's line most like ``needle``'s first line, when the region was found by a rare word
    and no line matches even loosely (a typo in every line)."""
    mine = needle.split("\n")
    first = next((i for i, line in enumerate(mine) if line.strip()), 0)
    anchor = _key(mine[first])[:_COMPARE_CHARS]
    theirs = _window_lines(finder, region.start, region.stop)
    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(anchor)
    best: tuple[float, int, int] | None = None  # (ratio to 2 places, -distance from the voted line, j)
    for j, line in enumerate(theirs):
        matcher.set_seq1(_key(line)[:_COMPARE_CHARS])
        ratio = round(matcher.ratio(), 2)
        ranked = (ratio, -abs(region.start + j - first - region.voted), -j)
        if ratio >= _CUTOFF and (best is None or ranked > best):
            best = ranked
    if best is None:
        return None
    number = max(1, region.start - best[2] - first)
    span = max(1, min(len(mine), total - number + 1))
    explained = _explain(mine[first], theirs[-best[2]])
    return {
        "kind": "similar",
        "line": number,
        "similarity": round(best[0], 2),
        "candidate": _candidate(finder.haystack, finder.offset_of(number), number, span),
        **({"near": [{"old_line": first + 1, "line": region.start - best[2], "what": explained}]} if explained else {}),
    }


_KIND_ORDER = [
    "invisible_character",
    "lookalike_character",
    "cr_in_file",
    "trailing_whitespace",
    "mixed_indentation",
    "tabs_vs_spaces",
    "indentation",
    "whitespace",
    "blank_lines",
]


def _kinds(differences: list[dict[str, Any]]) -> list[str]:
    present = {d["kind"] for d in differences}
    return [kind for kind in _KIND_ORDER if kind in present]


def _focused(differences: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One difference per kind (its first), with every line that kind is on (``lines``), in line order;
    where the file mixes tabs and spaces that says it all, and tabs vs spaces is not repeated."""
    by_kind: dict[str, dict[str, Any]] = {}
    for difference in differences:
        first = by_kind.get(difference["kind"])
        if first is None:
            by_kind[difference["kind"]] = {**difference, "lines": [difference["line"]]}
        elif difference["line"] not in first["lines"] and len(first["lines"]) < 20:
            first["lines"].append(difference["line"])
    if "mixed_indentation" in by_kind:
        mixed = by_kind["mixed_indentation"]
        for kind in ("tabs_vs_spaces", "indentation"):
            other = by_kind.pop(kind, None)
            if other is not None:
                mixed["lines"] = sorted(set(mixed["lines"]) | set(other["lines"]))[:20]
    chosen = sorted(by_kind.values(), key=lambda d: (d["line"], d.get("column", 0)))
    return chosen[:_MAX_DIFFERENCES]


def _with_fragments(
    mine_keys: list[str], their_keys: list[str], pairs: list[tuple[int, int]], theirs: list[str]
) -> tuple[list[tuple[int, int]], dict[int, str]]:
    """old_string's first line may start, and its last line end, inside a line of the file: pair them
    with the file's line they are part of (and the part itself) when the alignment left them out."""
    cut: dict[int, str] = {}
    paired = {i for i, _ in pairs}
    last = len(mine_keys) - 1
    out = list(pairs)
    if not pairs:  # one line, or nothing aligned: the first window line holding the first line's key
        key = mine_keys[0]
        for j, theirs_key in enumerate(their_keys):
            if key and key in theirs_key:
                part = _part(theirs[j], key, first=True, last=last == 0)
                if part is not None:
                    out.append((0, j))
                    cut[0] = part
                    break
        return out, cut
    ordered = sorted(pairs)
    if 0 not in paired and mine_keys[0]:
        i, j = ordered[0]
        k = j - i  # where the first line would be
        if 0 <= k < len(theirs) and their_keys[k].endswith(mine_keys[0]):
            part = _part(theirs[k], mine_keys[0], first=True, last=False)
            if part is not None:
                out.insert(0, (0, k))
                cut[0] = part
    if last not in paired and last > 0 and mine_keys[last]:
        i, j = ordered[-1]
        k = j + (last - i)
        if 0 <= k < len(theirs) and their_keys[k].startswith(mine_keys[last]):
            part = _part(theirs[k], mine_keys[last], first=False, last=True)
            if part is not None:
                out.append((last, k))
                cut[last] = part
    return out, cut


def _part(line: str, key: str, *, first: bool, last: bool) -> str | None:
    """The part of ``line`` whose key is ``key``: its end (for old_string's first line), its start (for
    the last line) or (for a one-line old_string) a part of it; None when there is none. Parts are
    tried only from characters like the key's first one to characters like its last (bounded work)."""
    if len(line) > _COMPARE_CHARS * 2 or not key:
        return None
    if _key(line) == key:
        return line
    plain = line.translate(_PLAIN_SAME_LENGTH)
    begins = [b for b, c in enumerate(plain) if c == key[0]] if first else [0]
    ends = [e + 1 for e, c in enumerate(plain) if c == key[-1]] if last else [len(line)]
    tried = 0
    for begin in reversed(begins):  # the latest start first: the shortest part
        for end in ends:
            if end <= begin:
                continue
            tried += 1
            if tried > _PART_TRIES:
                return None
            if _key(line[begin:end]) == key:
                return line[begin:end]
    return None


def _leading(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _line_differences(
    mine: str, theirs: str, old_line: int, line: int, *, first: bool = False, last: bool = False
) -> list[dict[str, Any]]:
    """How one line of old_string differs from the file's line it was aligned with (same key). The
    first line of old_string may start inside the file's line, and its last line end inside one: less
    indentation on the first, or no trailing whitespace on the last, is not a difference."""
    if mine == theirs:
        return []
    out: list[dict[str, Any]] = []
    if theirs.endswith("\r") and not mine.endswith("\r"):
        out.append({"kind": "cr_in_file", "line": line, "old_line": old_line})
        theirs = theirs[:-1]
    mine_core, theirs_core = mine.rstrip(" \t"), theirs.rstrip(" \t")
    trailing_mine, trailing_theirs = mine[len(mine_core) :], theirs[len(theirs_core) :]
    if trailing_mine != trailing_theirs and not (last and not trailing_mine):
        out.append(
            {
                "kind": "trailing_whitespace",
                "line": line,
                "old_line": old_line,
                "file_has": theirs[len(theirs_core) :],
                "old_has": mine[len(mine_core) :],
            }
        )
    lead_mine, lead_theirs = _leading(mine_core), _leading(theirs_core)
    if first and lead_theirs.endswith(lead_mine):  # old_string starts inside the indentation: no difference
        theirs_core = theirs_core[len(lead_theirs) - len(lead_mine) :]
        lead_theirs = lead_mine
    if lead_mine != lead_theirs and mine_core.strip() and theirs_core.strip():
        kind = "tabs_vs_spaces" if ("\t" in lead_mine) != ("\t" in lead_theirs) else "indentation"
        out.append({"kind": kind, "line": line, "old_line": old_line, "file_has": lead_theirs, "old_has": lead_mine})
    body_mine, body_theirs = mine_core[len(lead_mine) :], theirs_core[len(lead_theirs) :]
    if body_mine != body_theirs:
        out.extend(_char_difference(body_mine, body_theirs, line, old_line, len(lead_theirs)))
    return out


def _char_difference(mine: str, theirs: str, line: int, old_line: int, indent: int) -> list[dict[str, Any]]:
    """The first place two bodies with the same key part: an invisible or look-alike character (named
    by code point and column), or a different run of whitespace."""
    i = j = 0
    while i < len(mine) and j < len(theirs):
        a, b = mine[i], theirs[j]
        if a == b:
            i += 1
            j += 1
            continue
        column = indent + j + 1
        for char, side in ((b, "file"), (a, "old_string")):
            if _hidden(char) or ord(char) in _LOOKALIKE:
                kind = "invisible_character" if _hidden(char) else "lookalike_character"
                other = a if side == "file" else b
                return [
                    {
                        "kind": kind,
                        "line": line,
                        "old_line": old_line,
                        "column": column,
                        "side": side,
                        "char": char,
                        "code_point": code_point(char),
                        "name": char_name(char),
                        "instead_of": ""
                        if _hidden(char)
                        else (_LOOKALIKE[ord(char)] if side == "file" else _run_at(theirs, j, other)),
                    }
                ]
        if a in " \t" or b in " \t":
            while i > 0 and j > 0 and mine[i - 1] in " \t" and theirs[j - 1] in " \t":
                i, j = i - 1, j - 1  # back to where the run of blanks starts
            run_mine = len(mine[i:]) - len(mine[i:].lstrip(" \t"))
            run_theirs = len(theirs[j:]) - len(theirs[j:].lstrip(" \t"))
            return [
                {
                    "kind": "whitespace",
                    "line": line,
                    "old_line": old_line,
                    "column": indent + j + 1,
                    "file_has": theirs[j : j + run_theirs],
                    "old_has": mine[i : i + run_mine],
                }
            ]
        return []  # pragma: no cover - equal keys differ only in the characters above
    rest = theirs[j:] or mine[i:]
    if rest and (_hidden(rest[0]) or ord(rest[0]) in _LOOKALIKE):  # e.g. a no-break space before the end
        side = "file" if theirs[j:] else "old_string"
        hidden = _hidden(rest[0])
        return [
            {
                "kind": "invisible_character" if hidden else "lookalike_character",
                "line": line,
                "old_line": old_line,
                "column": indent + j + 1,
                "side": side,
                "char": rest[0],
                "code_point": code_point(rest[0]),
                "name": char_name(rest[0]),
                "instead_of": _LOOKALIKE[ord(rest[0])] if not hidden and side == "file" else "",
            }
        ]
    return []


def _run_at(text: str, at: int, char: str) -> str:
    """The run of ``char`` in ``text`` from ``at`` (the "--" an em dash stood in for)."""
    end = at
    while end < len(text) and text[end] == char:
        end += 1
    return text[at:end] or char


def _indentation_mix(
    mine: list[str], theirs: list[str], pairs: list[tuple[int, int]], start: int
) -> list[dict[str, Any]]:
    """The file's block mixes tabs and spaces in its indentation where old_string uses one kind."""
    theirs_leads = [_leading(theirs[j]) for _, j in pairs if theirs[j].strip()]
    mine_leads = [_leading(mine[i]) for i, _ in pairs if mine[i].strip()]
    file_mixed = any("\t" in lead for lead in theirs_leads) and any(" " in lead for lead in theirs_leads)
    mine_mixed = any("\t" in lead for lead in mine_leads) and any(" " in lead for lead in mine_leads)
    if file_mixed == mine_mixed:
        return []
    for i, j in pairs:
        if _leading(mine[i]) != _leading(theirs[j]) and theirs[j].strip():
            return [
                {
                    "kind": "mixed_indentation",
                    "line": start + j,
                    "old_line": i + 1,
                    "side": "file" if file_mixed else "old_string",
                    "file_has": _leading(theirs[j]),
                    "old_has": _leading(mine[i]),
                }
            ]
    return []


def _lines_between(mine_keys: list[str], their_keys: list[str], pairs: list[tuple[int, int]], start: int) -> list[int]:
    """Lines of the file (not blank) between two lines of old_string that are adjacent in it."""
    filled = sorted((i, j) for i, j in pairs if mine_keys[i])
    out: list[int] = []
    for (i1, j1), (i2, j2) in pairwise(filled):
        if all(not k for k in mine_keys[i1 + 1 : i2]):
            out.extend(start + j for j in range(j1 + 1, j2) if their_keys[j])
    return out[:20]


def _blank_pairs(mine_keys: list[str], pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The blank lines of old_string paired with the file's, between two aligned lines whose runs of
    blank lines are as long (a blank line of spaces is a difference too)."""
    filled = sorted((i, j) for i, j in pairs if mine_keys[i])
    out: list[tuple[int, int]] = []
    for (i1, j1), (i2, j2) in pairwise(filled):
        if i2 - i1 == j2 - j1 > 1:
            out.extend((i1 + k, j1 + k) for k in range(1, i2 - i1))
    return out


def _blank_runs(
    mine_keys: list[str], their_keys: list[str], pairs: list[tuple[int, int]], start: int
) -> list[dict[str, Any]]:
    """Between two aligned lines, a run of blank lines of another length."""
    out: list[dict[str, Any]] = []
    filled = [(i, j) for i, j in pairs if mine_keys[i]]
    for (i1, j1), (i2, j2) in pairwise(filled):
        gap_mine, gap_theirs = i2 - i1 - 1, j2 - j1 - 1
        if gap_mine == gap_theirs:
            continue
        if all(not k for k in mine_keys[i1 + 1 : i2]) and all(not k for k in their_keys[j1 + 1 : j2]):
            out.append(
                {
                    "kind": "blank_lines",
                    "line": start + j1 + 1,
                    "old_line": i1 + 2,
                    "file_has": gap_theirs,
                    "old_has": gap_mine,
                }
            )
    return out


def _runs(pairs: list[tuple[int, int]]) -> list[list[int]]:
    """Consecutive (old_string line, file line) pairs as [first old line, last old line, first file line]."""
    runs: list[list[int]] = []
    for mine, theirs in pairs:
        if runs and mine == runs[-1][1] + 1 and theirs == runs[-1][2] + (mine - runs[-1][0]):
            runs[-1][1] = mine
        else:
            runs.append([mine, mine, theirs])
    return runs


def _candidate_around(
    finder: _Finder, line: int, span: int, differences: list[dict[str, Any]], near: list[dict[str, Any]]
) -> list[tuple[int, str]]:
    """The region's lines (a long line cut around its first difference); a region longer than
    ``_CANDIDATE_LINES`` is cut to the lines from just before its first difference."""
    columns = {d["line"]: d["column"] for d in reversed(differences) if "column" in d}
    if span <= _CANDIDATE_LINES:
        whole = _candidate(finder.haystack, finder.offset_of(line), line, span, columns)
        if sum(len(text) for _, text in whole) <= _CANDIDATE_BUDGET:
            return whole
    marks = [d["line"] for d in differences] + [n["line"] for n in near]
    first = min(marks) if marks else line
    begin = max(line, first - 2)
    return _candidate(finder.haystack, finder.offset_of(begin), begin, _CUT_LINES, columns)


def _candidate(
    haystack: str, offset: int, line: int, span: int, columns: dict[int, int] | None = None
) -> list[tuple[int, str]]:
    count = span if span <= _CANDIDATE_LINES else _CUT_LINES  # a longer region: its first lines
    lines = haystack[offset : after_newlines(haystack, offset, count)].split("\n")[:count]
    out: list[tuple[int, str]] = []
    size = 0
    for n, text in enumerate(lines, line):
        shown = _cut(text, (columns or {}).get(n))
        size += len(shown)
        if out and size > _CANDIDATE_BUDGET:
            break  # long lines: as many as fit, never fewer than one
        out.append((n, shown))
    return out


def _cut(text: str, column: int | None) -> str:
    """A line of at most ``_CANDIDATE_CHARS`` characters: its start, or the part around ``column``."""
    if len(text) <= _CANDIDATE_CHARS:
        return text
    if column is None or column <= _CANDIDATE_CHARS - 40:
        return text[:_CANDIDATE_CHARS] + "…"
    begin = max(0, column - _CANDIDATE_CHARS // 2)
    return "…" + text[begin : begin + _CANDIDATE_CHARS] + ("…" if begin + _CANDIDATE_CHARS < len(text) else "")


# --- 4. the similarity fallback --------------------------------------------------------------------


@dataclass(frozen=True)
class _Line:
    number: int  # 1-based
    offset: int  # where it starts in the haystack
    text: str


def _nearest(finder: _Finder, needle: str) -> dict[str, Any]:
    """The lines most like ``needle``: its first non-blank line against lines of the file (each cut to
    a few hundred characters), then the best few windows against the whole needle (also cut).

    The lines sharing the anchor's rarest words, or most of a few of its three-character pieces, are
    always scored (C-level finds, bounded hits). The other lines are visited in order until the budget
    of lines or characters is spent, and of those only the ones that could score best (by the cheap
    upper bound ``quick_ratio``) are scored in full."""
    haystack = finder.haystack
    needle_lines = needle.split("\n")
    anchor = next((line.strip() for line in needle_lines if line.strip()), "")[:_COMPARE_CHARS]
    if not anchor:
        return {"kind": None}
    matcher = difflib.SequenceMatcher()
    matcher.set_seq2(anchor)
    rare = [_compared(line) for line in _lines_sharing_rare_words(finder, anchor)]
    seen = {line.number for line in rare}
    if haystack.count("\n", 0, _COMPARE_BUDGET * 2) >= _LINE_BUDGET or len(haystack) > _COMPARE_BUDGET:
        for line in _lines_sharing_pieces(finder, anchor):
            if line.number not in seen:
                seen.add(line.number)
                rare.append(_compared(line))
    hopeful: list[tuple[float, int, _Line]] = []  # a min-heap of (bound, -number, line): the best kept
    compared = 0
    searched_to: int | None = None  # the last line visited, when the budget ran out before the end
    for visited, line in enumerate(line for line in _lines(haystack) if line.number not in seen):
        if visited >= _LINE_BUDGET or compared >= _COMPARE_BUDGET:
            searched_to = line.number - 1
            break
        line = _compared(line)
        compared += len(line.text)
        bound = _bound(matcher, line.text)
        if bound is not None:
            heapq.heappush(hopeful, (bound, -line.number, line))
            if len(hopeful) > _SCORE_BUDGET:
                heapq.heappop(hopeful)
    scored: list[tuple[float, int, _Line]] = []  # the five most similar lines, earlier lines winning ties
    for line in chain(rare, (line for _, _, line in hopeful)):
        if _bound(matcher, line.text) is None:
            continue
        ratio = matcher.ratio()
        if ratio >= _CUTOFF:
            heapq.heappush(scored, (ratio, -line.number, line))
            if len(scored) > 5:
                heapq.heappop(scored)
    span = len(needle_lines)
    best: tuple[float, _Line] | None = None
    for _, _, line in scored:
        window = _window(haystack, line.offset, span)
        ratio = difflib.SequenceMatcher(None, window, needle[: _COMPARE_CHARS * 4]).ratio()
        if best is None or ratio > best[0] or (ratio == best[0] and line.number < best[1].number):
            best = (ratio, line)
    partial = {} if searched_to is None else {"searched_to": searched_to}  # said, so no claim covers the rest
    if best is None:
        return {"kind": None, **partial}
    ratio, line = best
    columns = None
    full = haystack[line.offset : haystack.find("\n", line.offset) % (len(haystack) + 1)]
    if len(full) > _CANDIDATE_CHARS:  # a long line is shown around the part most like old_string's start
        probe = anchor[:60]
        match = difflib.SequenceMatcher(None, full, probe, autojunk=False).find_longest_match(
            0, len(full), 0, len(probe)
        )
        columns = {line.number: match.a - match.b + 1}
    first = next((i for i, text in enumerate(needle_lines) if text.strip()), 0)
    explained = _explain(needle_lines[first], full) if first == 0 else None
    return {
        "kind": "similar",
        "line": line.number,
        "similarity": round(ratio, 2),
        "candidate": _candidate(haystack, line.offset, line.number, span, columns),
        **({"near": [{"old_line": 1, "line": line.number, "what": explained}]} if explained else {}),
        **partial,
    }


def _compared(line: _Line) -> _Line:
    """The part of a line similarity is judged on."""
    return _Line(line.number, line.offset, line.text.strip()[:_COMPARE_CHARS])


def _bound(matcher: difflib.SequenceMatcher[str], text: str) -> float | None:
    """``quick_ratio`` of ``text`` against the anchor (an upper bound of ``ratio``), or None when even
    that is under the cutoff; ``text`` stays set in ``matcher``."""
    if not text:
        return None
    matcher.set_seq1(text)
    if matcher.real_quick_ratio() < _CUTOFF:
        return None
    bound = matcher.quick_ratio()
    return bound if bound >= _CUTOFF else None


def _lines(text: str) -> Iterator[_Line]:
    """Every line of ``text``, split a block at a time."""
    number, start = 1, 0
    while True:
        stop = text.find("\n", start + _BLOCK)
        block = text[start:] if stop < 0 else text[start:stop]
        for line in block.split("\n"):
            yield _Line(number, start, line)
            number += 1
            start += len(line) + 1
        if stop < 0:
            return


def _lines_sharing_rare_words(finder: _Finder, anchor: str, words: int = 3, hits: int = 50) -> list[_Line]:
    """The lines holding the first ``hits`` occurrences of each of the anchor's ``words`` rarest words
    that occur at all (C-level searches), in file order."""
    tokens = sorted(set(re.findall(r"\w{3,}", anchor)), key=lambda t: (-len(t), t))[:_RARE_TOKENS]
    counted = sorted((len(found), token) for token in tokens if (found := finder.positions(token, hits)))
    positions = sorted({p for _, token in counted[:words] for p in finder.positions(token, hits)})
    return _lines_at_positions(finder, positions)


def _lines_at_positions(finder: _Finder, positions: list[int]) -> list[_Line]:
    """The lines holding each of the sorted ``positions``, once each, in file order."""
    haystack = finder.haystack
    found: dict[int, _Line] = {}
    for position in positions:
        number = finder.line_of(position)
        if number not in found:
            offset = haystack.rfind("\n", 0, position) + 1
            end = haystack.find("\n", position)
            found[number] = _Line(number, offset, haystack[offset : end if end >= 0 else len(haystack)])
    return list(found.values())


def _lines_sharing_pieces(finder: _Finder, anchor: str, keep: int = 50) -> list[_Line]:
    """The ``keep`` lines holding the most of a few three-character pieces of the anchor (letters,
    digits and underscores only), spread along it; earlier lines win ties."""
    pieces = sorted({anchor[i : i + 3] for i in range(len(anchor) - 2) if _PIECE.fullmatch(anchor[i : i + 3])})
    if not pieces:
        return []
    step = max(1, len(pieces) // _PIECES)
    positions = sorted((p, piece) for piece in pieces[::step][:_PIECES] for p in finder.positions(piece, _PIECE_HITS))
    lines = _lines_at_positions(finder, [p for p, _ in positions])
    starts = [line.offset for line in lines]
    hits: dict[int, set[str]] = {}
    for position, piece in positions:
        hits.setdefault(bisect.bisect_right(starts, position) - 1, set()).add(piece)
    best = sorted(hits, key=lambda i: (-len(hits[i]), i))[:keep]
    return [lines[i] for i in sorted(best)]


def _window(haystack: str, offset: int, span: int) -> str:
    """``span`` lines from ``offset``, joined and cut to a few hundred characters."""
    return "\n".join(haystack[offset : offset + _COMPARE_CHARS * 4].split("\n")[:span])
