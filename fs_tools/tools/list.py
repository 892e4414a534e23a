"""The ``list`` tool: a directory's entries as an indented tree."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field

from fs_tools import abilities
from fs_tools.arguments import Integer, SearchPath, ToolArgs, ToolOutputModel
from fs_tools.names import visible
from fs_tools.patterns.glob import GlobPattern
from fs_tools.provider import DIRECTORY, FILE, SYMLINK, Entry
from fs_tools.rendering.listings import plural, shown_path
from fs_tools.terms import term
from fs_tools.tools.base import Example, Tool, ToolContext, ToolOutput

MAX_ENTRIES = 500


class ListArgs(ToolArgs):
    path: SearchPath = Field(".", description="Directory to list, relative to the workspace root. Default: the root.")
    depth: Integer = Field(2, ge=1, le=20, description="How many levels to show. Default 2.")
    include_hidden: bool = Field(False, description="Also show entries whose names start with '.'. Default false.")


class ListOutput(ToolOutputModel):
    path: str
    entries: int
    hidden: int
    truncated: bool


def _row(entry: Entry) -> str:
    indent = "  " * (entry.depth - 1)
    name = visible(entry.name)
    if entry.kind == DIRECTORY:
        return f"{indent}{name}/"
    if entry.kind == FILE:
        return f"{indent}{name}  ({entry.size:,} bytes)"
    if entry.kind == SYMLINK:
        return f"{indent}{name}@  (symlink, not followed)"
    return f"{indent}{name}  (special file)"


def run_list(ctx: ToolContext, args: ListArgs) -> ToolOutput:
    return list_directory(ctx, args)


def list_directory(ctx: ToolContext, args: ListArgs, ignore: Sequence[GlobPattern] = ()) -> ToolOutput:
    """The listing ``args`` asks for, leaving out (and not entering) entries whose name or path below
    the listed directory matches one of ``ignore``."""
    rows: list[str] = []
    ignored = 0
    hidden = 0
    unexpanded = 0
    truncated = False

    def left_out(entry: Entry) -> bool:
        return any(pattern.matches(entry.parts) for pattern in ignore)

    def descend(entry: Entry) -> bool:
        nonlocal unexpanded
        if _skipped(entry, args.include_hidden) or left_out(entry):
            return False
        if entry.depth >= args.depth:
            unexpanded += 1
            return False
        return True

    with ctx.provider.walk(args.path, descend=descend) as found:
        for entry in found.entries:
            if _skipped(entry, args.include_hidden):
                hidden += 1
                continue
            if left_out(entry):
                ignored += 1
                continue
            if len(rows) >= MAX_ENTRIES:
                truncated = True
                break
            rows.append(_row(entry))
        where = shown_path(found.start, ()) or "."
    if rows:
        text = "\n".join(rows)
    else:
        text = f"(no visible entries in {where!r})" if hidden else f"(the directory {where!r} is empty)"
    notes = []
    if truncated:
        notes.append(
            f"stopped at {MAX_ENTRIES} entries; list a subdirectory, use a smaller depth, or find files by name "
            "with glob"
        )
    if unexpanded:
        notes.append(
            f"{unexpanded} director(ies) at depth {args.depth} not expanded"
            + (f"; pass a larger {term('depth')} to see inside" if term("depth") else "; list them to see inside")
        )
    if hidden:
        notes.append(
            f"{plural(hidden, 'hidden entry', 'hidden entries')} (names starting with '.') not shown"
            + (f"; pass {term('include_hidden')}=true" if term("include_hidden") else "")
        )
    if ignored:
        notes.append(f"{plural(ignored, 'entry', 'entries')} matching {term('ignore')} not shown")
    if notes:
        text += "\n\n" + "\n".join(f"[{note}]" for note in notes)
    return ToolOutput(
        text=text, value={"path": args.path, "entries": len(rows), "hidden": hidden, "truncated": truncated}
    )


def _skipped(entry: Entry, include_hidden: bool) -> bool:
    return not include_hidden and entry.name.startswith(".")


LIST = Tool(
    name="list",
    title="List a directory",
    abilities=(abilities.SEE_ENTRIES,),
    description=(
        "List a directory as an indented tree: directories end with '/', files show their size, symlinks are "
        "marked and never followed. Hidden entries (names starting with '.') are left out unless "
        "include_hidden is true. Listing records nothing: read a file before you edit it."
    ),
    arguments=ListArgs,
    output=ListOutput,
    run=run_list,
    read_only=True,
    preconditions="Read-only: it records nothing and never changes a file.",
    example=Example({"path": "."}),
)
