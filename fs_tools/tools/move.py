"""The ``move`` tool: rename a file or a directory inside the roots, never clobbering what the session
has not seen."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field

from fs_tools.arguments import EntryPath, FilePath, ToolArgs, ToolOutputModel, Violation
from fs_tools.errors import path_label
from fs_tools.gating import (
    check_configuration,
    mode_of,
    observed_version,
    record_change,
    record_observations,
    refuse_if_vanished,
)
from fs_tools.history.model import DIR, Effect, Move, Step
from fs_tools.provider import DIRECTORY, FILE, FileState, Snapshot
from fs_tools.rendering.quoting import short, text_of
from fs_tools.tools.base import Example, Tool, ToolContext, ToolOutput
from policy import ABSENT, Intent, Observation, Present


class MovingGate:
    """The gates of one session's move: both ends pass the configuration gates (every entry below a
    moved directory too); a regular file as the source, and one a move would replace, must be observed
    at their current versions. The session's observation follows the file."""

    def __init__(self, ctx: ToolContext) -> None:
        self.ctx = ctx
        self.version: str | None = None
        self.replaced = False
        self.replaced_version: str | None = None

    def expect_source(self, file: FileState) -> str | None:
        check_configuration(self.ctx, file)
        refuse_if_vanished(self.ctx, file)
        if file.kind != FILE:
            return None
        self.version = observed_version(self.ctx, Intent.MOVE, file)
        return self.version

    def expect_destination(self, file: FileState) -> str | None:
        check_configuration(self.ctx, file)
        self.replaced = file.exists  # a move that succeeds replaced it (without overwrite it is refused)
        self.replaced_version = observed_version(self.ctx, Intent.REPLACE, file) if file.exists else None
        return self.replaced_version

    @property
    def checks_inside(self) -> bool:
        return bool(self.ctx.options.protected.patterns)

    def check_inside(self, source: FileState, destination: FileState) -> None:
        check_configuration(self.ctx, source)
        check_configuration(self.ctx, destination)

    def moved(
        self,
        source_key: str,
        destination_key: str,
        kind: str,
        *,
        moved: Snapshot | None = None,
        replaced: Snapshot | None = None,
        made: tuple[str, ...] = (),
        identity: str = "",
    ) -> None:
        store, session = self.ctx.store, self.ctx.session
        steps: list[Step] = [Effect(directory, None, DIR) for directory in made]
        version = self.version if kind == FILE else None
        steps.append(
            Move(source_key, destination_key, kind, version, self.replaced_version, identity, mode_of(replaced))
        )
        record_change(self.ctx, steps, moved, replaced)

        def followed() -> dict[str, Observation]:
            """The session's observations after the move: each follows its file, the old paths absent."""
            changes: dict[str, Observation] = {}
            if kind == DIRECTORY:
                below = source_key + "/"
                for key, observation in store.observed(session).items():
                    if key.startswith(below):
                        changes[destination_key + key[len(source_key) :]] = observation
                        changes[key] = ABSENT
            elif kind == FILE and self.version is not None:
                changes[source_key] = ABSENT
                changes[destination_key] = Present(self.version)
            # a symlink: what the session saw through it is its target's, which did not move
            return changes

        record_observations(self.ctx, followed, "the move is done")


class MoveArgs(ToolArgs):
    source: EntryPath = Field(description="Path of the file or directory to move, relative to the workspace root.")
    destination: FilePath = Field(
        description="Its new path (the full path, not a directory to move it into); missing parents are created."
    )
    overwrite: bool = Field(
        False, description="Replace an existing file at destination (one you have read). Default false."
    )

    @classmethod
    def cross_field_violations(cls, data: Mapping[str, Any]) -> list[Violation]:
        source, destination = data.get("source"), data.get("destination")
        if isinstance(source, str) and source and source.rstrip("/") == destination:
            return [(("destination",), "must differ from source")]
        return []


class MoveOutput(ToolOutputModel):
    source: str
    destination: str
    kind: str
    replaced: bool


def run_move(ctx: ToolContext, args: MoveArgs) -> ToolOutput:
    gate = MovingGate(ctx)
    kind = ctx.provider.rename(args.source, args.destination, gate, overwrite=args.overwrite, cancel=ctx.cancel)
    replaced = gate.replaced
    text = f"Moved {path_label(args.source)!r} to {path_label(args.destination)!r}"
    text += ", replacing the file that was there." if replaced else "."
    if gate.version is not None:
        text += " Your read of it carries over: edit it at its new path."
    return ToolOutput(
        text=text,
        value={"source": args.source, "destination": args.destination, "kind": kind, "replaced": replaced},
    )


def present_move(args: Mapping[str, Any]) -> str | None:
    source, destination = text_of(args, "source"), text_of(args, "destination")
    if source is None or destination is None or not isinstance(args.get("overwrite", False), bool | None):
        return None
    return f"move {short(source)} → {short(destination)}" + (" (overwrite)" if args.get("overwrite") else "")


MOVE = Tool(
    name="move",
    title="Move or rename",
    description=(
        "Move or rename a file or a directory inside the workspace; missing parent directories of destination "
        "are created. A file must have been read in this session (a directory needs no read). An existing "
        "file at destination is replaced only with overwrite=true and only if you have read it; a directory "
        "there is never replaced. Your read of a moved file carries over to its new path."
    ),
    arguments=MoveArgs,
    output=MoveOutput,
    run=run_move,
    read_only=False,
    preconditions=(
        "The workspace is not read-only and neither end is protected (nor any path under a moved directory). "
        "A file must have been read in this session and must not have changed since; a file it would replace "
        "too, and overwrite must be true; the root is never moved."
    ),
    example=Example(
        {"source": "notes.txt", "destination": "docs/notes.txt"}, setup=(("read", {"file_path": "notes.txt"}),)
    ),
    present=present_move,
)
