"""The ``copy`` tool: a file copied to a new path inside the roots, never clobbering what the session has
not seen (SPEC §21)."""

from __future__ import annotations

import stat
from collections.abc import Mapping
from typing import Any

from pydantic import Field

from fs_tools.arguments import FilePath, ToolArgs, ToolOutputModel, Violation
from fs_tools.errors import (
    AlreadyExists,
    DestinationNotFile,
    HarnessError,
    MissingPath,
    NotRegularFile,
    ReadTooLarge,
    Remedy,
    SamePath,
    TooLarge,
    Unstable,
    path_label,
)
from fs_tools.gating import check_replace, commit_gated
from fs_tools.rendering.quoting import short, text_of
from fs_tools.terms import term
from fs_tools.tools.base import Example, Tool, ToolContext, ToolOutput
from policy import Intent


def _too_large(exc: HarnessError, details: Mapping[str, Any], tools: Mapping[str, str]) -> str:
    return f"{exc.message} — ask the user to copy it, or copy a smaller file"


class SourceTooLarge(TooLarge):
    """A copy's source is larger than the host lets fs-tools write."""

    remedy = Remedy("Ask the user to copy the file, or copy a smaller one.", _too_large)


def _onto_itself(exc: HarnessError, details: Mapping[str, Any], tools: Mapping[str, str]) -> str:
    return f"{exc.message} — nothing to copy; give a {term('destination')} that is another path"


class OntoItself(SamePath):
    """A copy's destination is its source (the same name, or a hard link to it)."""

    remedy = Remedy("Nothing to copy: give a destination that is another path.", _onto_itself)


def _over(display: str, limit: int) -> str:
    return f"{display!r} is over {limit:,} bytes, the host's limit for a file fs-tools writes"


class _Kept:
    """The source's bytes, up to the host's limit for a file fs-tools writes (memory never grows past it)."""

    def __init__(self, display: str, limit: int) -> None:
        self.display = display
        self.limit = limit
        self.chunks: list[bytes] = []
        self.size = 0

    def feed(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if self.size > self.limit:
            raise SourceTooLarge(_over(self.display, self.limit), details={"limit": self.limit})
        self.chunks.append(chunk)


class CopyArgs(ToolArgs):
    source: FilePath = Field(description="Path of the file to copy, relative to the workspace root.")
    destination: FilePath = Field(
        description="Path of the copy (the full path, not a directory to copy into); missing parents are created."
    )
    overwrite: bool = Field(
        False, description="Replace an existing file at destination (one you have read). Default false."
    )

    @classmethod
    def cross_field_violations(cls, data: Mapping[str, Any]) -> list[Violation]:
        if isinstance(data.get("source"), str) and data.get("source") == data.get("destination"):
            return [(("destination",), "must differ from source")]
        return []


class CopyOutput(ToolOutputModel):
    source: str
    destination: str
    bytes_copied: int
    replaced: bool
    version: str


def run_copy(ctx: ToolContext, args: CopyArgs) -> ToolOutput:
    source = path_label(args.source)
    limit = ctx.provider.max_file_bytes
    try:
        _, found = ctx.provider.read(args.source, lambda: _Kept(source, limit), cancel=ctx.cancel)
    except ReadTooLarge as exc:  # past what fs-tools reads at all: past what it writes too
        raise SourceTooLarge(_over(source, limit), details={"limit": limit}) from exc
    if found is None:
        raise MissingPath(f"{source!r} does not exist")
    kept, scan = found
    if not scan.settled:  # torn bytes are never copied
        raise Unstable(f"{source!r} kept changing while it was being read")
    # An existing destination: the session must have read it at its current version (as for write), and
    # only then does overwrite decide; a create is published without clobbering, as write's is.
    try:
        replaced = check_replace(ctx, args.destination, kind="a copy never replaces one")
    except NotRegularFile as exc:  # a directory there: the destination is the new file's whole path
        raise DestinationNotFile(exc.message, kind=exc.kind) from exc
    if replaced is not None and (replaced.stat.st_dev, replaced.stat.st_ino) == (scan.stat.st_dev, scan.stat.st_ino):
        raise OntoItself(f"{source!r} and {path_label(args.destination)!r} are the same file")
    if replaced is not None and not args.overwrite:
        raise AlreadyExists(f"{path_label(args.destination)!r} already exists")
    data = b"".join(kept.chunks)
    done = commit_gated(ctx, args.destination, Intent.WRITE, data, mode=stat.S_IMODE(scan.stat.st_mode) & 0o777)
    text = f"Copied {source!r} to {path_label(args.destination)!r}: {len(data):,} bytes"
    text += ", replacing the file that was there." if not done.created else "."
    return ToolOutput(
        text=text,
        value={
            "source": args.source,
            "destination": args.destination,
            "bytes_copied": len(data),
            "replaced": not done.created,
            "version": done.after.version,
        },
    )


def present_copy(args: Mapping[str, Any]) -> str | None:
    source, destination = text_of(args, "source"), text_of(args, "destination")
    if source is None or destination is None or not isinstance(args.get("overwrite", False), bool | None):
        return None
    return f"copy {short(source)} → {short(destination)}" + (" (overwrite)" if args.get("overwrite") else "")


COPY = Tool(
    name="copy",
    title="Copy a file",
    description=(
        "Copy a file to a new path inside the workspace (byte for byte, with its permission bits); missing "
        "parent directories of destination are created. The source needs no read. An existing file at "
        "destination is replaced only with overwrite=true and only if you have read it; a directory there is "
        "never replaced. You may edit the copy at once."
    ),
    arguments=CopyArgs,
    output=CopyOutput,
    run=run_copy,
    read_only=False,
    preconditions=(
        "The workspace is not read-only and destination is not protected. The source is a readable file within "
        "the host's size limit; a file at destination must have been read in this session, must not have "
        "changed since, and overwrite must be true."
    ),
    example=Example({"source": "notes.txt", "destination": "notes-backup.txt"}),
    present=present_copy,
)
