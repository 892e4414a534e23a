"""Not-found diagnostics stay right and stay bounded on awkward files."""

from __future__ import annotations

import random
from pathlib import Path

from fs_tools import Session, Workspace


def _edit(session: Session, old: str) -> str:
    result = session.call("edit", {"file_path": "f.txt", "old_string": old, "new_string": "X"})
    assert result.error is not None and result.error.code == "FS_EDIT_NOT_FOUND", result.text
    return result.text


def test_a_file_with_bare_cr_line_breaks_is_named_as_such(root: Path, session: Session) -> None:
    (root / "f.txt").write_bytes(b"alpha\rbeta\rgamma\r")
    assert not session.call("read", {"file_path": "f.txt"}).is_error
    for old in ("alpha\nbeta", "beta\ngamma"):
        message = _edit(session, old)
        assert "bare \\r" in message and "as \\r in old_string" in message, message
        assert "line 1" in message and "alpha" in message


def test_a_cr_in_old_string_is_named_as_such(root: Path, session: Session) -> None:
    (root / "f.txt").write_bytes(b"alpha\nbeta\n")
    assert not session.call("read", {"file_path": "f.txt"}).is_error
    message = _edit(session, "alpha\rbeta")
    assert "as \\n, with no \\r" in message and "line 1" in message


def test_a_near_miss_far_down_a_large_file_is_found(root: Path) -> None:
    body = "".join(f"line number {i} with some words {i * 7}\n" for i in range(200_000))
    (root / "f.txt").write_text(body)
    with Workspace(root, max_file_bytes=64 << 20) as ws:
        session = ws.session("s")
        assert not session.call("read", {"file_path": "f.txt"}).is_error
        message = _edit(session, "line numbr 199999 with some wrds")
    assert "line 200000" in message and "199999 with some words" in message


def test_long_near_misses_produce_a_short_answer(root: Path, session: Session) -> None:
    rng = random.Random(7)
    lines = ["".join(rng.choice("abcdefgh ") for _ in range(2000)) for _ in range(40)]
    (root / "f.txt").write_text("\n".join(lines) + "\n")
    assert not session.call("read", {"file_path": "f.txt"}).is_error
    message = _edit(session, "\n".join(line[:-3] + "zzz" for line in lines))
    assert "line 1" in message
    assert len(message) < 2500  # a few candidate lines, each cut short — never the whole region
