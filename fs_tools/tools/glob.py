"""The ``glob`` tool: files whose path matches a pattern, relative to the root."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field

from fs_tools.arguments import SearchPath, ToolArgs, ToolOutputModel, Violation
from fs_tools.errors import ToolTimeout
from fs_tools.patterns.glob import compile_glob, glob_pattern_violations
from fs_tools.provider import FILE, Entry
from fs_tools.rendering.listings import VCS_DIRECTORIES, shown_path, with_first_rows
from fs_tools.tools.base import Example, Tool, ToolContext, ToolOutput

MAX_MATCHES = 1000


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
    found, truncated = find_files(ctx, args)
    if not found:
        return ToolOutput(
            text=f"(no files match {args.pattern!r} under {args.path!r})",
            value={"pattern": args.pattern, "matches": 0, "truncated": False},
        )
    text = "\n".join(found)
    if truncated:
        text += f"\n\n[stopped at {MAX_MATCHES} files; use a narrower pattern or path to see the rest]"
    return ToolOutput(text=text, value={"pattern": args.pattern, "matches": len(found), "truncated": truncated})


def find_files(ctx: ToolContext, args: GlobArgs, deadline: float | None = None) -> tuple[list[str], bool]:
    """The paths of the files ``args`` matches (at most ``MAX_MATCHES``), and whether there were more.
    ``deadline`` (a ``ctx.options.clock()`` value) is the call's, when it globs more than once; by default
    ``search_seconds`` from now."""
    pattern = compile_glob(args.pattern)  # once per call; validation has refused what it cannot compile
    if deadline is None:
        deadline = ctx.options.clock() + ctx.options.search_seconds
    found: list[str] = []
    truncated = False
    with ctx.provider.walk(args.path, descend=_descend, sizes=False) as walked:
        for entry in walked.entries:
            ctx.check_cancelled("glob")
            if ctx.options.clock() > deadline:
                raise ToolTimeout(_timeout_message(ctx, args, found), details={"matches": len(found)})
            if entry.kind != FILE or not pattern.matches(entry.parts):
                continue
            if len(found) >= MAX_MATCHES:
                truncated = True
                break
            found.append(shown_path(walked.start, entry.parts))
    return found, truncated


def _timeout_message(ctx: ToolContext, args: GlobArgs, found: list[str]) -> str:
    head = (
        f"glob ran past its {ctx.options.search_seconds:g} s budget with {len(found)} matching file(s) so far — "
        f"search a narrower path than {args.path!r} or use a more specific pattern"
    )
    return with_first_rows(head, found)


def _descend(entry: Entry) -> bool:
    return entry.name not in VCS_DIRECTORIES


GLOB = Tool(
    name="glob",
    title="Find files by name",
    description=(
        "Find files by path pattern ('**' crosses directories, '{a,b}' alternates), searching from path. "
        "Returns paths relative to the workspace root, sorted; version-control directories are skipped and "
        "symlinks are not followed. Globbing records nothing: read a file before you edit it."
    ),
    arguments=GlobArgs,
    output=GlobOutput,
    run=run_glob,
    read_only=True,
    preconditions="Read-only: it records nothing and never changes a file.",
    example=Example({"pattern": "**/*.py"}),
)
