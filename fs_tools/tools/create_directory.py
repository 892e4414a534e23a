"""The ``create_directory`` tool: a directory and its missing parents."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field

from fs_tools.arguments import EntryPath, ToolArgs, ToolOutputModel
from fs_tools.errors import path_label
from fs_tools.gating import check_configuration, record_change
from fs_tools.history.model import DIR, Effect
from fs_tools.provider import FileState
from fs_tools.rendering.quoting import short, text_of
from fs_tools.tools.base import Example, Tool, ToolContext, ToolOutput


class CreateDirectoryArgs(ToolArgs):
    path: EntryPath = Field(description="Path of the directory to create, relative to the workspace root.")


class CreateDirectoryOutput(ToolOutputModel):
    path: str
    created: bool


def run_create_directory(ctx: ToolContext, args: CreateDirectoryArgs) -> ToolOutput:
    def gate(directory: FileState) -> None:
        check_configuration(ctx, directory)

    made = ctx.provider.make_directory(args.path, gate)
    record_change(ctx, [Effect(directory, None, DIR) for directory in made])
    created = bool(made)
    label = path_label(args.path)
    text = f"Created the directory {label!r}." if created else f"The directory {label!r} already exists."
    return ToolOutput(text=text, value={"path": args.path, "created": created})


def present_create_directory(args: Mapping[str, Any]) -> str | None:
    path = text_of(args, "path")
    return None if path is None else f"create_directory {short(path)}"


CREATE_DIRECTORY = Tool(
    name="create_directory",
    title="Create a directory",
    description=(
        "Create a directory, and any missing parent directories. An existing directory is fine (nothing "
        "changes); an existing file of that name is an error. Files need no directory first: write creates "
        "missing parents itself."
    ),
    arguments=CreateDirectoryArgs,
    output=CreateDirectoryOutput,
    run=run_create_directory,
    read_only=False,
    preconditions="The workspace is not read-only and the path is not protected.",
    example=Example({"path": "docs/guides"}),
    present=present_create_directory,
    additive=True,
)
