"""What reading an image, a PDF, a notebook or a UTF-16 file costs (SPEC §18), against doing the bare work
in-process: the file's bytes base64-encoded (a PNG small enough to be shown as it is), Pillow's own
scaling (a large JPEG), pypdf's text extraction in this process (a PDF: fs-tools runs pypdf in a bounded
child process), ``json.loads`` and the cells' sources joined (a notebook), and the same text in UTF-8
(a UTF-16 file). Each pair in one interleaved run.
"""

from __future__ import annotations

import base64
import io
import json
import tempfile
from collections.abc import Callable
from pathlib import Path

from bench.harness import Row, interleaved, ratio_row
from fs_tools import Session, Workspace

SECTION = "13 media"


def _png(width: int, height: int) -> bytes:
    from PIL import Image

    image = Image.linear_gradient("L").resize((width, height)).convert("RGB")
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def _jpeg(width: int, height: int) -> bytes:
    from PIL import Image

    image = Image.radial_gradient("L").resize((width, height)).convert("RGB")
    out = io.BytesIO()
    image.save(out, "JPEG", quality=90)
    return out.getvalue()


def _pdf(pages: int, lines: int) -> bytes:
    """A PDF of ``pages`` pages of ``lines`` lines of Helvetica text, objects and xref written by hand."""
    count = 3 + 2 * pages  # catalog, page tree, font, then a page and its content per page
    kids = " ".join(f"{4 + 2 * n} 0 R" for n in range(pages))
    bodies = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    for n in range(pages):
        text = "".join(
            f"BT /F1 10 Tf 50 {780 - 12 * row} Td (Page {n + 1} line {row} of the report) Tj ET\n"
            for row in range(lines)
        )
        stream = text.encode()
        page = f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {5 + 2 * n} 0 R "
        page += "/Resources << /Font << /F1 3 0 R >> >> >>"
        bodies += [page.encode(), b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream"]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(bodies, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (count + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (count + 1, xref)
    return bytes(out)


def _notebook(cells: int) -> bytes:
    made = []
    for n in range(cells):
        source = [f"value_{n} = compute({n})\n", f"print(value_{n})\n"]
        outputs = [{"name": "stdout", "output_type": "stream", "text": [f"{n * 3.5}\n"] * 5}]
        made.append(
            {
                "cell_type": "code",
                "execution_count": n,
                "id": f"{n:08x}",
                "metadata": {},
                "outputs": outputs,
                "source": source,
            }
        )
    document = {"cells": made, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    return (json.dumps(document, indent=1, sort_keys=True) + "\n").encode()


def _reading(session: Session, name: str, **more: object) -> Callable[[], object]:
    def read() -> object:
        result = session.call("read", {"file_path": name, **more})
        assert not result.is_error, result.text
        return result

    return read


def _raw_base64(path: Path) -> Callable[[], object]:
    return lambda: base64.b64encode(path.read_bytes())


def _raw_scaled(path: Path, long_side: int) -> Callable[[], object]:
    def scale() -> object:
        from PIL import Image

        with Image.open(path) as image:
            image.draft("RGB", (long_side, long_side))
            image.thumbnail((long_side, long_side))
            out = io.BytesIO()
            image.save(out, "JPEG", quality=85)
        return base64.b64encode(out.getvalue())

    return scale


def _raw_pdf(path: Path, pages: int) -> Callable[[], object]:
    def extract() -> object:
        from pypdf import PdfReader

        reader = PdfReader(path)
        return "\n".join(reader.pages[n].extract_text() for n in range(min(pages, len(reader.pages))))

    return extract


def _raw_notebook(path: Path) -> Callable[[], object]:
    def join() -> object:
        document = json.loads(path.read_bytes())
        return "\n\n".join("".join(cell["source"]) for cell in document["cells"])

    return join


def media_rows(smoke: bool) -> list[Row]:
    rounds = 3 if smoke else 30
    pages, cells, lines = (2, 20, 200) if smoke else (20, 300, 20_000)
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="fs-tools-bench-media-") as tmp:
        root = Path(tmp)
        (root / "small.png").write_bytes(_png(800, 600))
        (root / "photo.jpg").write_bytes(_jpeg(1200, 900) if smoke else _jpeg(4000, 3000))
        (root / "report.pdf").write_bytes(_pdf(pages, 40))
        (root / "analysis.ipynb").write_bytes(_notebook(cells))
        text = "".join(f"line {n}: the quick brown fox ✓\n" for n in range(lines))
        (root / "wide.txt").write_bytes(b"\xff\xfe" + text.encode("utf-16-le"))
        (root / "narrow.txt").write_bytes(text.encode("utf-8"))
        with Workspace(root) as ws:
            s = ws.session("bench")
            workloads: list[tuple[str, str, Callable[[], object], Callable[[], object], str]] = [
                (
                    "PNG 800x600, shown as it is",
                    "read",
                    _reading(s, "small.png"),
                    _raw_base64(root / "small.png"),
                    "bytes + base64",
                ),
                (
                    "JPEG scaled to 1568 px",
                    "read",
                    _reading(s, "photo.jpg"),
                    _raw_scaled(root / "photo.jpg", 1568),
                    "Pillow draft + thumbnail + JPEG",
                ),
                (
                    f"PDF, {pages} pages",
                    "read",
                    _reading(s, "report.pdf"),
                    _raw_pdf(root / "report.pdf", pages),
                    "pypdf in-process",
                ),
                (
                    f"notebook, {cells} cells",
                    "read",
                    _reading(s, "analysis.ipynb"),
                    _raw_notebook(root / "analysis.ipynb"),
                    "json.loads + join",
                ),
                (
                    f"UTF-16 text, {lines:,} lines",
                    "read (UTF-16)",
                    _reading(s, "wide.txt", limit=lines),
                    _reading(s, "narrow.txt", limit=lines),
                    "read (same text, UTF-8)",
                ),
            ]
            for workload, subject, ours, bare, against in workloads:
                medians = interleaved({subject: ours, against: bare}, rounds, warm=1)
                note = f"{medians[subject] * 1e3:,.2f} ms against {medians[against] * 1e3:,.2f} ms"
                rows.append(ratio_row(SECTION, workload, medians, subject, against, note=note))
    return rows
