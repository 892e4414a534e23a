"""Glob patterns as the discovery tools read them ('*', '?', '[...]' within a name, '**' across
directories, '{a,b}' and '{1..3}' alternatives), matched against a path's names in time linear in the
path, whatever the pattern."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import bracex
from wcmatch import fnmatch as wcfnmatch

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
