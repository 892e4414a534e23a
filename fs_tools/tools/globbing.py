"""The ``glob`` tool: files whose path matches a pattern, relative to the root."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field
from wcmatch import glob as wc

from fs_tools.arguments import SearchPath, ToolArgs, ToolOutputModel, Violation
from fs_tools.provider.walk import FILE, Entry, walk
from fs_tools.tools.base import Tool, ToolContext, ToolOutput
from fs_tools.tools.discovery import VCS_DIRECTORIES, glob_pattern_violations, shown_path, walk_start

MAX_MATCHES = 1000
_FLAGS = wc.GLOBSTAR | wc.DOTGLOB | wc.BRACE


class GlobArgs(ToolArgs):
    pattern: str = Field(min_length=1, description="Glob pattern such as '**/*.py' or 'src/*.{js,ts}'.")
    path: SearchPath = Field(
        ".", description="Directory to search from, relative to the workspace root. Default: the root."
    )

    @classmethod
    def cross_field_violations(cls, data: Mapping[str, Any]) -> list[Violation]:
        return glob_pattern_violations(data, "pattern")


class GlobOutput(ToolOutputModel):
    pattern: str
    matches: int
    truncated: bool


def run_glob(ctx: ToolContext, args: GlobArgs) -> ToolOutput:
    found: list[str] = []
    truncated = False
    with walk_start(ctx, args.path) as (target, fd):
        assert fd is not None
        for entry in walk(fd, _descend, sizes=False):
            if entry.kind != FILE or not wc.globmatch("/".join(entry.parts), args.pattern, flags=_FLAGS):
                continue
            if len(found) >= MAX_MATCHES:
                truncated = True
                break
            found.append(shown_path(target, entry.parts))
    if not found:
        return ToolOutput(
            text=f"(no files match {args.pattern!r} under {args.path!r})",
            value={"pattern": args.pattern, "matches": 0, "truncated": False},
        )
    text = "\n".join(found)
    if truncated:
        text += f"\n\n[stopped at {MAX_MATCHES} files; use a narrower pattern or path to see the rest]"
    return ToolOutput(text=text, value={"pattern": args.pattern, "matches": len(found), "truncated": truncated})


def _descend(entry: Entry) -> bool:
    return entry.name not in VCS_DIRECTORIES


GLOB = Tool(
    name="glob",
    description=(
        "Find files by path pattern ('**' crosses directories, '{a,b}' alternates), searching from path. "
        "Returns paths relative to the workspace root, sorted; version-control directories are skipped and "
        "symlinks are not followed. Globbing records nothing: read a file before you edit it."
    ),
    arguments=GlobArgs,
    output=GlobOutput,
    run=run_glob,
    read_only=True,
)
