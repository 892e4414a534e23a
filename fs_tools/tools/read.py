"""The ``read`` tool: numbered lines of a text file, and the observation that authorises later edits."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field

from fs_tools.arguments import FilePath, Integer, ToolArgs, ToolOutputModel
from fs_tools.errors import NotFound, TooLarge, path_label
from fs_tools.provider import IMAGE_FORMATS, MAX_SOURCE_BYTES, Scan, ShownImage, image_format, show_image
from fs_tools.terms import term
from fs_tools.tools.base import Example, Tool, ToolContext, ToolOutput
from fs_tools.tools.paging import PageSink
from fs_tools.tools.presenting import is_integer, short, text_of
from fs_tools.tools.rendering import OUTPUT_CAP_BYTES, render_page
from policy import ABSENT, Present

DEFAULT_LIMIT = 2000


class ReadArgs(ToolArgs):
    file_path: FilePath = Field(
        description="Path of the file: relative to the workspace root, or absolute inside a root."
    )
    offset: Integer = Field(1, ge=1, description="First line to show (1-based). Default 1.")
    limit: Integer = Field(DEFAULT_LIMIT, ge=1, description=f"How many lines to show. Default {DEFAULT_LIMIT}.")


class ReadOutput(ToolOutputModel):
    path: str
    offset: int
    lines_shown: int
    total_lines: int
    next_offset: int | None
    version: str | None
    unchanged: bool = False  # an identical re-read, answered with a short note instead of the text
    kind: Literal["text", "image"] = "text"  # what the file is, by its content (SPEC §18)
    # an image: its format (png, jpeg, gif, webp), its size, and the size it is shown at
    format: str | None = None
    width: int | None = None
    height: int | None = None
    shown_width: int | None = None
    shown_height: int | None = None


class ReadSink:
    """What a read feeds: a text file's pages, or — when its first bytes announce an image — the whole
    file (at most ``max_image`` bytes; beyond that only counted)."""

    def __init__(self, page: PageSink, max_image: int) -> None:
        self.page = page
        self.image: str | None = None
        self.size = 0
        self._chunks: list[bytes] = []
        self._max_image = max_image
        self._started = False

    def feed(self, chunk: bytes) -> None:
        if not self._started:
            self._started = True
            self.image = image_format(chunk[:16])
        if self.image is None:
            self.page.feed(chunk)
            return
        self.size += len(chunk)
        if self.size <= self._max_image:
            self._chunks.append(chunk)

    def image_bytes(self) -> bytes | None:
        """The image file's bytes; None when it was larger than ``max_image``."""
        return b"".join(self._chunks) if self.size <= self._max_image else None


def run_read(ctx: ToolContext, args: ReadArgs) -> ToolOutput:
    return read_lines(ctx, args)


def read_lines(ctx: ToolContext, args: ReadArgs, *, numbers: bool = True) -> ToolOutput:
    """``read``'s answer; ``numbers=False`` shows the lines as they are, without read's numbers (a dialect
    whose read shows none)."""
    path = args.file_path
    display = path_label(path)
    provider = ctx.provider

    def new_sink() -> ReadSink:
        keep = provider.remember_limit
        page = PageSink(display, args.offset, args.limit, keep_bytes=keep, max_chars=OUTPUT_CAP_BYTES)
        return ReadSink(page, MAX_SOURCE_BYTES)

    def record(key: str, scan: Scan | None) -> None:
        # Recorded even when the content is not text: the session has seen this version, so write may
        # replace it. A file that never held still is shown but not recorded (fail closed).
        if scan is None:
            ctx.store.put(ctx.session, key, ABSENT)
        elif scan.settled:
            ctx.store.put(ctx.session, key, Present(scan.version))

    key, found = provider.read(path, new_sink, record=record, cancel=ctx.cancel)
    if found is None:
        raise NotFound(f"{display!r} does not exist", details={"reason": "missing"})
    found_sink, scan = found
    recorded = scan.version if scan.settled else None
    if found_sink.image is not None:
        return _read_image(ctx, found_sink, display, path, recorded, scan.settled)
    sink = found_sink.page
    kept = sink.kept()
    if kept is not None and recorded is not None:
        provider.remember(recorded, kept)
    total = sink.finish()
    if sink.problem is not None:
        raise sink.problem
    if total == 0 and args.offset == 1:
        return ToolOutput(
            text=f"(the file {display!r} is empty: 0 lines, {scan.size} bytes)",
            value=_value(path, args.offset, 0, 0, None, recorded),
        )
    if args.offset > total:
        raise NotFound(
            f"{term('offset')} {args.offset} is past the end of {display!r}, which has {total} line(s)",
            details={"reason": "offset", "offset": args.offset, "total_lines": total},
        )
    page = render_page(sink.window, args.offset, OUTPUT_CAP_BYTES, sink.full_lengths)
    next_offset = page.last + 1 if page.last < total else None
    body = page.text if numbers or not page.text else "\n".join(row.split("\t", 1)[1] for row in page.text.split("\n"))
    if next_offset is not None:
        named = term("limit")
        lines_at_once = (
            f"limit {args.limit}"
            if named == "limit"
            else f"{args.limit:,} line{'s' if args.limit != 1 else ''} at a time"
        )
        why = f"output capped at {OUTPUT_CAP_BYTES // 1024} KiB" if page.capped else lines_at_once
        then = term("offset={n}").format(n=next_offset)
        body += f"\n\n[showing lines {page.first}–{page.last} of {total} ({why}); continue with {then}]"
    if not scan.settled:
        body += (
            f"\n\n[{display!r} changed while it was being read (something is writing to it): this view may "
            "mix old and new content and was not recorded, so edits will be refused until you read it again "
            "after it settles]"
        )
    shown = page.last - page.first + 1
    value = _value(path, args.offset, shown, total, next_offset, recorded)
    if ctx.reads is not None and recorded is not None:
        window = (recorded, args.offset, args.limit)
        if ctx.reads.last(ctx.session, key) == window:
            value["unchanged"] = True
            return ToolOutput(text=_unchanged(display, page.first, page.last, total), value=value)
        ctx.reads.remember(ctx.session, key, window)
    return ToolOutput(text=body, value=value)


def _read_image(
    ctx: ToolContext, sink: ReadSink, display: str, path: str, recorded: str | None, settled: bool
) -> ToolOutput:
    """An image file: shown (scaled within the workspace's budgets), its version recorded by the read."""
    assert sink.image is not None
    data = sink.image_bytes()
    if data is None:
        raise TooLarge(
            f"{display!r} is an image of {sink.size:,} bytes, more than the {MAX_SOURCE_BYTES:,} bytes fs-tools "
            "reads to show an image",
            details={"subject": "image", "size": sink.size},
        )
    shown = show_image(data, display, sink.image, max_pixels=ctx.max_image_pixels, max_bytes=ctx.max_image_bytes)
    text = describe(shown, display)
    if not settled:
        text += (
            f"\n\n[{display!r} changed while it was being read: this view was not recorded, so a write over it "
            "will be refused until you read it again after it settles]"
        )
    value = _value(path, 1, 0, 0, None, recorded)
    value.update(
        kind="image",
        format=shown.format.lower(),
        width=shown.width,
        height=shown.height,
        shown_width=shown.shown_width,
        shown_height=shown.shown_height,
    )
    return ToolOutput(text=text, value=value, media=(shown.media,))


def _unchanged(display: str, first: int, last: int, total: int) -> str:
    return (
        f"({display!r} is unchanged since your last read of it at these lines ({first}–{last} of {total}): the "
        f"text shown then still stands, and edits may rely on it. To see it again, read it with another "
        f"{' or '.join(dict.fromkeys((term('offset'), term('limit'))))})"
    )


class ReadMemory:
    """What each session last read of each file — the version and the window — so that an identical
    re-read is answered with a short note instead of the same text again. Bounded: the oldest entries
    go first (a forgotten entry only means the full text comes back)."""

    def __init__(self, max_entries: int = 100_000) -> None:
        self._max = max_entries
        self._lock = threading.Lock()
        self._windows: OrderedDict[tuple[str, str], tuple[str, int, int]] = OrderedDict()

    def last(self, session: str, key: str) -> tuple[str, int, int] | None:
        with self._lock:
            return self._windows.get((session, key))

    def remember(self, session: str, key: str, window: tuple[str, int, int]) -> None:
        with self._lock:
            self._windows[(session, key)] = window
            self._windows.move_to_end((session, key))
            while len(self._windows) > self._max:
                self._windows.popitem(last=False)

    def forget(self, session: str, key: str | None = None) -> None:
        """Drop the session's memory of ``key`` (a change to it, or ``forget``), or of everything."""
        with self._lock:
            if key is not None:
                self._windows.pop((session, key), None)
                return
            for entry in [entry for entry in self._windows if entry[0] == session]:
                del self._windows[entry]


def present_read(args: Mapping[str, Any]) -> str | None:
    path, offset, limit = text_of(args, "file_path"), args.get("offset"), args.get("limit")
    if path is None or not all(v is None or is_integer(v) for v in (offset, limit)):
        return None
    if isinstance(offset, int) and offset > 1:
        end = f"–{offset + limit - 1}" if isinstance(limit, int) else "–"
        return f"read {short(path)} (lines {offset}{end})"
    return f"read {short(path)}"


def _value(
    path: str, offset: int, shown: int, total: int, next_offset: int | None, version: str | None
) -> dict[str, object]:
    return {
        "path": path,
        "offset": offset,
        "lines_shown": shown,
        "total_lines": total,
        "next_offset": next_offset,
        "version": version,
        "kind": "text",
    }


READ = Tool(
    name="read",
    description=(
        "Read a UTF-8 text file. Returns numbered lines ('   12<TAB>text'); the numbers and the tab are not "
        "part of the file, so never copy them into old_string. Long files are paged: a footer gives the "
        "next offset. An image (PNG, JPEG, GIF, WebP) is shown as an image, scaled down if large. Reading a "
        "file is required before you write over it or edit it, and a partial read is enough."
    ),
    arguments=ReadArgs,
    output=ReadOutput,
    run=run_read,
    read_only=True,
    preconditions="Records the version it read: a later write or edit of the file is checked against it.",
    example=Example({"file_path": "src/app.py", "offset": 1, "limit": 2}),
    present=present_read,
)


def describe(shown: ShownImage, display: str) -> str:
    """The text beside the image: its format and dimensions, and how it was scaled."""
    name = IMAGE_FORMATS[shown.format][1]
    text = f"{display!r}: {name} image, {shown.width:,}×{shown.height:,} pixels"
    if shown.frames > 1:
        text += f", {shown.frames} frames" + (" (the first is shown)" if shown.scaled else "")
    if shown.scaled:
        kind = "PNG" if shown.media.mime_type == "image/png" else "JPEG"
        text += (
            f"; shown scaled to {shown.shown_width:,}×{shown.shown_height:,} ({kind}, {len(shown.media.data):,} bytes)"
        )
    else:
        text += f" ({len(shown.media.data):,} bytes)"
    return text
