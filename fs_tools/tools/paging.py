"""A scan sink that pages through a file of any size with bounded memory: it validates UTF-8 text,
counts lines and keeps only the lines of the requested window (each cut to what can be shown)."""

from __future__ import annotations

import codecs

from fs_tools.errors import NotText
from fs_tools.tools.rendering import MAX_LINE_CHARS, Line

_BOM = "\ufeff"


class PageSink:
    def __init__(self, display: str, first: int, limit: int, *, keep_bytes: int, max_chars: int) -> None:
        self.display = display
        self.first = first
        self.stop = first + limit  # window: lines [first, stop)
        self.max_chars = max_chars  # stop collecting once this much text is held
        self.window: list[Line] = []
        self.line = 1  # number of the line being read
        self.at_line_start = True
        self._pieces: list[str] = []
        self._length = 0
        self._held = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")("strict")
        self._consumed = 0
        self._started = False
        self._bom = False
        self.problem: NotText | None = None
        self._keep_bytes = keep_bytes
        self._kept: list[bytes] | None = []
        self._kept_size = 0

    # -- the sink protocol --------------------------------------------------------------------------

    def feed(self, chunk: bytes) -> None:
        self._keep(chunk)
        if self.problem is None:
            self._decode(chunk, final=False)
        self._consumed += len(chunk)

    # -- results ------------------------------------------------------------------------------------

    def finish(self) -> int:
        """Flush the decoder; the total number of lines."""
        if self.problem is None:
            self._decode(b"", final=True)
        if not self.at_line_start:
            self._end_line()  # a last line without a line ending still counts
        return self.line - 1

    def kept(self) -> bytes | None:
        """The whole file, when it was small enough to keep."""
        return b"".join(self._kept) if self._kept is not None else None

    # -- internals ----------------------------------------------------------------------------------

    def _keep(self, chunk: bytes) -> None:
        if self._kept is None:
            return
        self._kept_size += len(chunk)
        if self._kept_size > self._keep_bytes:
            self._kept = None
        else:
            self._kept.append(chunk)

    def _decode(self, chunk: bytes, *, final: bool) -> None:
        nul = chunk.find(b"\0")
        if nul >= 0:
            offset = self._consumed + nul
            self.problem = NotText(
                f"{self.display!r} looks binary: it contains a NUL byte at offset {offset}",
                details={"offset": offset, "reason": "nul"},
            )
            return
        buffered = len(self._decoder.getstate()[0])
        try:
            text = self._decoder.decode(chunk, final)
        except UnicodeDecodeError as exc:
            offset = self._consumed - buffered + exc.start
            bad = (exc.object[exc.start] if exc.start < len(exc.object) else 0) if isinstance(exc.object, bytes) else 0
            self.problem = NotText(
                f"{self.display!r} is not valid UTF-8: byte 0x{bad:02x} at offset {offset} cannot be decoded",
                details={"offset": offset, "reason": "utf8"},
            )
            self.problem.__cause__ = exc
            return
        if not self._started and text:
            self._started = True
            if text.startswith(_BOM):
                self._bom = True
                text = text[1:]
        self._take(text)

    def _take(self, text: str) -> None:
        if not text:
            return
        newlines = text.count("\n")
        base = self.line
        self.at_line_start = text.endswith("\n")
        if base + newlines < self.first or base >= self.stop:
            self.line = base + newlines  # nothing of this text is in the window
            return
        parts = text.split("\n")  # parts[i] belongs to line base + i; all but the last are complete
        if self._in_window(base):
            self._add(parts[0])
        if not newlines:
            return
        self._end_line()
        lo = max(1, self.first - base)
        hi = min(newlines - 1, self.stop - 1 - base)
        for line_no, part in enumerate(parts[lo : hi + 1], start=base + lo):
            # whole lines inside the window; the lines around it are only counted
            if not self._append(line_no, part, len(part)):
                break
        self.line = base + newlines
        if self._in_window(self.line):
            self._add(parts[-1])

    def _in_window(self, line: int) -> bool:
        return self.first <= line < self.stop

    def _add(self, part: str) -> None:
        room = MAX_LINE_CHARS + 1 - sum(len(p) for p in self._pieces)
        if room > 0:
            self._pieces.append(part[:room])
        self._length += len(part)

    def _end_line(self) -> None:
        if self._in_window(self.line):
            self._append(self.line, "".join(self._pieces), self._length)
        self._pieces, self._length = [], 0
        self.line += 1

    def _append(self, line_no: int, text: str, length: int) -> bool:
        """Keep a complete window line; False once the window is full enough to fill the output cap."""
        if not self._in_window(line_no):
            return False
        if length == len(text) and text.endswith("\r"):
            text, length = text[:-1], length - 1  # the CR of a CRLF is not shown
        self.window.append(Line(text[: MAX_LINE_CHARS + 1], length))
        self._held += min(length, MAX_LINE_CHARS)
        if self._held > self.max_chars:
            self.stop = line_no + 1  # keep counting lines, stop keeping them
            return False
        return True
