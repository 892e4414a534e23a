"""The ``anthropic`` dialect: Anthropic's text editor tool, ``str_replace_based_edit_tool`` (API type
``text_editor_20250728``), on fs-tools' gates (SPEC §14).

One tool, its ``command`` choosing what it does: ``view`` (a file's numbered lines, ``view_range``
[start, end] with -1 for the end; a directory's entries, two levels deep), ``create`` (a new file, or
one the session read at its current version), ``str_replace`` (``old_str`` → ``new_str``, once) and
``insert`` (``insert_text`` after line ``insert_line``, 0 being the top; ``new_str`` is accepted as its
older name). Unlike the reference implementation, tabs are never expanded and a CRLF file stays CRLF.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field

from fs_tools.arguments import Integer, SearchPath, Text, ToolArgs, ToolOutputModel, Violation
from fs_tools.checks import syntax
from fs_tools.errors import ToolArgsError, path_label
from fs_tools.gating import commit_gated
from fs_tools.matching.replace import after_newlines
from fs_tools.paging.pdf_pages import span
from fs_tools.provider import DIRECTORY, Snapshot, TextFile, as_utf8, count_lines, decode_text
from fs_tools.rendering.lines import snippet_at
from fs_tools.tools.base import Example, Tool, ToolContext, ToolOutput
from fs_tools.tools.dialects.common import canonical
from fs_tools.tools.edit import EditArgs, EditOutput, run_edit
from fs_tools.tools.list import ListArgs, list_directory
from fs_tools.tools.read import ReadArgs, read_lines
from fs_tools.tools.write import WriteArgs, run_write
from policy import Intent

NAME = "str_replace_based_edit_tool"
API_TYPE = "text_editor_20250728"

Command = Literal["view", "create", "str_replace", "insert"]
# The arguments each command takes besides command and path; any other is refused, naming the command.
_FIELDS: dict[str, frozenset[str]] = {
    "view": frozenset({"view_range"}),
    "create": frozenset({"file_text"}),
    "str_replace": frozenset({"old_str", "new_str"}),
    "insert": frozenset({"insert_line", "insert_text", "new_str"}),
}
_REQUIRED: dict[str, tuple[str, ...]] = {
    "create": ("file_text",),
    "str_replace": ("old_str",),
    "insert": ("insert_line",),
}


class TextEditorArgs(ToolArgs):
    command: Command = Field(description="view, create, str_replace or insert.")
    path: SearchPath = Field(
        description="The file (or, to view, the directory): absolute inside the workspace, or relative."
    )
    view_range: list[Integer] | None = Field(
        None, description="view: [first, last] line, 1-based; last -1 means to the end.", min_length=2, max_length=2
    )
    file_text: Text | None = Field(None, description="create: the whole content of the file.")
    old_str: Text | None = Field(None, min_length=1, description="str_replace: the exact text to replace, once.")
    new_str: Text | None = Field(None, description="str_replace: the text to put instead (default: nothing).")
    insert_line: Integer | None = Field(None, ge=0, description="insert: the line to insert after (0: the top).")
    insert_text: Text | None = Field(None, description="insert: the text to insert.")

    @classmethod
    def cross_field_violations(cls, data: Mapping[str, Any]) -> list[Violation]:
        command = data.get("command")
        if not isinstance(command, str) or command not in _FIELDS:
            return []
        found: list[Violation] = []
        for name in _REQUIRED.get(str(command), ()):
            if data.get(name) is None:
                found.append(((name,), f"required property is missing (command {command!r} needs it)"))
        if command == "insert" and data.get("insert_text") is None and data.get("new_str") is None:
            found.append((("insert_text",), "required property is missing (command 'insert' needs it)"))
        for name, value in data.items():
            foreign = name in cls.model_fields and name not in ("command", "path", *_FIELDS[str(command)])
            if foreign and value is not None:
                found.append(((name,), f"not used by command {command!r}; remove it"))
        view_range = data.get("view_range")
        if command == "view" and isinstance(view_range, list) and len(view_range) == 2:
            first, last = view_range
            if isinstance(first, int) and first < 1:
                found.append((("view_range", 0), f"expected a line number >= 1, got {first}"))
            if isinstance(first, int) and isinstance(last, int) and last != -1 and last < first:
                found.append((("view_range", 1), f"expected -1 or a line number >= {first}, got {last}"))
        old, new = data.get("old_str"), data.get("new_str")
        if command == "str_replace" and isinstance(old, str) and old and old == (new or ""):
            found.append((("new_str",), "must differ from old_str"))
        return found


class TextEditorOutput(ToolOutputModel):
    command: str
    path: str
    result: dict[str, Any]  # what fs-tools' own tool of that command returned (read, list, write, edit)


_TERMS = {
    "file_path": "path",
    "old_string": "old_str",
    "new_string": "new_str",
    "replace_all": "",
    "content": "file_text",
    "offset": "view_range's first line",
    "limit": "view_range",
    "offset={n}": "view_range=[{n}, -1]",
    "depth": "",
    "include_hidden": "",
    "edits": "",
}


def run_text_editor(ctx: ToolContext, args: TextEditorArgs) -> ToolOutput:
    if args.command == "view":
        done = _view(ctx, args)
    elif args.command == "create":
        done = run_write(ctx, canonical(WriteArgs, {"file_path": args.path, "content": args.file_text}))
    elif args.command == "str_replace":
        values = {"file_path": args.path, "old_string": args.old_str, "new_string": args.new_str or ""}
        done = run_edit(ctx, canonical(EditArgs, values))
    else:
        done = _insert(ctx, args)
    value = {"command": args.command, "path": args.path, "result": done.value}
    return ToolOutput(text=done.text, value=value, media=done.media)


def _view(ctx: ToolContext, args: TextEditorArgs) -> ToolOutput:
    if ctx.provider.stat(args.path).kind == DIRECTORY:
        if args.view_range is not None:
            raise ToolArgsError(["/view_range: not allowed when path is a directory; remove it"])
        listed = list_directory(ctx, canonical(ListArgs, {"path": args.path, "depth": 2}))
        where = path_label(args.path)
        head = f"Here's the files and directories up to 2 levels deep in {where!r}, excluding hidden items:"
        return ToolOutput(text=f"{head}\n{listed.text}", value=listed.value)
    first, last = args.view_range if args.view_range is not None else (1, -1)
    values: dict[str, Any] = {"file_path": args.path, "offset": first}
    if last != -1:
        values["limit"] = last - first + 1
    read = read_lines(
        ctx,
        canonical(ReadArgs, values),
        continue_with=lambda spec: "view_range=[{}, {}] (a PDF's lines are its pages)".format(*span(spec)),
    )
    if read.value.get("unchanged") or read.value.get("kind") != "text":  # an image is shown as it is
        return read
    return ToolOutput(
        text=f"Here's the result of running `cat -n` on {path_label(args.path)!r}:\n{read.text}", value=read.value
    )


def _insert(ctx: ToolContext, args: TextEditorArgs) -> ToolOutput:
    """``insert_text`` as whole lines after line ``insert_line``: a text without a final line break gets
    the file's own; the file's other bytes are kept."""
    text = args.insert_text if args.insert_text is not None else args.new_str or ""
    after = args.insert_line or 0
    display = path_label(args.path)
    landed: dict[str, Any] = {}

    def produce(snapshot: Snapshot) -> bytes:
        decoded = decode_text(snapshot.data, display)
        total = count_lines(decoded.text)
        if after > total:
            raise ToolArgsError([f"/insert_line: expected 0 to {total} (the lines of {display!r}), got {after}"])
        body = decoded.text
        newline = decoded.newline
        inserted = text.replace("\r\n", "\n").replace("\n", newline)
        if inserted and not inserted.endswith(newline):
            inserted += newline
        at = after_newlines(body, 0, after)  # where line after + 1 starts (the end, past the last)
        if at == len(body) and body and not body.endswith("\n"):
            inserted = newline + inserted.removesuffix(newline)  # after a last line without a line break
        new_text = body[:at] + inserted + body[at:]
        landed.update(position=at, lines=max(1, inserted.count("\n")), text=new_text, before=snapshot.data)
        return TextFile("", decoded.bom, newline, decoded.encoding).encode(new_text)

    done = commit_gated(ctx, args.path, Intent.EDIT, produce)
    ctx.changed(ctx.provider.key_of(args.path))
    new_text = str(landed["text"])
    first = after + 1
    excerpt = snippet_at(new_text, int(landed["position"]), first, first + int(landed["lines"]) - 1)
    data = new_text.encode("utf-8")
    warning, errors = syntax.report(
        syntax.check(args.path, as_utf8(bytes(landed["before"])), data)
        if ctx.options.check_syntax and syntax.language_of(args.path)
        else None
    )
    value = {
        "path": args.path,
        "edits": 1,
        "replacements": 1,
        "first_line": first,
        "version": done.after.version,
        "syntax_errors": errors,
        "changed_lines": [],
    }
    EditOutput.model_validate(value)
    return ToolOutput(
        text=f"Inserted into {display!r} after line {after}. The file now reads, around line {first}:\n"
        f"{excerpt}{warning}",
        value=value,
    )


TEXT_EDITOR = Tool(
    name=NAME,
    title="View and edit files",
    description=(
        "View, create and edit files. command 'view' shows a file's numbered lines (view_range [first, last], "
        "-1 for the end) or a directory's entries; 'create' writes a new file (an existing one only if you "
        "viewed it); 'str_replace' replaces old_str, which must occur exactly once, with new_str; 'insert' "
        "puts insert_text after line insert_line (0: the top). View a file before you edit it."
    ),
    arguments=TextEditorArgs,
    output=TextEditorOutput,
    run=run_text_editor,
    read_only=False,
    preconditions=(
        "view needs nothing; create of an existing file, str_replace and insert need a view of the file in "
        "this session, and the file must not have changed since."
    ),
    example=Example({"command": "view", "path": "src/app.py", "view_range": [1, 2]}),
    stands_for={
        "read": "{name} with command view",
        "list": "{name} with command view",
        "write": "{name} with command create",
        "edit": "{name} with command str_replace",
        "multi_edit": "{name} with command str_replace",
    },
    terms=_TERMS,
)

TOOLS: tuple[Tool[Any], ...] = (TEXT_EDITOR,)
