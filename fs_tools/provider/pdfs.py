"""PDFs as content facts for ``read`` (SPEC §18): a PDF's text, page by page (pypdf, imported when a PDF
is read). Pure: bytes in, text out.

Bounded: the file is read whole only up to the size ``read`` allows for it, pypdf's own limits cap what
one stream may decompress to (75 MB), and text is taken only from the pages asked for, one at a time, so
a caller stops as soon as its output is full. An encrypted PDF that does not open with the empty
password, or a file that starts like a PDF and cannot be parsed, is ``FS_NOT_TEXT`` saying so.
"""

from __future__ import annotations

import io
import logging
from typing import Any

from fs_tools.errors import NotText

_PDF_MAGIC = b"%PDF-"


def is_pdf(head: bytes) -> bool:
    """Whether a file's first bytes announce a PDF."""
    return head.startswith(_PDF_MAGIC)


class PdfText:
    """An opened PDF: its page count, and the text of one page at a time."""

    def __init__(self, data: bytes, display: str) -> None:
        from pypdf import PdfReader

        self.display = display
        logging.getLogger("pypdf").setLevel(logging.ERROR)  # it warns on every odd object, to the host's log
        try:
            reader = PdfReader(io.BytesIO(data), strict=False)
            if reader.is_encrypted and not _opens_without_password(reader):
                raise NotText(
                    f"{display!r} is an encrypted PDF that fs-tools cannot open (it needs a password, or a cipher "
                    "this installation lacks)",
                    details={"appears": "an encrypted PDF", "family": "encrypted-pdf"},
                )
            self._pages = reader.pages
            self.count = len(self._pages)
        except NotText:
            raise
        except Exception as exc:
            raise _broken(display, exc) from exc

    def text(self, page: int) -> str:
        """The text of page ``page`` (counted from 1), as pypdf lays it out."""
        try:
            return str(self._pages[page - 1].extract_text() or "")
        except Exception as exc:
            raise _broken(self.display, exc, page) from exc


def _opens_without_password(reader: Any) -> bool:
    """An encrypted PDF many programs open without asking: an owner password only (the user password is
    empty). A cipher pypdf cannot run without an optional package counts as not opening."""
    try:
        return bool(reader.decrypt(""))
    except Exception:
        return False


def _broken(display: str, exc: BaseException, page: int | None = None) -> NotText:
    reason = " ".join(str(exc).split())[:160] or type(exc).__name__
    where = f" (page {page})" if page is not None else ""
    return NotText(
        f"{display!r} starts like a PDF but cannot be read{where}: {reason}",
        details={"appears": "a PDF that is damaged or unsupported", "family": "broken-pdf"},
    )
