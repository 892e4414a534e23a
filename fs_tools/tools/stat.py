"""The ``stat`` tool: what a path is, and where this session stands with it. Records nothing."""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any

from pydantic import Field

from fs_tools.arguments import EntryPath, ToolArgs, ToolOutputModel
from fs_tools.errors import FsError, path_label
from fs_tools.provider import DIRECTORY, FILE, WideLines, wide_encoding
from fs_tools.rendering.quoting import short, text_of
from fs_tools.tools.base import Example, Tool, ToolContext, ToolOutput
from policy import Absent, Present

_SNIFF = 8192  # bytes looked at for a NUL, as grep decides "binary"
_KINDS = {FILE: "file", DIRECTORY: "directory"}  # a symlink is followed, as reads follow it


class StatArgs(ToolArgs):
    path: EntryPath = Field(description="Path of a file or directory, relative to the workspace root.")


class StatOutput(ToolOutputModel):
    path: str
    kind: str
    size: int
    mode: str
    modified: str
    lines: int | None
    version: str | None
    standing: str | None


class _Lines:
    """A sink that counts lines and notices binary content (a NUL in the first bytes)."""

    def __init__(self) -> None:
        self.newlines = 0
        self.size = 0
        self.last = b""
        self.binary = False
        self._wide: WideLines | None = None

    def feed(self, chunk: bytes) -> None:
        if self.size == 0 and wide_encoding(chunk[:4]) is not None:  # UTF-16 or UTF-32: lines of its text
            self._wide = WideLines()
        if self._wide is not None:
            self.size += len(chunk)
            self._wide.feed(chunk)
            return
        if self.size < _SNIFF and b"\0" in chunk[: _SNIFF - self.size]:
            self.binary = True
        self.newlines += chunk.count(b"\n")
        self.size += len(chunk)
        self.last = chunk[-1:]

    @property
    def lines(self) -> int | None:
        if self._wide is not None:
            return self._wide.lines()
        if self.binary:
            return None
        return self.newlines + (1 if self.size and self.last != b"\n" else 0)


def run_stat(ctx: ToolContext, args: StatArgs) -> ToolOutput:
    found = ctx.provider.stat(args.path)
    lines = version = standing = None
    if found.kind == FILE:
        try:
            _, read = ctx.provider.read(args.path, _Lines, cancel=ctx.cancel)
        except FsError:  # over the read limit, or gone since: the rest is still worth saying
            read = None
        if read is not None and read[1].settled:
            sink, scan = read
            lines, version = sink.lines, scan.version
            standing = _standing(ctx.store.get(ctx.session, found.key), version)
    modified = datetime.datetime.fromtimestamp(found.mtime_ns / 1e9, datetime.UTC).isoformat(timespec="seconds")
    value: dict[str, Any] = {
        "path": args.path,
        "kind": _KINDS.get(found.kind, "special file"),
        "size": found.size,
        "mode": f"{found.mode:04o}",
        "modified": modified,
        "lines": lines,
        "version": version,
        "standing": standing,
    }
    return ToolOutput(text=_render(args.path, value), value=value)


def _standing(observation: object, version: str) -> str:
    if observation is None:
        return "unseen"
    if isinstance(observation, Present) and observation.version == version:
        return "current"
    assert isinstance(observation, Present | Absent)
    return "stale"


_STANDING = {
    "unseen": "not read in this session (read it before you change it)",
    "current": "read in this session, unchanged since",
    "stale": "changed since this session read it (read it again before you change it)",
}


def _render(path: str, value: Mapping[str, Any]) -> str:
    rows = [f"{path_label(path)}: {value['kind']}, {value['size']:,} bytes, mode {value['mode']}"]
    rows.append(f"modified {value['modified']}")
    if value["kind"] == "file":
        if value["version"] is None:
            rows.append("too large to hash here, or changing: no version or line count")
        elif value["lines"] is None:
            rows.append("binary (not text)")
        else:
            rows.append(f"{value['lines']} line(s)")
        if value["version"] is not None:
            rows.append(f"version {value['version'][:16]}")
            rows.append(_STANDING[value["standing"]])
    return "\n".join(rows)


def present_stat(args: Mapping[str, Any]) -> str | None:
    path = text_of(args, "path")
    return None if path is None else f"stat {short(path)}"


STAT = Tool(
    name="stat",
    title="Describe a path",
    description=(
        "Describe a file or directory without reading it into the conversation: kind, size, mode, "
        "modification time, and for a file its line count, version and whether you have read it in this "
        "session at its current version. Records nothing: read a file before you change it."
    ),
    arguments=StatArgs,
    output=StatOutput,
    run=run_stat,
    read_only=True,
    preconditions="Read-only: it records nothing and never changes a file.",
    example=Example({"path": "src/app.py"}, setup=(("read", {"file_path": "src/app.py"}),)),
    present=present_stat,
)
