"""The ``read`` tool: numbered lines of a text file, and the observation that authorises later edits."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any, Literal

from pydantic import Field

from fs_tools import abilities
from fs_tools.arguments import FilePath, Integer, Pages, ToolArgs, ToolOutputModel
from fs_tools.errors import (
    FsError,
    ImageTooLarge,
    MissingPath,
    NotFound,
    NotText,
    OffsetPastEnd,
    PdfTooLarge,
    TooLarge,
    ToolArgsError,
    path_label,
)
from fs_tools.paging.pdf_pages import page_ranges, page_spec, take
from fs_tools.paging.window import PageSink
from fs_tools.provider import (
    ENCODING_NAMES,
    IMAGE_FORMATS,
    MAX_SOURCE_BYTES,
    NOTEBOOK_HEAD,
    NOTEBOOK_MAX_BYTES,
    Notebook,
    Scan,
    ShownImage,
    image_format,
    is_pdf,
    may_be_notebook,
    parse_notebook,
    read_pdf,
    show_image,
    version_of,
)
from fs_tools.rendering.lines import OUTPUT_CAP_BYTES, render_page
from fs_tools.rendering.quoting import is_integer, short, text_of
from fs_tools.terms import term
from fs_tools.tools.base import Example, Tool, ToolContext, ToolOutput
from fs_tools.tools.notebook_edit import render_notebook
from policy import ABSENT, Observation, Present

DEFAULT_LIMIT = 2000

# The images one call has decoded, by their bytes' version (with the name they were read by, and what
# came of it): a call that names the same image again (read_many) shows it, or refuses it, at once
ShownImages = dict[str, "tuple[str, ShownImage | FsError]"]


class ReadArgs(ToolArgs):
    file_path: FilePath = Field(
        description="Path of the file: relative to the workspace root, or absolute inside a root."
    )
    offset: Integer = Field(1, ge=1, description="First line to show (1-based). Default 1.")
    limit: Integer = Field(DEFAULT_LIMIT, ge=1, description=f"How many lines to show. Default {DEFAULT_LIMIT}.")
    pages: Pages | None = Field(
        None,
        description='A PDF only: the pages to show, counted from 1 ("3", "1-5", "1,4,7-9"). Default: the first pages.',
    )


class ReadOutput(ToolOutputModel):
    path: str
    offset: int
    lines_shown: int
    total_lines: int
    next_offset: int | None
    version: str | None
    unchanged: bool = False  # an identical re-read, answered with a short note instead of the text
    kind: Literal["text", "image", "pdf", "notebook"] = "text"  # what the file is, by its content (SPEC §18)
    # an image: its format (png, jpeg, gif, webp), its size, and the size it is shown at
    format: str | None = None
    width: int | None = None
    height: int | None = None
    shown_width: int | None = None
    shown_height: int | None = None
    # a PDF: how many pages it has, and which were shown
    page_count: int | None = None
    pages_shown: list[int] | None = None
    encoding: str | None = None  # a text file in UTF-16 or UTF-32 (by its BOM): which; None for UTF-8
    # a notebook: how many cells it has, and the indexes (from 0) of those shown
    cell_count: int | None = None
    cells_shown: list[int] | None = None


_SNIFF = 16  # the first bytes that say what a file is


class ReadSink:
    """What a read feeds: a text file's pages, or — when its first bytes announce an image or a PDF —
    the whole file (at most ``max_whole`` bytes; beyond that only counted). ``kind`` is decided on the
    file's first 16 bytes (or all of a shorter file, once ``settle`` is called). A text file that begins
    as a notebook does is also kept whole (up to ``NOTEBOOK_MAX_BYTES``), to be shown as its cells if it
    is one (``notebook``, once the read is over)."""

    def __init__(self, page: PageSink, max_whole: int, *, cells: bool = True) -> None:
        self.page = page
        self.kind: str | None = None  # "text", "image" or "pdf", once decided
        self.image: str | None = None  # an image's format
        self.size = 0
        self._head = b""
        self._chunks: list[bytes] = []
        self._max_whole = max_whole
        self._maybe_notebook: bool | None = None if cells else False  # None: undecided; False: not one
        self._kept = 0

    def feed(self, chunk: bytes) -> None:
        if self.kind is None:
            self._head += chunk
            if len(self._head) < _SNIFF:
                return
            chunk, self._head = self._head, b""
            self._decide(chunk)
        self._route(chunk)

    def settle(self) -> None:
        """The read is over: decide on a file shorter than the sniff."""
        if self.kind is None:
            head, self._head = self._head, b""
            self._decide(head)
            if head:
                self._route(head)

    def _decide(self, head: bytes) -> None:
        self.image = image_format(head)
        self.kind = "image" if self.image is not None else "pdf" if is_pdf(head) else "text"

    def _route(self, chunk: bytes) -> None:
        if self.kind == "text":
            self.page.feed(chunk)
            if self._maybe_notebook is not False:
                self._keep_notebook(chunk)
            return
        self.size += len(chunk)
        if self.size <= self._max_whole:
            self._chunks.append(chunk)

    def _keep_notebook(self, chunk: bytes) -> None:
        self._kept += len(chunk)
        if self._kept > NOTEBOOK_MAX_BYTES:
            self._maybe_notebook, self._chunks = False, []
            return
        self._chunks.append(chunk)
        if self._maybe_notebook is None:
            head = b"".join(self._chunks)
            self._chunks = [head]
            self._maybe_notebook = may_be_notebook(head[:NOTEBOOK_HEAD])
            if self._maybe_notebook is False:
                self._chunks = []

    def notebook(self, display: str) -> Notebook | None:
        """The notebook a text file is, once read whole; None when it is not one."""
        if self.kind != "text" or self._maybe_notebook is False or self._kept > NOTEBOOK_MAX_BYTES:
            return None
        return parse_notebook(b"".join(self._chunks), display)

    def whole_or_refuse(self, display: str) -> bytes:
        """An image's or a PDF's bytes; ``FS_TOO_LARGE`` when the file was larger than ``max_whole``."""
        if self.size > self._max_whole:
            what = "an image" if self.kind == "image" else "a PDF"
            condition = ImageTooLarge if self.kind == "image" else PdfTooLarge
            raise condition(
                f"{display!r} is {what} of {self.size:,} bytes, more than the {self._max_whole:,} bytes fs-tools "
                f"reads whole to show {what}",
                details={"subject": self.kind, "size": self.size},
            )
        return b"".join(self._chunks)


def run_read(ctx: ToolContext, args: ReadArgs) -> ToolOutput:
    return read_lines(ctx, args)


def read_lines(
    ctx: ToolContext,
    args: ReadArgs,
    *,
    numbers: bool = True,
    continue_with: Callable[[str], str] | None = None,
    images: ShownImages | None = None,
) -> ToolOutput:
    """``read``'s answer; ``numbers=False`` shows the lines as they are, without read's numbers (a dialect
    whose read shows none); ``continue_with`` words a PDF's next pages ("1-20") in the calling tool's
    own arguments (by default ``pages="1-20"``); ``images``: those the calling tool has shown already."""
    path = args.file_path
    display = path_label(path)
    provider = ctx.provider

    sinks: list[ReadSink] = []

    def new_sink() -> ReadSink:
        keep = provider.remember_limit
        page = PageSink(display, args.offset, args.limit, keep_bytes=keep, max_chars=OUTPUT_CAP_BYTES)
        sinks.append(ReadSink(page, MAX_SOURCE_BYTES, cells=ctx.cells))
        return sinks[-1]

    prior: dict[str, Observation | None] = {}

    def record(key: str, scan: Scan | None) -> None:
        # Recorded even when the content is not text: the session has seen this version, so write may
        # replace it. A file that never held still is shown but not recorded (fail closed).
        prior[key] = ctx.store.get(ctx.session, key)
        if scan is None:
            ctx.store.put(ctx.session, key, ABSENT)
        elif scan.settled and not _pages_refused(args, sinks):
            ctx.store.put(ctx.session, key, Present(scan.version))

    key, found = provider.read(path, new_sink, record=record, cancel=ctx.cancel)
    if found is None:
        raise MissingPath(f"{display!r} does not exist")
    found_sink, scan = found
    found_sink.settle()
    recorded = scan.version if scan.settled else None
    if _pages_refused(args, [found_sink]):
        what = "an image" if found_sink.kind == "image" else "text"
        raise ToolArgsError([f"/pages: only a PDF has pages, and {display!r} is {what}; remove pages"])
    if found_sink.kind == "image":
        return _read_image(ctx, found_sink, display, path, recorded, scan.settled, {} if images is None else images)

    def unrecord() -> None:
        """Nothing of the file was shown (pages or an offset past the end): the session's record of it
        is put back as it was before this read, so that a write cannot rest on a read that saw nothing."""
        if key in prior:
            before = prior[key]
            if before is None:
                ctx.store.forget(ctx.session, key)
            else:
                ctx.store.put(ctx.session, key, before)

    if found_sink.kind == "pdf":
        words = continue_with or (lambda spec: f'pages="{spec}"')
        try:
            return _read_pdf(ctx, found_sink, args, display, path, recorded, scan.settled, words)
        except ToolArgsError:
            unrecord()
            raise
    sink = found_sink.page
    kept = sink.kept()
    if kept is not None and recorded is not None:
        provider.remember(recorded, kept)
    total = sink.finish()
    if sink.problem is not None:
        raise sink.problem
    try:
        notebook = found_sink.notebook(display)
    except TooLarge:  # too large to parse: nothing of it was shown
        unrecord()
        raise
    if notebook is not None:
        try:
            return _read_notebook(notebook, args, display, path, recorded, scan.settled)
        except RecursionError:  # outputs nested past what can be summarised: shown as the JSON they are
            pass
        except NotFound:
            unrecord()
            raise
    if total == 0 and args.offset == 1:
        value = _value(path, args.offset, 0, 0, None, recorded)
        bom = ""
        if sink.encoding != "utf-8":
            value["encoding"] = sink.encoding
            bom = f": its {ENCODING_NAMES[sink.encoding]} BOM, which edits keep"
        return ToolOutput(text=f"(the file {display!r} is empty: 0 lines, {scan.size} bytes{bom})", value=value)
    if args.offset > total:
        unrecord()
        raise OffsetPastEnd(
            f"{term('offset')} {args.offset} is past the end of {display!r}, which has {total} line(s)",
            offset=args.offset,
            total_lines=total,
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
    if sink.encoding != "utf-8":
        body += (
            f"\n\n[{display!r} is {ENCODING_NAMES[sink.encoding]} text (it begins with a BOM), shown decoded: edits "
            f"keep its encoding; a write replaces it with UTF-8]"
        )
    if not scan.settled:
        body += (
            f"\n\n[{display!r} changed while it was being read (something is writing to it): this view may "
            "mix old and new content and was not recorded, so edits will be refused until you read it again "
            "after it settles]"
        )
    shown = page.last - page.first + 1
    value = _value(path, args.offset, shown, total, next_offset, recorded)
    if sink.encoding != "utf-8":
        value["encoding"] = sink.encoding
    if ctx.reads is not None and recorded is not None:
        window = (recorded, args.offset, args.limit)
        if ctx.reads.last(ctx.session, key) == window:
            value["unchanged"] = True
            return ToolOutput(text=_unchanged(display, page.first, page.last, total), value=value)
        ctx.reads.remember(ctx.session, key, window)
    return ToolOutput(text=body, value=value)


def _pages_refused(args: ReadArgs, sinks: list[ReadSink]) -> bool:
    """``pages`` given for a file that is not a PDF: the call is refused, and its read not recorded."""
    if args.pages is None or not sinks:
        return False
    sinks[-1].settle()
    return sinks[-1].kind != "pdf"


def _read_image(
    ctx: ToolContext,
    sink: ReadSink,
    display: str,
    path: str,
    recorded: str | None,
    settled: bool,
    images: ShownImages,
) -> ToolOutput:
    """An image file: shown (scaled within the workspace's budgets), its version recorded by the read."""
    assert sink.image is not None
    data = sink.whole_or_refuse(display)
    shown = _shown_once(ctx, data, display, sink.image, images)
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


def _shown_once(ctx: ToolContext, data: bytes, display: str, announced: str, images: ShownImages) -> ShownImage:
    """The image ``data`` shown, decoding it only when this call has not decoded the same bytes before;
    a refusal is repeated in the words of the name it is read by now (a cancellation is not kept)."""
    key = version_of(data)
    if key not in images:
        budgets = {"max_pixels": ctx.options.max_image_pixels, "max_bytes": ctx.options.max_image_bytes}
        try:
            images[key] = (display, show_image(data, display, announced, **budgets, cancel=ctx.cancel))
        except (TooLarge, NotText) as exc:
            images[key] = (display, exc)
    first, found = images[key]
    if isinstance(found, FsError):
        message = found.message.replace(repr(first), repr(display))
        raise found.restated(message) from found
    return found


def _read_pdf(
    ctx: ToolContext,
    sink: ReadSink,
    args: ReadArgs,
    display: str,
    path: str,
    recorded: str | None,
    settled: bool,
    continue_with: Callable[[str], str],
) -> ToolOutput:
    """A PDF: the text of the pages asked for (``pages``, or ``offset``/``limit`` read as pages), at most
    ``max_pdf_pages`` of them (the first ones by default), page by page within the output cap; the note
    at the end says how to read on (``continue_with`` words it in the tool's own arguments)."""
    data = sink.whole_or_refuse(display)
    budget = ctx.options.max_pdf_pages
    chosen: list[int] = []
    rest: list[int] = []

    def choose(count: int) -> list[int]:
        if args.pages is not None:
            ranges = page_ranges(args.pages, count, display)
        elif (args.offset, args.limit) != (1, DEFAULT_LIMIT):  # a line window, read as pages
            first = min(args.offset, max(count, 1))
            ranges = [(first, min(count, first + args.limit - 1))] if count else []
        else:
            ranges = [(1, count)] if count else []
        chosen.extend(take(ranges, budget))
        rest.extend(take(ranges, budget, skip=set(chosen)))  # the next batch, for the note
        return chosen

    document = read_pdf(data, display, choose, cap=OUTPUT_CAP_BYTES, cancel=ctx.cancel)
    count = document.count
    parts: list[str] = []
    shown: list[int] = []
    size = 0
    capped = False
    for page, text in document.texts:
        body = text.rstrip() or "(no text on this page: it may be a scanned image or a drawing)"
        part = f"--- page {page} of {count} ---\n{body}"
        encoded = part.encode("utf-8", "surrogatepass")
        room = OUTPUT_CAP_BYTES - size
        if len(encoded) > room:
            capped = True
            if not shown:  # the first page alone is too long: show what fits of it, and say so
                cut = encoded[: max(room, 0)].decode("utf-8", "ignore")
                parts.append(cut + "\n[… the rest of this page is cut: it is longer than the output cap]")
                shown.append(page)
            break
        parts.append(part)
        shown.append(page)
        size += len(encoded) + 2
    head = f"{display!r}: PDF, {count} page{'s' if count != 1 else ''}"
    text = head + ("\n\n" + "\n\n".join(parts) if parts else " (no pages)")
    unread = [page for page in chosen if page not in shown]
    upcoming = (unread + rest)[:budget] if unread else rest
    if not upcoming and shown and args.pages is None and max(shown) < count:
        upcoming = list(range(max(shown) + 1, min(count, max(shown) + budget) + 1))
    if upcoming:
        why = f"output capped at {OUTPUT_CAP_BYTES // 1024} KiB" if capped else f"{budget} pages at a time"
        shown_spec = page_spec(shown) or "none"
        then = continue_with(page_spec(upcoming))
        text += f"\n\n[showing pages {shown_spec} of {count} ({why}); continue with {then}]"
    elif shown and max(shown) < count:
        after = max(shown)
        more = page_spec(list(range(after + 1, min(count, after + budget) + 1)))
        text += f"\n\n[{count - after} more page(s) after page {after}: {continue_with(more)}]"
    if not settled:
        text += f"\n\n[{display!r} changed while it was being read: this view was not recorded]"
    value = _value(path, 1, 0, 0, None, recorded)
    value.update(kind="pdf", page_count=count, pages_shown=shown)
    return ToolOutput(text=text, value=value)


def _read_notebook(
    notebook: Notebook, args: ReadArgs, display: str, path: str, recorded: str | None, settled: bool
) -> ToolOutput:
    """A Jupyter notebook: its cells (``offset`` and ``limit`` count cells, from 1), outputs summarised."""
    count = len(notebook.cells)
    if args.offset > max(count, 1):
        raise OffsetPastEnd(
            f"{term('offset')} {args.offset} is past the end of {display!r}, a notebook of {count} cell(s)",
            offset=args.offset,
            total_lines=count,
        )
    then = term("offset={n}")
    text, shown, next_index = render_notebook(
        notebook, display, args.offset - 1, args.limit, OUTPUT_CAP_BYTES, lambda n: then.format(n=n)
    )
    if not settled:
        text += f"\n\n[{display!r} changed while it was being read: this view was not recorded]"
    value = _value(path, args.offset, 0, 0, None if next_index is None else next_index + 1, recorded)
    value.update(kind="notebook", cell_count=count, cells_shown=shown)
    return ToolOutput(text=text, value=value)


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


# Files whose read decodes an image, starts the PDF reader or parses a notebook: 0.1 s to seconds, which a
# server runs in a worker thread even where reads run inline, so it keeps answering (and a cancellation
# reaches the read). Told by name, for scheduling only: what a read shows is decided by the file's content.
_HEAVY_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".pdf", ".ipynb")


def slow_read(raw: object) -> bool:
    """Whether a read's arguments (a mapping, or its JSON text) name a file whose read is slow to run."""
    if isinstance(raw, str):
        lowered = raw.lower()
        return any(f'{suffix}"' in lowered for suffix in _HEAVY_SUFFIXES) or '"pages"' in lowered
    if not isinstance(raw, dict):
        return False
    names = [value for value in raw.values() if isinstance(value, str)]
    names += [item for value in raw.values() if isinstance(value, list) for item in value if isinstance(item, str)]
    return "pages" in raw or any(name.lower().endswith(_HEAVY_SUFFIXES) for name in names)


READ = Tool(
    name="read",
    title="Read a file",
    abilities=(abilities.OBSERVE,),
    description=(
        "Read a text file (UTF-8; UTF-16 or UTF-32 with a BOM). Returns numbered lines ('   12<TAB>text'); the "
        "numbers and the tab are not "
        "part of the file, so never copy them into old_string. Long files are paged: a footer gives the "
        "next offset. An image (PNG, JPEG, GIF, WebP) is shown as an image, scaled down if large; a PDF as its "
        "text, page by page (choose pages with pages); a Jupyter notebook as its cells (offset and limit count "
        "cells; change them with notebook_edit). Reading a "
        "file is required before you write over it or edit it, and a partial read is enough."
    ),
    arguments=ReadArgs,
    output=ReadOutput,
    run=run_read,
    read_only=True,
    preconditions="Records the version it read: a later write or edit of the file is checked against it.",
    example=Example({"file_path": "src/app.py", "offset": 1, "limit": 2}),
    present=present_read,
    slow=slow_read,
)


def describe(shown: ShownImage, display: str) -> str:
    """The text beside the image: its format and dimensions, and what was done to show it."""
    name = IMAGE_FORMATS[shown.format][1]
    text = f"{display!r}: {name} image, {shown.width:,}×{shown.height:,} pixels"
    if shown.animated:
        text += ", animated" + (" (its first frame is shown)" if shown.converted else "")
    size = f"{len(shown.media.data):,} bytes"
    if shown.resized:
        kind = "PNG" if shown.media.mime_type == "image/png" else "JPEG"
        text += f"; shown scaled to {shown.shown_width:,}×{shown.shown_height:,} ({kind}, {size})"
    elif shown.converted:
        kind = "PNG" if shown.media.mime_type == "image/png" else "JPEG"
        text += f"; shown re-encoded as {kind} to fit the size budget ({size})"
    else:
        text += f" ({size})"
    return text
