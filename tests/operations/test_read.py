"""The ``read`` tool: its output format, paging, caps, and the errors a model meets (SPEC section 7)."""

from __future__ import annotations

import re
from pathlib import Path

import xxhash

from fs_tools import Session, Workspace
from fs_tools.result import ToolResult
from fs_tools.testing import assert_error, assert_ok

ROW = re.compile(r"^( *)(\d+)\t(.*)$")


_ok = assert_ok


def _error(result: ToolResult, code: str) -> str:
    return assert_error(result, code).text


def _content(row: str) -> str:
    """The file's line in one numbered row of read output."""
    match = ROW.match(row)
    assert match, f"not a numbered row: {row[:80]!r}"
    return match.group(3)


def _numbers(text: str) -> list[int]:
    """The line numbers of the numbered rows in read output, in order."""
    return [int(m.group(2)) for m in map(ROW.match, text.split("\n")) if m]


def _footer(text: str) -> str:
    """Everything in read output that is not a numbered row."""
    return "\n".join(line for line in text.split("\n") if not ROW.match(line)).strip()


def _next_offset_in(footer: str) -> int:
    match = re.search(r"offset\s*[=:]?\s*(\d+)", footer)
    assert match, f"the footer names no offset: {footer!r}"
    return int(match.group(1))


def _numbered_file(root: Path, name: str, count: int) -> None:
    (root / name).write_bytes(b"".join(f"line {n}\n".encode() for n in range(1, count + 1)))


# --- output format -----------------------------------------------------------------------------------


def test_rows_are_right_aligned_number_tab_line(root: Path, session: Session) -> None:
    lines = [f"row {n}" for n in range(1, 13)]
    lines[4] = "\tindented with a tab"
    (root / "a.txt").write_bytes(("\n".join(lines) + "\n").encode())

    text = _ok(session.call("read", {"file_path": "a.txt"})).text

    rows = text.split("\n")
    assert len(rows) == 12, text
    width = len(rows[0].split("\t", 1)[0])
    assert width >= 2
    for n, (row, line) in enumerate(zip(rows, lines, strict=True), start=1):
        assert row == f"{n:>{width}}\t{line}"


def test_crlf_and_bom_are_not_shown(root: Path, session: Session) -> None:
    data = b"\xef\xbb\xbfalpha\r\nbeta\r\ngamma"
    (root / "a.txt").write_bytes(data)

    result = _ok(session.call("read", {"file_path": "a.txt"}))

    assert "\r" not in result.text
    assert "\ufeff" not in result.text
    rows = result.text.split("\n")
    assert [_content(row) for row in rows] == ["alpha", "beta", "gamma"]
    assert rows[0].endswith("\talpha")


def test_value_describes_the_page_and_the_version_read(root: Path, session: Session) -> None:
    data = b"one\ntwo\nthree\n"
    (root / "a.txt").write_bytes(data)

    value = _ok(session.call("read", {"file_path": "a.txt"})).value

    assert value["path"] == "a.txt"
    assert value["offset"] == 1
    assert value["total_lines"] == 3
    assert value["lines_shown"] == 3
    assert value["next_offset"] is None
    assert value["version"] == xxhash.xxh3_128_hexdigest(data)


# --- paging ------------------------------------------------------------------------------------------


def test_limit_stops_with_a_footer_naming_the_next_offset_and_total(root: Path, session: Session) -> None:
    _numbered_file(root, "a.txt", 10)

    result = _ok(session.call("read", {"file_path": "a.txt", "offset": 3, "limit": 4}))

    assert _numbers(result.text) == [3, 4, 5, 6]
    assert "\tline 3" in result.text and "\tline 6" in result.text
    footer = _footer(result.text)
    assert _next_offset_in(footer) == 7
    assert re.search(r"\b10\b", footer), footer
    assert result.value["offset"] == 3
    assert result.value["lines_shown"] == 4
    assert result.value["next_offset"] == 7
    assert result.value["total_lines"] == 10


def test_reaching_the_end_has_no_footer(root: Path, session: Session) -> None:
    _numbered_file(root, "a.txt", 10)

    last_page = _ok(session.call("read", {"file_path": "a.txt", "offset": 7, "limit": 4}))
    exact_end = _ok(session.call("read", {"file_path": "a.txt", "offset": 9, "limit": 2}))

    for result, first in ((last_page, 7), (exact_end, 9)):
        assert _numbers(result.text) == list(range(first, 11))
        assert _footer(result.text) == ""
        assert result.value["next_offset"] is None


def test_a_file_without_a_trailing_newline_counts_its_last_line(root: Path, session: Session) -> None:
    (root / "a.txt").write_bytes(b"a\nb")

    result = _ok(session.call("read", {"file_path": "a.txt", "limit": 1}))

    assert _numbers(result.text) == [1]
    assert _next_offset_in(_footer(result.text)) == 2
    assert result.value["total_lines"] == 2


# --- caps --------------------------------------------------------------------------------------------


def test_long_lines_are_truncated_with_a_visible_marker(root: Path, session: Session) -> None:
    (root / "a.txt").write_bytes(b"short\n" + b"x" * 2500 + b"\nend\n")

    result = _ok(session.call("read", {"file_path": "a.txt"}))

    rows = result.text.split("\n")
    assert _numbers(result.text) == [1, 2, 3]
    long_row = rows[1]
    shown = _content(long_row)
    assert shown.startswith("x" * 2000)
    assert "x" * 2001 not in shown
    assert re.search(r"truncat", shown, re.IGNORECASE), shown[-200:]
    assert re.search(r"2,?500", shown), shown[-200:]
    assert rows[2].endswith("\tend")
    assert result.value["next_offset"] is None


def test_output_is_capped_near_50_kib_with_the_exact_next_offset(root: Path, session: Session) -> None:
    lines = [f"{n:04d}" + "y" * 996 for n in range(1, 201)]
    (root / "a.txt").write_bytes(("\n".join(lines) + "\n").encode())

    first = _ok(session.call("read", {"file_path": "a.txt"}))

    size = len(first.text.encode())
    assert 40 * 1024 <= size <= 51 * 1024, size
    shown = _numbers(first.text)
    assert shown == list(range(1, len(shown) + 1))
    assert 30 <= len(shown) < 200
    for n in shown:
        assert f"\t{lines[n - 1]}" in first.text  # whole lines only, none cut by the cap
    footer = _footer(first.text)
    next_offset = _next_offset_in(footer)
    assert next_offset == shown[-1] + 1
    assert re.search(r"\b200\b", footer), footer
    assert first.value["next_offset"] == next_offset
    assert first.value["lines_shown"] == len(shown)

    second = _ok(session.call("read", {"file_path": "a.txt", "offset": next_offset}))

    assert _numbers(second.text)[0] == next_offset
    assert second.text.split("\n")[0].endswith(f"\t{lines[next_offset - 1]}")


# --- empty files and offsets -------------------------------------------------------------------------


def test_an_empty_file_is_a_success_with_an_explicit_note(root: Path, session: Session) -> None:
    (root / "empty.txt").write_bytes(b"")

    result = _ok(session.call("read", {"file_path": "empty.txt"}))

    assert "empty" in result.text.lower()
    assert _numbers(result.text) == []
    assert result.value["total_lines"] == 0
    assert result.value["next_offset"] is None


def test_a_file_holding_only_a_bom_reads_as_empty(root: Path, session: Session) -> None:
    (root / "bom.txt").write_bytes(b"\xef\xbb\xbf")

    result = _ok(session.call("read", {"file_path": "bom.txt"}))

    assert "empty" in result.text.lower()
    assert "\ufeff" not in result.text
    assert result.value["total_lines"] == 0


def test_offset_past_the_end_names_the_offset_and_the_line_count(root: Path, session: Session) -> None:
    _numbered_file(root, "a.txt", 5)

    message = _error(session.call("read", {"file_path": "a.txt", "offset": 6}), "FS_NOT_FOUND")

    assert "a.txt" in message
    assert re.search(r"\boffset 6\b", message), message
    assert re.search(r"\b5 line", message), message


def test_a_read_past_the_end_showed_nothing_and_authorises_nothing(root: Path, session: Session) -> None:
    _numbered_file(root, "a.txt", 5)
    _error(session.call("read", {"file_path": "a.txt", "offset": 6}), "FS_NOT_FOUND")
    _error(session.call("write", {"file_path": "a.txt", "content": "x\n"}), "FS_NOT_OBSERVED")
    _ok(session.call("read", {"file_path": "a.txt", "limit": 1}))
    (root / "a.txt").write_text("changed\n")
    _error(session.call("read", {"file_path": "a.txt", "offset": 9}), "FS_NOT_FOUND")
    _error(session.call("write", {"file_path": "a.txt", "content": "x\n"}), "FS_STALE_VERSION")  # the old read


def test_a_missing_file_is_not_found(session: Session) -> None:
    message = _error(session.call("read", {"file_path": "nope/missing.txt"}), "FS_NOT_FOUND")

    assert "nope/missing.txt" in message


# --- files read cannot show --------------------------------------------------------------------------


def test_a_binary_file_is_not_text_naming_the_nul_and_its_offset(root: Path, session: Session) -> None:
    data = b"abc\x00def\n"
    (root / "blob.bin").write_bytes(data)

    message = _error(session.call("read", {"file_path": "blob.bin"}), "FS_NOT_TEXT")

    assert "blob.bin" in message
    assert "NUL" in message
    assert re.search(r"offset 3\b", message), message
    assert (root / "blob.bin").read_bytes() == data


def test_invalid_utf8_names_the_byte_offset_not_the_character_offset(root: Path, session: Session) -> None:
    data = "ok\né".encode() + b"t\xe9\n"  # é is two bytes, so the bad byte is at byte 6 (character 5)
    (root / "latin.txt").write_bytes(data)

    result = session.call("read", {"file_path": "latin.txt"})

    message = _error(result, "FS_NOT_TEXT")
    assert "latin.txt" in message
    assert "UTF-8" in message
    assert re.search(r"offset 6\b", message), message
    assert result.exception is not None
    chain: list[BaseException] = []
    cause: BaseException | None = result.exception
    while cause is not None:  # the rendered error, the provider's, then the decoder's
        chain.append(cause)
        cause = cause.__cause__
    assert any(isinstance(link, UnicodeDecodeError) for link in chain), chain


def test_a_file_over_the_size_limit_is_still_read_in_pages(root: Path) -> None:
    # The limit bounds what is held in memory for whole-file work (edit, write); read streams.
    (root / "big.txt").write_bytes(b"".join(b"line %d\n" % i for i in range(1, 1001)))
    with Workspace(root, max_file_bytes=1000) as ws:
        result = ws.session("s").call("read", {"file_path": "big.txt", "offset": 500, "limit": 3})

    assert not result.is_error, result.text
    assert result.text.splitlines()[:3] == ["   500\tline 500", "   501\tline 501", "   502\tline 502"]
    assert result.value["total_lines"] == 1000
    assert result.value["next_offset"] == 503


def test_an_edit_over_the_size_limit_names_the_size_the_limit_and_how_to_page(root: Path) -> None:
    (root / "big.txt").write_bytes(b"a" * 4999 + b"\n")
    with Workspace(root, max_file_bytes=1000) as ws:
        session = ws.session("s")
        assert not session.call("read", {"file_path": "big.txt"}).is_error
        message = _error(
            session.call("edit", {"file_path": "big.txt", "old_string": "a", "new_string": "b", "replace_all": True}),
            "FS_TOO_LARGE",
        )

    plain = message.replace(",", "")
    assert "big.txt" in message
    assert re.search(r"\b5000\b", plain), message
    assert re.search(r"\b1000\b", plain), message
    assert "offset" in message and "limit" in message
    assert (root / "big.txt").read_bytes() == b"a" * 4999 + b"\n"


def test_a_directory_is_not_a_regular_file(root: Path, workspace: Workspace, session: Session) -> None:
    (root / "src").mkdir()

    message = _error(session.call("read", {"file_path": "src"}), "FS_NOT_REGULAR_FILE")

    assert "src" in message
    assert "directory" in message
    if "list" in workspace.tools:
        assert "list" in message.split("directory", 1)[1]
