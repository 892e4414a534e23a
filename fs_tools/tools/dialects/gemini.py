"""The ``gemini`` dialect: Gemini CLI's file tools as its current declarations name them — ``read_file``,
``write_file``, ``replace``, ``glob``, ``grep_search``, ``list_directory``, ``read_many_files`` — on
fs-tools' gates (SPEC §14).

``read_file`` shows the lines without numbers, as Gemini CLI does (1-based ``start_line`` and inclusive
``end_line``; ``start_line`` alone reads on to the end); ``replace`` takes ``allow_multiple`` for
fs-tools' ``replace_all`` and accepts ``instruction`` without using it; ``grep_search`` groups its rows
under ``File: path`` as ``L12: text``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field

from fs_tools.arguments import FilePath, Integer, SearchPath, Text, ToolArgs, Violation
from fs_tools.errors import ToolTimeout
from fs_tools.paging.pdf_pages import span
from fs_tools.patterns.glob import GlobListLimit, compile_globs, glob_pattern_violations
from fs_tools.tools.base import Example, Tool, ToolContext, ToolOutput
from fs_tools.tools.dialects.common import canonical, itself, like
from fs_tools.tools.edit import EDIT, EditArgs, run_edit
from fs_tools.tools.glob import GLOB, GlobArgs, find_files, run_glob
from fs_tools.tools.grep import GREP, GrepQuery, render, search_files, search_violations
from fs_tools.tools.list import LIST, ListArgs, list_directory
from fs_tools.tools.read import DEFAULT_LIMIT, READ, ReadArgs, read_lines
from fs_tools.tools.read_many import MAX_FILES, READ_MANY, ReadManyArgs, run_read_many
from fs_tools.tools.write import WRITE

_PATH = "The path to the file: relative to the workspace root, or absolute inside it."
_DIR = "The directory: relative to the workspace root, or absolute inside it. Default: the root."
_TERMS_READ = {"offset": "start_line", "limit": "end_line", "offset={n}": "start_line={n}"}


class ReadFileArgs(ToolArgs):
    file_path: FilePath = Field(description=_PATH)
    start_line: Integer | None = Field(None, ge=1, description="Optional: the 1-based line to start reading from.")
    end_line: Integer | None = Field(None, ge=1, description="Optional: the 1-based line to stop at (inclusive).")

    @classmethod
    def cross_field_violations(cls, data: Mapping[str, Any]) -> list[Violation]:
        start, end = data.get("start_line"), data.get("end_line")
        if isinstance(start, int) and isinstance(end, int) and end < start:
            return [(("end_line",), f"must be at least start_line ({start}), got {end}")]
        return []


def _run_read_file(ctx: ToolContext, args: ReadFileArgs) -> ToolOutput:
    start = args.start_line or 1
    limit = args.end_line - start + 1 if args.end_line is not None else DEFAULT_LIMIT
    return read_lines(
        ctx,
        canonical(ReadArgs, {"file_path": args.file_path, "offset": start, "limit": limit}),
        numbers=False,
        continue_with=lambda spec: "start_line={} and end_line={} (a PDF's lines are its pages)".format(*span(spec)),
    )


READ_FILE = like(
    READ,
    name="read_file",
    description=(
        "Reads a text file and returns its content as it is (no line numbers). Large files are truncated: "
        "the answer then says which lines it shows and how to read on with start_line and end_line. You must "
        "read a file before you replace text in it or overwrite it."
    ),
    arguments=ReadFileArgs,
    run=_run_read_file,
    example=Example({"file_path": "src/app.py", "start_line": 1, "end_line": 2}),
    stands_for=itself("read"),
    terms=_TERMS_READ,
)

WRITE_FILE = like(
    WRITE,
    name="write_file",
    description=(
        "Writes content to a file, creating it and its parent directories if needed. Overwriting an existing "
        "file requires that you read it first and that it has not changed since. Write the complete literal "
        "content: no omission placeholders such as '(rest of methods ...)'."
    ),
    stands_for=itself("write"),
)


class ReplaceArgs(ToolArgs):
    file_path: FilePath = Field(description=_PATH)
    instruction: str | None = Field(None, description="What the change is for (accepted; not used to apply it).")
    old_string: Text = Field(min_length=1, description="The exact literal text to replace, indentation included.")
    new_string: Text = Field(description="The exact literal text to replace old_string with.")
    allow_multiple: bool = Field(
        False, description="Replace every occurrence; if false (default), exactly one must be found."
    )

    @classmethod
    def cross_field_violations(cls, data: Mapping[str, Any]) -> list[Violation]:
        return EditArgs.cross_field_violations(data)


def _run_replace(ctx: ToolContext, args: ReplaceArgs) -> ToolOutput:
    values = {"file_path": args.file_path, "old_string": args.old_string, "new_string": args.new_string}
    return run_edit(ctx, canonical(EditArgs, {**values, "replace_all": args.allow_multiple}))


REPLACE = like(
    EDIT,
    name="replace",
    description=(
        "Replaces text in a file. Read the file first. old_string must match the file exactly (whitespace "
        "and indentation included) and occur once, unless allow_multiple is true; include enough "
        "surrounding lines to make it unique."
    ),
    arguments=ReplaceArgs,
    run=_run_replace,
    example=Example(
        {"file_path": "src/app.py", "old_string": '"hello "', "new_string": '"hi "'},
        setup=(("read_file", {"file_path": "src/app.py"}),),
    ),
    stands_for=itself("edit"),
    terms={"replace_all": "allow_multiple"},
)


class GlobArgsGemini(ToolArgs):
    pattern: str = Field(min_length=1, description="The glob pattern, such as '**/*.py' or 'docs/*.md'.")
    dir_path: SearchPath | None = Field(None, description=_DIR)

    @classmethod
    def cross_field_violations(cls, data: Mapping[str, Any]) -> list[Violation]:
        return glob_pattern_violations(data, "pattern")


def _run_glob(ctx: ToolContext, args: GlobArgsGemini) -> ToolOutput:
    return run_glob(ctx, canonical(GlobArgs, {"pattern": args.pattern, "path": args.dir_path}))


GLOB_GEMINI = like(
    GLOB,
    name="glob",
    description="Finds files whose path matches a glob pattern, searching from dir_path (default: the root).",
    arguments=GlobArgsGemini,
    run=_run_glob,
    example=Example({"pattern": "**/*.py"}),
    stands_for=itself("glob"),
    terms={"path": "dir_path"},
)


class GrepSearchArgs(ToolArgs):
    pattern: str = Field(min_length=1, description="The regular expression to search for (Python syntax).")
    dir_path: SearchPath | None = Field(None, description=_DIR)
    include_pattern: str | None = Field(None, description="Only files matching this glob, such as '*.js'.")

    @classmethod
    def cross_field_violations(cls, data: Mapping[str, Any]) -> list[Violation]:
        return search_violations(data, "include_pattern")


def _run_grep_search(ctx: ToolContext, args: GrepSearchArgs) -> ToolOutput:
    where = f'in path "{args.dir_path}"' if args.dir_path else "in the workspace directory"
    query = GrepQuery(args.pattern, args.dir_path or ".", args.include_pattern, by_file=True)
    search = search_files(ctx, query)
    value = {
        "pattern": args.pattern,
        "matches": search.matched,
        "files_searched": search.searched,
        "files_with_matches": search.with_matches,
        "truncated": search.truncated,
    }
    if not search.lines:
        return ToolOutput(text=f'No matches found for pattern "{args.pattern}" {where}.', value=value)
    count = f"{search.matched} match{'es' if search.matched != 1 else ''}"
    body = render(query, search).replace("\nFile: ", "\n---\nFile: ")
    return ToolOutput(text=f'Found {count} for pattern "{args.pattern}" {where}:\n---\n{body}\n---', value=value)


GREP_SEARCH = like(
    GREP,
    name="grep_search",
    description=(
        "Searches file contents for a regular expression (Python syntax) under dir_path, optionally only in "
        "files matching include_pattern; rows are grouped by file as 'L12: text'. .gitignore'd files are "
        "skipped. Searching records nothing: read a file before you replace text in it."
    ),
    arguments=GrepSearchArgs,
    run=_run_grep_search,
    example=Example({"pattern": "greet", "include_pattern": "*.py"}),
    stands_for=itself("grep"),
    terms={"path": "dir_path", "glob": "include_pattern", "include_ignored": ""},
)


class ListDirectoryArgs(ToolArgs):
    dir_path: SearchPath = Field(description="The directory to list: relative to the workspace root, or absolute.")


def _run_list_directory(ctx: ToolContext, args: ListDirectoryArgs) -> ToolOutput:
    return list_directory(ctx, canonical(ListArgs, {"path": args.dir_path, "depth": 1}))


LIST_DIRECTORY = like(
    LIST,
    name="list_directory",
    description="Lists the entries of a directory (not recursive): directories end with '/', files show their size.",
    arguments=ListDirectoryArgs,
    run=_run_list_directory,
    example=Example({"dir_path": "."}),
    stands_for=itself("list"),
    terms={"path": "dir_path", "depth": "", "include_hidden": ""},
)

_GLOB_CHARACTERS = frozenset("*?[{")


class ReadManyFilesArgs(ToolArgs):
    include: list[str] = Field(
        min_length=1,
        max_length=MAX_FILES,
        description=f"Paths or glob patterns ('src/**/*.ts') of the files to read; at most {MAX_FILES} files in all.",
    )

    @classmethod
    def cross_field_violations(cls, data: Mapping[str, Any]) -> list[Violation]:
        found: list[Violation] = []
        items = data.get("include")
        globs = {
            index: item
            for index, item in enumerate(items if isinstance(items, list) else [])
            if isinstance(item, str) and _GLOB_CHARACTERS & set(item)
        }
        try:  # the globs share one pattern's limits, as LS's ignore list does: each compile below is within them
            compile_globs(list(globs.values()))
        except GlobListLimit as exc:
            return [(("include", list(globs)[exc.index]), f"invalid glob pattern: {exc}")]
        for index, item in enumerate(items if isinstance(items, list) else []):
            if index in globs:
                found += [(("include", index), m) for _, m in glob_pattern_violations({"p": item}, "p")]
            elif isinstance(item, str) and not item:
                found.append((("include", index), "must not be empty"))
        return found


def _run_read_many_files(ctx: ToolContext, args: ReadManyFilesArgs) -> ToolOutput:
    deadline = ctx.options.clock() + ctx.options.search_seconds  # one budget for the call, not one per glob
    paths: list[str] = []
    for index, item in enumerate(args.include):
        if _GLOB_CHARACTERS & set(item):
            try:
                paths += find_files(ctx, canonical(GlobArgs, {"pattern": item}), deadline)[0]
            except ToolTimeout as exc:
                raise ToolTimeout(_timeout_message(ctx, index, item, paths), details={"index": index}) from exc
        else:
            paths.append(item)
    unique = list(dict.fromkeys(paths))[:MAX_FILES]
    if not unique:
        return ToolOutput(text="No files matching the criteria were found.", value={"files": [], "failed": 0})
    return run_read_many(ctx, canonical(ReadManyArgs, {"file_paths": unique}))


def _timeout_message(ctx: ToolContext, index: int, item: str, paths: list[str]) -> str:
    return (
        f"read_many_files ran past its {ctx.options.search_seconds:g} s budget for finding files while expanding "
        f"/include/{index} ({item!r}), with {len(paths)} file(s) named before it; name fewer or narrower "
        "patterns, or the files themselves"
    )


READ_MANY_FILES = like(
    READ_MANY,
    name="read_many_files",
    description=(
        f"Reads several files at once, named by path or by glob pattern (at most {MAX_FILES}); each comes "
        "numbered as read shows it, and each read counts as reading that file."
    ),
    arguments=ReadManyFilesArgs,
    run=_run_read_many_files,
    example=Example({"include": ["*.md"]}),
    stands_for=itself("read_many"),
    terms={"file_paths": "include", "offset={n}": "read_file, start_line={n}", "limit": ""},
)

TOOLS: tuple[Tool[Any], ...] = (
    READ_FILE,
    WRITE_FILE,
    REPLACE,
    GLOB_GEMINI,
    GREP_SEARCH,
    LIST_DIRECTORY,
    READ_MANY_FILES,
)
