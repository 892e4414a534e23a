"""The ``grep`` tool: lines matching a regular expression, as ``path:line: text``."""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import regex
from pydantic import Field

from fs_tools import abilities
from fs_tools.arguments import SearchPath, ToolArgs, ToolOutputModel, Violation
from fs_tools.errors import ToolArgsError, ToolTimeout
from fs_tools.names import visible
from fs_tools.patterns.glob import compile_glob, glob_pattern_violations
from fs_tools.patterns.ignore import IgnoreRules
from fs_tools.patterns.prefilter import Prefilter, prefilter
from fs_tools.patterns.prefilter import re_parser as _re_parser
from fs_tools.provider import FILE, Entry, Walk, as_utf8
from fs_tools.rendering.listings import VCS_DIRECTORIES, plural, shown_path, with_first_rows
from fs_tools.terms import term
from fs_tools.tools.base import Example, Tool, ToolContext, ToolOutput

MAX_MATCHES = 200
MAX_LINE_CHARS = 300
_SNIFF = 8192
# The most regex items a pattern may compile to once its counted repeats are unrolled, as the regex
# engine unrolls them: '(?:x{3000}){3000}' is 9,000,000 items, seconds and gigabytes to compile.
MAX_PATTERN_SIZE = 100_000
MAX_PATTERN_CHARS = 10_000  # parsing and compiling take ~25 ms at this length (0.7 s at 100,000)
_REPEATS = frozenset({_re_parser.MAX_REPEAT, _re_parser.MIN_REPEAT, _re_parser.POSSESSIVE_REPEAT})


class GrepArgs(ToolArgs):
    pattern: str = Field(min_length=1, description="Python regular expression; ^ and $ match at line ends.")
    path: SearchPath = Field(".", description="Directory or file to search, relative to the workspace root.")
    glob: str | None = Field(None, description="Only search files matching this glob, e.g. '*.py' or 'src/**/*.ts'.")
    case_insensitive: bool = Field(False, description="Ignore case. Default false.")
    include_ignored: bool = Field(False, description="Also search files that .gitignore excludes. Default false.")

    @classmethod
    def cross_field_violations(cls, data: Mapping[str, Any]) -> list[Violation]:
        return search_violations(data, "glob")


def search_violations(data: Mapping[str, Any], glob: str) -> list[Violation]:
    """A search's ``pattern`` that cannot be searched with, and its file filter (``glob``) that cannot be
    compiled: the rules every dialect's grep shares."""
    pattern = data.get("pattern")
    problem = pattern_problem(pattern) if isinstance(pattern, str) and pattern else None
    found: list[Violation] = [(("pattern",), problem)] if problem else []
    return [*found, *glob_pattern_violations(data, glob, match_base=True)]


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


@dataclass(frozen=True)
class GrepQuery:
    """One search, as every dialect's grep asks it: ``mode`` is ``"content"`` (matching lines),
    ``"files"`` (the files with a match) or ``"count"`` (matching lines per file); ``before`` / ``after``
    are context lines; ``types`` are globs of which a file must match one (a file-type filter);
    ``ripgrep`` shows rows as ripgrep prints them (``path:12:text``, context ``path-11-text``, ``--``
    between groups), ``numbers`` whether a row shows its line number."""

    pattern: str
    path: str = "."
    glob: str | None = None
    case_insensitive: bool = False
    include_ignored: bool = False
    multiline: bool = False
    before: int = 0
    after: int = 0
    mode: str = "content"
    types: tuple[str, ...] = ()
    max_rows: int = MAX_MATCHES
    ripgrep: bool = False
    numbers: bool = True
    by_file: bool = False  # rows grouped under 'File: path', each 'L12: text' (Gemini CLI's grep)

    @property
    def grouped(self) -> bool:
        """Whether a file's matching lines are found first and then shown (every mode but plain content:
        counts, file names, context, matches across lines), not row by row as they are met."""
        return self.mode != "content" or bool(self.before or self.after) or self.multiline


@dataclass(frozen=True)
class _Findings:
    """What one file gave: ``rows`` to show (at most one past the limit, so the merge can tell it was
    cut), the matching ``lines`` counted, and how the file ended (searched, binary, over the limit, gone)."""

    outcome: str  # "searched", "binary", "large" or "gone"
    rows: tuple[str, ...] = ()
    lines: int = 0  # matching lines the file has (grouped modes), or that its rows show (plain content)
    matched: bool = False
    grouped: bool = False


_GONE = _Findings("gone")
_LARGE = _Findings("large")
_BINARY = _Findings("binary")
_NONE = _Findings("searched")


@dataclass(frozen=True)
class _FileSearch:
    """The search of one file's bytes, apart from the rows and counts of the whole search."""

    query: GrepQuery
    matcher: Callable[[str, float], Iterator[Any]]  # (text, seconds left) -> matches
    deadline: float
    clock: Callable[[], float]  # what the deadline is measured on
    max_bytes: int
    prefilter: Prefilter | None  # False for a file's bytes that cannot hold a match: not decoded
    # The pattern's UTF-8 bytes when it is plain text matched line by line: found in the raw bytes,
    # and only the matching lines decoded. (Text decoded with U+FFFD for invalid bytes holds a literal
    # exactly where the bytes hold its UTF-8 form: a valid sequence is never absorbed by an invalid one.)
    literal: bytes | None = None

    def __call__(self, shown: str, content: tuple[bytes | None, int]) -> _Findings:
        """Search one file's bytes, as the provider read them: (None, size) for a file over the size
        limit, (None, -1) for one that vanished or could not be read since the walk saw it (skipped)."""
        data, size = content
        if data is None:
            return _LARGE if size > self.max_bytes else _GONE
        if data[:1] in (b"\xff", b"\xfe", b"\x00"):  # a UTF-16 or UTF-32 BOM, maybe: searched as its text
            data = as_utf8(data)
        if b"\0" in data[:_SNIFF]:
            return _BINARY
        if self.prefilter is not None and not self.prefilter(data):
            return _NONE
        if self.literal is not None:
            return self._literal_lines(shown, data, self.literal)
        if b"\r" in data and b"\r\n" in data:
            data = data.replace(b"\r\n", b"\n")  # so "$" matches at the end of a CRLF line, as shown
        text = data.decode("utf-8", "replace")
        return self._grouped(shown, text) if self.query.grouped else self._lines(shown, text)

    def _literal_lines(self, shown: str, data: bytes, literal: bytes) -> _Findings:
        """``_lines`` for a plain-text pattern, on the raw bytes: a C-level find per matching line."""
        rows: list[str] = []
        line_no, cursor = 1, 0
        start = data.find(literal)
        while start >= 0 and len(rows) <= self.query.max_rows:
            line_no += data.count(b"\n", cursor, start)
            begin = data.rfind(b"\n", 0, start) + 1
            end = data.find(b"\n", start)
            end = len(data) if end < 0 else end
            rows.append(self._row(shown, line_no, data[begin:end].decode("utf-8", "replace"), True))
            cursor = end
            start = data.find(literal, end)
        return _Findings("searched", tuple(rows), len(rows), bool(rows))

    def _lines(self, shown: str, text: str) -> _Findings:
        rows: list[str] = []
        line_no, cursor, last_line = 1, 0, 0
        found = False
        for match in self.matcher(text, self.deadline - self.clock()):
            start = match.start()
            if start == len(text) and text.endswith("\n"):
                break  # an empty match after the final line ending is not a line of the file
            line_no += text.count("\n", cursor, start)
            cursor = start
            if line_no == last_line:
                continue  # one row per line
            last_line = line_no
            found = True
            if len(rows) > self.query.max_rows:
                break
            begin = text.rfind("\n", 0, start) + 1
            end = text.find("\n", start)
            rows.append(self._row(shown, line_no, text[begin : end if end >= 0 else len(text)], True))
        return _Findings("searched", tuple(rows), len(rows), found)

    def _row(self, shown: str, line_no: int, line: str, matched: bool) -> str:
        line = line.rstrip("\r")
        if len(line) > MAX_LINE_CHARS:
            line = f"{line[:MAX_LINE_CHARS]}… [{MAX_LINE_CHARS} of {len(line):,} characters shown]"
        if self.query.by_file:
            return f"L{line_no}{':' if matched else '-'} {visible(line)}"
        if not self.query.ripgrep:
            return f"{shown}:{line_no}: {visible(line)}"
        mark = ":" if matched else "-"
        return f"{shown}{mark}{line_no}{mark}{visible(line)}" if self.query.numbers else f"{shown}{mark}{visible(line)}"

    def _grouped(self, shown: str, text: str) -> _Findings:
        """The other modes, and content with context or across lines: the matching lines of the file
        are found first (every line a match spans), then shown as the mode asks."""
        query = self.query
        starts = [0]  # offset of each line, found only for a file with a match
        hits: list[int] = []  # 0-based matching lines, in order, once each
        for match in self.matcher(text, self.deadline - self.clock()):
            start, end = match.start(), match.end()
            if start == len(text) and text.endswith("\n"):
                break
            if len(starts) == 1:
                starts += [i + 1 for i, c in enumerate(text) if c == "\n"] if "\n" in text else []
            first = bisect.bisect_right(starts, start) - 1
            last = bisect.bisect_right(starts, max(start, end - 1)) - 1 if query.multiline else first
            for line in range(max(first, hits[-1] + 1 if hits else first), last + 1):
                hits.append(line)
        if not hits:
            return _NONE
        if query.mode == "files":
            rows = [shown]
        elif query.mode == "count":
            rows = [f"{shown}:{len(hits)}"]
        else:
            rows = self._context(shown, text, starts, hits)
        return _Findings("searched", tuple(rows), len(hits), True, grouped=True)

    def _context(self, shown: str, text: str, starts: list[int], hits: list[int]) -> list[str]:
        """The matching lines with their context, ``--`` between groups that do not touch."""
        query, total = self.query, len(starts) - (1 if text.endswith("\n") else 0)
        wanted: dict[int, bool] = {}
        for line in hits:
            for near in range(max(0, line - query.before), min(total, line + query.after + 1)):
                wanted.setdefault(near, False)
            wanted[line] = True
        rows: list[str] = []
        previous = -1
        for line in sorted(wanted):
            if len(rows) > query.max_rows:
                break
            if (query.before or query.after) and previous >= 0 and line > previous + 1:
                rows.append("--")
            end = starts[line + 1] - 1 if line + 1 < len(starts) else len(text)
            rows.append(self._row(shown, line + 1, text[starts[line] : end], wanted[line]))
            previous = line
        return rows


@dataclass
class _Search:
    """The rows and counts of a whole search, merged from its files in walk order."""

    query: GrepQuery
    lines: list[str] = field(default_factory=list)
    matched: int = 0  # matching lines (rows of context not counted)
    _file: str = ""  # the file whose rows are being added (rows grouped by file)
    searched: int = 0
    with_matches: int = 0
    skipped_binary: int = 0
    skipped_large: int = 0
    skipped_ignored: int = 0
    truncated: bool = False

    def add(self, shown: str, found: _Findings) -> None:
        """One file's findings; a file counts as searched once its search completed (a budget cut
        inside a file does not count)."""
        if found.outcome == "large":
            self.skipped_large += 1
        if found.outcome in ("large", "gone"):
            return
        self.searched += 1
        if found.outcome == "binary":
            self.skipped_binary += 1
            return
        if found.matched:
            self.with_matches += 1
        if found.grouped:
            self._grouped(found)
        else:
            self._plain(shown, found)

    def _plain(self, shown: str, found: _Findings) -> None:
        for row in found.rows:
            if len(self.lines) >= self.query.max_rows:
                self.truncated = True
                return
            if self.query.by_file and shown != self._file:
                self._file = shown
                self.lines.append(f"File: {shown}")
            self.matched += 1
            self.lines.append(row)

    def _grouped(self, found: _Findings) -> None:
        self.matched += found.lines
        context = self.query.before or self.query.after
        if context and self.lines and self.query.mode == "content" and not self._add("--"):
            return
        for row in found.rows:
            if not self._add(row):
                return

    def _add(self, row: str) -> bool:
        if len(self.lines) >= self.query.max_rows:
            self.truncated = True
            return False
        self.lines.append(row)
        return True


def run_grep(ctx: ToolContext, args: GrepArgs) -> ToolOutput:
    query = GrepQuery(
        args.pattern, args.path, args.glob, case_insensitive=args.case_insensitive, include_ignored=args.include_ignored
    )
    search = search_files(ctx, query)
    return ToolOutput(text=render(query, search), value=_value(args.pattern, search))


def search_files(ctx: ToolContext, query: GrepQuery) -> _Search:
    """Run ``query`` (validated: its pattern compiles, its globs are sound)."""
    # compiled once per call; validation has refused what it cannot compile
    filters = [compile_glob(query.glob, match_base=True)] if query.glob is not None else []
    types = [compile_glob(pattern, match_base=True) for pattern in query.types]
    one_file = _FileSearch(
        query,
        matcher=_matcher(query.pattern, query.case_insensitive, query.multiline),
        deadline=ctx.options.clock() + ctx.options.search_seconds,
        clock=ctx.options.clock,
        max_bytes=ctx.provider.max_file_bytes,
        prefilter=prefilter(query.pattern, query.case_insensitive),
        literal=_plain_literal(query),
    )
    search = _Search(query)
    ignores = IgnoreRules(enabled=not query.include_ignored, deadline=one_file.deadline, clock=ctx.options.clock)

    def descend(entry: Entry) -> bool:
        return entry.name not in VCS_DIRECTORIES and not ignores.ignored(entry)

    def wanted(parts: tuple[str, ...]) -> bool:
        return all(f.matches(parts) for f in filters) and (not types or any(t.matches(parts) for t in types))

    provider = ctx.provider
    try:
        with provider.walk(query.path, descend=descend, enter=ignores.load, sizes=False, files_too=True) as found:
            if found.file is not None:
                shown = shown_path(found.start, found.file.parts)
                search.add(shown, one_file(shown, provider.read_entry(found.file, one_file.max_bytes)))
            else:
                ignores.start = found.start
                _search_tree(ctx, search, one_file, found, ignores, wanted)
    except TimeoutError as exc:  # the matcher ran out of budget inside one file, or reading a .gitignore
        raise ToolTimeout(_timeout_message(ctx, search), details={"matches": len(search.lines)}) from exc
    return search


_SPECIAL = frozenset(".^$*+?{}[]\\|()\r\n\ufffd")  # a pattern with none of these matches only itself


def _plain_literal(query: GrepQuery) -> bytes | None:
    """The pattern's UTF-8 bytes where it is text that matches only itself, shown one row per line."""
    plain = _SPECIAL.isdisjoint(query.pattern) and not query.grouped and not query.case_insensitive
    return query.pattern.encode("utf-8") if plain else None


def _matcher(pattern: str, case_insensitive: bool, multiline: bool = False) -> Callable[[str, float], Iterator[Any]]:
    """Matches that stop at the time budget and let other threads run meanwhile.

    The pattern is validated with ``re`` (the documented syntax); matching uses the ``regex`` engine,
    which can be interrupted and releases the GIL, so one catastrophic pattern cannot freeze the host.
    """
    try:
        flags = regex.MULTILINE | (regex.IGNORECASE if case_insensitive else 0) | (regex.DOTALL if multiline else 0)
        compiled = regex.compile(pattern, flags)
    except regex.error as exc:  # validation already refused what the regex engine cannot compile
        raise ToolArgsError([f"/pattern: pattern not supported by the search engine: {exc}"]) from exc

    def matches(text: str, seconds: float) -> Iterator[Any]:
        if seconds <= 0:
            raise TimeoutError("grep time budget exhausted")
        return iter(compiled.finditer(text, timeout=seconds, concurrent=True))

    return matches


def _search_tree(
    ctx: ToolContext,
    search: _Search,
    one_file: _FileSearch,
    found: Walk,
    ignores: IgnoreRules,
    wanted: Callable[[tuple[str, ...]], bool],
) -> None:
    read_entry, limit, start = ctx.provider.read_entry, one_file.max_bytes, found.start
    for entry in found.entries:
        if ctx.options.clock() > one_file.deadline:
            raise ToolTimeout(_timeout_message(ctx, search), details={"matches": len(search.lines)})
        if ignores.ignored(entry):
            search.skipped_ignored += 1
            continue
        if entry.kind != FILE or not wanted(entry.parts):
            continue
        shown = shown_path(start, entry.parts)
        search.add(shown, one_file(shown, read_entry(entry, limit)))
        if search.truncated:
            return


def _timeout_message(ctx: ToolContext, search: _Search) -> str:
    head = (
        f"grep ran past its {ctx.options.search_seconds:g} s budget after searching {search.searched} file(s); "
        f"{len(search.lines)} matching line(s) so far — narrow path or glob, or make the pattern more specific"
    )
    return with_first_rows(head, search.lines)


def render(query: GrepQuery, search: _Search) -> str:
    """The rows, or a note that nothing matched, then what was skipped or cut."""
    if not search.lines:
        text = f"(no matches for {query.pattern!r} in {search.searched} file(s) under {query.path!r})"
    else:
        text = "\n".join(search.lines)
    notes = []
    if search.truncated:
        rows = {"files": "files", "count": "files"}.get(query.mode, "matching lines")
        notes.append(f"stopped at {query.max_rows} {rows}; narrow the pattern, path or glob to see the rest")
    if search.skipped_binary:
        notes.append(f"{plural(search.skipped_binary, 'binary file', 'binary files')} skipped")
    if search.skipped_large:
        notes.append(f"{plural(search.skipped_large, 'file', 'files')} over the size limit skipped")
    if search.skipped_ignored:
        notes.append(
            f"{search.skipped_ignored} path(s) excluded by .gitignore not searched"
            + (f"; pass {term('include_ignored')}=true" if term("include_ignored") else "")
        )
    if notes:
        text += "\n\n" + "\n".join(f"[{note}]" for note in notes)
    return text


def _value(pattern: str, search: _Search) -> dict[str, object]:
    return {
        "pattern": pattern,
        "matches": search.matched,
        "files_searched": search.searched,
        "files_with_matches": search.with_matches,
        "truncated": search.truncated,
    }


GREP = Tool(
    name="grep",
    title="Search files for text",
    abilities=(abilities.SEARCH,),
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
