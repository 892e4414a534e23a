"""What the discovery tools (list, glob, grep) share: the directories a walk skips, and how paths,
counts and partial results are shown."""

from __future__ import annotations

from fs_tools.names import visible

VCS_DIRECTORIES = frozenset({".git", ".hg", ".svn", ".bzr", "_darcs", "CVS", ".jj"})


def with_first_rows(head: str, rows: list[str], shown: int = 20) -> str:
    """A timeout message: what ran out, then the first rows found so far."""
    if not rows:
        return head
    more = f"\n… and {len(rows) - shown} more" if len(rows) > shown else ""
    return f"{head}:\n" + "\n".join(rows[:shown]) + more


def plural(count: int, one: str, many: str) -> str:
    return f"{count:,} {one if count == 1 else many}"


def shown_path(start: tuple[str, ...], parts: tuple[str, ...]) -> str:
    """An entry's path as the tools show it: relative to its root (``start`` is the walk's)."""
    return "/".join(visible(p) for p in (*start, *parts))
