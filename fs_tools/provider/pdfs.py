"""PDFs as content facts for ``read`` (SPEC §18): a PDF's text, page by page.

pypdf does the reading in the bounded child process (``child.py``; ``pdf_worker.py`` is its reader):
1 GiB of address space, ``PDF_CPU_SECONDS`` of CPU and ``PDF_WALL_SECONDS`` of wall time, killed when
the call is cancelled: a few KB of crafted PDF can make it spend minutes and gigabytes on one page
(found in review), and no limit inside pypdf stops that. Text is taken only from the pages asked for,
until the caller's byte cap. An encrypted PDF that does not open with the empty password, or a file
that starts like a PDF and cannot be parsed, is ``FS_NOT_TEXT`` saying so; a PDF that exceeds the
bounds is ``FS_TOO_LARGE``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from fs_tools.errors import NotText, PdfTooLarge
from fs_tools.provider.child import Bounds, Child
from fs_tools.provider.face import CancelToken

PDF_CPU_SECONDS = 20
PDF_WALL_SECONDS = 40
PDF_MEMORY_BYTES = 1 << 30


def is_pdf(head: bytes) -> bool:
    """Whether a file's first bytes announce a PDF."""
    return head.startswith(b"%PDF-")


@dataclass
class PdfPages:
    """What the worker gave: the page count, and the texts of the pages it reached, in order."""

    count: int
    texts: list[tuple[int, str]] = field(default_factory=list)


def read_pdf(
    data: bytes,
    display: str,
    choose: Callable[[int], list[int]],
    *,
    cap: int,
    cancel: CancelToken | None = None,
) -> PdfPages:
    """The PDF's page count and the text of the pages ``choose(count)`` names (it may raise, e.g. for a
    page past the end: the worker is stopped and the error passes), stopping once the texts reach
    ``cap`` bytes."""
    bounds = Bounds(
        PDF_MEMORY_BYTES,
        PDF_CPU_SECONDS,
        PDF_WALL_SECONDS,
        subject="pdf",
        kind="PDF",
        article="a",
        condition=PdfTooLarge,
    )
    with Child("pdf", data, bounds, display, cancel) as child:
        first = child.answer()
        if first.get("encrypted"):
            raise NotText(
                f"{display!r} is an encrypted PDF that fs-tools cannot open (it needs a password, or a "
                "cipher this installation lacks)",
                appears="an encrypted PDF",
                family="encrypted-pdf",
            )
        _refuse(first, display)
        pages = PdfPages(int(first["count"]))  # type: ignore[call-overload]
        child.tell({"pages": choose(pages.count), "cap": cap}, last=True)
        while True:
            message = child.answer()
            if message.get("done"):
                return pages
            _refuse(message, display)
            pages.texts.append((int(message["page"]), str(message["text"])))  # type: ignore[call-overload]


def _refuse(message: dict[str, object], display: str) -> None:
    if "broken" in message:
        where = f" (page {message['page']})" if "page" in message else ""
        raise NotText(
            f"{display!r} starts like a PDF but cannot be read{where}: {message['broken']}",
            appears="a PDF that is damaged or unsupported",
            family="broken-pdf",
        )
