"""read pages a file chunk by chunk; whatever the chunk boundaries cut (a CRLF, a multi-byte character, a
line), the page must equal the one computed from the whole text."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fs_tools import Workspace
from fs_tools.provider import versions
from fs_tools.rendering.lines import MAX_LINE_CHARS, number_width, split_lines

PIECES = ["a", "bc", "é", "€", "😀", "\n", "\r\n", "\r", "\t", " ", "\ufeff"]


def _expected(text: str, offset: int, limit: int) -> tuple[list[str], int]:
    lines = split_lines(text[1:] if text.startswith("\ufeff") else text)
    window = lines[offset - 1 : offset - 1 + limit]
    width = number_width(offset + len(window) - 1)
    return [f"{n:>{width}}\t{line}" for n, line in enumerate(window, start=offset)], len(lines)


@settings(max_examples=300, deadline=None)
@given(
    pieces=st.lists(st.sampled_from(PIECES), min_size=1, max_size=80),
    chunk=st.integers(min_value=1, max_value=9),
    offset=st.integers(min_value=1, max_value=12),
    limit=st.integers(min_value=1, max_value=12),
)
def test_a_page_does_not_depend_on_chunk_boundaries(pieces: list[str], chunk: int, offset: int, limit: int) -> None:
    text = "".join(pieces)
    expected, total = _expected(text, offset, limit)
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as patch:
        patch.setattr(versions, "CHUNK", chunk)
        Path(tmp, "f.txt").write_bytes(text.encode("utf-8"))
        with Workspace(tmp) as ws:
            result = ws.session("s").call("read", {"file_path": "f.txt", "offset": offset, "limit": limit})
    if total == 0 and offset == 1:
        assert not result.is_error and "empty" in result.text
        return
    if offset > total:
        assert result.error is not None and result.error.code == "FS_NOT_FOUND"
        return
    assert not result.is_error, result.text
    assert result.text.split("\n\n[showing")[0].split("\n") == expected
    assert result.value["total_lines"] == total


def test_a_multi_megabyte_line_is_truncated_without_being_held(root: Path, workspace: Workspace) -> None:
    (root / "long.txt").write_bytes(b"x" * (3 << 20) + b"\nsecond\n")
    result = workspace.session("s").call("read", {"file_path": "long.txt"})
    assert not result.is_error
    first, second = result.text.split("\n")[:2]
    assert first.endswith(f"[line truncated: {3 << 20:,} characters, {MAX_LINE_CHARS:,} shown]")
    assert len(first) < MAX_LINE_CHARS + 100
    assert second == "     2\tsecond"


def test_invalid_utf8_split_across_chunks_names_the_byte_offset(
    root: Path, workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(versions, "CHUNK", 4)
    (root / "bad.txt").write_bytes("héllo wörld".encode() + b"\xe2\x82" + b"!\n")
    result = workspace.session("s").call("read", {"file_path": "bad.txt"})
    assert result.error is not None and result.error.code == "FS_NOT_TEXT"
    assert "offset 13" in result.text


def test_reading_a_file_far_over_the_limit_holds_only_a_page(root: Path) -> None:
    import tracemalloc

    with open(root / "big.txt", "wb") as big:
        for _ in range(40):
            big.write(b"0123456789abcdef\n" * 61681)  # ~1 MiB of short lines per round, 40 MiB in all
    with Workspace(root, max_file_bytes=1 << 20) as ws:
        session = ws.session("s")
        tracemalloc.start()
        try:
            result = session.call("read", {"file_path": "big.txt", "offset": 1_000_000, "limit": 5})
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert not result.is_error, result.text
    assert result.value["total_lines"] == 40 * 61681
    assert result.text.startswith("1000000\t0123456789abcdef")
    assert peak < 8 << 20, f"peak {peak:,} bytes while paging a 40 MiB file"
