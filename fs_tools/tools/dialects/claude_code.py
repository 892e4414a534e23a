"""The ``claude-code`` dialect: Claude Code's file tools — ``Read``, ``Write``, ``Edit``, ``MultiEdit``,
``Glob``, ``Grep``, ``LS`` — with their argument names and defaults, on fs-tools' gates (SPEC §14).

``Read``, ``Write`` and ``Glob`` take exactly fs-tools' arguments; ``Edit`` and ``MultiEdit`` those
without ``dry_run``; ``Grep`` is ripgrep's flags as Claude Code names them (``output_mode``, ``-i``,
``-n``, ``-A``/``-B``/``-C``, ``head_limit``, ``multiline``, ``type``); ``LS`` lists a tree with
``ignore`` globs. ``MultiEdit`` and ``LS`` are kept for the models trained when Claude Code had them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field

from fs_tools.arguments import FilePath, Integer, SearchPath, Text, ToolArgs, Violation
from fs_tools.patterns.glob import compile_globs
from fs_tools.tools.base import Example, Tool, ToolContext, ToolOutput
from fs_tools.tools.dialects.common import FILE_TYPES, canonical, ignore_violations, itself, like
from fs_tools.tools.edit import (
    EDIT,
    MAX_EDITS,
    MULTI_EDIT,
    EditArgs,
    EditSpec,
    MultiEditArgs,
    run_edit,
    run_multi_edit,
)
from fs_tools.tools.glob import GLOB
from fs_tools.tools.grep import GREP, GrepQuery, render, search_files, search_violations
from fs_tools.tools.list import LIST, ListArgs, list_directory
from fs_tools.tools.notebook_edit import (
    NOTEBOOK_EDIT,
    CellType,
    EditMode,
    NotebookEditArgs,
    mode_violations,
    run_notebook_edit,
)
from fs_tools.tools.read import READ
from fs_tools.tools.write import WRITE

_PATH = "The file's path: absolute (inside the workspace) or relative to the workspace root."


# --- Read, Write, Glob: fs-tools' own arguments ---------------------------------------------------

READ_CC = like(
    READ,
    name="Read",
    description=(
        "Reads a file. By default up to 2000 lines from the start; offset (1-based line) and limit "
        "page through longer files. Lines come numbered as `cat -n` numbers them ('     12<TAB>text'): the "
        "number and the tab are not part of the file, so never copy them into old_string. Images (PNG, JPEG, "
        "GIF, WebP) are shown as images, PDFs as their text page by page (pages: '1-5'), Jupyter notebooks as "
        "their cells (change them with NotebookEdit). You must Read a "
        "file in this conversation before you Edit or overwrite it, and read it again if it changed."
    ),
    stands_for=itself("read"),
)
WRITE_CC = like(
    WRITE,
    name="Write",
    description=(
        "Writes a file, creating missing directories. Overwriting an existing file requires that you Read "
        "it first in this conversation and that it has not changed since. Prefer Edit to change part of a "
        "file. Content is written exactly as given."
    ),
    stands_for=itself("write"),
)
GLOB_CC = like(
    GLOB,
    name="Glob",
    description=(
        "Fast file pattern matching ('**/*.js', 'src/**/*.ts'). Returns matching file paths, relative to "
        "the workspace root. path is the directory to search from (default: the workspace root)."
    ),
    stands_for=itself("glob"),
)


# --- Edit and MultiEdit ---------------------------------------------------------------------------


class EditArgsCC(ToolArgs):
    file_path: FilePath = Field(description=_PATH)
    old_string: Text = Field(min_length=1, description="The text to replace, exactly as it is in the file.")
    new_string: Text = Field(description="The text to replace it with (must differ from old_string).")
    replace_all: bool = Field(False, description="Replace every occurrence of old_string (default false).")

    @classmethod
    def cross_field_violations(cls, data: Mapping[str, Any]) -> list[Violation]:
        return EditArgs.cross_field_violations(data)


def _run_edit(ctx: ToolContext, args: EditArgsCC) -> ToolOutput:
    return run_edit(ctx, canonical(EditArgs, args.model_dump()))


EDIT_CC = like(
    EDIT,
    name="Edit",
    description=(
        "Performs an exact string replacement in a file. You must Read the file first in this "
        "conversation. old_string must match the file exactly (indentation included, without Read's line "
        "numbers) and be unique, unless replace_all is true; make it unique with more surrounding lines."
    ),
    arguments=EditArgsCC,
    run=_run_edit,
    example=Example(
        {"file_path": "src/app.py", "old_string": '"hello "', "new_string": '"hi "'},
        setup=(("Read", {"file_path": "src/app.py"}),),
    ),
    stands_for=itself("edit"),
)


class MultiEditArgsCC(ToolArgs):
    file_path: FilePath = Field(description=_PATH)
    edits: list[EditSpec] = Field(
        min_length=1,
        description="Edits made in order, each on the result of the previous; all succeed or none is made.",
        json_schema_extra={"maxItems": MAX_EDITS},
    )

    @classmethod
    def cross_field_violations(cls, data: Mapping[str, Any]) -> list[Violation]:
        return MultiEditArgs.cross_field_violations(data)


def _run_multi_edit(ctx: ToolContext, args: MultiEditArgsCC) -> ToolOutput:
    return run_multi_edit(
        ctx, canonical(MultiEditArgs, {"file_path": args.file_path, "edits": args.model_dump()["edits"]})
    )


MULTI_EDIT_CC = like(
    MULTI_EDIT,
    name="MultiEdit",
    description=(
        "Makes several exact string replacements in one file at once, in order, atomically: if any edit "
        "fails, none is made. Same rules as Edit for each: Read the file first; each old_string unique "
        "unless replace_all."
    ),
    arguments=MultiEditArgsCC,
    run=_run_multi_edit,
    example=Example(
        {"file_path": "notes.txt", "edits": [{"old_string": "one", "new_string": "1"}]},
        setup=(("Read", {"file_path": "notes.txt"}),),
    ),
    stands_for=itself("multi_edit"),
)


# --- Grep: ripgrep's flags -----------------------------------------------------------------------

OutputMode = Literal["content", "files_with_matches", "count"]
_MODES = {"content": "content", "files_with_matches": "files", "count": "count"}


class GrepArgsCC(ToolArgs):
    pattern: str = Field(min_length=1, description="The regular expression to search for (Python syntax).")
    path: SearchPath | None = Field(None, description="File or directory to search in (default: the workspace root).")
    glob: str | None = Field(None, description="Only files matching this glob ('*.js', '*.{ts,tsx}').")
    type: str | None = Field(None, description="Only files of this type (ripgrep's names: py, js, rust, go, …).")
    output_mode: OutputMode = Field(
        "files_with_matches",
        description="'content' shows matching lines, 'files_with_matches' the files (default), 'count' per file.",
    )
    case_insensitive: bool = Field(False, alias="-i", description="Case-insensitive search.")
    line_numbers: bool = Field(True, alias="-n", description="Show line numbers (content mode; default true).")
    after: Integer | None = Field(None, ge=0, le=100, alias="-A", description="Lines after each match (content).")
    before: Integer | None = Field(None, ge=0, le=100, alias="-B", description="Lines before each match (content).")
    context: Integer | None = Field(None, ge=0, le=100, alias="-C", description="Lines around each match (content).")
    head_limit: Integer | None = Field(
        None, ge=1, le=2000, description="Show only the first N lines or entries of the result."
    )
    multiline: bool = Field(False, description="Let . match newlines and patterns span lines (default false).")

    @classmethod
    def cross_field_violations(cls, data: Mapping[str, Any]) -> list[Violation]:
        found = search_violations(data, "glob")
        kind = data.get("type")
        if isinstance(kind, str) and kind not in FILE_TYPES:
            found.append((("type",), f"unknown file type {kind!r}; known types: {', '.join(FILE_TYPES)}"))
        return found


def _run_grep(ctx: ToolContext, args: GrepArgsCC) -> ToolOutput:
    around = args.context or 0
    query = GrepQuery(
        args.pattern,
        args.path or ".",
        args.glob,
        case_insensitive=args.case_insensitive,
        multiline=args.multiline,
        before=args.before if args.before is not None else around,
        after=args.after if args.after is not None else around,
        mode=_MODES[args.output_mode],
        types=FILE_TYPES[args.type] if args.type else (),
        max_rows=args.head_limit or (200 if args.output_mode == "content" else 1000),
        ripgrep=True,
        numbers=args.line_numbers,
    )
    search = search_files(ctx, query)
    value = {
        "pattern": args.pattern,
        "matches": search.matched,
        "files_searched": search.searched,
        "files_with_matches": search.with_matches,
        "truncated": search.truncated,
    }
    if not search.lines:
        return ToolOutput(text="No files found" if query.mode != "content" else "No matches found", value=value)
    body = render(query, search)
    if query.mode == "files":
        body = f"Found {len(search.lines)} file{'s' if len(search.lines) != 1 else ''}\n{body}"
    elif query.mode == "count":
        body += f"\n\nFound {search.matched} total matching lines across {search.with_matches} files."
    return ToolOutput(text=body, value=value)


GREP_CC = like(
    GREP,
    name="Grep",
    description=(
        "Searches file contents with a regular expression (Python syntax), ripgrep-style. Filter files "
        "with glob or type; output_mode 'files_with_matches' (default) lists files, 'content' shows "
        "matching lines (with -n, -A, -B, -C), 'count' counts per file. .gitignore'd files and version-"
        "control directories are skipped. Searching records nothing: Read a file before you Edit it."
    ),
    arguments=GrepArgsCC,
    run=_run_grep,
    example=Example({"pattern": "greet", "glob": "*.py", "output_mode": "content"}),
    stands_for=itself("grep"),
    terms={"case_insensitive": "-i", "include_ignored": ""},
)


# --- LS ------------------------------------------------------------------------------------------


class LsArgs(ToolArgs):
    path: SearchPath = Field(description="The directory to list: absolute (inside the workspace) or relative.")
    ignore: list[str] = Field(default_factory=list, description="Glob patterns of entries to leave out.")

    @classmethod
    def cross_field_violations(cls, data: Mapping[str, Any]) -> list[Violation]:
        return ignore_violations(data)


def _run_ls(ctx: ToolContext, args: LsArgs) -> ToolOutput:
    ignore = compile_globs(args.ignore, match_base=True)  # one budget for the list; validation refused the rest
    return list_directory(ctx, canonical(ListArgs, {"path": args.path, "depth": 3}), [ignore])


LS = like(
    LIST,
    name="LS",
    description=(
        "Lists a directory as a tree (three levels): directories end with '/', files show their size. "
        "ignore takes glob patterns of entries to leave out. Prefer Glob and Grep when you know what you "
        "are looking for."
    ),
    arguments=LsArgs,
    run=_run_ls,
    example=Example({"path": "."}),
    stands_for=itself("list"),
    terms={"depth": "", "include_hidden": ""},
)

# --- NotebookEdit ----------------------------------------------------------------------------------


class NotebookEditArgsCC(ToolArgs):
    notebook_path: FilePath = Field(description="The notebook's path: absolute (inside the workspace) or relative.")
    cell_id: str | None = Field(
        None,
        min_length=1,
        description="The id of the cell to edit (or 'cell-N' for the cell at index N). With insert, the new cell "
        "goes after it, or at the beginning when it is not given.",
    )
    new_source: Text | None = Field(None, description="The new source for the cell (not needed to delete).")
    cell_type: CellType | None = Field(None, description="code or markdown: required for insert.")
    edit_mode: EditMode = Field("replace", description="replace (default), insert or delete.")

    @classmethod
    def cross_field_violations(cls, data: Mapping[str, Any]) -> list[Violation]:
        return mode_violations(data, "give its cell_id (or 'cell-N' for the cell at index N, from 0)")


def _run_notebook_edit(ctx: ToolContext, args: NotebookEditArgsCC) -> ToolOutput:
    return run_notebook_edit(ctx, canonical(NotebookEditArgs, args.model_dump()))


NOTEBOOK_EDIT_CC = like(
    NOTEBOOK_EDIT,
    name="NotebookEdit",
    description=(
        "Replaces the source of one cell of a Jupyter notebook (.ipynb), inserts a new cell after it, or deletes "
        "it. Read the notebook first in this conversation. cell_id names the cell (Read shows the ids); insert "
        "needs cell_type. The rest of the notebook is kept as it was."
    ),
    arguments=NotebookEditArgsCC,
    run=_run_notebook_edit,
    example=Example(
        {"notebook_path": "analysis.ipynb", "cell_id": "5f3d9a40", "new_source": "print('hello')"},
        setup=(("Read", {"file_path": "analysis.ipynb"}),),
    ),
    stands_for=itself("notebook_edit"),
    terms={"cell=N": "cell_id 'cell-N'"},
)

TOOLS: tuple[Tool[Any], ...] = (READ_CC, WRITE_CC, EDIT_CC, MULTI_EDIT_CC, GLOB_CC, GREP_CC, LS, NOTEBOOK_EDIT_CC)
