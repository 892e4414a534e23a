""".gitignore rules as git reads them (gitignore(5)), applied to a walk: which entries a search skips."""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from fs_tools.patterns.glob import GlobPattern, compile_glob
from fs_tools.provider import DIRECTORY, Entry, ReadChild


@dataclass(frozen=True)
class IgnoreRule:
    """One usable line of a .gitignore."""

    pattern: GlobPattern  # relative to the .gitignore's directory
    negated: bool  # '!': re-includes what an earlier rule excluded
    directories_only: bool  # a trailing '/'


def ignore_rules(
    text: str, deadline: float = math.inf, clock: Callable[[], float] = time.monotonic
) -> list[IgnoreRule]:
    """The rules of one .gitignore, in order. A line git cannot use ('!', a lone trailing '\\') or that
    passes a pattern limit matches nothing, as git skips what it cannot parse; the other lines still
    apply. TimeoutError once ``deadline`` (a ``clock()`` value) has passed."""
    rules = []
    for index, line in enumerate(text.removeprefix("\ufeff").split("\n")):  # git splits at LF only
        if index % 256 == 255 and clock() > deadline:
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
    clock: Callable[[], float] = time.monotonic  # what the deadline is measured on
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
        rules = ignore_rules(data.decode("utf-8", "replace"), self.deadline, self.clock)
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
                if index % 64 == 63 and self.clock() > self.deadline:
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
