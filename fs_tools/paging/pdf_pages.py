"""A PDF's ``pages`` argument (SPEC §18): "3", "1-5", "1,4,7-9", counted from 1."""

from __future__ import annotations

from fs_tools.errors import ToolArgsError


def page_ranges(spec: str, count: int, display: str) -> list[tuple[int, int]]:
    """The ranges ``spec`` names, in its order; ``INVALID_ARGS`` at ``/pages`` for a page that is not
    in a document of ``count`` pages (its message names the count; page 0 was refused with the
    argument). Never expands a range: "1-99999" thirty times is thirty pairs."""
    ranges: list[tuple[int, int]] = []
    for part in spec.split(","):
        first_text, dash, last_text = part.partition("-")
        first = int(first_text)
        last = int(last_text) if dash else first
        if last < first:
            raise ToolArgsError([f"/pages: {part.strip()!r} ends before it starts; write it as {last}-{first}"])
        if last > count:
            raise ToolArgsError(
                [f"/pages: page {last} is past the end: {display!r} has {count} page{'s' if count != 1 else ''}"]
            )
        ranges.append((first, last))
    return ranges


def take(ranges: list[tuple[int, int]], limit: int, skip: set[int] | None = None) -> list[int]:
    """At most ``limit`` pages from ``ranges`` in order, each once, none of ``skip``."""
    chosen: list[int] = []
    seen = set(skip or ())
    for first, last in ranges:
        page = first
        while page <= last and len(chosen) < limit:
            if page not in seen:
                seen.add(page)
                chosen.append(page)
            page += 1
        if len(chosen) >= limit:
            break
    return chosen


def page_spec(pages: list[int]) -> str:
    """Pages as ``pages`` takes them: runs collapsed ("1-3,7")."""
    runs: list[str] = []
    if not pages:
        return ""
    start = previous = pages[0]
    for page in [*pages[1:], None]:
        if page is not None and page == previous + 1:
            previous = page
            continue
        runs.append(str(start) if start == previous else f"{start}-{previous}")
        if page is not None:
            start = previous = page
    return ",".join(runs)


def span(spec: str) -> tuple[int, int]:
    """The first and the last page of a ``page_spec`` ("21-40" gives (21, 40)): for a tool that names
    pages by a start and an end."""
    first = spec.split(",")[0].split("-")[0]
    last = spec.split(",")[-1].split("-")[-1]
    return int(first), int(last)
