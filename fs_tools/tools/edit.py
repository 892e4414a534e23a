"""The ``edit`` and ``multi_edit`` tools: literal replacements in a file this session has read."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import Field

from fs_tools.arguments import FilePath, Text, ToolArgs, ToolOutputModel, Violation
from fs_tools.errors import path_label
from fs_tools.provider import Snapshot, decode_text
from fs_tools.tools.base import Tool, ToolContext, ToolOutput
from fs_tools.tools.matching import Replacement, replace
from fs_tools.tools.mutation import commit_gated
from fs_tools.tools.rendering import snippet, snippet_at, split_lines
from policy import Intent

_PATH_DOC = "Path of the file: relative to the workspace root, or absolute inside a root."
_OLD_DOC = (
    "The exact text to replace, as it appears in the file (without read's line-number prefixes). "
    "Must occur exactly once unless replace_all is true."
)
_NEW_DOC = "The replacement text, inserted literally (no regex or $ expansion)."
_ALL_DOC = "Replace every occurrence instead of requiring a unique one. Default false."


def _differs(data: Mapping[str, Any]) -> list[Violation]:
    old, new = data.get("old_string"), data.get("new_string")
    if not (isinstance(old, str) and old and isinstance(new, str)):
        return []
    if old == new:
        return [(("new_string",), "must differ from old_string")]
    if old.replace("\r\n", "\n") == new.replace("\r\n", "\n"):
        return [(("new_string",), "must differ from old_string in more than line endings (edits keep the file's own)")]
    return []


class EditArgs(ToolArgs):
    file_path: FilePath = Field(description=_PATH_DOC)
    old_string: Text = Field(min_length=1, description=_OLD_DOC)
    new_string: Text = Field(description=_NEW_DOC)
    replace_all: bool = Field(False, description=_ALL_DOC)

    @classmethod
    def cross_field_violations(cls, data: Mapping[str, Any]) -> list[Violation]:
        return _differs(data)


class EditSpec(ToolArgs):
    old_string: Text = Field(min_length=1, description=_OLD_DOC)
    new_string: Text = Field(description=_NEW_DOC)
    replace_all: bool = Field(False, description=_ALL_DOC)

    @classmethod
    def cross_field_violations(cls, data: Mapping[str, Any]) -> list[Violation]:
        return _differs(data)


class MultiEditArgs(ToolArgs):
    file_path: FilePath = Field(description=_PATH_DOC)
    edits: list[EditSpec] = Field(
        min_length=1, description="Edits applied in order, each to the result of the previous; all or nothing."
    )


class EditOutput(ToolOutputModel):
    path: str
    edits: int
    replacements: int
    first_line: int
    version: str


def _apply(
    snapshot: Snapshot | None, edits: Sequence[EditSpec | EditArgs], display: str, labels: Sequence[str]
) -> tuple[bytes, list[Replacement]]:
    assert snapshot is not None  # an edit always has the observed version in hand
    decoded = decode_text(snapshot.data, display)
    text = decoded.text
    done: list[Replacement] = []
    for spec, label in zip(edits, labels, strict=True):
        result = replace(
            text,
            decoded.newline,
            spec.old_string,
            spec.new_string,
            replace_all=spec.replace_all,
            label=label,
            display=display,
        )
        done.append(result)
        text = result.text
    return decoded.encode(text), done


def _run(ctx: ToolContext, path: str, edits: Sequence[EditSpec | EditArgs], labels: Sequence[str]) -> ToolOutput:
    display = path_label(path)
    applied: list[Replacement] = []

    def produce(snapshot: Snapshot | None) -> bytes:
        data, results = _apply(snapshot, edits, display, labels)
        applied.extend(results)
        return data

    done = commit_gated(ctx, path, Intent.EDIT, produce)
    count = sum(r.count for r in applied)
    first = min(r.first_line for r in applied)
    last = max(r.last_line for r in applied) if len(applied) == 1 else first
    if len(applied) == 1:  # where the replacement starts is known: no need to split the whole file
        excerpt = snippet_at(applied[0].text, applied[0].position, first, last)
    else:
        excerpt = snippet(split_lines(applied[-1].text), first, last)
    what = f"{len(applied)} edits, {count} replacement(s)" if len(applied) > 1 else f"{count} replacement(s)"
    text = f"Edited {display!r}: {what}. The file now reads, around line {first}:\n{excerpt}"
    return ToolOutput(
        text=text,
        value={
            "path": path,
            "edits": len(applied),
            "replacements": count,
            "first_line": first,
            "version": done.after.version,
        },
    )


def run_edit(ctx: ToolContext, args: EditArgs) -> ToolOutput:
    return _run(ctx, args.file_path, [args], ["old_string"])


def run_multi_edit(ctx: ToolContext, args: MultiEditArgs) -> ToolOutput:
    labels = [f"/edits/{i}/old_string" for i in range(len(args.edits))]
    return _run(ctx, args.file_path, args.edits, labels)


EDIT = Tool(
    name="edit",
    description=(
        "Replace old_string with new_string in a file. Read the file first in this session (edits are "
        "refused on files you have not read or that changed since). old_string is matched literally and "
        "must be unique in the file: include enough surrounding lines, or set replace_all. Line endings "
        "and all untouched bytes are kept."
    ),
    arguments=EditArgs,
    output=EditOutput,
    run=run_edit,
    read_only=False,
)

MULTI_EDIT = Tool(
    name="multi_edit",
    description=(
        "Apply several edits to one file at once, in order, each seeing the result of the previous one. "
        "All or nothing: if any edit fails, nothing is written and the error names its index. Same rules "
        "as edit: read the file first; each old_string must be unique unless replace_all is set."
    ),
    arguments=MultiEditArgs,
    output=EditOutput,
    run=run_multi_edit,
    read_only=False,
)
