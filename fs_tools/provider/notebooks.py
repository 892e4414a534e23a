"""Jupyter notebooks as content facts (SPEC §18): which files are notebooks (by their content: a JSON
object with ``nbformat`` 4 and a ``cells`` list, whatever the name), their cells, and the bytes of a
changed notebook in the layout it was read in — so that every cell an edit does not touch stays
byte-identical. Pure: bytes in, bytes out.

The layout is found, not assumed: the file's indent, line ending, final newline and escaping are read
from its bytes, and the document dumped with them must give the file back exactly. When it does not (a
writer fs-tools does not reproduce: other separators, numbers spelled differently), a change is written
in nbformat's own layout (indent 1, sorted keys, UTF-8 unescaped, a final newline) and the result says so.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from fs_tools.errors import NotebookTooLarge, NotText
from fs_tools.provider.content import BOM, ENCODING_NAMES, decode_text, wide_encoding

NOTEBOOK_MAX_BYTES = 64 << 20  # the largest notebook read whole to show or change its cells
# What a notebook's parsed document may take, estimated before ``json.loads`` (``parsed_size``): 16 MB of
# "{}," parse to ~400 MB of empty dicts (found in review); a 33 MB notebook of plotly figures needs ~70 MB
NOTEBOOK_PARSE_BYTES = 256 << 20
# What ``json.loads`` keeps for each kind of value, at most (CPython 3.11, measured with tracemalloc): the
# estimate weighs each kind, so 5 million small integers (a list's slots: 8.4 bytes each) are not taken
# for 5 million dicts. Small integers (-5..256), true, false, null and strings of one character are
# shared objects: they cost their slot only
SLOT_BYTES = 9  # a list's element: its pointer and its share of the list's spare room
LIST_BYTES = 88  # a list (56) and the room for 4 elements its first append makes
DICT_BYTES = 64  # a dict; one with entries has a table of 8 (up to 5 entries: 120 bytes) or more
TABLE_BYTES = 84  # a non-empty dict's table besides its entries' 36 each (84 + 36 >= 120: one entry)
# a dict's entry: 36 in a table grown to fit (3 slots an entry at worst); a key seen first, 60 more (its
# string and its entry in the parser's memo of keys: a key seen again shares them)
ENTRY_BYTES = 96
STRING_BYTES = 56  # a string value: 49 bytes and its characters (72-76 and 2 or 4 bytes a character past ASCII)
NUMBER_BYTES = 32  # a float (24), an integer past 256 (28)
CELL_TYPES = ("code", "markdown", "raw")


_START = re.compile(rb'\A(?:\xef\xbb\xbf)?[ \t\r\n]*\{[ \t\r\n]*"(?:cells|metadata|nbformat|nbformat_minor)"')
NOTEBOOK_HEAD = 64  # bytes enough to tell whether a file may be a notebook


def may_be_notebook(head: bytes) -> bool | None:
    """Whether a file's first bytes (``NOTEBOOK_HEAD`` of them, or the whole of a shorter file) could begin a
    notebook: a JSON object whose first key is one a notebook has at its top. None: too few bytes to say."""
    if _START.match(head):
        return True
    if len(head) >= NOTEBOOK_HEAD or not head.removeprefix(BOM).lstrip(b" \t\r\n").startswith(b"{"):
        return False
    return None


@dataclass(frozen=True)
class Layout:
    """How a notebook's JSON is spelled: what ``json.dumps`` needs to give the same bytes back."""

    indent: int | str | None
    ensure_ascii: bool
    newline: str
    final_newline: bool
    bom: bool
    sort_keys: bool = False  # False: keys in the order the file has them

    def dump(self, document: dict[str, Any]) -> bytes:
        text = self._text(document, self.ensure_ascii)
        if not self.ensure_ascii and not text.isascii():
            # a lone surrogate escaped in the file ("\ud83d" of a cut emoji) is written escaped again, as
            # JSON.stringify writes it: every other character stays as it is
            text = _LONE_SURROGATE.sub(lambda found: f"\\u{ord(found[0]):04x}", text)
        body = text.encode("utf-8")
        if self.newline != "\n":
            body = body.replace(b"\n", self.newline.encode())
        if self.final_newline:
            body += self.newline.encode()
        return BOM + body if self.bom else body

    def _text(self, document: dict[str, Any], ensure_ascii: bool) -> str:
        return json.dumps(
            document, indent=self.indent, ensure_ascii=ensure_ascii, separators=_SEPARATORS, sort_keys=self.sort_keys
        )


_SEPARATORS = (",", ": ")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
STANDARD = Layout(indent=1, ensure_ascii=False, newline="\n", final_newline=True, bom=False, sort_keys=True)


class Notebook:
    """A parsed notebook: the whole document (cells changed in place), and — worked out only when it is
    written back — the layout it was read in and whether that gives the file back byte for byte
    (``exact``; dumping a document with an indent is pure Python, ~20 ms for 100 KB, so a read never pays it)."""

    def __init__(self, document: dict[str, Any], data: bytes) -> None:
        self.document = document
        self._data: bytes | None = data
        self._layout: tuple[Layout, bool] | None = None

    @property
    def layout(self) -> Layout:
        return self._settled()[0]

    @property
    def exact(self) -> bool:
        return self._settled()[1]

    def _settled(self) -> tuple[Layout, bool]:
        """The layout, found on the document as read: call before changing it."""
        if self._layout is None:
            assert self._data is not None
            self._layout = _found_layout(self.document, self._data)
            self._data = None
        return self._layout

    @property
    def cells(self) -> list[dict[str, Any]]:
        cells: list[dict[str, Any]] = self.document["cells"]
        return cells

    @property
    def version(self) -> str:
        return f"{self.document['nbformat']}.{self.document.get('nbformat_minor', 0)}"

    @property
    def has_ids(self) -> bool:
        """Cells carry ids from nbformat 4.5 on."""
        minor = self.document.get("nbformat_minor", 0)
        return int(self.document["nbformat"]) > 4 or (isinstance(minor, int) and minor >= 5)

    @property
    def language(self) -> str | None:
        metadata = self.document.get("metadata")
        for holder, key in (("kernelspec", "display_name"), ("language_info", "name"), ("kernelspec", "language")):
            found = metadata.get(holder) if isinstance(metadata, dict) else None
            value = found.get(key) if isinstance(found, dict) else None
            if isinstance(value, str) and value:
                return value
        return None

    def dump(self) -> bytes:
        return self.layout.dump(self.document)

    def new_cell(self, cell_type: str, source: str) -> dict[str, Any]:
        """A cell as nbformat makes one (keys in its order; an id when the notebook's cells have ids)."""
        cell: dict[str, Any] = {"cell_type": cell_type}
        if cell_type == "code":
            cell["execution_count"] = None
        if self.has_ids:
            cell["id"] = self._new_id()
        cell["metadata"] = {}
        if cell_type == "code":
            cell["outputs"] = []
        cell["source"] = split_source(source)
        return cell

    def _new_id(self) -> str:
        taken = {cell.get("id") for cell in self.cells if isinstance(cell.get("id"), str)}
        while True:
            candidate = uuid.uuid4().hex[:8]  # nbformat's own: 8 hex digits of a random UUID
            if candidate not in taken:
                return candidate


def parse_notebook(data: bytes, display: str) -> Notebook | None:
    """The notebook ``data`` holds, or None when it is not a notebook of nbformat 4 or later;
    ``FS_TOO_LARGE`` when parsing it would take more than ``NOTEBOOK_PARSE_BYTES``."""
    if len(data) > NOTEBOOK_MAX_BYTES or not may_be_notebook(data[:NOTEBOOK_HEAD]) or b'"nbformat"' not in data:
        return None
    values, need = parsed_size(data)
    if need > NOTEBOOK_PARSE_BYTES:
        raise NotebookTooLarge(
            f"{display!r} is a notebook whose JSON holds about {values:,} values (in its cells, outputs and metadata), "
            f"which would take about {need >> 20:,} MiB to parse, more than the {NOTEBOOK_PARSE_BYTES >> 20:,} MiB "
            "fs-tools parses a notebook in",
            details={"subject": "notebook", "values": values, "need": need, "limit": NOTEBOOK_PARSE_BYTES},
        )
    try:
        document = json.loads(data.removeprefix(BOM))
    except (ValueError, RecursionError):  # not JSON (UnicodeDecodeError is a ValueError), or nested absurdly deep
        return None
    if not _is_notebook(document) or _depth(document) > MAX_DEPTH:
        return None
    return Notebook(document, data)


# A JSON string, or the rest of the file after one left open: it never fails where a string starts, so
# a search never starts again inside one (a string of escaped quotes left open would be quadratic)
_STRING = re.compile(rb'"(?:[^"\\]++|\\[\s\S]?)*+"?')
_STRUCTURE = (b"{", b"[", b",", b":")  # every value but the first opens a container or follows one of , :
# Numbers told apart in C: digits become "0", a fraction's or an exponent's start ".", a sign "-", anything
# else " "; then a float is a "0." (twice with an exponent too), an integer that is an object of its own
# (past -5..256; 100-256 counted too) starts " 000" or " -00" or is -6 to -9
_NUMBER_SHAPES = bytes.maketrans(
    bytes(range(256)),
    bytes(48 if 48 <= c <= 57 else 46 if c in b".eE" else 45 if c in b"-+" else 32 for c in range(256)),
)
_ASTRAL = re.compile(rb"[\xf0-\xf4]")  # a character past U+FFFF in UTF-8 (4 bytes a character decoded)
_ESCAPED_ASTRAL = re.compile(rb"\\u[dD][89abAB]")  # one escaped (a surrogate pair): its string takes 4
# strings of more than this many are not taken out of the text (~0.5 µs each): the rough count decides
MAX_STRINGS_TAKEN_OUT = 8_000_000


def parsed_size(data: bytes) -> tuple[int, int]:
    """How many values the JSON in ``data`` holds (about), and what ``json.loads``
    would take for them at most: the text decoded (1, 2 or 4 bytes a character), and each value by its
    kind (``SLOT_BYTES`` and the rest). Counted in C, in linear time: first over all the bytes (marks
    inside strings counted too, every value taken for a number or a string: too much, never too little);
    past the budget, unless the text and a slot a string already take more, the values are counted
    again with the strings taken out (~0.5 µs a string: 0.2 s for 33 MB of plotly outputs) and the
    numbers told apart (a small integer costs its slot only, a float 32 bytes more)."""
    width = 1 if data.isascii() else 4 if _ASTRAL.search(data) else 2  # the text decoded, a character
    escaped = b"\\u" in data
    wide = 4 if width == 4 or (escaped and _ESCAPED_ASTRAL.search(data)) else 2 if width == 2 or escaped else 1
    header = STRING_BYTES if wide == 1 else STRING_BYTES + 24  # a string's, and its characters' (wide)
    strings = (data.count(b'"') + 1) // 2
    counts = [data.count(mark) for mark in _STRUCTURE]
    values = sum(counts) + 1
    # the rough count: every value a number or a string, every byte a string's too
    need = _containers(data, counts) + (NUMBER_BYTES + header) * values + (width + wide) * len(data)
    if need <= NOTEBOOK_PARSE_BYTES:
        return values, need
    at_least = width * len(data) + SLOT_BYTES * ((data.count(b'"') - data.count(b'\\"')) // 2)
    if at_least > NOTEBOOK_PARSE_BYTES:
        return values, at_least
    if strings > MAX_STRINGS_TAKEN_OUT:
        return values, need
    outside, strings = _STRING.subn(b"", data)
    counts = [outside.count(mark) for mark in _STRUCTURE]
    boxed = _boxed(outside)
    need = (
        _containers(outside, counts)
        + NUMBER_BYTES * boxed
        + header * max(0, strings - counts[3])  # the keys' are in their entries
        + width * len(data)  # the text decoded
        + wide * (len(data) - len(outside))  # the strings' characters
    )
    return sum(counts) + 1, need


def _boxed(outside: bytes) -> int:
    """How many numbers in ``outside`` (JSON without its strings) are objects of their own, at most."""
    shapes = outside.translate(_NUMBER_SHAPES)
    floats = shapes.count(b"0.") + outside.count(b"NaN") + outside.count(b"Infinity")
    integers = shapes.count(b" 000") + shapes.count(b" -00") + sum(outside.count(b"-%d" % d) for d in range(6, 10))
    return floats + integers


def _containers(text: bytes, counts: list[int]) -> int:
    """What the lists and dicts whose marks ``counts`` has (``{ [ , :`` in ``text``) take, with every
    element's slot and every entry."""
    dicts, lists, commas, colons = counts
    filled = dicts - text.count(b"{}")
    return (
        DICT_BYTES * dicts
        + TABLE_BYTES * filled
        + ENTRY_BYTES * colons
        + LIST_BYTES * lists
        + SLOT_BYTES * (commas + lists + 1)
    )


MAX_DEPTH = 64  # nbformat's own structure is 6 deep; metadata past this is not a notebook fs-tools changes


def _depth(document: dict[str, Any]) -> int:
    """How deep ``document`` nests, looking no deeper than ``MAX_DEPTH + 1`` (iteratively: a document
    ``json.loads`` took whole can still be too deep for a recursive dump)."""
    deepest = 0
    stack: list[tuple[object, int]] = [(document, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if depth > MAX_DEPTH:
            return depth
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return deepest


def _found_layout(document: dict[str, Any], data: bytes) -> tuple[Layout, bool]:
    """The layout ``data`` (``document``'s bytes) is in, and whether it gives them back exactly; when it
    does not, nbformat's own. (A document nested too deeply to dump was refused when it was parsed.)"""
    bom = data.startswith(BOM)
    layout = _layout_of(data, bom)
    if layout.dump(document) == data:
        return layout, True
    escaped = replace(layout, ensure_ascii=True)
    if not layout.ensure_ascii and escaped.dump(document) == data:
        return escaped, True
    return replace(STANDARD, bom=bom), False


def notebook_or_refuse(data: bytes, display: str) -> Notebook:
    """The notebook ``data`` holds; ``FS_NOT_TEXT`` saying why when it is none (``FS_TOO_LARGE`` when it
    is too large to parse)."""
    notebook = parse_notebook(data, display)
    if notebook is not None:
        return notebook
    decode_text(data, display)  # bytes that are not text at all: FS_NOT_TEXT saying what they appear to be
    if len(data) > NOTEBOOK_MAX_BYTES:
        why = f"it is {len(data):,} bytes, more than the {NOTEBOOK_MAX_BYTES:,} bytes fs-tools reads as a notebook"
    elif wide_encoding(data[:4]) is not None:
        why = f"it is {ENCODING_NAMES[str(wide_encoding(data[:4]))]} text, and a notebook's JSON is UTF-8"
    elif not data.removeprefix(BOM).lstrip(b" \t\r\n").startswith(b"{"):
        why = "it is not JSON"
    else:
        why = _why_not(data)
    raise NotText(
        f"{display!r} is not a Jupyter notebook fs-tools can change: {why}",
        family="not-notebook",
    )


def _why_not(data: bytes) -> str:
    try:
        document = json.loads(data.removeprefix(BOM))
    except ValueError as exc:
        where = f" (line {exc.lineno}, column {exc.colno})" if isinstance(exc, json.JSONDecodeError) else ""
        return f"its JSON does not parse{where}"
    except RecursionError:
        return "its JSON is nested too deeply"
    if isinstance(document, dict) and isinstance(document.get("nbformat"), int) and document["nbformat"] < 4:
        return f"it is nbformat {document['nbformat']}; fs-tools changes nbformat 4 notebooks"
    if isinstance(document, dict) and _depth(document) > MAX_DEPTH:
        return f"its JSON nests more than {MAX_DEPTH} levels deep"
    return "it has no nbformat 4 'cells' list"


def _is_notebook(document: object) -> bool:
    if not isinstance(document, dict):
        return False
    nbformat, cells = document.get("nbformat"), document.get("cells")
    if not isinstance(nbformat, int) or isinstance(nbformat, bool) or nbformat < 4 or not isinstance(cells, list):
        return False
    return all(isinstance(cell, dict) and cell.get("cell_type") in CELL_TYPES for cell in cells)


def _layout_of(data: bytes, bom: bool) -> Layout:
    newline = "\r\n" if b"\r\n" in data[:4096] else "\n"
    body = data[len(BOM) :] if bom else data
    final = body.endswith(newline.encode())
    indent: int | str | None = None
    first = body.find(b"\n")
    if first >= 0:
        end = body.find(b"\n", first + 1)
        second = body[first + 1 : end if end >= 0 else len(body)]  # the first key's line: its indent is the layout's
        blank = second[: len(second) - len(second.lstrip(b" \t"))]
        indent = "\t" * len(blank) if blank.startswith(b"\t") else len(blank)  # 0: lines, none indented
    return Layout(indent=indent, ensure_ascii=False, newline=newline, final_newline=final, bom=bom)


def source_of(cell: Mapping[str, Any]) -> str:
    """A cell's source as one string (nbformat keeps it as a list of lines or as one string)."""
    return multiline(cell.get("source", ""))


def multiline(value: object) -> str:
    """A notebook's multi-line string (a source, a stream's text, a MIME bundle's text) as one string:
    nbformat keeps each as a list of lines or as one string; anything else is no text."""
    if isinstance(value, list):
        return "".join(part for part in value if isinstance(part, str))
    return value if isinstance(value, str) else ""


def split_source(text: str) -> list[str]:
    """Source as nbformat writes it: lines, each keeping its line ending."""
    return text.splitlines(keepends=True)


def set_source(cell: dict[str, Any], text: str) -> None:
    """Give ``cell`` new source, in the form (a list of lines, or one string) it had."""
    cell["source"] = text if isinstance(cell.get("source"), str) else split_source(text)


def change_type(cell: dict[str, Any], cell_type: str) -> None:
    """Make ``cell`` a cell of another type, with the keys nbformat allows for it (a code cell has
    outputs and an execution count; markdown and raw cells have neither, and only they attachments)."""
    if cell.get("cell_type") == cell_type:
        return
    ordered = list(cell) == sorted(cell)  # keys in nbformat's order stay in it
    cell["cell_type"] = cell_type
    if cell_type == "code":
        cell.pop("attachments", None)
        cell["execution_count"] = None
        cell["outputs"] = []
    else:
        cell.pop("execution_count", None)
        cell.pop("outputs", None)
    if ordered:
        items = sorted(cell.items())
        cell.clear()
        cell.update(items)
