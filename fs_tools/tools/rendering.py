"""How file content is shown to a model: numbered lines, truncation markers, footers, snippets."""

from __future__ import annotations

from collections.abc import Sequence
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


def numbered(line_no: int, line: str, width: int) -> str:
    if len(line) > MAX_LINE_CHARS:
        line = f"{line[:MAX_LINE_CHARS]}… [line truncated: {len(line):,} characters, {MAX_LINE_CHARS:,} shown]"
    return f"{line_no:>{width}}\t{line}"


@dataclass(frozen=True)
class Page:
    """A rendered window of lines: the text, and the last line it shows."""

    text: str
    first: int
    last: int
    capped: bool


def render_page(lines: Sequence[str], offset: int, limit: int, cap_bytes: int = OUTPUT_CAP_BYTES) -> Page:
    """Numbered lines from ``offset`` (1-based), at most ``limit`` of them and about ``cap_bytes``."""
    end = min(len(lines), offset - 1 + limit)
    width = number_width(end)
    out: list[str] = []
    size = 0
    last = offset - 1
    for line_no in range(offset, end + 1):
        row = numbered(line_no, lines[line_no - 1], width)
        size += len(row.encode("utf-8", "surrogatepass")) + 1
        if size > cap_bytes and out:
            return Page("\n".join(out), offset, last, capped=True)
        out.append(row)
        last = line_no
    return Page("\n".join(out), offset, last, capped=False)


def snippet(lines: Sequence[str], first: int, last: int, context: int = 2, max_lines: int = 12) -> str:
    """A short numbered excerpt around lines ``first``..``last`` (1-based, inclusive)."""
    start = max(1, first - context)
    stop = min(len(lines), max(last, first) + context, start + max_lines - 1)
    width = number_width(stop)
    return "\n".join(numbered(n, lines[n - 1], width) for n in range(start, stop + 1))
