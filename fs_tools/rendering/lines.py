"""How file content is shown to a model: numbered lines, truncation markers, footers, snippets."""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

MAX_LINE_CHARS = 2000
OUTPUT_CAP_BYTES = 50 * 1024


def split_lines(text: str) -> list[str]:
    """Lines as read shows them, without their line endings (a CRLF's CR is not shown)."""
    if not text:
        return []
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def number_width(last_line: int) -> int:
    return max(6, len(str(last_line)))


def numbered(line_no: int, line: str, width: int, length: int | None = None) -> str:
    """One row of read output; ``length`` is the line's full length when ``line`` holds only a prefix."""
    full = len(line) if length is None else length
    if full > MAX_LINE_CHARS:
        line = f"{line[:MAX_LINE_CHARS]}… [line truncated: {full:,} characters, {MAX_LINE_CHARS:,} shown]"
    return f"{line_no:>{width}}\t{line}"


@dataclass(frozen=True)
class Page:
    """A rendered window of lines: the text, and the first and last line numbers it shows."""

    text: str
    first: int
    last: int
    capped: bool


def render_page(
    window: Sequence[str], first: int, cap_bytes: int = OUTPUT_CAP_BYTES, full_lengths: Mapping[int, int] | None = None
) -> Page:
    """Numbered rows for ``window`` (whose first line is number ``first``), stopping before ``cap_bytes``.

    ``full_lengths`` maps a window index to the line's full length where ``window`` holds only a prefix."""
    width = number_width(first + len(window) - 1)
    cut = full_lengths or {}
    if cut:
        rows = [numbered(first + i, text, width, cut.get(i)) for i, text in enumerate(window)]
    else:  # the common case, without a Python-level step per row
        numbers = [str(n).rjust(width) for n in range(first, first + len(window))]
        rows = list(map("\t".join, zip(numbers, window, strict=True)))
    if not rows:
        return Page("", first, first - 1, capped=False)
    text = "\n".join(rows)
    # every row is counted with a line ending, the last one included
    ascii_only = text.isascii()
    size = len(text) + 1 if ascii_only else len(text.encode("utf-8", "surrogatepass")) + 1
    if size <= cap_bytes:
        return Page(text, first, first + len(rows) - 1, capped=False)
    sizes = map(len, rows) if ascii_only else (len(row.encode("utf-8", "surrogatepass")) for row in rows)
    totals = list(itertools.accumulate(sizes))
    keep = max(1, bisect.bisect_right(range(len(rows)), cap_bytes, key=lambda k: totals[k] + k + 1))
    return Page("\n".join(rows[:keep]), first, first + keep - 1, capped=keep < len(rows))


def snippet(lines: Sequence[str], first: int, last: int, context: int = 2, max_lines: int = 12) -> str:
    """A short numbered excerpt around lines ``first``..``last`` (1-based, inclusive)."""
    start = max(1, first - context)
    stop = min(len(lines), max(last, first) + context, start + max_lines - 1)
    width = number_width(stop)
    return "\n".join(numbered(n, lines[n - 1], width) for n in range(start, stop + 1))


def snippet_at(text: str, position: int, first: int, last: int, context: int = 2, max_lines: int = 12) -> str:
    """``snippet(split_lines(text), first, last)`` for a ``position`` on line ``first``, without splitting
    the whole text: only the excerpt's lines are located (each with one C-level search)."""
    start = max(1, first - context)
    begin = text.rfind("\n", 0, position) + 1  # the start of line ``first``
    for _ in range(first - start):
        if begin == 0:
            break
        begin = text.rfind("\n", 0, begin - 1) + 1
    wanted = min(max(last, first) + context, start + max_lines - 1) - start + 1
    end = begin
    for _ in range(wanted):
        newline = text.find("\n", end)
        if newline < 0:
            end = len(text)
            break
        end = newline + 1
    lines = split_lines(text[begin:end])
    width = number_width(start + len(lines) - 1)
    return "\n".join(numbered(n, line, width) for n, line in enumerate(lines, start))
