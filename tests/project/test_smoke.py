from __future__ import annotations

from pathlib import Path

from fs_tools import Session
from fs_tools.cli import main


def test_read_then_edit_round_trip(root: Path, session: Session) -> None:
    (root / "a.txt").write_text("one\ntwo\n")
    assert not session.call("read", {"file_path": "a.txt"}).is_error
    result = session.call("edit", {"file_path": "a.txt", "old_string": "two", "new_string": "2"})
    assert not result.is_error, result.text
    assert (root / "a.txt").read_bytes() == b"one\n2\n"


def test_demo_runs_every_step_as_scripted(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    for code in ("INVALID_ARGS", "FS_NOT_OBSERVED", "FS_AMBIGUOUS_EDIT", "FS_STALE_VERSION"):
        assert code in out
