"""A session's history for its host and, when the host offers them, for the model: ``checkpoint``,
``history``, ``diff`` and ``rewind`` (SPEC §16). The four tools are extras of the fs-tools dialect,
offered only when named in ``tools=`` (``serve --tools ...,rewind``): undoing is the host's decision,
and the model's ``rewind`` never forces past someone else's change."""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Mapping
from typing import Any

from pydantic import Field

from fs_tools.arguments import ToolArgs, ToolOutputModel
from fs_tools.errors import HistoryTrimmed, ToolArgsError
from fs_tools.history.diff import unified_diff
from fs_tools.history.model import HistoryEntry, make_mark
from fs_tools.history.rewind import entries_since, history_of, rewind, within_roots
from fs_tools.rendering.quoting import short, text_of
from fs_tools.tools.base import Example, Tool, ToolContext, ToolOutput

MAX_DIFF_CHARACTERS = 100_000  # what the diff tool shows the model at most
MAX_LISTED = 200  # the history tool's newest entries; the rewind tool's paths
MAX_SHOWN = 20  # paths a text names before "and N more"


def checkpoint(ctx: ToolContext, label: str | None) -> str:
    history = history_of(ctx)
    seq = history.append(ctx.session, tool=None, call=None, label=label, steps=(), blobs={})
    return make_mark(ctx.session, seq, history.identity)


def listing(ctx: ToolContext) -> list[HistoryEntry]:
    """Marks and changes in time order; the changes of one call (apply_patch's files) are one entry, so
    no mark falls inside a call."""
    store = history_of(ctx).identity
    listed: list[HistoryEntry] = []
    paths: dict[str, None] = {}  # the paths of the last change listed, gathered across its call
    last_call: str | None = None

    def close() -> None:
        if listed and listed[-1].kind == "change":
            listed[-1] = dataclasses.replace(listed[-1], paths=tuple(paths))

    for entry in within_roots(ctx, history_of(ctx).entries(ctx.session)):
        if entry.is_mark:
            close()
            listed.append(HistoryEntry("mark", make_mark(ctx.session, entry.seq, store), entry.time, label=entry.label))
            last_call = None
            continue
        if not (entry.call and entry.call == last_call):
            close()
            paths = {}
            listed.append(
                HistoryEntry("change", make_mark(ctx.session, entry.seq - 1, store), entry.time, tool=entry.tool)
            )
            last_call = entry.call
        paths.update(dict.fromkeys(_path(ctx, key) for key in entry.paths()))
    close()
    return listed


def diff(ctx: ToolContext, since: str | None) -> str:
    changes, position = entries_since(ctx, since)
    text = unified_diff(
        changes, history_of(ctx), lambda key: _path(ctx, key), check=lambda: ctx.check_cancelled("diff")
    )
    trimmed = history_of(ctx).trimmed_through(ctx.session)
    if trimmed > position:  # said before the sections, where patch passes over text
        shown = since if since is not None else "the session's first change"
        text = f"# history no longer reaches {shown}: the changes before the oldest kept one are not shown\n" + text
    return text


def _path(ctx: ToolContext, key: str) -> str:
    relative = ctx.provider.relative_paths(key)
    return relative[0] if relative else key


def _mark_error(exc: ValueError) -> ToolArgsError:
    return ToolArgsError([f"/mark: {exc}"])


# --- the tools ------------------------------------------------------------------------------------------


class CheckpointArgs(ToolArgs):
    label: str | None = Field(None, description="A few words saying what this point is (optional).", max_length=200)


class CheckpointOutput(ToolOutputModel):
    mark: str


def run_checkpoint(ctx: ToolContext, args: CheckpointArgs) -> ToolOutput:
    mark = checkpoint(ctx, args.label)
    return ToolOutput(
        text=f"Checkpoint {mark}. To undo every change you make after this point, call rewind with this mark.",
        value={"mark": mark},
    )


CHECKPOINT = Tool(
    name="checkpoint",
    title="Mark a checkpoint",
    description=("Mark this point in your changes, to see them later (diff) or undo them (rewind). Returns the mark."),
    arguments=CheckpointArgs,
    output=CheckpointOutput,
    run=run_checkpoint,
    read_only=True,
    preconditions="None: any session may mark a point in its history.",
    example=Example({"label": "before the refactor"}),
    present=lambda args: "checkpoint" + (f" {short(text_of(args, 'label') or '')}" if text_of(args, "label") else ""),
)


class HistoryArgs(ToolArgs):
    pass


class HistoryEntryOutput(ToolOutputModel):
    kind: str
    mark: str
    time: str
    label: str | None
    tool: str | None
    paths: list[str]
    more_paths: int


class HistoryOutput(ToolOutputModel):
    entries: list[HistoryEntryOutput]
    more: int


def run_history(ctx: ToolContext, args: HistoryArgs) -> ToolOutput:
    entries = listing(ctx)
    shown, more = entries[-MAX_LISTED:], max(0, len(entries) - MAX_LISTED)
    lines = [_line(entry) for entry in shown]
    if not lines:
        text = "No changes or checkpoints in this session yet."
    else:
        head = f"{more} older entries not shown.\n" if more else ""
        text = head + "\n".join(lines) + "\n(rewind to a mark undoes every change after it)"
    value = [
        {
            "kind": entry.kind,
            "mark": entry.mark,
            "time": _time(entry.time),
            "label": entry.label,
            "tool": entry.tool,
            "paths": list(entry.paths[:MAX_SHOWN]),
            "more_paths": max(0, len(entry.paths) - MAX_SHOWN),
        }
        for entry in shown
    ]
    return ToolOutput(text=text, value={"entries": value, "more": more})


def _line(entry: HistoryEntry) -> str:
    if entry.kind == "mark":
        return f"{entry.mark}  checkpoint" + (f" {entry.label!r}" if entry.label else "")
    paths = ", ".join(entry.paths[:5]) + (f" and {len(entry.paths) - 5:,} more" if len(entry.paths) > 5 else "")
    return f"{entry.mark}  {entry.tool} {paths}"


def _time(seconds: float) -> str:
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC).isoformat(timespec="seconds")


HISTORY = Tool(
    name="history",
    title="List this session's changes",
    description=(
        "List your checkpoints and the changes you made in this session, oldest first, each with the mark "
        "to rewind to (for a change: the point just before it)."
    ),
    arguments=HistoryArgs,
    output=HistoryOutput,
    run=run_history,
    read_only=True,
    preconditions="None.",
    example=Example({}, setup=(("write", {"file_path": "draft.txt", "content": "draft\n"}),)),
)


class DiffArgs(ToolArgs):
    since: str | None = Field(
        None, description="A mark from checkpoint or history; omit it for every change of this session."
    )


class DiffOutput(ToolOutputModel):
    diff: str
    truncated: bool


def run_diff(ctx: ToolContext, args: DiffArgs) -> ToolOutput:
    try:
        text = diff(ctx, args.since)
    except ValueError as exc:
        raise ToolArgsError([f"/since: {exc}"]) from exc
    truncated = len(text) > MAX_DIFF_CHARACTERS
    if truncated:
        text = text[:MAX_DIFF_CHARACTERS]
    shown = text or "No changes since then."
    if truncated:
        shown += f"\n[diff truncated at {MAX_DIFF_CHARACTERS:,} characters: ask for a diff since a later mark]"
    return ToolOutput(text=shown, value={"diff": text, "truncated": truncated})


DIFF = Tool(
    name="diff",
    title="Show this session's changes",
    description=(
        "Show what you changed in this session (since a mark, or since your first change) as a unified diff: "
        "one section per file, from before your first change to after your last."
    ),
    arguments=DiffArgs,
    output=DiffOutput,
    run=run_diff,
    read_only=True,
    preconditions="since, when given, is a mark of this session.",
    example=Example({}, setup=(("write", {"file_path": "draft.txt", "content": "draft\n"}),)),
)


class RewindArgs(ToolArgs):
    mark: str = Field(description="The mark to go back to, from checkpoint or history.")


class SkippedOutput(ToolOutputModel):
    path: str
    code: str
    message: str


class RewindOutput(ToolOutputModel):
    restored: list[str]
    more_restored: int
    skipped: list[SkippedOutput]
    more_skipped: int


def run_rewind(ctx: ToolContext, args: RewindArgs) -> ToolOutput:
    try:
        report = rewind(ctx, args.mark, forcing="tell the user; only they can decide to overwrite it")
    except ValueError as exc:
        raise _mark_error(exc) from exc
    if report.code is not None:
        raise HistoryTrimmed(report.message)
    lines = [report.message + "."]
    lines += [f"- {item.path}: {item.code}: {item.message}" for item in report.skipped[:MAX_SHOWN]]
    if len(report.skipped) > MAX_SHOWN:
        lines.append(f"- and {len(report.skipped) - MAX_SHOWN:,} more left as they are")
    if report.restored:
        lines.append("What you read of the restored files is current again: you may edit them without reading.")
    value = {
        "restored": report.restored[:MAX_LISTED],
        "more_restored": max(0, len(report.restored) - MAX_LISTED),
        "skipped": [
            {"path": item.path, "code": item.code, "message": item.message} for item in report.skipped[:MAX_LISTED]
        ],
        "more_skipped": max(0, len(report.skipped) - MAX_LISTED),
    }
    return ToolOutput(text="\n".join(lines), value=value)


def present_rewind(args: Mapping[str, Any]) -> str | None:
    mark = text_of(args, "mark")
    return None if mark is None else f"rewind to {short(mark)}"


REWIND = Tool(
    name="rewind",
    title="Rewind this session's changes",
    description=(
        "Undo every change you made in this session after a mark (from checkpoint or history): files are put "
        "back as they were, files you created or moved are removed or moved back, one file at a time. A file "
        "someone else changed after your last change to it is left as it is and reported."
    ),
    arguments=RewindArgs,
    output=RewindOutput,
    run=run_rewind,
    read_only=False,
    preconditions=(
        "mark is a mark of this session that history still reaches; the workspace is not read-only. Each file "
        "must still be as this session left it (else it is reported and left)."
    ),
    example=Example(
        {"mark": "m1-1a2b3c4d"},  # the checkpoint's mark (each store's marks are its own)
        setup=(("checkpoint", {}), ("write", {"file_path": "draft.txt", "content": "draft\n"})),
    ),
    present=present_rewind,
)
