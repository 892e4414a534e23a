"""A scan sink that pages through a file of any size with bounded memory: it validates UTF-8 text,
counts lines and keeps only the lines of the requested window (each cut to what can be shown)."""

from __future__ import annotations

from fs_tools.errors import NotText
from fs_tools.provider.content import TextDecoder
from fs_tools.tools.rendering import MAX_LINE_CHARS, Line


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
        self._text = TextDecoder(display)
        self._keep_bytes = keep_bytes
        self._kept: list[bytes] | None = []
        self._kept_size = 0

    # -- the sink protocol --------------------------------------------------------------------------

    def feed(self, chunk: bytes) -> None:
        self._keep(chunk)
        self._take(self._text.decode(chunk))

    @property
    def problem(self) -> NotText | None:
        return self._text.problem

    # -- results ------------------------------------------------------------------------------------

    def finish(self) -> int:
        """Flush the decoder; the total number of lines."""
        self._take(self._text.decode(b"", final=True))
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
