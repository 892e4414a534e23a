"""A PDF's ``pages`` argument (SPEC §18): "3", "1-5", "1,4,7-9", counted from 1."""

from __future__ import annotations

from fs_tools.errors import ToolArgsError


def parse_pages(spec: str, count: int, display: str) -> list[int]:
    """The pages ``spec`` names, in its order, each once; ``INVALID_ARGS`` at ``/pages`` for a page that
    is not in a document of ``count`` pages (its message names the count)."""
    pages: list[int] = []
    for part in spec.split(","):
        first_text, dash, last_text = part.partition("-")
        first = int(first_text)
        last = int(last_text) if dash else first
        if first < 1:
            raise ToolArgsError([f"/pages: pages are counted from 1; {part.strip()!r} names page 0"])
        if last < first:
            raise ToolArgsError([f"/pages: {part.strip()!r} ends before it starts; write it as {last}-{first}"])
        if last > count:
            raise ToolArgsError(
                [f"/pages: page {last} is past the end: {display!r} has {count} page{'s' if count != 1 else ''}"]
            )
        pages.extend(range(first, last + 1))
    return list(dict.fromkeys(pages))
