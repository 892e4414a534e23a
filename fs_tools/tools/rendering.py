"""How file content is shown to a model: numbered lines, truncation markers, footers, snippets."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

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


class Line(NamedTuple):
    """A line to show: its text (possibly only a prefix) and its full length in characters."""

    text: str
    length: int


@dataclass(frozen=True)
class Page:
    """A rendered window of lines: the text, and the first and last line numbers it shows."""

    text: str
    first: int
    last: int
    capped: bool


def render_page(window: Sequence[Line], first: int, cap_bytes: int = OUTPUT_CAP_BYTES) -> Page:
    """Numbered rows for ``window`` (whose first line is number ``first``), stopping before ``cap_bytes``."""
    width = number_width(first + len(window) - 1)
    out: list[str] = []
    size = 0
    for line_no, line in enumerate(window, start=first):
        row = numbered(line_no, line.text, width, line.length)
        size += len(row.encode("utf-8", "surrogatepass")) + 1
        if size > cap_bytes and out:
            return Page("\n".join(out), first, line_no - 1, capped=True)
        out.append(row)
    return Page("\n".join(out), first, first + len(out) - 1, capped=False)


def snippet(lines: Sequence[str], first: int, last: int, context: int = 2, max_lines: int = 12) -> str:
    """A short numbered excerpt around lines ``first``..``last`` (1-based, inclusive)."""
    start = max(1, first - context)
    stop = min(len(lines), max(last, first) + context, start + max_lines - 1)
    width = number_width(stop)
    return "\n".join(numbered(n, lines[n - 1], width) for n in range(start, stop + 1))
