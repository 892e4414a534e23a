"""Small PDFs made in the tests (pypdf writes them): text pages, encrypted ones."""

from __future__ import annotations

import io
from typing import Any

from pypdf import PdfWriter
from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject


def _page(writer: PdfWriter, content: Any, font: Any) -> None:
    """A page drawing ``content`` (a stream's reference) with ``font`` as /F1."""
    page = writer.add_blank_page(612, 792)
    page[NameObject("/Contents")] = content
    fonts = DictionaryObject({NameObject("/F1"): font})
    page[NameObject("/Resources")] = DictionaryObject({NameObject("/Font"): fonts})


def _helvetica(writer: PdfWriter) -> Any:
    font = {"/Type": "/Font", "/Subtype": "/Type1", "/BaseFont": "/Helvetica"}
    return writer._add_object(DictionaryObject({NameObject(k): NameObject(v) for k, v in font.items()}))


def _stream(writer: PdfWriter, content: bytes) -> Any:
    stream = DecodedStreamObject()
    stream.set_data(content)
    return writer._add_object(stream)


def make_pdf(pages: list[str], *, user_password: str | None = None) -> bytes:
    """A PDF whose page ``n`` shows the lines of ``pages[n - 1]`` in Helvetica; encrypted (RC4) when a
    user password is given ("" opens without asking, as owner-only protection does)."""
    writer = PdfWriter()
    font = _helvetica(writer)
    for text in pages:
        shown = [line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") for line in text.split("\n")]
        ops = "".join(f"BT /F1 12 Tf 72 {720 - 14 * n} Td ({line}) Tj ET\n" for n, line in enumerate(shown) if line)
        _page(writer, _stream(writer, ops.encode("latin-1")), font)
    if user_password is not None:
        writer.encrypt(user_password=user_password, owner_password="owner", algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def pdf_with_content(content: bytes, pages: int = 1) -> bytes:
    """A PDF whose pages all draw one content stream (``content``, PDF operators as bytes)."""
    writer = PdfWriter()
    font, stream = _helvetica(writer), _stream(writer, content)
    for _ in range(pages):
        _page(writer, stream, font)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()
