"""The ``edit`` and ``multi_edit`` tools: byte preservation, literal matching, and the errors that teach
a model its retry (SPEC sections 5, 7 and 9). Every test reads before editing, as the gates require, and
checks the bytes on disk afterwards."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fs_tools import Session, Workspace
from fs_tools.rendering.lines import snippet, snippet_at, split_lines
from fs_tools.result import ToolResult
from fs_tools.testing import assert_error, assert_ok

BOM = b"\xef\xbb\xbf"
ROW = re.compile(r"^ *(\d+)\t(.*)$", re.MULTILINE)


_ok = assert_ok


def _error(result: ToolResult, code: str) -> str:
    return assert_error(result, code).text


def _observed(root: Path, session: Session, name: str, data: bytes) -> Path:
    """A file with exactly ``data`` that the session has read."""
    path = root / name
    path.write_bytes(data)
    _ok(session.call("read", {"file_path": name}))
    return path


def _edit(session: Session, name: str, old: str, new: str, **extra: Any) -> ToolResult:
    return session.call("edit", {"file_path": name, "old_string": old, "new_string": new, **extra})


def _rows(text: str) -> dict[int, str]:
    """The numbered rows of a snippet in a message: line number -> text."""
    return {int(m.group(1)): m.group(2) for m in ROW.finditer(text)}


def _lines_named(message: str) -> set[int]:
    """Every line number a message lists after "line"/"lines"."""
    found: set[int] = set()
    for listing in re.findall(r"\blines? ((?:\d+(?:, | and |,? and )?)+)", message):
        found.update(int(n) for n in re.findall(r"\d+", listing))
    return found


# --- byte preservation -------------------------------------------------------------------------------

PRESERVATION = [
    pytest.param(
        b"a = 1\r\nb = 2\r\nc = 3\r\n", "b = 2", "b = 20", b"a = 1\r\nb = 20\r\nc = 3\r\n", id="crlf-one-line"
    ),
    pytest.param(
        b"a = 1\r\nb = 2\r\nc = 3\r\n",
        "a = 1\nb = 2",
        "a = 1\nx = 9\nb = 2",
        b"a = 1\r\nx = 9\r\nb = 2\r\nc = 3\r\n",
        id="crlf-multi-line-written-with-lf",
    ),
    pytest.param(
        b"a = 1\r\nb = 2\r\nc = 3\r\n",
        "c = 3\n",
        "c = 3\nd = 4\n",
        b"a = 1\r\nb = 2\r\nc = 3\r\nd = 4\r\n",
        id="crlf-match-ending-in-newline",
    ),
    pytest.param(
        b"a = 1\r\nb = 2\r\nc = 3\r\n",
        "a = 1\r\nb = 2",
        "a = 1\nb = 3",
        b"a = 1\r\nb = 3\r\nc = 3\r\n",
        id="crlf-old-crlf",
    ),
    pytest.param(
        b"a\r\nb\nc\r\nd\r\ne\r\n",
        "c\nd",
        "C\nC2\nD",
        b"a\r\nb\nC\r\nC2\r\nD\r\ne\r\n",
        id="mixed-mostly-crlf",
    ),
    pytest.param(b"a\nb\r\nc\nd\ne\n", "c", "c\nc2", b"a\nb\r\nc\nc2\nd\ne\n", id="mixed-mostly-lf"),
    pytest.param(b"a\nb\n", "a", "a\r\nz", b"a\nz\nb\n", id="lf-file-new-crlf-becomes-lf"),
    pytest.param(BOM + b"x = 1\ny = 2\n", "x = 1", "x = 10", BOM + b"x = 10\ny = 2\n", id="bom"),
    pytest.param(
        BOM + b"x = 1\r\ny = 2\r\n", "x = 1\ny", "x = 1\nw = 0\ny", BOM + b"x = 1\r\nw = 0\r\ny = 2\r\n", id="bom-crlf"
    ),
    pytest.param(
        b"def f():\n\tif x:\n\t\treturn 1\n",
        "\t\treturn 1",
        "\t\tlog(x)\n\t\treturn 2",
        b"def f():\n\tif x:\n\t\tlog(x)\n\t\treturn 2\n",
        id="tabs",
    ),
    pytest.param(b"a\nb", "b", "B", b"a\nB", id="no-trailing-newline"),
    pytest.param(b"a\r\nb", "a\nb", "A\nB", b"A\r\nB", id="crlf-no-trailing-newline"),
    pytest.param(b"a\nb\n", "b", "B", b"a\nB\n", id="trailing-newline"),
    pytest.param(b"a\r\nb\r\n", "b", "B\nC", b"a\r\nB\r\nC\r\n", id="crlf-trailing-newline"),
]


@pytest.mark.parametrize(("data", "old", "new", "expected"), PRESERVATION)
def test_edit_keeps_every_untouched_byte(
    root: Path, session: Session, data: bytes, old: str, new: str, expected: bytes
) -> None:
    path = _observed(root, session, "f.txt", data)

    _ok(_edit(session, "f.txt", old, new))

    assert path.read_bytes() == expected


# --- literal replacement -----------------------------------------------------------------------------


@pytest.mark.parametrize("new", ["$&", r"\1", r"\g<0>", "\\\\", "$1", r"${x}$$\n\0"])
def test_new_string_lands_literally(root: Path, session: Session, new: str) -> None:
    path = _observed(root, session, "f.txt", b"name = (old)\nend\n")

    _ok(_edit(session, "f.txt", "(old)", new))

    assert path.read_bytes() == b"name = " + new.encode() + b"\nend\n"


@pytest.mark.parametrize(
    ("data", "old", "expected"),
    [
        pytest.param(b"abc\na.*c\n", "a.*c", b"abc\nX\n", id="dot-star"),
        pytest.param(b"f(x\ng(y)\n", "f(", b"Xx\ng(y)\n", id="open-paren"),
        pytest.param(b"a[0\nb[1]\n", "a[", b"X0\nb[1]\n", id="open-bracket"),
        pytest.param(b"x+y\nxxy\n", "x+y", b"X\nxxy\n", id="plus"),
        pytest.param(b"cost $5 ^up\n", "$5 ^", b"cost Xup\n", id="anchors"),
    ],
)
def test_old_string_metacharacters_match_literally(
    root: Path, session: Session, data: bytes, old: str, expected: bytes
) -> None:
    path = _observed(root, session, "f.txt", data)

    _ok(_edit(session, "f.txt", old, "X"))

    assert path.read_bytes() == expected


# --- replace_all -------------------------------------------------------------------------------------


def test_replace_all_replaces_every_occurrence_and_counts_them(root: Path, session: Session) -> None:
    path = _observed(root, session, "f.py", b"x = 1\ny = x\nz = x + x\n")

    result = _ok(_edit(session, "f.py", "x", "w", replace_all=True))

    assert path.read_bytes() == b"w = 1\ny = w\nz = w + w\n"
    assert result.value["replacements"] == 4
    assert re.search(r"\b4 replacements?\b", result.text), result.text


def test_replace_all_does_not_cascade_into_its_own_output(root: Path, session: Session) -> None:
    path = _observed(root, session, "f.txt", b"a a a\n")

    result = _ok(_edit(session, "f.txt", "a", "aa", replace_all=True))

    assert path.read_bytes() == b"aa aa aa\n"
    assert result.value["replacements"] == 3


def test_replace_all_matches_left_to_right_without_overlap(root: Path, session: Session) -> None:
    path = _observed(root, session, "f.txt", b"aaaaa\n")

    result = _ok(_edit(session, "f.txt", "aa", "b", replace_all=True))

    assert path.read_bytes() == b"bba\n"
    assert result.value["replacements"] == 2


def test_replace_all_in_a_crlf_file_keeps_crlf(root: Path, session: Session) -> None:
    path = _observed(root, session, "f.txt", b"k: 1\r\nk: 2\r\nother\r\n")

    result = _ok(_edit(session, "f.txt", "k:", "key:\n ", replace_all=True))

    assert path.read_bytes() == b"key:\r\n  1\r\nkey:\r\n  2\r\nother\r\n"
    assert result.value["replacements"] == 2


# --- success text ------------------------------------------------------------------------------------


def test_success_text_counts_and_shows_a_short_numbered_snippet(root: Path, session: Session) -> None:
    data = b"".join(f"line {n}\r\n".encode() for n in range(1, 41))
    _observed(root, session, "f.txt", data)

    result = _ok(_edit(session, "f.txt", "line 20\n", "changed twenty\nadded\n"))

    assert re.search(r"\b1 replacements?\b", result.text), result.text
    assert result.value["replacements"] == 1
    assert "\r" not in result.text
    rows = _rows(result.text)
    assert rows[20] == "changed twenty"
    assert rows[21] == "added"
    assert rows.get(22) in (None, "line 21")
    assert len(rows) <= 12, result.text
    numbers = sorted(rows)
    assert numbers == list(range(numbers[0], numbers[-1] + 1))


# --- FS_AMBIGUOUS_EDIT -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(b"x = 1\nfoo()\nx = 1\nbar()\nbaz()\nx = 1\n", id="lf"),
        pytest.param(BOM + b"x = 1\r\nfoo()\r\nx = 1\r\nbar()\r\nbaz()\r\nx = 1\r\n", id="bom-crlf"),
    ],
)
def test_ambiguous_edit_names_the_count_and_every_line(root: Path, session: Session, data: bytes) -> None:
    path = _observed(root, session, "f.py", data)

    message = _error(_edit(session, "f.py", "x = 1", "x = 2"), "FS_AMBIGUOUS_EDIT")

    assert "f.py" in message
    assert re.search(r"\b3 (times|occurrences|matches)\b", message), message
    assert _lines_named(message) == {1, 3, 6}
    assert "replace_all" in message
    assert path.read_bytes() == data


# --- FS_EDIT_NOT_FOUND -------------------------------------------------------------------------------

SOURCE_LINES = [
    "import os",
    "",
    "def compute_total(items):",
    "    total = sum(items)",
    '    print("total is", total)',
    "    return total",
]
SOURCE = "".join(f"{line}\n" for line in SOURCE_LINES).encode()


def _not_found(root: Path, session: Session, data: bytes, old: str) -> str:
    path = _observed(root, session, "f.py", data)
    message = _error(_edit(session, "f.py", old, "REPLACED"), "FS_EDIT_NOT_FOUND")
    assert path.read_bytes() == data
    assert "f.py" in message
    return message


def _names_candidate(message: str, line: int, text: str) -> None:
    assert re.search(rf"\bline {line}\b", message), message
    assert _rows(message).get(line) == text, message


def test_not_found_whitespace(root: Path, session: Session) -> None:
    message = _not_found(root, session, SOURCE, "    total  =  sum(items)")

    _names_candidate(message, 4, "    total = sum(items)")
    assert "whitespace" in message


def test_not_found_tabs_vs_spaces(root: Path, session: Session) -> None:
    data = b"def f():\n\tif ok:\n\t\treturn 1\n"

    message = _not_found(root, session, data, "    if ok:\n        return 1")

    _names_candidate(message, 2, "\tif ok:")
    assert "tab" in message and "space" in message


def test_not_found_indentation_depth(root: Path, session: Session) -> None:
    message = _not_found(root, session, SOURCE, "        return total")

    _names_candidate(message, 6, "    return total")
    assert "indentation" in message


def test_not_found_curly_quotes(root: Path, session: Session) -> None:
    message = _not_found(root, session, SOURCE, "print(\u201ctotal is\u201d, total)")

    _names_candidate(message, 5, '    print("total is", total)')
    assert "quote" in message


def test_not_found_line_number_prefix_copied_from_read(root: Path, session: Session) -> None:
    message = _not_found(root, session, SOURCE, "     3\tdef compute_total(items):\n     4\t    total = sum(items)")

    _names_candidate(message, 3, "def compute_total(items):")
    assert re.search(r"line.number", message, re.IGNORECASE), message


def test_not_found_stray_carriage_return(root: Path, session: Session) -> None:
    message = _not_found(root, session, SOURCE, "    total = sum(items)\r")

    _names_candidate(message, 4, "    total = sum(items)")
    assert "line ending" in message


def test_not_found_lone_carriage_return_as_line_break_in_a_crlf_file(root: Path, session: Session) -> None:
    data = SOURCE.replace(b"\n", b"\r\n")

    message = _not_found(root, session, data, "    total = sum(items)\r    print(")

    _names_candidate(message, 4, "    total = sum(items)")
    assert "line ending" in message


def test_not_found_typo_points_at_the_most_similar_line(root: Path, session: Session) -> None:
    message = _not_found(root, session, SOURCE, "def compute_totl(items):")

    _names_candidate(message, 3, "def compute_total(items):")
    assert "similar" in message


def test_not_found_with_nothing_similar_says_so(root: Path, session: Session) -> None:
    message = _not_found(root, session, SOURCE, "zqxj vwkp")

    assert re.search(r"nothing similar|no similar", message), message
    assert not re.search(r"\bline \d", message), message
    assert _rows(message) == {}
    assert "read" in message


def test_not_found_candidate_in_a_big_file_is_a_short_excerpt(root: Path, session: Session) -> None:
    data = b"".join(f"entry {n}: some text for this line\n".encode() for n in range(1, 3001))
    _observed(root, session, "big.txt", data)
    old = "\n".join(f"entry {n}: some txt for this line" for n in range(1500, 1530))

    message = _error(_edit(session, "big.txt", old, "X"), "FS_EDIT_NOT_FOUND")

    assert re.search(r"\bline 1500\b", message), message
    rows = _rows(message)
    assert rows.get(1500) == "entry 1500: some text for this line"
    assert 1 <= len(rows) <= 12
    assert all(1495 <= n <= 1535 for n in rows)
    assert len(message) < 2000, len(message)
    assert (root / "big.txt").read_bytes() == data


def test_not_found_candidate_with_long_lines_is_short(root: Path, session: Session) -> None:
    data = b"".join(f"{n:03d} ".encode() + b"v" * 5000 + b"\n" for n in range(1, 21))
    _observed(root, session, "wide.txt", data)

    message = _error(_edit(session, "wide.txt", "012  " + "v" * 5000, "X"), "FS_EDIT_NOT_FOUND")

    assert re.search(r"\bline 12\b", message), message
    assert len(message) < 2000, len(message)


# --- multi_edit --------------------------------------------------------------------------------------


def _multi(session: Session, name: str, *edits: tuple[str, str]) -> ToolResult:
    specs = [{"old_string": old, "new_string": new} for old, new in edits]
    return session.call("multi_edit", {"file_path": name, "edits": specs})


def test_multi_edit_applies_in_order_each_seeing_the_previous(root: Path, session: Session) -> None:
    path = _observed(root, session, "f.txt", b"alpha\r\nbeta\r\ngamma\r\n")

    result = _ok(_multi(session, "f.txt", ("alpha", "one"), ("one\nbeta", "uno\nbeta\nbis"), ("gamma", "three")))

    assert path.read_bytes() == b"uno\r\nbeta\r\nbis\r\nthree\r\n"
    assert result.value["edits"] == 3
    assert result.value["replacements"] == 3


def test_multi_edit_is_all_or_nothing(root: Path, session: Session) -> None:
    data = b"alpha\nbeta\ngamma\n"
    path = _observed(root, session, "f.txt", data)

    message = _error(_multi(session, "f.txt", ("alpha", "ALPHA"), ("delta", "DELTA")), "FS_EDIT_NOT_FOUND")

    assert "/edits/1/old_string" in message
    assert path.read_bytes() == data
    # Nothing was committed, so the session's observation still matches the disk: no re-read needed.
    _ok(_edit(session, "f.txt", "alpha", "ALPHA"))
    assert path.read_bytes() == b"ALPHA\nbeta\ngamma\n"


def test_multi_edit_ambiguity_names_the_edit_index_and_lines(root: Path, session: Session) -> None:
    data = b"alpha\nbeta\nx\nx\n"
    path = _observed(root, session, "f.txt", data)

    message = _error(_multi(session, "f.txt", ("alpha", "A"), ("beta", "B"), ("x", "y")), "FS_AMBIGUOUS_EDIT")

    assert "/edits/2/old_string" in message
    assert re.search(r"\b2 (times|occurrences|matches)\b", message), message
    assert _lines_named(message) == {3, 4}
    assert path.read_bytes() == data


def test_multi_edit_ambiguity_created_by_an_earlier_edit(root: Path, session: Session) -> None:
    data = b"alpha\nbeta\ngamma\n"
    path = _observed(root, session, "f.txt", data)

    message = _error(_multi(session, "f.txt", ("gamma", "beta"), ("beta", "B")), "FS_AMBIGUOUS_EDIT")

    assert "/edits/1/old_string" in message
    assert _lines_named(message) == {2, 3}
    assert path.read_bytes() == data


# --- files edit cannot change ------------------------------------------------------------------------


def test_edit_of_a_file_holding_a_nul_is_not_text(root: Path, session: Session) -> None:
    _ok(session.call("write", {"file_path": "blob.txt", "content": "ab\x00cd\n"}))
    data = (root / "blob.txt").read_bytes()
    assert data == b"ab\x00cd\n"

    message = _error(_edit(session, "blob.txt", "ab", "xy"), "FS_NOT_TEXT")

    assert "blob.txt" in message
    assert "NUL" in message
    assert re.search(r"offset 2\b", message), message
    assert (root / "blob.txt").read_bytes() == data


def test_edit_of_an_unseen_file_over_the_size_limit_says_so(root: Path) -> None:
    """Read pages through a large file (and records its version), but edit needs the whole file: an
    unseen edit must name the real obstacle rather than "read the file, then retry"."""
    data = b"a" * 4999 + b"\n"
    (root / "target").write_bytes(data)
    with Workspace(root, max_file_bytes=1000) as ws:
        session = ws.session("model")
        unseen = _error(_edit(session, "target", "a", "b"), "FS_TOO_LARGE")
        assert not session.call("read", {"file_path": "target"}).is_error
        seen = _error(_edit(session, "target", "a", "b"), "FS_TOO_LARGE")
    for message in (unseen, seen):
        assert re.search(r"\b5,?000\b", message) and re.search(r"\b1,?000\b", message), message
    assert (root / "target").read_bytes() == data


@pytest.mark.parametrize(
    ("data", "code", "facts"),
    [
        pytest.param(b"abc\x00def\n", "FS_NOT_TEXT", ["NUL", r"offset 3\b"], id="nul"),
        pytest.param(b"caf\xe9\n", "FS_NOT_TEXT", ["UTF-8", r"offset 3\b"], id="latin-1"),
        pytest.param(None, "FS_NOT_REGULAR_FILE", ["directory"], id="directory"),
    ],
)
def test_edit_after_a_refused_read_reports_why_not_read_first(
    root: Path, data: bytes | None, code: str, facts: list[str]
) -> None:
    """What a model hits: read fails with a reason, then the edit it tries anyway. An answer of
    FS_NOT_OBSERVED ("read the file, then retry") would send it round in a loop, since reading
    fails again; the edit must report the same reason the read did."""
    target = root / "target"
    if data is None:
        target.mkdir()
    else:
        target.write_bytes(data)
    with Workspace(root, max_file_bytes=1000) as ws:
        session = ws.session("model")
        read_message = _error(session.call("read", {"file_path": "target"}), code)
        for fact in facts:
            assert re.search(fact, read_message), read_message

        edit_message = _error(_edit(session, "target", "a", "b"), code)

    for fact in facts:
        assert re.search(fact, edit_message), edit_message
    if data is None:
        assert target.is_dir() and not any(target.iterdir())
    else:
        assert target.read_bytes() == data


@settings(max_examples=300, deadline=None)
@given(
    lines=st.lists(st.text(alphabet="ab\r\t ", max_size=6), min_size=1, max_size=40),
    ending=st.sampled_from(["\n", "\r\n"]),
    final=st.booleans(),
    data=st.data(),
)
def test_the_snippet_from_a_position_equals_the_snippet_from_all_lines(
    lines: list[str], ending: str, final: bool, data: st.DataObject
) -> None:
    text = ending.join(lines) + (ending if final else "")
    first = data.draw(st.integers(1, len(lines)))
    last = data.draw(st.integers(first, len(lines)))
    offset = sum(len(line) + len(ending) for line in lines[: first - 1])
    position = offset + data.draw(st.integers(0, len(lines[first - 1])))
    assert snippet_at(text, position, first, last) == snippet(split_lines(text), first, last)
