"""Syntax errors a change introduces (SPEC §15), found with tree-sitter grammars, in process.

After an edit, write or patch to a file in a language the grammars cover, the new text is parsed and
its syntax errors are compared with the old text's: only the errors the change introduced are
reported (an error that was already there, anywhere, is not), each as ``{line, end_line, message}``.

The parse of each text checked is kept (a bounded number, least recently used first out), keyed by the
text's content hash: a change to a text whose parse is kept is parsed incrementally (tree-sitter's edit
API: only what the change reached is parsed again) and the old text's errors are the kept ones — so a run
of edits of a valid file pays a fraction of a parse each, and of a file with errors one parse, not two.

The grammars are imported when a file of their language is first checked. A file larger than
``MAX_CHECKED_BYTES`` is not checked (said in the result, never guessed), so the check costs a bounded
parse. A grammar that is missing or cannot be loaded (a tree-sitter too old for it) turns the check
off for that language, logged once; nothing else changes.
"""

from __future__ import annotations

import functools
import importlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

import xxhash

log = logging.getLogger("fs_tools.syntax")

MAX_CHECKED_BYTES = 256 << 10  # a parse runs at ~3-10 MB/s: at most ~30 ms per text checked
MAX_REPORTED = 10

# extension -> (grammar module, the function returning its language, the language's name)
_GRAMMARS: dict[str, tuple[str, str, str]] = {
    ".py": ("tree_sitter_python", "language", "Python"),
    ".pyi": ("tree_sitter_python", "language", "Python"),
    ".js": ("tree_sitter_javascript", "language", "JavaScript"),
    ".mjs": ("tree_sitter_javascript", "language", "JavaScript"),
    ".cjs": ("tree_sitter_javascript", "language", "JavaScript"),
    ".jsx": ("tree_sitter_javascript", "language", "JavaScript"),
    ".ts": ("tree_sitter_typescript", "language_typescript", "TypeScript"),
    ".mts": ("tree_sitter_typescript", "language_typescript", "TypeScript"),
    ".cts": ("tree_sitter_typescript", "language_typescript", "TypeScript"),
    ".tsx": ("tree_sitter_typescript", "language_tsx", "TSX"),
    ".json": ("tree_sitter_json", "language", "JSON"),
    ".yaml": ("tree_sitter_yaml", "language", "YAML"),
    ".yml": ("tree_sitter_yaml", "language", "YAML"),
    ".toml": ("tree_sitter_toml", "language", "TOML"),
    ".go": ("tree_sitter_go", "language", "Go"),
    ".rs": ("tree_sitter_rust", "language", "Rust"),
    ".java": ("tree_sitter_java", "language", "Java"),
    ".c": ("tree_sitter_c", "language", "C"),
    ".h": ("tree_sitter_c", "language", "C"),
    ".cc": ("tree_sitter_cpp", "language", "C++"),
    ".cpp": ("tree_sitter_cpp", "language", "C++"),
    ".cxx": ("tree_sitter_cpp", "language", "C++"),
    ".hpp": ("tree_sitter_cpp", "language", "C++"),
    ".hh": ("tree_sitter_cpp", "language", "C++"),
    ".sh": ("tree_sitter_bash", "language", "shell"),
    ".bash": ("tree_sitter_bash", "language", "shell"),
}


@dataclass(frozen=True)
class SyntaxIssue:
    line: int  # 1-based, as read numbers lines
    end_line: int
    message: str
    context: str  # the text of its first line
    kind: str  # what errors are matched by: "missing ')'", or "error" for text the parser could not place

    def value(self) -> dict[str, Any]:
        return {"line": self.line, "end_line": self.end_line, "message": self.message}


@dataclass(frozen=True)
class Check:
    """What the check found: the issues the change introduced, or why it did not look."""

    language: str | None  # None: not a language the grammars cover
    introduced: tuple[SyntaxIssue, ...] = ()
    skipped: str = ""  # why a covered file was not checked (too large, grammar unavailable)


def language_of(path: str) -> str | None:
    found = _GRAMMARS.get(PurePosixPath(path).suffix.lower())
    return found[2] if found else None


def check(path: str, before: bytes | None, after: bytes) -> Check:
    """The syntax errors ``after`` has that ``before`` (None: a new file) did not: matched by what they
    say (an error left as it was on a line the change touched is not new); with more errors than
    before every unmatched one is new, with as many only those in the changed lines."""
    grammar = _GRAMMARS.get(PurePosixPath(path).suffix.lower())
    if grammar is None:
        return Check(None)
    name = grammar[2]
    if max(len(after), len(before or b"")) > MAX_CHECKED_BYTES:
        return Check(name, skipped=f"the file is over {MAX_CHECKED_BYTES >> 10} KB")
    parser = _parser(grammar[0], grammar[1])
    if parser is None:
        return Check(name, skipped="its grammar is not installed")
    kept = _KEPT.get(grammar, before) if before is not None else None
    new = _parsed(parser, grammar, after, kept, before).issues
    if not new:
        return Check(name)
    if before is None:
        return Check(name, tuple(new[:MAX_REPORTED]))
    previous = (kept or _parsed(parser, grammar, before, None, None)).issues
    first, last, delta = _changed(before, after)

    end_before, end_after = _line_count(before), _line_count(after)

    def moved(line: int) -> int:
        """Where a line of ``before`` is in ``after`` (a line inside the change: where the change starts;
        the last line, where an unclosed block is reported, stays the last)."""
        if line >= end_before:
            return end_after
        if line < first:
            return line
        return line + delta if line - delta > last else first

    unused = [(issue.kind, moved(issue.line), moved(issue.end_line)) for issue in previous]
    introduced = []
    for issue in new:
        # The same kind of error starting where an old one now starts, or within what an old one
        # covered: left as it was, not introduced (its text may have changed around it, or an error the
        # old text ran together came apart); an error that now starts in the changed lines is new.
        match = next(
            (
                k
                for k, (kind, at, until) in enumerate(unused)
                if kind == issue.kind and (abs(at - issue.line) <= 1 or at <= issue.line <= until)
            ),
            None,
        )
        if match is None:
            introduced.append(issue)
        else:
            unused.pop(match)
    return Check(name, tuple(introduced[:MAX_REPORTED]))


def _line_count(data: bytes) -> int:
    return max(1, data.count(b"\n") + (0 if data.endswith(b"\n") else 1))


def _changed(before: bytes, after: bytes) -> tuple[int, int, int]:
    """The lines of ``after`` that differ from ``before`` (1-based, first and last), by common prefix and
    suffix, and how many lines the change added (negative: removed)."""
    a, b = before.split(b"\n"), after.split(b"\n")
    prefix = 0
    while prefix < min(len(a), len(b)) and a[prefix] == b[prefix]:
        prefix += 1
    suffix = 0
    while suffix < min(len(a), len(b)) - prefix and a[-1 - suffix] == b[-1 - suffix]:
        suffix += 1
    return prefix + 1, max(prefix + 1, len(b) - suffix), len(b) - len(a)


@functools.cache
def _language(module: str, function: str) -> Any:
    """The grammar's language, or None when it (or tree-sitter) is missing or cannot load it."""
    try:
        import tree_sitter

        grammar = importlib.import_module(module)
        return tree_sitter.Language(getattr(grammar, function)())
    except (ImportError, AttributeError, ValueError, TypeError) as exc:
        log.warning("syntax checks of %s files are off: %s: %s", module, type(exc).__name__, exc)
        return None


_local = threading.local()  # a tree-sitter parser is not safe to share between threads: one per thread


def _parser(module: str, function: str) -> Any:
    language = _language(module, function)
    if language is None:
        return None
    parsers: dict[Any, Any] = _local.__dict__.setdefault("parsers", {})
    parser = parsers.get(language)
    if parser is None:
        import tree_sitter

        parser = parsers[language] = tree_sitter.Parser(language)
    return parser


@dataclass(frozen=True)
class _Parse:
    tree: Any  # tree-sitter's Tree: never edited once kept (an edit is made to a copy)
    issues: list[SyntaxIssue]


class _Trees:
    """The parses of the texts last checked, by grammar and content hash, least recently used out first:
    at most ``COUNT`` of them and ``BYTES`` of text (a tree takes ~26 times its text's size, measured on
    Python: ~26 MB in all)."""

    COUNT = 32
    BYTES = 1 << 20

    def __init__(self) -> None:
        self._kept: OrderedDict[tuple[Any, bytes], tuple[_Parse, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, grammar: Any, data: bytes) -> _Parse | None:
        key = (grammar, xxhash.xxh3_128_digest(data))
        with self._lock:
            found = self._kept.get(key)
            if found is None:
                return None
            self._kept.move_to_end(key)
            return found[0]

    def put(self, grammar: Any, data: bytes, parse: _Parse) -> None:
        key = (grammar, xxhash.xxh3_128_digest(data))
        with self._lock:
            if key in self._kept:
                self._kept.move_to_end(key)
                return
            self._kept[key] = (parse, len(data))
            self._bytes += len(data)
            while len(self._kept) > self.COUNT or self._bytes > self.BYTES:
                _, (_, size) = self._kept.popitem(last=False)
                self._bytes -= size

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()
            self._bytes = 0


_KEPT = _Trees()


def _parsed(parser: Any, grammar: Any, data: bytes, kept: _Parse | None, kept_text: bytes | None) -> _Parse:
    """``data`` parsed — incrementally from ``kept``, the parse of ``kept_text``, when there is one — and
    kept for the next change."""
    if kept is not None and kept_text is not None and not kept.issues:  # from errors: see below
        tree = kept.tree.copy()
        start, old_end, new_end = _edited_span(kept_text, data)
        at = _point(kept_text, start)  # the ends' rows counted from it: the prefix is counted once
        tree.edit(
            start_byte=start,
            old_end_byte=old_end,
            new_end_byte=new_end,
            start_point=at,
            old_end_point=_point(kept_text, old_end, start, at),
            new_end_point=_point(data, new_end, start, at),
        )
        tree = parser.parse(data, tree)
        if tree.root_node.has_error:
            # Recovering from errors, an incremental parse may place them otherwise than a whole one
            # does (the property test in tests/operations/test_syntax.py found it): a text with errors
            # is parsed whole, so what is reported never depends on what was kept.
            tree = parser.parse(data)
    else:
        tree = parser.parse(data)
    parse = _Parse(tree, _issues_of(tree, data))
    _KEPT.put(grammar, data, parse)
    return parse


def _edited_span(before: bytes, after: bytes) -> tuple[int, int, int]:
    """Where ``after`` differs from ``before``: the start, and the end in each (bytes), by common prefix
    and suffix, found by halving (each comparison a memcmp, never a loop over bytes in Python)."""
    shortest = min(len(before), len(after))
    low, high = 0, shortest
    while low < high:  # the longest common prefix
        middle = (low + high + 1) // 2
        if before[low:middle] == after[low:middle]:
            low = middle
        else:
            high = middle - 1
    prefix = low
    low, high = 0, shortest - prefix
    while low < high:  # the longest common suffix not overlapping it
        middle = (low + high + 1) // 2
        if before[len(before) - middle : len(before) - low] == after[len(after) - middle : len(after) - low]:
            low = middle
        else:
            high = middle - 1
    return prefix, len(before) - low, len(after) - low


def _point(data: bytes, offset: int, known: int = 0, row: tuple[int, int] = (0, 0)) -> tuple[int, int]:
    """(row, column in bytes) of ``offset``, as tree-sitter counts them; ``row`` is the point of the offset
    ``known`` (before ``offset``), whose lines need not be counted again."""
    return row[0] + data.count(b"\n", known, offset), offset - (data.rfind(b"\n", 0, offset) + 1)


def _issues_of(tree: Any, data: bytes) -> list[SyntaxIssue]:
    if not tree.root_node.has_error:
        return []
    lines = data.split(b"\n")
    last = len(lines) - 1 if data.endswith(b"\n") else len(lines)  # lines as read counts them
    return [_issue(node, lines, max(1, last)) for node in _error_nodes(tree.root_node)]


def _error_nodes(root: Any) -> Iterator[Any]:
    """ERROR and MISSING nodes, outermost first, in text order (a bounded number)."""
    stack = [root]
    found = 0
    while stack and found < MAX_REPORTED * 4:
        node = stack.pop()
        if node.is_error or node.is_missing:
            found += 1
            yield node
            continue
        if node.has_error:
            stack.extend(reversed(node.children))


def _issue(node: Any, lines: list[bytes], count: int) -> SyntaxIssue:
    # An error at the very end (a missing closing brace) is placed after the last line: name the last.
    first, last = min(node.start_point[0], count - 1), min(node.end_point[0], count - 1)
    context = lines[first].decode("utf-8", "replace").strip() if first < len(lines) else ""
    if node.is_missing:
        message = f"missing {node.type!r}"
    else:
        text = node.text.decode("utf-8", "replace").strip().split("\n")[0] if node.text else ""
        shown = text if len(text) <= 40 else text[:40] + "…"
        message = f"unexpected {shown!r}" if shown else "unexpected end of input"
    return SyntaxIssue(first + 1, last + 1, message, context, message if node.is_missing else "error")


# --- what the mutating tools do with a check ----------------------------------------------------------


def refuse(found: Check, pointer: str) -> None:
    """``IntroducedSyntaxError`` listing what the change would introduce (nothing is written)."""
    from fs_tools.errors import IntroducedSyntaxError

    if not found.introduced:
        return
    first = found.introduced[0]
    more = f" (and {len(found.introduced) - 1} more)" if len(found.introduced) > 1 else ""
    raise IntroducedSyntaxError(
        f"{pointer} would introduce a {found.language} syntax error at line {first.line}: {first.message}{more}; "
        "nothing was written",
        details={"errors": [issue.value() for issue in found.introduced], "language": found.language},
    )


def report(found: Check | None) -> tuple[str, list[dict[str, Any]]]:
    """The sentence a result ends with, and ``value.syntax_errors``."""
    if found is not None and found.skipped:
        return f"\nSyntax not checked: {found.skipped}.", []
    if found is None or not found.introduced:
        return "", []
    listed = "; ".join(f"line {issue.line}: {issue.message}" for issue in found.introduced[:3])
    more = f"; and {len(found.introduced) - 3} more" if len(found.introduced) > 3 else ""
    count = len(found.introduced)
    noun = "error" if count == 1 else "errors"
    return (
        f"\nWarning: this change introduced {count} {found.language} syntax {noun} ({listed}{more}) — "
        "the file was written; fix it with another edit",
        [issue.value() for issue in found.introduced],
    )
