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
    return GlobPattern(tuple(_compiled(pattern, braces, match_base, {}, _Spent())))


class GlobListLimit(ValueError):
    """A pattern of a list compiled as one (``compile_globs``) passes a limit: ``index`` is its place."""

    def __init__(self, index: int, message: str) -> None:
        super().__init__(message)
        self.index = index


def compile_globs(patterns: Sequence[str], *, match_base: bool = False) -> GlobPattern:
    """One pattern that matches a path when any of ``patterns`` does, within the limits of one pattern:
    the list shares them, so its cost to compile and to match a path is that of one pattern however
    long the list (a hundred brace ranges of a thousand each would otherwise cost a hundred times the
    limit). ``GlobListLimit`` names the index of the first pattern that cannot be compiled."""
    tests: dict[str, SegmentTest] = {}
    spent = _Spent()
    alternatives: list[_Alternative] = []
    for index, pattern in enumerate(patterns):
        try:
            alternatives += _compiled(pattern, True, match_base, tests, spent)
        except (ValueError, re.error, FutureWarning) as exc:  # as glob_pattern_violations catches them
            raise GlobListLimit(index, str(exc)) from exc
    return GlobPattern(tuple(alternatives))


@dataclass
class _Spent:
    """What the patterns before one (of a list compiled as one) took of the limits they share."""

    expansions: int = 0
    names: int = 0
    floating: int = 0

    def over(self, lone: str, shared: str) -> str:
        """The message for a lone pattern (or the first of a list), or for one that shares the limit."""
        return shared if self.expansions else lone


def _compiled(
    pattern: str, braces: bool, match_base: bool, tests: dict[str, SegmentTest], spent: _Spent
) -> list[_Alternative]:
    """The alternatives of ``pattern``; ``spent`` (what the patterns before it took) grows by its cost."""
    if len(pattern) > MAX_GLOB_CHARS:
        raise ValueError(f"the pattern is {len(pattern):,} characters long, over the limit of {MAX_GLOB_CHARS:,}")
    texts = _expansions(pattern, braces, spent)
    alternatives = [_alternative(text, match_base, tests) for text in texts]
    names = sum(alternative.least for alternative in alternatives)
    if spent.names + names > MAX_GLOB_SEGMENTS:
        raise ValueError(
            spent.over(
                f"its {len(alternatives):,} brace alternative(s) have {names:,} path segments in all,",
                f"its {names:,} path segments and the {spent.names:,} of the patterns before it are",
            )
            + f" over the limit of {MAX_GLOB_SEGMENTS:,}{spent.over('', ' for the whole list')}; use fewer alternatives"
        )
    floating = sum(alternative.floating_names for alternative in alternatives)
    if spent.floating + floating > MAX_GLOB_FLOATING:
        raise ValueError(
            spent.over(
                f"it has {floating:,} path segments between two '**' (over its brace alternatives), over",
                f"its {floating:,} path segments between two '**' and the {spent.floating:,} of the patterns "
                "before it are over",
            )
            + f" the limit of {MAX_GLOB_FLOATING:,}{spent.over('', ' for the whole list')}; "
            "use fewer '**' or fewer alternatives"
        )
    spent.expansions += len(texts)
    spent.names += names
    spent.floating += floating
    return alternatives


def _expansions(pattern: str, braces: bool, spent: _Spent) -> list[str]:
    left = MAX_GLOB_EXPANSIONS - spent.expansions
    shared = (
        f"the patterns before it expand to {spent.expansions:,} and it adds more: over the limit of "
        f"{MAX_GLOB_EXPANSIONS:,} brace expansions for the whole list; use fewer brace alternatives or fewer patterns"
    )
    if not braces:
        texts = [pattern]
    else:
        try:  # bracex reads a limit of 0 as none: at least 1, and the count is checked below
            expanded = bracex.iexpand(pattern, keep_escapes=True, limit=max(left, 1), return_empty=True)
            texts = list(dict.fromkeys(expanded))
        except bracex.ExpansionLimitException as exc:
            raise ValueError(
                spent.over(f"its braces expand to more than {MAX_GLOB_EXPANSIONS:,} patterns", shared)
            ) from exc
        except RecursionError as exc:
            raise ValueError("its braces are nested too deeply") from exc
    if len(texts) > left:
        raise ValueError(shared)
    return texts


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
