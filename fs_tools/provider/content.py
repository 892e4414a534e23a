"""Content facts: versions, UTF-8 text with its BOM and line endings, and what changed between versions."""

from __future__ import annotations

import codecs
from dataclasses import dataclass

import xxhash

from fs_tools.errors import NotText

BOM = b"\xef\xbb\xbf"


def version_of(data: bytes) -> str:
    """A file version: the hex xxh3_128 digest of its bytes."""
    return xxhash.xxh3_128_hexdigest(data)


@dataclass(frozen=True)
class TextFile:
    """A decoded text file: ``text`` excludes the BOM; ``newline`` is its dominant line ending."""

    text: str
    bom: bool
    newline: str

    def encode(self, text: str | None = None) -> bytes:
        body = (self.text if text is None else text).encode("utf-8")
        return BOM + body if self.bom else body


class TextDecoder:
    """Strict incremental UTF-8 that also refuses NUL bytes; the first problem becomes ``problem``
    (``FS_NOT_TEXT`` naming the byte offset), after which input is only counted. A leading BOM is
    dropped from the text and remembered in ``bom``."""

    def __init__(self, display: str) -> None:
        self.display = display
        self.bom = False
        self.problem: NotText | None = None
        self._decoder = codecs.getincrementaldecoder("utf-8")("strict")
        self._consumed = 0
        self._started = False

    def decode(self, chunk: bytes, final: bool = False) -> str:
        if self.problem is not None:
            return ""
        nul = chunk.find(b"\0")
        head = chunk if nul < 0 else chunk[:nul]
        buffered = len(self._decoder.getstate()[0])
        try:
            text = self._decoder.decode(head, final and nul < 0)
        except UnicodeDecodeError as exc:
            offset = self._consumed - buffered + exc.start
            self.problem = NotText(
                f"{self.display!r} is not valid UTF-8: byte 0x{exc.object[exc.start]:02x} at offset {offset} "
                "cannot be decoded",
                details={"offset": offset, "reason": "utf8"},
            )
            self.problem.__cause__ = exc
            return ""
        if nul >= 0:
            offset = self._consumed + nul
            self.problem = NotText(
                f"{self.display!r} looks binary: it contains a NUL byte at offset {offset}",
                details={"offset": offset, "reason": "nul"},
            )
            return ""
        self._consumed += len(chunk)
        if not self._started and text:
            self._started = True
            if text.startswith("\ufeff"):
                self.bom = True
                text = text[1:]
        return text


def decode_text(data: bytes, display: str) -> TextFile:
    """Decode a whole file strictly; binary or undecodable content is ``FS_NOT_TEXT`` with the reason."""
    decoder = TextDecoder(display)
    text = decoder.decode(data, final=True)
    if decoder.problem is not None:
        raise decoder.problem
    return TextFile(text=text, bom=decoder.bom, newline=dominant_newline(text))


def dominant_newline(text: str) -> str:
    if "\r" not in text:  # one-character search (memchr): the common case costs almost nothing
        return "\n"
    crlf = text.count("\r\n")
    return "\r\n" if crlf and crlf * 2 >= text.count("\n") else "\n"


def count_lines(text: str) -> int:
    """Lines as ``read`` shows them: split on LF; a final line ending does not start another line."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


@dataclass(frozen=True)
class LineChange:
    """Lines ``first``–``last`` of the current content differ from the observed content (1-based).

    ``last`` < ``first`` means lines were only removed, just before ``first``.
    """

    first: int
    last: int


def changed_lines(old: bytes, new: bytes) -> LineChange | None:
    """The span of lines that differs, by common prefix and suffix: linear and cheap."""
    if old == new:
        return None
    a = old.split(b"\n")
    b = new.split(b"\n")
    prefix = 0
    limit = min(len(a), len(b))
    while prefix < limit and a[prefix] == b[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and a[-1 - suffix] == b[-1 - suffix]:
        suffix += 1
    return LineChange(first=prefix + 1, last=len(b) - suffix)
