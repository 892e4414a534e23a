"""Small PDFs made in the tests (pypdf writes them): text pages, encrypted ones."""

from __future__ import annotations

import io

from pypdf import PdfWriter
from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject


def make_pdf(pages: list[str], *, user_password: str | None = None) -> bytes:
    """A PDF whose page ``n`` shows the lines of ``pages[n - 1]`` in Helvetica; encrypted (RC4) when a
    user password is given ("" opens without asking, as owner-only protection does)."""
    writer = PdfWriter()
    font = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica"),
        }
    )
    font_ref = writer._add_object(font)
    for text in pages:
        page = writer.add_blank_page(612, 792)
        stream = DecodedStreamObject()
        shown = [line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") for line in text.split("\n")]
        ops = "".join(f"BT /F1 12 Tf 72 {720 - 14 * n} Td ({line}) Tj ET\n" for n, line in enumerate(shown) if line)
        stream.set_data(ops.encode("latin-1"))
        page[NameObject("/Contents")] = writer._add_object(stream)
        fonts = DictionaryObject({NameObject("/F1"): font_ref})
        page[NameObject("/Resources")] = DictionaryObject({NameObject("/Font"): fonts})
    if user_password is not None:
        writer.encrypt(user_password=user_password, owner_password="owner", algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def pdf_with_content(content: bytes, pages: int = 1) -> bytes:
    """A PDF whose pages all draw one content stream (``content``, PDF operators as bytes)."""
    writer = PdfWriter()
    font = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica"),
        }
    )
    font_ref = writer._add_object(font)
    stream = DecodedStreamObject()
    stream.set_data(content)
    stream_ref = writer._add_object(stream)
    for _ in range(pages):
        page = writer.add_blank_page(612, 792)
        page[NameObject("/Contents")] = stream_ref
        fonts = DictionaryObject({NameObject("/F1"): font_ref})
        page[NameObject("/Resources")] = DictionaryObject({NameObject("/Font"): fonts})
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()
