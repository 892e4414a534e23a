"""The ``read_many`` tool: several files at once, each read (and recorded) as ``read`` reads it; one
file's failure is reported in its own section and fails nothing else."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field

from fs_tools.arguments import FilePath, Integer, ToolArgs, ToolOutputModel
from fs_tools.errors import Aborted, FsError, path_label
from fs_tools.provider import encoded_size
from fs_tools.rendering.lines import OUTPUT_CAP_BYTES
from fs_tools.rendering.quoting import short
from fs_tools.result import Media
from fs_tools.tools.base import Example, Tool, ToolContext, ToolOutput
from fs_tools.tools.read import ReadArgs, ShownImages, read_lines

MAX_FILES = 50
DEFAULT_LIMIT = 500


class ReadManyArgs(ToolArgs):
    file_paths: list[FilePath] = Field(
        min_length=1,
        max_length=MAX_FILES,
        description=f"Paths of the files to read (1 to {MAX_FILES}), relative to the workspace root.",
    )
    limit: Integer = Field(DEFAULT_LIMIT, ge=1, description=f"Lines per file, from the first. Default {DEFAULT_LIMIT}.")


class FileRead(ToolOutputModel):
    path: str
    read: dict[str, Any] | None
    code: str | None
    message: str | None


class ReadManyOutput(ToolOutputModel):
    files: list[FileRead]
    failed: int


def run_read_many(ctx: ToolContext, args: ReadManyArgs) -> ToolOutput:
    sections: list[str] = []
    files: list[dict[str, Any]] = []
    budget = OUTPUT_CAP_BYTES * 4  # the whole answer stays bounded: later files get less room
    media: list[Media] = []
    media_budget = ctx.options.max_image_bytes  # the images of one call together fit one image's budget
    images: ShownImages = {}  # each distinct image is decoded once, however often it is named
    for path in args.file_paths:
        ctx.check_cancelled("read_many")
        try:
            done = read_lines(ctx, ReadArgs(file_path=path, offset=1, limit=args.limit), images=images)
        except Aborted:
            raise  # the call is cancelled, not one file
        except FsError as exc:  # this file's problem, not the call's
            message = ctx.explain(exc) if ctx.explain is not None else exc.message  # with its remedy
            files.append({"path": path, "read": None, "code": exc.code, "message": message})
            sections.append(f"==> {path_label(path)} <==\nERROR {exc.code}: {message}")
            continue
        files.append({"path": path, "read": done.value, "code": None, "message": None})
        text = done.text
        for item in done.media:
            if encoded_size(len(item.data)) <= media_budget:
                media.append(item)
                media_budget -= encoded_size(len(item.data))
                text += f"\n[shown as image {len(media)} after the text]"
            else:  # not seen, so not observed: a write over it asks for a read first
                ctx.store.forget(ctx.session, ctx.provider.key_of(path))
                text += "\n[the image is not shown here (this call's images would be too large): read it on its own]"
        if len(text.encode("utf-8", "surrogatepass")) > budget:
            text = text[: max(budget, 0)] + "\n[… this file's section is cut: read it on its own to see more]"
            if ctx.reads is not None:
                ctx.reads.forget(ctx.session, ctx.provider.key_of(path))  # not all of it was shown
        budget -= len(text)
        sections.append(f"==> {path_label(path)} <==\n{text}")
    failed = sum(1 for entry in files if entry["code"] is not None)
    if failed:
        sections.append(f"[{failed} of {len(files)} file(s) could not be read; the others were read as shown above]")
    return ToolOutput(text="\n\n".join(sections), value={"files": files, "failed": failed}, media=tuple(media))


def present_read_many(args: Mapping[str, Any]) -> str | None:
    paths = args.get("file_paths")
    if not isinstance(paths, list) or not all(isinstance(path, str) for path in paths):
        return None
    return (
        f"read_many {len(paths)} file(s): "
        + ", ".join(short(path) for path in paths[:3])
        + (", …" if len(paths) > 3 else "")
    )


READ_MANY = Tool(
    name="read_many",
    title="Read several files",
    description=(
        f"Read several files at once (1 to {MAX_FILES}), each shown as read shows it, under a "
        "'==> path <==' header, with its own footer when it continues. Each file read counts as read for "
        "later edits. A file that cannot be read gets its error in its own section; the others are still read."
    ),
    arguments=ReadManyArgs,
    output=ReadManyOutput,
    run=run_read_many,
    read_only=True,
    preconditions="Records the version of each file it read, as read does.",
    example=Example({"file_paths": ["README.md", "notes.txt"]}),
    present=present_read_many,
)
