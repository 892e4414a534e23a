"""A scan sink that pages through a file of any size with bounded memory: it validates UTF-8 text,
counts lines and keeps only the lines of the requested window (each cut to what can be shown)."""

from __future__ import annotations

import bisect
import itertools

from fs_tools.errors import NotText
from fs_tools.provider import TextDecoder
from fs_tools.rendering.lines import MAX_LINE_CHARS


class PageSink:
    def __init__(self, display: str, first: int, limit: int, *, keep_bytes: int, max_chars: int) -> None:
        self.display = display
        self.first = first
        self.stop = first + limit  # window: lines [first, stop)
        self.max_chars = max_chars  # stop collecting once this much text is held
        self.window: list[str] = []  # the window's lines, each cut to what can be shown
        self.full_lengths: dict[int, int] = {}  # window index -> full length, for lines that were cut
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

    @property
    def encoding(self) -> str:
        """The file's encoding: UTF-8, or UTF-16 or UTF-32 announced by a BOM."""
        return self._text.encoding or "utf-8"

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
        # parts[i] belongs to line base + i; all but the last are complete. Lines past the window are
        # left unsplit in the last part, which is then not in the window either.
        parts = text.split("\n", min(newlines, self.stop - base))
        if self._in_window(base):
            self._add(parts[0])
        if not newlines:
            return
        self._end_line()
        lo = max(1, self.first - base)
        hi = min(newlines - 1, self.stop - 1 - base)
        if lo <= hi:  # whole lines inside the window; the lines around it are only counted
            self._append_many(base + lo, parts[lo : hi + 1], "\r" in text)
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
        if length > MAX_LINE_CHARS:
            self.full_lengths[len(self.window)] = length
        self.window.append(text[: MAX_LINE_CHARS + 1])
        self._held += min(length, MAX_LINE_CHARS)
        if self._held > self.max_chars:
            self.stop = line_no + 1  # keep counting lines, stop keeping them
            return False
        return True

    def _append_many(self, first_no: int, parts: list[str], has_cr: bool) -> None:
        """``_append`` for a run of complete lines (numbered from ``first_no``), without a Python-level
        step per line in the common case: short lines, the cap found by bisecting running totals."""
        if has_cr:
            parts = [part[:-1] if part.endswith("\r") else part for part in parts]
        lengths = list(map(len, parts))
        if max(lengths) > MAX_LINE_CHARS:
            at = len(self.window)
            for index, length in enumerate(lengths):
                if length > MAX_LINE_CHARS:
                    self.full_lengths[at + index] = length
            parts = [part[: MAX_LINE_CHARS + 1] for part in parts]
            lengths = [min(n, MAX_LINE_CHARS) for n in lengths]
        totals = list(itertools.accumulate(lengths, initial=self._held))[1:]
        crossing = bisect.bisect_right(totals, self.max_chars)
        if crossing < len(parts):  # this line takes the held text over the cap: keep it, then stop
            self.window.extend(parts[: crossing + 1])
            self._held = totals[crossing]
            self.stop = first_no + crossing + 1
        else:
            self.window.extend(parts)
            self._held = totals[-1]
