"""The ``grep`` tool: lines matching a regular expression, as ``path:line: text``."""

from __future__ import annotations

import importlib
import re
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import regex
from pydantic import Field

from fs_tools.arguments import SearchPath, ToolArgs, ToolOutputModel, Violation
from fs_tools.errors import ToolArgsError, ToolTimeout
from fs_tools.names import visible
from fs_tools.provider import FILE, Entry, Walk
from fs_tools.tools.base import Example, Tool, ToolContext, ToolOutput
from fs_tools.tools.discovery import VCS_DIRECTORIES, plural, shown_path, with_first_rows
from fs_tools.tools.globpattern import GlobPattern, compile_glob, glob_pattern_violations
from fs_tools.tools.ignore import IgnoreRules

MAX_MATCHES = 200
MAX_LINE_CHARS = 300
_SNIFF = 8192
# The most regex items a pattern may compile to once its counted repeats are unrolled, as the regex
# engine unrolls them: '(?:x{3000}){3000}' is 9,000,000 items, seconds and gigabytes to compile.
MAX_PATTERN_SIZE = 100_000
MAX_PATTERN_CHARS = 10_000  # parsing and compiling take ~25 ms at this length (0.7 s at 100,000)
# The parser re.compile itself uses; no public API hands out the parsed tree.
_re_parser: Any = importlib.import_module("re._parser")
_REPEATS = frozenset({_re_parser.MAX_REPEAT, _re_parser.MIN_REPEAT, _re_parser.POSSESSIVE_REPEAT})


class GrepArgs(ToolArgs):
    pattern: str = Field(min_length=1, description="Python regular expression; ^ and $ match at line ends.")
    path: SearchPath = Field(".", description="Directory or file to search, relative to the workspace root.")
    glob: str | None = Field(None, description="Only search files matching this glob, e.g. '*.py' or 'src/**/*.ts'.")
    case_insensitive: bool = Field(False, description="Ignore case. Default false.")
    include_ignored: bool = Field(False, description="Also search files that .gitignore excludes. Default false.")

    @classmethod
    def cross_field_violations(cls, data: Mapping[str, Any]) -> list[Violation]:
        pattern = data.get("pattern")
        problem = pattern_problem(pattern) if isinstance(pattern, str) and pattern else None
        found: list[Violation] = [(("pattern",), problem)] if problem else []
        return [*found, *glob_pattern_violations(data, "glob", match_base=True)]


def pattern_problem(pattern: str) -> str | None:
    """Why ``pattern`` cannot be searched with, or None: a syntax error, or a size that would make its
    compile escape the time budget (compiling happens before the first match can be interrupted)."""
    if len(pattern) > MAX_PATTERN_CHARS:
        return f"pattern too long: {len(pattern):,} characters, over the limit of {MAX_PATTERN_CHARS:,}"
    try:
        size = _unrolled_size(_re_parser.parse(pattern))
        if size <= MAX_PATTERN_SIZE:
            re.compile(pattern)
    except (re.error, RecursionError, OverflowError, FutureWarning) as exc:  # '[[' warns: an error under -W error
        return f"invalid regular expression: {exc}"
    if size > MAX_PATTERN_SIZE:
        return (
            f"pattern too costly to compile: its counted repeats unroll to about {size:,} regex items, over the "
            f"limit of {MAX_PATTERN_SIZE:,}; use smaller counts in nested '{{m,n}}' repeats, or '*' / '+'"
        )
    try:  # matching needs the regex engine (interruptible, GIL-free): never fall back to re, which is neither
        regex.compile(pattern, regex.MULTILINE)
    except (regex.error, RecursionError, OverflowError) as exc:
        return f"pattern not supported by the search engine: {exc}"
    return None


def _unrolled_size(items: Any) -> int:
    """Items of a parsed pattern with every counted repeat unrolled: a repeat of n costs n times its
    body (an open-ended one its minimum), so nested repeats multiply."""
    total = 0
    for op, argument in items:
        if op in _REPEATS:
            low, high, body = argument
            total += max(low if high == _re_parser.MAXREPEAT else high, 1) * _unrolled_size(body)
        else:
            total += 1 + sum(_unrolled_size(child) for child in _subpatterns(argument))
    return total


def _subpatterns(argument: Any) -> Iterator[Any]:
    """The nested patterns of one parsed item: a group's body, each branch of an alternation, …"""
    if isinstance(argument, _re_parser.SubPattern):
        yield argument
    elif isinstance(argument, tuple | list):
        for part in argument:
            yield from _subpatterns(part)


class GrepOutput(ToolOutputModel):
    pattern: str
    matches: int
    files_searched: int
    files_with_matches: int
    truncated: bool


@dataclass
class _Search:
    matcher: Callable[[str, float], Iterator[Any]]  # (text, seconds left) -> matches
    deadline: float
    max_bytes: int
    literal: bytes | None  # the pattern's bytes when it is plain text: a cheap filter before decoding
    lines: list[str] = field(default_factory=list)
    searched: int = 0
    with_matches: int = 0
    skipped_binary: int = 0
    skipped_large: int = 0
    skipped_ignored: int = 0
    truncated: bool = False

    def file(self, shown: str, content: tuple[bytes | None, int]) -> None:
        """Search one file's bytes, as the provider read them: (None, size) for a file over the size
        limit, (None, -1) for one that vanished or could not be read since the walk saw it (skipped)."""
        data, size = content
        if data is None:
            if size > self.max_bytes:
                self.skipped_large += 1
            return
        if b"\0" in data[:_SNIFF]:
            self.searched += 1
            self.skipped_binary += 1
            return
        if self.literal is None or self.literal in data:  # a plain-text pattern absent from the bytes: no decode
            text = data.decode("utf-8", "replace")
            if "\r\n" in text:
                text = text.replace("\r\n", "\n")  # so "$" matches at the end of a CRLF line, as shown
            self._lines(shown, text)
        self.searched += 1  # counted once its search completed (a budget cut inside a file does not count)

    def _lines(self, shown: str, text: str) -> None:
        line_no, cursor, last_line = 1, 0, 0
        found = False
        for match in self.matcher(text, self.deadline - time.monotonic()):
            start = match.start()
            if start == len(text) and text.endswith("\n"):
                break  # an empty match after the final line ending is not a line of the file
            line_no += text.count("\n", cursor, start)
            cursor = start
            if line_no == last_line:
                continue  # one row per line
            last_line = line_no
            found = True
            if len(self.lines) >= MAX_MATCHES:
                self.truncated = True
                break
            begin = text.rfind("\n", 0, start) + 1
            end = text.find("\n", start)
            line = text[begin : end if end >= 0 else len(text)].rstrip("\r")
            if len(line) > MAX_LINE_CHARS:
                line = f"{line[:MAX_LINE_CHARS]}… [{MAX_LINE_CHARS} of {len(line):,} characters shown]"
            self.lines.append(f"{shown}:{line_no}: {visible(line)}")
        if found:
            self.with_matches += 1


def run_grep(ctx: ToolContext, args: GrepArgs) -> ToolOutput:
    plain = not args.case_insensitive and re.escape(args.pattern) == args.pattern
    # compiled once per call; validation has refused what it cannot compile
    file_filter = compile_glob(args.glob, match_base=True) if args.glob is not None else None
    search = _Search(
        matcher=_matcher(args.pattern, args.case_insensitive),
        deadline=time.monotonic() + ctx.search_seconds,
        max_bytes=ctx.provider.max_file_bytes,
        literal=args.pattern.encode("utf-8") if plain else None,
    )
    ignores = IgnoreRules(enabled=not args.include_ignored, deadline=search.deadline)

    def descend(entry: Entry) -> bool:
        return entry.name not in VCS_DIRECTORIES and not ignores.ignored(entry)

    provider = ctx.provider
    try:
        with provider.walk(args.path, descend=descend, enter=ignores.load, sizes=False, files_too=True) as found:
            if found.file is not None:
                content = provider.read_entry(found.file, search.max_bytes)
                search.file(shown_path(found.start, found.file.parts), content)
            else:
                ignores.start = found.start
                _search_tree(ctx, search, found, ignores, file_filter)
    except TimeoutError as exc:  # the matcher ran out of budget inside one file, or reading a .gitignore
        raise ToolTimeout(_timeout_message(ctx, search), details={"matches": len(search.lines)}) from exc
    return ToolOutput(text=_render(args, search), value=_value(args, search))


def _matcher(pattern: str, case_insensitive: bool) -> Callable[[str, float], Iterator[Any]]:
    """Matches that stop at the time budget and let other threads run meanwhile.

    The pattern is validated with ``re`` (the documented syntax); matching uses the ``regex`` engine,
    which can be interrupted and releases the GIL, so one catastrophic pattern cannot freeze the host.
    """
    try:
        compiled = regex.compile(pattern, regex.MULTILINE | (regex.IGNORECASE if case_insensitive else 0))
    except regex.error as exc:  # validation already refused what the regex engine cannot compile
        raise ToolArgsError([f"/pattern: pattern not supported by the search engine: {exc}"]) from exc

    def matches(text: str, seconds: float) -> Iterator[Any]:
        if seconds <= 0:
            raise TimeoutError("grep time budget exhausted")
        return iter(compiled.finditer(text, timeout=seconds, concurrent=True))

    return matches


def _search_tree(
    ctx: ToolContext, search: _Search, found: Walk, ignores: IgnoreRules, file_filter: GlobPattern | None
) -> None:
    for entry in found.entries:
        if time.monotonic() > search.deadline:
            raise ToolTimeout(_timeout_message(ctx, search), details={"matches": len(search.lines)})
        if ignores.ignored(entry):
            search.skipped_ignored += 1
            continue
        if entry.kind != FILE:
            continue
        if file_filter is not None and not file_filter.matches(entry.parts):
            continue
        search.file(shown_path(found.start, entry.parts), ctx.provider.read_entry(entry, search.max_bytes))
        if search.truncated:
            return


def _timeout_message(ctx: ToolContext, search: _Search) -> str:
    head = (
        f"grep ran past its {ctx.search_seconds:g} s budget after searching {search.searched} file(s); "
        f"{len(search.lines)} matching line(s) so far — narrow path or glob, or make the pattern more specific"
    )
    return with_first_rows(head, search.lines)


def _render(args: GrepArgs, search: _Search) -> str:
    if not search.lines:
        text = f"(no matches for {args.pattern!r} in {search.searched} file(s) under {args.path!r})"
    else:
        text = "\n".join(search.lines)
    notes = []
    if search.truncated:
        notes.append(f"stopped at {MAX_MATCHES} matching lines; narrow the pattern, path or glob to see the rest")
    if search.skipped_binary:
        notes.append(f"{plural(search.skipped_binary, 'binary file', 'binary files')} skipped")
    if search.skipped_large:
        notes.append(f"{plural(search.skipped_large, 'file', 'files')} over the size limit skipped")
    if search.skipped_ignored:
        notes.append(f"{search.skipped_ignored} path(s) excluded by .gitignore not searched; pass include_ignored=true")
    if notes:
        text += "\n\n" + "\n".join(f"[{note}]" for note in notes)
    return text


def _value(args: GrepArgs, search: _Search) -> dict[str, object]:
    return {
        "pattern": args.pattern,
        "matches": len(search.lines),
        "files_searched": search.searched,
        "files_with_matches": search.with_matches,
        "truncated": search.truncated,
    }


GREP = Tool(
    name="grep",
    description=(
        "Search file contents with a Python regular expression; prints 'path:line: text' for each matching "
        "line. Searches path (a directory or one file), optionally only files matching glob; skips binary "
        "files, version-control directories and (unless include_ignored) files excluded by .gitignore. "
        "Searching records nothing: read a file before you edit it."
    ),
    arguments=GrepArgs,
    output=GrepOutput,
    run=run_grep,
    read_only=True,
    preconditions="Read-only: it records nothing and never changes a file.",
    example=Example({"pattern": "greet", "glob": "*.py"}),
)
