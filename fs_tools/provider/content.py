"""Content facts: versions, UTF-8 text with its BOM and line endings, and what changed between versions."""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

import xxhash

from fs_tools.errors import NotText

BOM = b"\xef\xbb\xbf"


def version_of(data: bytes) -> str:
    """A file version: the hex xxh3_128 digest of its bytes."""
    return xxhash.xxh3_128_hexdigest(data)


# The encodings text files are read and edited in: UTF-8 (with or without a BOM), and UTF-16 and UTF-32
# with a BOM, written back in the encoding they were read in. Longest BOM first: UTF-32 LE's begins
# as UTF-16 LE's does (a UTF-16 file starting with U+0000 would be refused for its NUL anyway).
WIDE_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_BOM_OF = {encoding: bom for bom, encoding in WIDE_BOMS} | {"utf-8": BOM}
ENCODING_NAMES = {
    "utf-8": "UTF-8",
    "utf-16-le": "UTF-16 (little-endian)",
    "utf-16-be": "UTF-16 (big-endian)",
    "utf-32-le": "UTF-32 (little-endian)",
    "utf-32-be": "UTF-32 (big-endian)",
}


def wide_encoding(head: bytes) -> str | None:
    """The UTF-16 or UTF-32 encoding a file's BOM announces (``head``: at least its first 4 bytes, or
    all of a shorter file), or None."""
    for bom, encoding in WIDE_BOMS:
        if head.startswith(bom):
            return encoding
    return None


@dataclass(frozen=True)
class TextFile:
    """A decoded text file: ``text`` excludes the BOM; ``newline`` is its dominant line ending; ``encoding``
    the one it is written back in (UTF-16 and UTF-32 always with their BOM)."""

    text: str
    bom: bool
    newline: str
    encoding: str = "utf-8"

    def encode(self, text: str | None = None) -> bytes:
        body = (self.text if text is None else text).encode(self.encoding)
        return _BOM_OF[self.encoding] + body if self.bom else body


class TextDecoder:
    """Strict incremental decoding of UTF-8 — or of UTF-16 or UTF-32, when the file begins with their
    BOM — that also refuses NUL characters; the first problem becomes ``problem`` (``FS_NOT_TEXT``
    naming the byte offset), after which input is only counted. A leading BOM is dropped from the text
    and remembered in ``bom``; ``encoding`` is the one decided on the first 4 bytes."""

    def __init__(self, display: str) -> None:
        self.display = display
        self.bom = False
        self.encoding: str | None = None  # decided on the first 4 bytes (or all of a shorter file)
        self.problem: NotText | None = None
        self._decoder: codecs.IncrementalDecoder = codecs.getincrementaldecoder("utf-8")("strict")
        self._consumed = 0
        self._started = False
        self._pending = b""  # the first bytes, until there are enough to tell the encoding
        self._head = b""  # the file's first bytes, to say what a file that is not text appears to be

    def decode(self, chunk: bytes, final: bool = False) -> str:
        if self.problem is not None:
            return ""
        if len(self._head) < _SNIFF_BYTES:
            self._head += chunk[: _SNIFF_BYTES - len(self._head)]
        if self.encoding is None:
            self._pending += chunk
            if len(self._pending) < 4 and not final:
                return ""
            chunk, self._pending = self._pending, b""
            self.encoding = wide_encoding(chunk) or "utf-8"
            if self.encoding != "utf-8":
                self.bom = True
                skip = len(_BOM_OF[self.encoding])
                self._decoder = codecs.getincrementaldecoder(self.encoding)("strict")
                chunk, self._consumed = chunk[skip:], skip
        if self.encoding != "utf-8":
            return self._decode_wide(chunk, final)
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
                offset=offset,
                **appears(self._head, nul=False, around=self._around(exc)),
            )
            self.problem.__cause__ = exc
            return ""
        if nul >= 0:
            offset = self._consumed + nul
            self.problem = NotText(
                f"{self.display!r} looks binary: it contains a NUL byte at offset {offset}",
                offset=offset,
                **appears(self._head, nul=True),
            )
            return ""
        self._consumed += len(chunk)
        if not self._started and text:
            self._started = True
            if text.startswith("\ufeff"):
                self.bom = True
                text = text[1:]
        return text

    def _around(self, exc: UnicodeDecodeError) -> bytes:
        """The bytes about where UTF-8 decoding failed, that the head does not hold already: what the
        encoding is guessed from, with the head (counted once, or a small file's evidence doubles)."""
        start = max(0, exc.start - 2048)
        if self._consumed == 0:  # the first chunk: the head is its first bytes
            start = max(start, len(self._head))
        return bytes(exc.object[start : exc.start + 2048])

    def _decode_wide(self, chunk: bytes, final: bool) -> str:
        assert self.encoding is not None
        name = ENCODING_NAMES[self.encoding]
        buffered = len(self._decoder.getstate()[0])
        try:
            text = self._decoder.decode(chunk, final)
        except UnicodeDecodeError as exc:
            offset = self._consumed - buffered + exc.start
            what = (
                "it ends in the middle of a character"
                if exc.end >= len(exc.object) and final
                else (f"the bytes at offset {offset} cannot be decoded ({exc.reason})")
            )
            self.problem = NotText(
                f"{self.display!r} begins with a {name} BOM but is not valid {name}: {what}",
                offset=offset,
                encoding=self.encoding,
                family="broken-text",
            )
            self.problem.__cause__ = exc
            return ""
        nul = text.find("\0")
        if nul >= 0:
            offset = self._consumed - buffered + len(text[:nul].encode(self.encoding))
            self.problem = NotText(
                f"{self.display!r} looks binary: it contains a NUL character at offset {offset} (read as {name})",
                offset=offset,
                encoding=self.encoding,
                family="binary-text",
            )
            return ""
        self._consumed += len(chunk)
        return text


_SNIFF_BYTES = 512


# (offset, signature, what the file appears to be, its family)
_SIGNATURES: list[tuple[int, bytes, str, str]] = [
    (0, b"\x89PNG\r\n\x1a\n", "a PNG image", "image"),
    (0, b"\xff\xd8\xff", "a JPEG image", "image"),
    (0, b"GIF87a", "a GIF image", "image"),
    (0, b"GIF89a", "a GIF image", "image"),
    (0, b"II*\x00", "a TIFF image", "image"),
    (0, b"MM\x00*", "a TIFF image", "image"),
    (0, b"\x00\x00\x01\x00", "an icon (ICO) image", "image"),
    (0, b"%PDF-", "a PDF document", "document"),
    (0, b"PK\x03\x04", "a ZIP archive (or a format built on one: .docx, .xlsx, .jar, .whl)", "archive"),
    (0, b"\x1f\x8b", "gzip-compressed data", "archive"),
    (0, b"BZh", "bzip2-compressed data", "archive"),
    (0, b"\xfd7zXZ\x00", "xz-compressed data", "archive"),
    (0, b"\x28\xb5\x2f\xfd", "zstd-compressed data", "archive"),
    (0, b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive", "archive"),
    (0, b"Rar!\x1a\x07", "a RAR archive", "archive"),
    (257, b"ustar", "a tar archive", "archive"),
    (0, b"\x7fELF", "an ELF executable or library", "binary"),
    (0, b"\xcf\xfa\xed\xfe", "a Mach-O executable", "binary"),
    (0, b"\xca\xfe\xba\xbe", "a Java class file or a Mach-O universal binary", "binary"),
    (0, b"MZ", "a Windows executable or DLL", "binary"),
    (0, b"\x00asm", "a WebAssembly module", "binary"),
    (0, b"SQLite format 3\x00", "an SQLite database", "binary"),
    (0, b"OggS", "an Ogg audio or video file", "media"),
    (0, b"fLaC", "a FLAC audio file", "media"),
    (0, b"ID3", "an MP3 audio file", "media"),
    (4, b"ftyp", "an MP4 or QuickTime video", "media"),
    (0, b"\x1aE\xdf\xa3", "a Matroska or WebM video", "media"),
]


def appears(head: bytes, *, nul: bool, around: bytes = b"") -> dict[str, str]:
    """What a file that is not UTF-8 text appears to be, from its first bytes (and ``around``, the bytes
    about where decoding failed): ``appears`` (in words) and ``family`` (image, document, archive,
    binary, media, utf16, encoding; with ``encoding``, iconv's name for it); {} when unknown."""
    if head[:4] == b"RIFF" and head[8:12] in (b"WEBP", b"WAVE", b"AVI "):
        kind = {b"WEBP": ("a WebP image", "image"), b"WAVE": ("a WAV audio file", "media")}
        words, family = kind.get(head[8:12], ("an AVI video", "media"))
        return {"appears": words, "family": family}
    for offset, signature, words, family in _SIGNATURES:
        if head[offset : offset + len(signature)] == signature:
            return {"appears": words, "family": family}
    sample = head[:256]
    if nul and len(sample) >= 8:
        odd, even = sample[1::2], sample[0::2]
        if odd.count(0) >= len(odd) * 0.9 and even.count(0) < len(even) * 0.1:
            return {"appears": "UTF-16 text (little-endian, without a BOM)", "family": "utf16"}
        if even.count(0) >= len(even) * 0.9 and odd.count(0) < len(odd) * 0.1:
            return {"appears": "UTF-16 text (big-endian, without a BOM)", "family": "utf16"}
    if not nul and sample:
        guessed = guess_encoding(head + around)
        if guessed is not None:
            words, iconv = guessed
            found = {"appears": f"text in {words}, not UTF-8", "family": "encoding"}
            return {**found, "encoding": iconv} if iconv else found
        controls = sum(1 for b in sample if (b < 32 and b not in (9, 10, 12, 13)) or b == 127)
        if controls <= len(sample) * 0.02:  # letters and punctuation, only not UTF-8's
            return {
                "appears": "text in another encoding than UTF-8 (an 8-bit one such as Windows-1252 or "
                "Windows-1251, or an East Asian one)",
                "family": "encoding",
            }
    return {}


# The encodings a guess may name: how the text names each, the languages charset-normalizer must also find
# for its guess to be named, and its codec names with iconv's name for each. A Latin guess is named as
# one family without an iconv name: Western and Central European text are told apart by words, not bytes.
_WESTERN = ("a single-byte Latin encoding (Western or Central European: Windows-1252, Latin-1, Windows-1250)", "")
_CYRILLIC = ("Russian", "Ukrainian", "Bulgarian", "Serbian", "Macedonian", "Belarusian", "Kazakh")
_FAMILIES: list[tuple[str, tuple[str, ...], dict[str, str]]] = [
    ("Shift_JIS (Japanese)", ("Japanese",), {"cp932": "CP932", "shift_jis": "SHIFT_JIS"}),
    ("EUC-JP (Japanese)", ("Japanese",), {"euc_jp": "EUC-JP", "euc_jis_2004": "EUC-JP"}),
    ("GB18030 / GBK (Chinese)", ("Chinese",), {"gb18030": "GB18030", "gb2312": "GB18030", "gbk": "GB18030"}),
    ("Big5 (traditional Chinese)", ("Chinese",), {"big5": "BIG5"}),
    ("EUC-KR (Korean)", ("Korean",), {"cp949": "CP949", "euc_kr": "EUC-KR"}),
    ("Windows-1251 (Cyrillic)", _CYRILLIC, {"cp1251": "WINDOWS-1251"}),
    ("KOI8-R (Cyrillic)", _CYRILLIC, {"koi8_r": "KOI8-R"}),
    ("KOI8-U (Cyrillic)", _CYRILLIC, {"koi8_u": "KOI8-U"}),
    ("Windows-1253 (Greek)", ("Greek",), {"cp1253": "WINDOWS-1253"}),
    ("Windows-1255 (Hebrew)", ("Hebrew",), {"cp1255": "WINDOWS-1255"}),
    ("Windows-1256 (Arabic)", ("Arabic", "Farsi", "Persian", "Urdu"), {"cp1256": "WINDOWS-1256"}),
    ("Windows-874 / TIS-620 (Thai)", ("Thai",), {"cp874": "WINDOWS-874", "tis_620": "TIS-620"}),
]
# charset-normalizer's codec name -> (the family's words, its languages, iconv's name)
_ENCODINGS = {
    codec: (words, languages, iconv) for words, languages, codecs_ in _FAMILIES for codec, iconv in codecs_.items()
}
_EVIDENCE = 16  # bytes over 0x7f a guess needs (charset-normalizer took 'café' in ASCII code for Urdu)
_LATIN = {
    *("cp1250", "cp1252", "cp1254", "cp1257", "cp850", "latin_1", "mac_roman", "mac_latin2", "mac_iceland"),
    *("iso8859_2", "iso8859_3", "iso8859_4", "iso8859_9", "iso8859_10", "iso8859_13", "iso8859_14", "iso8859_15"),
    "iso8859_16",
}


def guess_encoding(sample: bytes) -> tuple[str, str] | None:
    """The encoding ``sample`` (bytes that are not UTF-8) appears to be in, as (words, iconv's name), by
    charset-normalizer's best guess; None when it has none, or one outside the common encodings named
    here. Single-byte Latin guesses are named as one family: among them the guess is a coin toss
    (cp1250 or mac_latin2 for French text)."""
    if sum(1 for byte in sample if byte >= 0x80) < _EVIDENCE:
        return None  # a few letters: Cyrillic, Greek and Polish look as Western as French does
    from charset_normalizer import from_bytes  # only on the error path: a file that is not UTF-8

    matches = list(from_bytes(sample))
    if not matches:
        return None
    best = matches[0]
    if best.encoding in _LATIN:
        return _WESTERN
    named = _ENCODINGS.get(best.encoding)
    if named is None or best.language not in named[1]:
        return None  # a guess its own language detection does not back
    words, _, iconv = named
    for other in matches[1:]:
        if other.encoding in _ENCODINGS and _ENCODINGS[other.encoding][0] == words:
            continue  # the same family by another codec name
        # a rival of another encoding about as clean and about as coherent: a coin toss (Hebrew text in
        # Windows-1255 came out Windows-1251 Russian at 0.29 coherence, Hebrew next at 0.21)
        if other.chaos - best.chaos < 0.05 and other.coherence * 1.5 >= best.coherence:
            return None
        break
    return words, iconv


class WideLines:
    """Counts the lines of a UTF-16 or UTF-32 file fed in chunks (its BOM first); None when it is not
    valid text in its encoding."""

    def __init__(self) -> None:
        self._decoder = TextDecoder("")
        self._newlines = 0
        self._last = ""

    def feed(self, chunk: bytes) -> None:
        text = self._decoder.decode(chunk)
        self._newlines += text.count("\n")
        self._last = text[-1:] or self._last

    def lines(self) -> int | None:
        text = self._decoder.decode(b"", final=True)
        self._newlines += text.count("\n")
        self._last = text[-1:] or self._last
        if self._decoder.problem is not None:
            return None
        return self._newlines + (1 if self._last and self._last != "\n" else 0)


def as_text(data: bytes, errors: str = "replace") -> str:
    """A file's bytes as text, without validating them: UTF-16 or UTF-32 by their BOM (dropped), else
    UTF-8; undecodable bytes handled by ``errors`` (for a wide encoding: strict, or replaced)."""
    wide = wide_encoding(data[:4])
    if wide is None:
        return data.decode("utf-8", errors)
    return data[len(_BOM_OF[wide]) :].decode(wide, "strict" if errors == "strict" else "replace")


def as_utf8(data: bytes) -> bytes:
    """A file's bytes as UTF-8 (a UTF-16 or UTF-32 file transcoded, its BOM dropped; others as they are):
    for what looks at bytes line by line."""
    return data if wide_encoding(data[:4]) is None else as_text(data).encode("utf-8", "surrogatepass")


def decode_text(data: bytes, display: str) -> TextFile:
    """Decode a whole file strictly; binary or undecodable content is ``FS_NOT_TEXT`` with the reason."""
    decoder = TextDecoder(display)
    text = decoder.decode(data, final=True)
    if decoder.problem is not None:
        raise decoder.problem
    return TextFile(text=text, bom=decoder.bom, newline=dominant_newline(text), encoding=decoder.encoding or "utf-8")


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
    old, new = as_utf8(old), as_utf8(new)  # lines of a UTF-16 or UTF-32 file are not split at 0x0a bytes
    if old == new:
        return None  # the same text in another encoding: no line changed
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


def lines_now(data: bytes, first: int, last: int, *, most: int = 8, chars: int = 200) -> list[tuple[int, str]]:
    """Lines ``first``..``last`` of ``data`` as they are (at most ``most`` of them, each cut to ``chars``
    characters): what a stale error shows of the lines that changed."""
    text = as_utf8(data)
    begin = 0
    for _ in range(first - 1):
        begin = text.find(b"\n", begin) + 1
        if begin == 0:
            return []
    rows = text[begin:].split(b"\n", min(last, first + most - 1) - first + 1)[: min(last - first + 1, most)]
    out = []
    for n, row in enumerate(rows, first):
        line = row.decode("utf-8", "replace").removesuffix("\r")
        out.append((n, line[:chars] + ("…" if len(line) > chars else "")))
    return out


_SPACE = re.compile(rb"\s+")


_WHITESPACE_COMPARED = 1 << 20  # bytes, at most, of each content compared for a change of whitespace alone


def same_but_whitespace(old: bytes, new: bytes) -> bool:
    """Whether two contents differ in whitespace alone (what a formatter or an editor on save changes);
    False for contents over ``_WHITESPACE_COMPARED`` bytes, which are not compared (a stale error's cause
    is a hint, not worth a pass over many megabytes)."""
    if old == new or max(len(old), len(new)) > _WHITESPACE_COMPARED:
        return False
    return _SPACE.sub(b"", as_utf8(old)) == _SPACE.sub(b"", as_utf8(new))


_STRIDE = 1 << 16  # bytes compared at once while looking for where two contents part


def changed_span(old: bytes, new: bytes) -> tuple[int, int]:
    """Byte offsets ``[start, end)`` of ``new`` outside which every line is shared with ``old``: the lines
    before ``start`` are ``old``'s first lines and those from ``end`` on its last ones, byte for byte
    (line endings included). Found by comparing slices (C-level), never a Python step per byte or line."""
    limit = min(len(old), len(new))
    prefix = _common_length(old, new, limit, from_end=False)
    start = new.rfind(b"\n", 0, prefix) + 1  # after the last line ending both share at the front
    suffix = _common_length(old, new, limit - start, from_end=True)  # never into the shared front lines
    tail = len(new) - suffix
    cut = new.find(b"\n", tail)  # the first line ending both share at the back; whole lines follow it
    end = len(new) if cut < 0 else cut + 1
    return start, end


def _common_length(a: bytes, b: bytes, limit: int, *, from_end: bool) -> int:
    """How many bytes ``a`` and ``b`` share at the front (or the back), at most ``limit``: a stride at a
    time, then halving the stride where they part."""

    def same(offset: int, size: int) -> bool:
        if from_end:
            return a[len(a) - offset - size : len(a) - offset] == b[len(b) - offset - size : len(b) - offset]
        return a[offset : offset + size] == b[offset : offset + size]

    shared, size = 0, _STRIDE
    while size:
        while shared + size <= limit and same(shared, size):
            shared += size
        size //= 2
    return shared
