"""What the discovery tools (list, glob, grep) share: where a walk starts, which directories it skips,
how glob patterns match and .gitignore rules apply (both in time linear in the path, whatever the
pattern), and how names are shown so that no name can forge a line."""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import bracex
from wcmatch import fnmatch as wcfnmatch

from fs_tools.provider import DIRECTORY, Entry, ReadChild

VCS_DIRECTORIES = frozenset({".git", ".hg", ".svn", ".bzr", "_darcs", "CVS", ".jj"})


def visible(name: str) -> str:
    """Text as one printable line: line breaks, other control characters, undecodable bytes and lone
    surrogates escaped; tabs kept, so a line copied from grep output still matches the file."""
    if name.isprintable():
        return name
    return "".join(char if char.isprintable() or char == "\t" else repr(char)[1:-1] for char in name)


MAX_GLOB_CHARS = 4096  # a glob pattern longer than Linux's longest path cannot name one
MAX_GLOB_EXPANSIONS = 1000  # patterns one brace expression may expand to (wcmatch's limit, kept)
MAX_GLOB_SEGMENTS = 2000  # names (segments other than '**') over all the expansions
# names between two '**'s over all the expansions: each may sit at any depth, so each costs a scan of the
# path; with the limit above, this bounds the cost of matching one path (tens of milliseconds at the
# deepest path a walk allows, microseconds for everyday patterns)
MAX_GLOB_FLOATING = 100
_SEGMENT_FLAGS = wcfnmatch.DOTMATCH | wcfnmatch.CASE  # '*' matches a leading '.', as git and DOTGLOB do
_SEGMENT_MAGIC = frozenset("*?[\\")

# Whether one path segment (a name) fits one segment of a pattern.
SegmentTest = Callable[[str], object]


@dataclass(frozen=True)
class _Alternative:
    """One brace expansion of a glob, split at '/': a fixed ``head``, ``pieces`` that float between
    '**'s, and a fixed ``tail``. A path fits when the head fits its first names, the tail its last, and
    each piece, leftmost first, fits somewhere in between. The search never moves back (the leftmost
    place for a piece leaves the most room for the next), so the cost is at most path depth × pattern
    size, never the backtracking of a regex in which each '**' may take any number of directories."""

    head: tuple[SegmentTest, ...]
    pieces: tuple[tuple[SegmentTest, ...], ...]
    tail: tuple[SegmentTest, ...]
    floating: bool  # has a '**'
    least: int  # the fewest names a path needs to fit

    @property
    def floating_names(self) -> int:
        return sum(len(piece) for piece in self.pieces)

    def matches(self, parts: Sequence[str]) -> bool:
        count = len(parts)
        if not self.floating:
            return count == self.least and _fits(self.head, parts, 0)
        if count < self.least or not _fits(self.tail, parts, count - len(self.tail)):
            return False
        if not _fits(self.head, parts, 0):
            return False
        at, end = len(self.head), count - len(self.tail)
        for piece in self.pieces:
            while True:
                if at + len(piece) > end:
                    return False
                if _fits(piece, parts, at):
                    break
                at += 1
            at += len(piece)
        return True


def _fits(tests: tuple[SegmentTest, ...], parts: Sequence[str], at: int) -> bool:
    return all(test(parts[at + offset]) for offset, test in enumerate(tests))


class GlobPattern:
    """A glob compiled once per call ('*', '?', '[...]' within a name, '**' across directories,
    '{a,b}' and '{1..3}' alternatives), matched against a path's names in bounded time."""

    def __init__(self, alternatives: tuple[_Alternative, ...]) -> None:
        self._alternatives = alternatives

    def matches(self, parts: Sequence[str]) -> bool:
        return any(alternative.matches(parts) for alternative in self._alternatives)


def compile_glob(pattern: str, *, braces: bool = True, match_base: bool = False) -> GlobPattern:
    """``pattern`` ready to match, or ValueError saying which limit it passes. With ``match_base`` an
    expansion without '/' matches a name at any depth (grep's ``glob``: '*.py')."""
    if len(pattern) > MAX_GLOB_CHARS:
        raise ValueError(f"the pattern is {len(pattern):,} characters long, over the limit of {MAX_GLOB_CHARS:,}")
    tests: dict[str, SegmentTest] = {}  # each distinct segment compiled once
    alternatives = tuple(_alternative(text, match_base, tests) for text in _expansions(pattern, braces))
    names = sum(alternative.least for alternative in alternatives)
    if names > MAX_GLOB_SEGMENTS:
        raise ValueError(
            f"its {len(alternatives):,} brace alternative(s) have {names:,} path segments in all, over the limit "
            f"of {MAX_GLOB_SEGMENTS:,}; use fewer alternatives"
        )
    floating = sum(alternative.floating_names for alternative in alternatives)
    if floating > MAX_GLOB_FLOATING:
        raise ValueError(
            f"it has {floating:,} path segments between two '**' (over its brace alternatives), over the limit of "
            f"{MAX_GLOB_FLOATING:,}; use fewer '**' or fewer alternatives"
        )
    return GlobPattern(alternatives)


def _expansions(pattern: str, braces: bool) -> list[str]:
    if not braces:
        return [pattern]
    try:
        return list(
            dict.fromkeys(bracex.iexpand(pattern, keep_escapes=True, limit=MAX_GLOB_EXPANSIONS, return_empty=True))
        )
    except bracex.ExpansionLimitException as exc:
        raise ValueError(f"its braces expand to more than {MAX_GLOB_EXPANSIONS:,} patterns") from exc
    except RecursionError as exc:
        raise ValueError("its braces are nested too deeply") from exc


def _alternative(text: str, match_base: bool, tests: dict[str, SegmentTest]) -> _Alternative:
    names = text.split("/")
    if match_base and len(names) == 1:
        names.insert(0, "**")
    segments: list[str] = []
    for index, raw in enumerate(names):
        name = _without_lone_backslash(raw)
        if not raw and 0 < index < len(names) - 1:
            continue  # 'a//b' is 'a/b'; a leading '' (an absolute pattern) and a trailing '' ('a/') fit no name
        # a name that is only an escaped '/' ('a/\/b') stays an empty segment, which no real name fits
        if name == "**" and segments[-1:] == ["**"]:
            continue
        segments.append(name)
    if segments[-1] == "**":
        segments.append("*")  # a trailing '**' stands for at least one more name: 'src/**' is not 'src' itself
    runs: list[list[SegmentTest]] = [[]]
    for name in segments:
        if name == "**":
            runs.append([])
        else:
            runs[-1].append(_segment_test(name, tests))
    head, *pieces = (tuple(run) for run in runs)
    if not pieces:
        return _Alternative(head, (), (), floating=False, least=len(head))
    tail = pieces.pop()
    least = len(head) + len(tail) + sum(len(piece) for piece in pieces)
    return _Alternative(head, tuple(pieces), tail, floating=True, least=least)


def _without_lone_backslash(name: str) -> str:
    """A trailing backslash escapes nothing (or the '/' after it): dropped, as wcmatch drops it."""
    return name[:-1] if (len(name) - len(name.rstrip("\\"))) % 2 else name


def _segment_test(segment: str, tests: dict[str, SegmentTest]) -> SegmentTest:
    if _SEGMENT_MAGIC.isdisjoint(segment):
        return segment.__eq__
    test = tests.get(segment)
    if test is None:
        # wcmatch's translation of one name: '*' runs become atomic groups, so it never backtracks
        (expression,), _ = wcfnmatch.translate(segment, flags=_SEGMENT_FLAGS)
        test = tests[segment] = re.compile(expression).fullmatch
    return test


def glob_pattern_violations(
    data: Mapping[str, Any], key: str, *, match_base: bool = False
) -> list[tuple[tuple[int | str, ...], str]]:
    """A glob pattern over a limit (length, brace expansions, segments) is the caller's mistake."""
    pattern = data.get(key)
    if not isinstance(pattern, str) or not pattern:
        return []
    try:
        compile_glob(pattern, match_base=match_base)
    except (ValueError, re.error, FutureWarning) as exc:  # re warns of '[[' in a class: an error under -W error
        return [((key,), f"invalid glob pattern: {exc}")]
    return []


def with_first_rows(head: str, rows: list[str], shown: int = 20) -> str:
    """A timeout message: what ran out, then the first rows found so far."""
    if not rows:
        return head
    more = f"\n… and {len(rows) - shown} more" if len(rows) > shown else ""
    return f"{head}:\n" + "\n".join(rows[:shown]) + more


def plural(count: int, one: str, many: str) -> str:
    return f"{count:,} {one if count == 1 else many}"


def shown_path(start: tuple[str, ...], parts: tuple[str, ...]) -> str:
    """An entry's path as the tools show it: relative to its root (``start`` is the walk's)."""
    return "/".join(visible(p) for p in (*start, *parts))


@dataclass(frozen=True)
class IgnoreRule:
    """One usable line of a .gitignore."""

    pattern: GlobPattern  # relative to the .gitignore's directory
    negated: bool  # '!': re-includes what an earlier rule excluded
    directories_only: bool  # a trailing '/'


def ignore_rules(text: str, deadline: float = math.inf) -> list[IgnoreRule]:
    """The rules of one .gitignore, in order. A line git cannot use ('!', a lone trailing '\\') or that
    passes a pattern limit matches nothing, as git skips what it cannot parse; the other lines still
    apply. TimeoutError once ``deadline`` (a ``time.monotonic`` value) has passed."""
    rules = []
    for index, line in enumerate(text.removeprefix("\ufeff").split("\n")):  # git splits at LF only
        if index % 256 == 255 and time.monotonic() > deadline:
            raise TimeoutError("the time budget ran out while reading a .gitignore")
        rule = ignore_rule(line.removesuffix("\r"))
        if rule is not None:
            rules.append(rule)
    return rules


_STAR_RUN = re.compile(r"\*{3,}")


def ignore_rule(line: str) -> IgnoreRule | None:
    """One .gitignore line as git reads it (gitignore(5)), or None for a blank, a comment or a line git
    cannot use."""
    line = _trim_trailing_spaces(line)
    if not line or line.startswith("#"):
        return None
    negated = line.startswith("!")
    if negated:
        line = line[1:]
    if (len(line) - len(line.rstrip("\\"))) % 2:
        return None  # a trailing '\\' that escapes nothing: git's matcher refuses the whole pattern
    directories_only = line.endswith("/")
    if directories_only:
        line = line[:-1]
    if not line or (len(line) - len(line.rstrip("\\"))) % 2:
        return None  # git strips the '/' before escapes are read: 'd\/' leaves a lone '\', matching nothing
    if "//" in line:
        return None  # git matches the pattern against the path as written: no path has an empty name
    line = _STAR_RUN.sub("**", line)  # git's wildmatch reads any run of stars as '**' (or '*' within a name)
    # a '/' at the start or inside anchors the pattern to the .gitignore's directory; a bare name
    # matches at any depth below it
    line = line.removeprefix("/") if "/" in line else f"**/{line}"
    try:
        pattern = compile_glob(line, braces=False)  # git has no braces: '{' is literal
    except (ValueError, re.error, FutureWarning):
        return None
    return IgnoreRule(pattern, negated, directories_only)


def _trim_trailing_spaces(line: str) -> str:
    """Trailing spaces go unless escaped with a backslash (git's ``trim_trailing_spaces``)."""
    if not line.endswith(" "):
        return line
    stripped = line.rstrip(" ")
    if (len(stripped) - len(stripped.rstrip("\\"))) % 2:
        stripped += " "  # the first trailing space is escaped, and the ones after it are not
    return stripped


@dataclass
class IgnoreRules:
    """The .gitignore files that apply to a walk: those of the start directory's ancestors inside the
    root, and those met on the way down. Each applies below its own directory, and for any path the
    deepest file with a matching rule decides (so a nested ``!keep.log`` re-includes what a parent
    ignored), the last matching line within a file, as in git. A directory that is ignored is not
    entered, so nothing below it can be re-included; when the start itself lies in an ignored directory,
    everything below it is ignored."""

    enabled: bool
    start: tuple[str, ...] = ()  # the walk's start, relative to its root
    deadline: float = math.inf  # reading rules stops here (TimeoutError)
    _files: dict[tuple[str, ...], list[IgnoreRule]] = field(default_factory=dict)
    _start_ignored: bool | None = None  # worked out once the rules above the start are read
    _parent: tuple[str, ...] | None = None  # the directory whose applicable files are cached
    _applicable: list[tuple[int, list[IgnoreRule]]] = field(default_factory=list)

    def load(self, directory: tuple[str, ...], read: ReadChild) -> None:
        """The walk's ``enter`` hook: ``directory`` is relative to the root, and its .gitignore (at most
        1 MiB of it) is read with ``read``."""
        if not self.enabled:
            return
        data = read(".gitignore", 1 << 20)
        if data is None:
            return
        rules = ignore_rules(data.decode("utf-8", "replace"), self.deadline)
        if rules:
            self._files[directory] = rules
            self._parent = None
            self._start_ignored = None

    def ignored(self, entry: Entry) -> bool:
        if not self.enabled:
            return False
        if self._start_ignored is None:
            depths = range(1, len(self.start) + 1)
            self._start_ignored = any(self._verdict(self.start[:depth], directory=True) for depth in depths)
        return self._start_ignored or self._verdict((*self.start, *entry.parts), directory=entry.kind == DIRECTORY)

    def _verdict(self, parts: tuple[str, ...], *, directory: bool) -> bool:
        if not self._files:
            return False
        for depth, rules in self._files_above(parts[:-1]):  # deepest first: it has the last word
            rest = parts[depth:]
            for index, rule in enumerate(reversed(rules)):
                if index % 64 == 63 and time.monotonic() > self.deadline:
                    raise TimeoutError("the time budget ran out while applying .gitignore rules")
                if (directory or not rule.directories_only) and rule.pattern.matches(rest):
                    return not rule.negated
        return False

    def _files_above(self, parent: tuple[str, ...]) -> list[tuple[int, list[IgnoreRule]]]:
        """The rules of ``parent`` and its ancestors, deepest first, as (depth, rules); computed once per
        directory, since a walk meets a directory's entries one after another."""
        if parent != self._parent:
            found = ((depth, self._files.get(parent[:depth])) for depth in range(len(parent), -1, -1))
            self._applicable = [(depth, rules) for depth, rules in found if rules]
            self._parent = parent
        return self._applicable
