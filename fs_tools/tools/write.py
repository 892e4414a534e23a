"""The ``write`` tool: create a file, or replace one this session has read."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field

from fs_tools import abilities
from fs_tools.arguments import FilePath, Text, ToolArgs, ToolOutputModel
from fs_tools.checks import syntax
from fs_tools.checks.placeholders import new_placeholders, refuse_placeholders
from fs_tools.errors import FsError, path_label
from fs_tools.gating import commit_gated
from fs_tools.provider import as_text, as_utf8, changed_span, count_lines
from fs_tools.rendering.quoting import short, text_of
from fs_tools.terms import term
from fs_tools.tools.base import Example, Tool, ToolContext, ToolOutput
from fs_tools.tools.edit import SyntaxErrorValue
from policy import Intent


class WriteArgs(ToolArgs):
    file_path: FilePath = Field(
        description="Path of the file: relative to the workspace root, or absolute inside a root."
    )
    content: Text = Field(description="The complete new content, written exactly as given (UTF-8).")


class WriteOutput(ToolOutputModel):
    path: str
    created: bool
    bytes_written: int
    lines: int
    version: str
    syntax_errors: list[SyntaxErrorValue] = Field(default_factory=list)  # those this write introduced


_SCAN_WHOLE = 64 << 10  # content up to this size is scanned whole before the current file is read


class _Bytes:
    """A sink that keeps at most ``limit`` bytes; past them it only notes that there were more."""

    def __init__(self, limit: int) -> None:
        self.chunks: list[bytes] = []
        self.room = limit
        self.over = False

    def feed(self, chunk: bytes) -> None:
        if len(chunk) > self.room:
            self.over, self.chunks, self.room = True, [], 0
        elif not self.over:
            self.chunks.append(chunk)
            self.room -= len(chunk)


def _current(ctx: ToolContext, path: str, limit: int) -> tuple[bool, bytes | None]:
    """Whether the file exists now, and its bytes (None over ``limit`` bytes: memory never grows with
    the file). A file that cannot be read counts as absent: the commit says why."""
    try:
        _, found = ctx.provider.read(path, lambda: _Bytes(limit), cancel=ctx.cancel)
    except FsError:
        return False, None
    if found is None:
        return False, None
    sink = found[0]
    return True, None if sink.over else b"".join(sink.chunks)


def _check_placeholders(ctx: ToolContext, path: str, content: str, data: bytes) -> None:
    """Refuse a replacement whose content has a placeholder the current file does not (a new file
    replaces no code: any content goes). Small content is scanned first and the current bytes read only
    when it has one; large content is compared with the current bytes first, and only the lines that
    differ are scanned (reading a file costs a fraction of scanning it: 5 MB, ~3 ms against ~35 ms)."""
    if len(data) <= _SCAN_WHOLE and not new_placeholders(content, ""):
        return
    exists, current = _current(ctx, path, ctx.provider.max_file_bytes)
    if not exists:
        return
    if current is None:  # a file too large to compare with is taken to have none: the placeholder is refused
        refuse_placeholders(content, "", term("content"))
        return
    start, end = changed_span(current, data)  # the lines outside are the current file's own
    changed = data[start:end].decode("utf-8")  # whole lines of valid UTF-8: cut after a line ending
    if not new_placeholders(changed, ""):
        return  # the current file is decoded only to tell the placeholders it had from new ones
    first_line = 1 + data.count(b"\n", 0, start)
    refuse_placeholders(changed, as_text(current), term("content"), first_line=first_line)


def _check_syntax(ctx: ToolContext, path: str, data: bytes) -> syntax.Check | None:
    """The syntax errors the write introduces: the new content is parsed first, and the current file
    only when that has errors (a new file had none)."""
    if not ctx.options.check_syntax or syntax.language_of(path) is None:
        return None
    alone = syntax.check(path, None, data)
    if not alone.introduced:
        return alone
    exists, current = _current(ctx, path, syntax.MAX_CHECKED_BYTES)
    if exists and current is None:
        return syntax.Check(alone.language, skipped=f"the file is over {syntax.MAX_CHECKED_BYTES >> 10} KB")
    found = syntax.check(path, as_utf8(current) if current is not None else None, data)  # the old, as UTF-8
    if ctx.options.refuse_syntax_errors:
        syntax.refuse(found, "the write")
    return found


def run_write(ctx: ToolContext, args: WriteArgs) -> ToolOutput:
    data = args.content.encode("utf-8")
    if ctx.options.check_placeholders:
        _check_placeholders(ctx, args.file_path, args.content, data)
    found = _check_syntax(ctx, args.file_path, data)
    done = commit_gated(ctx, args.file_path, Intent.WRITE, data)
    created = done.created
    lines = count_lines(args.content)
    verb = "Created" if created else "Replaced"
    warning, errors = syntax.report(found)
    text = f"{verb} {path_label(args.file_path)!r}: {len(data):,} bytes, {lines} line(s).{warning}"
    return ToolOutput(
        text=text,
        value={
            "path": args.file_path,
            "created": created,
            "bytes_written": len(data),
            "lines": lines,
            "version": done.after.version,
            "syntax_errors": errors,
        },
    )


def present_write(args: Mapping[str, Any]) -> str | None:
    path, content = text_of(args, "file_path"), text_of(args, "content")
    if path is None or content is None:
        return None
    lines = content.count("\n") + (0 if content.endswith("\n") or not content else 1)
    return f"write {short(path)} ({lines} line(s), {len(content.encode('utf-8', 'surrogatepass')):,} bytes)"


WRITE = Tool(
    name="write",
    title="Write a file",
    abilities=(abilities.CREATE,),
    description=(
        "Write a whole file (UTF-8, byte-exact: no newline is added). Creates the file and any missing "
        "parent directories. To replace an existing file you must have read it in this session, and it "
        "must not have changed since; prefer edit for changing part of a file."
    ),
    arguments=WriteArgs,
    output=WriteOutput,
    run=run_write,
    read_only=False,
    checkable=True,
    preconditions=(
        "The workspace is not read-only and the path is not protected. Creating a file needs nothing; replacing "
        "an existing file needs a read of it in this session, and the file must not have changed since."
    ),
    example=Example({"file_path": "src/util.py", "content": "def double(x):\n    return 2 * x\n"}),
    present=present_write,
)
