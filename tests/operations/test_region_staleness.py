"""Region staleness (SPEC §15, ``Workspace(stale="region")``): an edit goes through when the file changed
since the session's read but not in the lines it covers, and says what else changed; anything else is
the strict stale error, and the default stays strict."""

from __future__ import annotations

from pathlib import Path

import pytest

from fs_tools import Session, Workspace
from fs_tools.testing import assert_error, assert_ok

TEXT = "".join(f"line{i} = {i}\n" for i in range(1, 21))


@pytest.fixture
def region(root: Path) -> Session:
    workspace = Workspace(root, stale="region")
    (root / "a.py").write_text(TEXT)
    session = workspace.session("s")
    assert_ok(session.call("read", {"file_path": "a.py"}))
    return session


def _change(root: Path, old: str, new: str) -> None:
    path = root / "a.py"
    path.write_text(path.read_text().replace(old, new))


def test_an_edit_of_unchanged_lines_goes_through_and_names_what_changed(root: Path, region: Session) -> None:
    _change(root, "line3 = 3\n", "line3 = 33\n")
    _change(root, "line15 = 15\n", "line15 = 150\nextra = 1\n")
    result = assert_ok(
        region.call(
            "edit", {"file_path": "a.py", "old_string": "line10 = 10\n", "new_string": "line10 = 100\nnew = 2\n"}
        )
    )
    assert result.value is not None and result.value["changed_lines"] == [[3, 3], [16, 17]]
    assert "lines 3, 16–17 changed (numbered as the file is now)" in result.text
    text = (root / "a.py").read_text()
    assert "line3 = 33\n" in text and "line10 = 100\nnew = 2\n" in text and "line15 = 150\nextra = 1\n" in text
    lines = text.split("\n")
    assert lines[2] == "line3 = 33" and lines[15] == "line15 = 150" and lines[16] == "extra = 1"  # as numbered
    assert_ok(region.call("edit", {"file_path": "a.py", "old_string": "line11 = 11", "new_string": "line11 = 110"}))


def test_an_edit_of_a_changed_line_is_stale_and_writes_nothing(root: Path, region: Session) -> None:
    _change(root, "line5 = 5\n", "line5 = 55\n")
    before = (root / "a.py").read_text()
    for old in ("line5 = 5", "line4 = 4\nline5 = 5", "line5 = 5\nline6 = 6"):
        message = assert_error(
            region.call("edit", {"file_path": "a.py", "old_string": old, "new_string": "x"}), "FS_STALE_VERSION"
        ).text
        assert "in the lines old_string covers" in message and "line 5" in message, message
    assert (root / "a.py").read_text() == before


def test_a_multi_edit_is_checked_edit_by_edit(root: Path, region: Session) -> None:
    _change(root, "line12 = 12\n", "line12 = 120\n")
    edits = [
        {"old_string": "line2 = 2", "new_string": "line2 = 20"},
        {"old_string": "line18 = 18", "new_string": "line18 = 180"},
    ]
    result = assert_ok(region.call("multi_edit", {"file_path": "a.py", "edits": edits}))
    assert result.value is not None and result.value["changed_lines"] == [[12, 12]]
    edits = [{"old_string": "line3 = 3", "new_string": "line3 = 30"}, {"old_string": "line19 = 19", "new_string": "y"}]
    _change(root, "line19 = 19\n", "line19 = 190\n")
    message = assert_error(region.call("multi_edit", {"file_path": "a.py", "edits": edits}), "FS_STALE_VERSION").text
    assert "/edits/1/old_string" in message
    assert "line3 = 3\n" in (root / "a.py").read_text()  # all or nothing


def test_what_a_region_edit_cannot_check_stays_strict(
    root: Path, region: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    _change(root, "line1 = 1\n", "line1 = 0\n")
    replace_all = {"file_path": "a.py", "old_string": "line9 = 9", "new_string": "z", "replace_all": True}
    assert_error(region.call("edit", replace_all), "FS_STALE_VERSION")  # every match would need checking
    monkeypatch.setattr(region.workspace.provider, "recall", lambda version: None)  # the read is forgotten
    assert_error(
        region.call("edit", {"file_path": "a.py", "old_string": "line9 = 9", "new_string": "z"}), "FS_STALE_VERSION"
    )
    monkeypatch.undo()
    (root / "a.py").unlink()
    assert_error(
        region.call("edit", {"file_path": "a.py", "old_string": "line9 = 9", "new_string": "z"}), "FS_STALE_VERSION"
    )


def test_the_default_stays_strict_and_a_bad_mode_is_refused(root: Path, session: Session) -> None:
    (root / "a.py").write_text(TEXT)
    assert_ok(session.call("read", {"file_path": "a.py"}))
    _change(root, "line1 = 1\n", "line1 = 0\n")
    assert_error(
        session.call("edit", {"file_path": "a.py", "old_string": "line9 = 9", "new_string": "z"}), "FS_STALE_VERSION"
    )
    with pytest.raises(ValueError, match="strict"):
        Workspace(root, stale="loose")
