"""Jupyter notebooks (SPEC §18): how ``read`` shows one — its cells with index, type, id and source,
outputs summarised — and the ``notebook_edit`` tool, which replaces, inserts or deletes one cell, gated
like ``edit``, writing the notebook back in the layout it was read in."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any, Literal

from pydantic import Field

from fs_tools import abilities
from fs_tools.arguments import FilePath, Integer, Text, ToolArgs, ToolOutputModel, Violation
from fs_tools.checks.placeholders import refuse_placeholders
from fs_tools.errors import NotebookTooLarge, StaleVersion, TooLarge, ToolArgsError, path_label
from fs_tools.gating import commit_gated
from fs_tools.provider import Notebook, Snapshot, change_type, multiline, notebook_or_refuse, set_source, source_of
from fs_tools.rendering.quoting import short, text_of
from fs_tools.terms import term
from fs_tools.tools.base import Example, Tool, ToolContext, ToolOutput
from policy import Intent

MAX_OUTPUT_LINES = 20  # of one output's text, in read's summary
MAX_OUTPUT_CHARS = 2000
MAX_OUTPUTS = 10  # outputs summarised per cell
_FOOTER = 300  # bytes kept for the note that ends a read of a notebook
_NUMBERED = re.compile(r"cell-(\d{1,9})")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")  # colours in tracebacks and progress bars


# --- read: the cells ---------------------------------------------------------------------------------


def render_notebook(
    notebook: Notebook, display: str, first: int, limit: int, cap: int, then: Callable[[int], str]
) -> tuple[str, list[int], int | None]:
    """The text ``read`` shows for a notebook: a heading, then cells from index ``first`` (at most
    ``limit`` of them) within ``cap`` bytes; the indexes shown, and the next index to read from.
    ``then(offset)`` words how to read on in the calling tool's arguments."""
    cells = notebook.cells
    count = len(cells)
    about = f"nbformat {notebook.version}" + (f", {notebook.language}" if notebook.language else "")
    head = f"{display!r}: Jupyter notebook, {count} cell{'s' if count != 1 else ''} ({about})"
    parts: list[str] = []
    shown: list[int] = []
    size = len(head.encode("utf-8", "surrogatepass")) + _FOOTER  # room kept for the note at the end
    stop = min(count, first + limit)
    capped = False
    for index in range(first, stop):
        part = _cell_text(index, cells[index])
        encoded = part.encode("utf-8", "surrogatepass")
        room = cap - size
        if len(encoded) > room:
            capped = True
            if not shown:  # the first cell alone is too long: show what fits of it, and say so
                parts.append(
                    encoded[: max(room, 0)].decode("utf-8", "ignore")
                    + f"\n[… the rest of this cell is cut: it is {len(encoded):,} bytes, more than read shows at once; "
                    "grep the notebook for the lines you need before you replace it]"
                )
                shown.append(index)
            break
        parts.append(part)
        shown.append(index)
        size += len(encoded) + 2
    text = head + ("\n\n" + "\n\n".join(parts) if parts else "")
    after = shown[-1] + 1 if shown else first
    next_index = after if after < count else None
    if next_index is not None:
        at_once = (
            f"limit {limit}" if term("limit") == "limit" else f"{limit:,} cell{'s' if limit != 1 else ''} at a time"
        )
        why = "output capped" if capped else at_once
        text += (
            f"\n\n[showing cells {shown[0] if shown else first}–{after - 1} of {count} (indexes from 0; {why}); "
            f"continue with {then(next_index + 1)} (it counts cells from 1 in a notebook)]"
        )
    return text, shown, next_index


def _cell_text(index: int, cell: Mapping[str, Any]) -> str:
    kind = str(cell.get("cell_type"))
    facts = [f"cell {index}", kind]
    if isinstance(cell.get("id"), str):
        facts.append(f'id "{cell["id"]}"')
    if kind == "code" and isinstance(cell.get("execution_count"), int):
        facts.append(f"execution count {cell['execution_count']}")
    source = source_of(cell)
    lines = [f"--- {', '.join(facts)} ---", source.rstrip("\n") if source.strip() else "(empty)"]
    outputs = cell.get("outputs")
    if kind == "code" and isinstance(outputs, list):
        for number, output in enumerate(outputs[:MAX_OUTPUTS], 1):
            lines.extend(_output_text(number, output))
        if len(outputs) > MAX_OUTPUTS:
            lines.append(f"[… {len(outputs) - MAX_OUTPUTS} more outputs]")
    return "\n".join(lines)


def _output_text(number: int, output: object) -> list[str]:
    """One output, summarised: its kind, then at most a few lines of its text; other data by MIME type
    and size (an image output is named, not shown)."""
    if not isinstance(output, Mapping):
        return [f"[output {number}: not an output object]"]
    kind = str(output.get("output_type", "unknown"))
    if kind == "stream":
        return [f"[output {number}: {output.get('name', 'stream')}]", *_clip(multiline(output.get("text")))]
    if kind == "error":
        evalue = _ANSI.sub("", str(output.get("evalue", "")))
        if len(evalue) > MAX_OUTPUT_CHARS:
            evalue = evalue[:MAX_OUTPUT_CHARS] + f"… ({len(evalue):,} characters)"
        return [f"[output {number}: error {str(output.get('ename', ''))[:200]}: {evalue}]"]
    data = output.get("data")
    if not isinstance(data, Mapping):
        return [f"[output {number}: {kind}]"]
    others = [f"{mime} ({_size(value):,} bytes)" for mime, value in data.items()]
    described = f"[output {number}: {kind}, " + ", ".join(others) + "]" if others else f"[output {number}: {kind}]"
    plain = data.get("text/plain")
    return [described, *(_clip(multiline(plain)) if plain is not None else [])]


def _size(value: object) -> int:
    text = multiline(value) if isinstance(value, (str, list)) else json.dumps(value, ensure_ascii=False, default=str)
    return len(text.encode("utf-8", "surrogatepass"))


def _clip(text: str) -> list[str]:
    text = _ANSI.sub("", text).rstrip("\n")
    if not text:
        return []
    cut = text[:MAX_OUTPUT_CHARS]
    lines = cut.split("\n")
    total = text.count("\n") + 1
    if len(lines) > MAX_OUTPUT_LINES or len(text) > MAX_OUTPUT_CHARS:
        kept = lines[:MAX_OUTPUT_LINES]
        return [*kept, f"[… output cut: {total:,} lines, {len(text):,} characters]"]
    return lines


# --- notebook_edit ---------------------------------------------------------------------------------

EditMode = Literal["replace", "insert", "delete"]
CellType = Literal["code", "markdown", "raw"]


class NotebookEditArgs(ToolArgs):
    notebook_path: FilePath = Field(
        description="Path of the .ipynb notebook: relative to the workspace root, or absolute inside a root."
    )
    cell_id: str | None = Field(
        None,
        min_length=1,
        description="The id of the cell to change (read shows each cell's id). With insert: the new cell goes "
        "after it.",
    )
    cell: Integer | None = Field(
        None,
        ge=0,
        description="The index of the cell to change, counted from 0 as read shows it (instead of cell_id). "
        "With insert: the new cell goes after it.",
    )
    new_source: Text | None = Field(None, description="The cell's new source (replace, insert); not for delete.")
    cell_type: CellType | None = Field(
        None, description="code, markdown or raw: required to insert; with replace, changes the cell's type."
    )
    edit_mode: EditMode = Field(
        "replace",
        description="replace (the default) the cell's source; insert a new cell after the one named (at the top "
        "when none is named); delete the cell.",
    )

    @classmethod
    def cross_field_violations(cls, data: Mapping[str, Any]) -> list[Violation]:
        return mode_violations(data, "give its id (cell_id) or its index (cell)")


def mode_violations(data: Mapping[str, Any], name_a_cell: str) -> list[Violation]:
    """What ``edit_mode`` requires of the other arguments; ``name_a_cell`` says how a cell is named."""
    mode = data.get("edit_mode")
    mode = "replace" if mode is None else mode  # null means the default
    if mode not in ("replace", "insert", "delete"):
        return []  # the field's own check says so
    found: list[Violation] = []
    named = data.get("cell") is not None or data.get("cell_id") is not None
    if mode != "insert" and not named:
        found.append((("cell_id",), f"required to {mode} a cell: {name_a_cell}"))
    if mode != "delete" and data.get("new_source") is None:
        found.append((("new_source",), f"required to {mode} a cell: the cell's source"))
    if mode == "insert" and data.get("cell_type") is None:
        found.append((("cell_type",), "required to insert a cell: code, markdown or raw"))
    return found


class NotebookEditOutput(ToolOutputModel):
    path: str
    edit_mode: str
    cell: int  # the index of the cell changed, inserted or deleted
    cell_id: str | None
    cell_type: str
    cells: int  # how many cells the notebook has now
    version: str
    layout_kept: bool  # False: the file's JSON layout could not be reproduced; it was written in nbformat's


def run_notebook_edit(ctx: ToolContext, args: NotebookEditArgs) -> ToolOutput:
    display = path_label(args.notebook_path)
    done: dict[str, Any] = {}

    def produce(snapshot: Snapshot) -> bytes:
        notebook = notebook_or_refuse(snapshot.data, display)
        done["exact"] = notebook.exact  # found on the notebook as it is, before the change
        done.update(_change(ctx, notebook, args, display))
        return notebook.dump()

    try:
        committed = commit_gated(ctx, args.notebook_path, Intent.EDIT, produce)
    except StaleVersion as exc:  # its lines are the JSON's, and read shows cells: no line numbers
        raise exc.elsewhere(exc.message) from exc
    except NotebookTooLarge:
        raise
    except TooLarge as exc:
        raise NotebookTooLarge(exc.message, details={**exc.details, "subject": "notebook"}) from exc
    index, cell, count = done["index"], done["cell"], done["count"]
    label = _label(index, cell)
    if args.edit_mode == "delete":
        text = f"Deleted {label} from {display!r}; it has {count} cell(s) now"
        text += ", and the cells after it moved up one index." if index < count else "."
    elif args.edit_mode == "insert":
        where = f"after cell {index - 1}" if index > 0 else "at the top"
        text = f"Inserted {label} {where} in {display!r}; it has {count} cell(s) now."
    else:
        text = f"Replaced the source of {label} in {display!r}"
        text += f" (it was a {done['was']} cell)." if done["was"] != cell["cell_type"] else "."
        if cell["cell_type"] == "code" and cell.get("outputs"):
            text += " Its outputs are still those of the old source, until it is run again."
    if not done["exact"]:
        text += (
            " Its JSON was not in a layout fs-tools reproduces exactly, so it was written in nbformat's standard "
            "layout (indent 1, sorted keys): the other cells' content is unchanged, their formatting may differ."
        )
    return ToolOutput(
        text=text,
        value={
            "path": args.notebook_path,
            "edit_mode": args.edit_mode,
            "cell": index,
            "cell_id": cell.get("id") if isinstance(cell.get("id"), str) else None,
            "cell_type": cell["cell_type"],
            "cells": count,
            "version": committed.after.version,
            "layout_kept": done["exact"],
        },
    )


def _change(ctx: ToolContext, notebook: Notebook, args: NotebookEditArgs, display: str) -> dict[str, Any]:
    """Make the change in ``notebook``'s document: where, which cell, and how many cells there are now."""
    cells = notebook.cells
    index = _locate(notebook, args, display)
    if args.edit_mode == "delete":
        assert index is not None  # the arguments' check requires a cell to delete
        return {"index": index, "cell": cells.pop(index), "count": len(cells)}
    assert args.new_source is not None  # required by the arguments' check
    if args.edit_mode == "insert":
        assert args.cell_type is not None
        at = 0 if index is None else index + 1
        cell = notebook.new_cell(args.cell_type, args.new_source)
        cells.insert(at, cell)
        return {"index": at, "cell": cell, "count": len(cells)}
    assert index is not None
    cell = cells[index]
    was = str(cell.get("cell_type"))
    if ctx.options.check_placeholders and (args.cell_type or was) == "code":
        refuse_placeholders(args.new_source, source_of(cell), "new_source")
    if args.cell_type is not None:
        change_type(cell, args.cell_type)
    set_source(cell, args.new_source)
    return {"index": index, "cell": cell, "count": len(cells), "was": was}


def _locate(notebook: Notebook, args: NotebookEditArgs, display: str) -> int | None:
    """The index of the cell the arguments name (None: none named); INVALID_ARGS when there is none."""
    cells = notebook.cells
    count = len(cells)
    by_index: int | None = None
    if args.cell is not None:
        if args.cell >= count:
            last = f"0 to {count - 1}" if count else "none: the notebook has no cells; insert one without cell"
            raise ToolArgsError([f"/cell: {display!r} has {count} cell(s), indexed {last}; got {args.cell}"])
        by_index = args.cell
    if args.cell_id is None:
        return by_index
    ids = [cell.get("id") for cell in cells]
    numbered = _NUMBERED.fullmatch(args.cell_id)
    if args.cell_id not in ids and numbered is not None:  # "cell-3": the cell at index 3, as Claude Code names it
        found = int(numbered[1])
        if found >= count:
            last = f"cell-0 to cell-{count - 1}" if count else "none: it has no cells"
            raise ToolArgsError([f"/cell_id: {display!r} has {count} cell(s), {last}; got {args.cell_id!r}"])
    elif args.cell_id not in ids:
        known = [str(i) for i in ids if isinstance(i, str)]
        if not known:
            why = "nbformat before 4.5" if not notebook.has_ids else "none is a string"
            hint = f"its cells have no ids ({why}): name the cell by its index, counted from 0 ({term('cell=N')})"
        else:
            listed = ", ".join(repr(i) for i in known[:20]) + (", …" if len(known) > 20 else "")
            hint = f"its cell ids are {listed} (read the notebook to see which is which)"
        raise ToolArgsError([f"/cell_id: {display!r} has no cell with id {args.cell_id!r}; {hint}"])
    else:
        found = ids.index(args.cell_id)
    if by_index is not None and by_index != found:
        raise ToolArgsError(
            [f"/cell_id: names cell {found}, but cell is {by_index}; give only one of them (cell_id, or cell)"]
        )
    return found


def _label(index: int, cell: Mapping[str, Any]) -> str:
    named = f', id "{cell["id"]}"' if isinstance(cell.get("id"), str) else ""
    return f"cell {index} ({cell.get('cell_type')}{named})"


def present_notebook_edit(args: Mapping[str, Any]) -> str | None:
    path = text_of(args, "notebook_path")
    if path is None:
        return None
    mode = args.get("edit_mode", "replace")
    named = args.get("cell_id") if args.get("cell_id") is not None else args.get("cell")
    where = f" cell {named}" if isinstance(named, (str, int)) and not isinstance(named, bool) else ""
    return f"notebook_edit {short(path)}: {mode if isinstance(mode, str) else 'replace'}{where}"


NOTEBOOK_EDIT = Tool(
    name="notebook_edit",
    title="Edit a notebook cell",
    abilities=(abilities.CHANGE_CELLS,),
    description=(
        "Change one cell of a Jupyter notebook (.ipynb): replace its source, insert a new cell after it, or "
        "delete it. Name the cell by cell_id or by its index (cell, from 0), as read shows them. insert "
        "needs cell_type and goes at the top when no cell is named. Read the notebook first in this session; "
        "the rest of the file is kept as it was."
    ),
    arguments=NotebookEditArgs,
    output=NotebookEditOutput,
    run=run_notebook_edit,
    read_only=False,
    checkable=True,
    preconditions=(
        "The workspace is not read-only and the path is not protected. The session must have read the "
        "notebook, and it must not have changed since."
    ),
    example=Example(
        {"notebook_path": "analysis.ipynb", "cell_id": "5f3d9a40", "new_source": "print('hello')"},
        setup=(("read", {"file_path": "analysis.ipynb"}),),
    ),
    present=present_notebook_edit,
)
