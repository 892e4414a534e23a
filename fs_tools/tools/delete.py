"""The ``delete`` tool: remove a file this session has read, a symlink, or an empty directory."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field

from fs_tools.arguments import EntryPath, ToolArgs, ToolOutputModel
from fs_tools.errors import path_label
from fs_tools.gating import (
    check_configuration,
    mode_of,
    observed_version,
    record_change,
    record_observations,
    refuse_if_vanished,
    state_of,
)
from fs_tools.history.model import Effect
from fs_tools.provider import DIRECTORY, FILE, SYMLINK, FileState, Snapshot
from fs_tools.rendering.quoting import short, text_of
from fs_tools.tools.base import Example, Tool, ToolContext, ToolOutput
from policy import ABSENT, Intent

_KINDS = {FILE: "file", DIRECTORY: "empty directory", SYMLINK: "symlink (its target is untouched)"}


class RemovalGate:
    """The gates of one session's delete: a regular file must be observed at its current version; a
    symlink, a directory or a special file is removed as an entry, on the configuration gates alone."""

    def __init__(self, ctx: ToolContext) -> None:
        self.ctx = ctx
        self.display = ""
        self.kind = ""
        self.expected: str | None = None

    def expect(self, file: FileState) -> str | None:
        self.display, self.kind = file.display, file.kind
        check_configuration(self.ctx, file)
        refuse_if_vanished(self.ctx, file)
        if file.kind != FILE:
            return None
        self.expected = observed_version(self.ctx, Intent.DELETE, file)
        return self.expected

    def removed(self, key: str, *, before: Snapshot | None = None) -> None:
        effect = Effect(key, state_of(self.kind, before, self.expected), None, mode_of(before))
        record_change(self.ctx, [effect], before)
        record_observations(self.ctx, {key: ABSENT}, f"{self.display!r} was deleted")


class DeleteArgs(ToolArgs):
    file_path: EntryPath = Field(
        description="Path of the file, symlink or empty directory to delete, relative to the workspace root."
    )


class DeleteOutput(ToolOutputModel):
    path: str
    kind: str


def run_delete(ctx: ToolContext, args: DeleteArgs) -> ToolOutput:
    kind = ctx.provider.remove(args.file_path, RemovalGate(ctx), cancel=ctx.cancel)
    shown = _KINDS.get(kind, "special file")
    return ToolOutput(
        text=f"Deleted {path_label(args.file_path)!r} ({shown}).", value={"path": args.file_path, "kind": kind}
    )


def present_delete(args: Mapping[str, Any]) -> str | None:
    path = text_of(args, "file_path")
    return None if path is None else f"delete {short(path)}"


DELETE = Tool(
    name="delete",
    title="Delete a file or empty directory",
    description=(
        "Delete a file, a symlink (the link only, never its target) or an empty directory. A file must have "
        "been read in this session and must not have changed since; a directory with entries is refused "
        "(delete them first). Deleting cannot be undone."
    ),
    arguments=DeleteArgs,
    output=DeleteOutput,
    run=run_delete,
    read_only=False,
    preconditions=(
        "The workspace is not read-only and the path is not protected. A file must have been read in this "
        "session and must not have changed since; a directory must be empty; the root is never deleted."
    ),
    example=Example({"file_path": "notes.txt"}, setup=(("read", {"file_path": "notes.txt"}),)),
    present=present_delete,
)
