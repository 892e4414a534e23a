"""The child process that reads a PDF for ``pdfs.PdfText`` (run as a script, importing nothing of
fs-tools): a crafted PDF can make pypdf spend minutes and gigabytes on one page, so the parsing runs
where the parent can bound its CPU, memory and wall time, and kill it.

Protocol, one JSON line each way: the parent sends the PDF's bytes (stdin: 8-byte big-endian length,
then the bytes); the child answers ``{"count": N}`` (or ``{"encrypted": true}``, or ``{"broken":
reason}``); the parent sends ``{"pages": [...], "cap": bytes}``; the child answers one
``{"page": n, "text": ...}`` line per page until the texts reach ``cap`` bytes, then ``{"done": true}``
(or ``{"broken": reason, "page": n}``).
"""

from __future__ import annotations

import io
import json
import logging
import re
import sys

_ADDRESS = re.compile(r"IndirectObject\((\d+), (\d+), \d+\)|\bat 0x[0-9a-fA-F]+")


def reason_of(exc: BaseException) -> str:
    """An error's message as a model may see it: one line, no object addresses (they differ per run)."""
    text = " ".join(str(exc).split())
    text = _ADDRESS.sub(lambda found: f"object {found.group(1)}" if found.group(1) else "", text)
    return (text[:160].rstrip(" .;") or type(exc).__name__).replace(" ,", ",")


def _say(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> None:
    import resource

    memory, cpu = (int(value) for value in sys.argv[1:3])
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    logging.disable(logging.CRITICAL)  # pypdf warns on every odd object
    size = int.from_bytes(sys.stdin.buffer.read(8), "big")
    data = sys.stdin.buffer.read(size)
    from pypdf import PdfReader

    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted:
            try:
                opened = bool(reader.decrypt(""))
            except Exception:  # a cipher pypdf cannot run without an optional package
                opened = False
            if not opened:
                _say({"encrypted": True})
                return
        pages = reader.pages
        count = len(pages)
    except MemoryError:
        _say({"limit": "memory"})
        return
    except Exception as exc:
        _say({"broken": reason_of(exc)})
        return
    _say({"count": count})
    asked = json.loads(sys.stdin.readline() or "{}")
    room = int(asked.get("cap", 0))
    for page in asked.get("pages", []):
        try:
            text = str(pages[int(page) - 1].extract_text() or "")
        except MemoryError:
            _say({"limit": "memory", "page": page})
            return
        except Exception as exc:
            _say({"broken": reason_of(exc), "page": page})
            return
        text = text[: max(room, 0) + 1]  # no more than the parent can show (a character is at least a byte)
        _say({"page": page, "text": text})
        room -= len(text.encode("utf-8", "surrogatepass"))
        if room <= 0:
            break
    _say({"done": True})


if __name__ == "__main__":
    main()
