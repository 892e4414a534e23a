"""The PDF reader of the bounded child (``worker.py`` runs it; imports nothing of fs-tools): a crafted
PDF can make pypdf spend minutes and gigabytes on one page, so it is parsed where the parent can bound
its CPU, memory and wall time, and kill it.

Protocol, one JSON line each way after the PDF's bytes: the reader answers ``{"count": N}`` (or
``{"encrypted": true}``, or ``{"broken": reason}``); the parent sends ``{"pages": [...], "cap": bytes}``;
the reader answers one ``{"page": n, "text": ...}`` line per page until the texts reach ``cap`` bytes,
then ``{"done": true}`` (or ``{"broken": reason, "page": n}``).
"""

from __future__ import annotations

import io
import logging
import re
from collections.abc import Callable

_ADDRESS = re.compile(r"IndirectObject\((\d+), (\d+), \d+\)|\bat 0x[0-9a-fA-F]+")


def reason_of(exc: BaseException) -> str:
    """An error's message as a model may see it: one line, no object addresses (they differ per run)."""
    text = " ".join(str(exc).split())
    text = _ADDRESS.sub(lambda found: f"object {found.group(1)}" if found.group(1) else "", text)
    return (text[:160].rstrip(" .;") or type(exc).__name__).replace(" ,", ",")


def serve(data: bytes, say: Callable[[dict[str, object]], None], listen: Callable[[], dict[str, object]]) -> None:
    """Read the PDF in ``data``, answering the parent with ``say`` and hearing it with ``listen``."""
    logging.disable(logging.CRITICAL)  # pypdf warns on every odd object
    from pypdf import PdfReader

    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted:
            try:
                opened = bool(reader.decrypt(""))
            except Exception:  # a cipher pypdf cannot run without an optional package
                opened = False
            if not opened:
                say({"encrypted": True})
                return
        pages = reader.pages
        count = len(pages)
    except MemoryError:
        say({"limit": "memory"})
        return
    except Exception as exc:
        say({"broken": reason_of(exc)})
        return
    say({"count": count})
    asked = listen()
    wanted, room = asked.get("pages", []), asked.get("cap", 0)
    assert isinstance(wanted, list) and isinstance(room, int)
    for page in wanted:
        try:
            text = str(pages[int(page) - 1].extract_text() or "")
        except MemoryError:
            say({"limit": "memory", "where": f"page {page}"})
            return
        except Exception as exc:
            say({"broken": reason_of(exc), "page": page})
            return
        text = text[: max(room, 0) + 1]  # no more than the parent can show (a character is at least a byte)
        say({"page": page, "text": text})
        room -= len(text.encode("utf-8", "surrogatepass"))
        if room <= 0:
            break
    say({"done": True})
