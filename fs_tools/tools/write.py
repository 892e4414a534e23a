"""The ``write`` tool: create a file, or replace one this session has read."""

from __future__ import annotations

from pydantic import Field

from fs_tools.arguments import FilePath, Text, ToolArgs, ToolOutputModel
from fs_tools.errors import path_label
from fs_tools.provider import count_lines
from fs_tools.tools.base import Tool, ToolContext, ToolOutput
from fs_tools.tools.mutation import commit_gated
from policy import Intent


class WriteArgs(ToolArgs):
    file_path: FilePath = Field(
        description="Path of the file: relative to the workspace root, or absolute inside a root."
    )
    content: Text = Field(description="The complete new content, written exactly as given (UTF-8).")


class WriteOutput(ToolOutputModel):
    path: str
    created: bool
    bytes_written: int
    lines: int
    version: str


def run_write(ctx: ToolContext, args: WriteArgs) -> ToolOutput:
    data = args.content.encode("utf-8")
    done = commit_gated(ctx, args.file_path, Intent.WRITE, data)
    created = done.created
    lines = count_lines(args.content)
    verb = "Created" if created else "Replaced"
    text = f"{verb} {path_label(args.file_path)!r}: {len(data):,} bytes, {lines} line(s)."
    return ToolOutput(
        text=text,
        value={
            "path": args.file_path,
            "created": created,
            "bytes_written": len(data),
            "lines": lines,
            "version": done.after.version,
        },
    )


WRITE = Tool(
    name="write",
    description=(
        "Write a whole file (UTF-8, byte-exact: no newline is added). Creates the file and any missing "
        "parent directories. To replace an existing file you must have read it in this session, and it "
        "must not have changed since; prefer edit for changing part of a file."
    ),
    arguments=WriteArgs,
    output=WriteOutput,
    run=run_write,
    read_only=False,
)
