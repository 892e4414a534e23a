"""Issue 33 beyond the near-miss diagnosis: an ambiguous edit says which match the session most likely
meant and what tells the matches apart; a stale edit says what the changed lines read now and why they
changed, where that is known; an edit whose new_string is its old_string says where that text is."""

from __future__ import annotations

from pathlib import Path

import pytest

from fs_tools import Session, Workspace
from fs_tools.result import ToolResult
from fs_tools.testing import assert_error, assert_ok
from tests.support.histories import recent_entries_of_every_session

FUNCTIONS = "".join(
    f"def {name}(items):\n    total = 0\n    for item in items:\n        total += item.value\n    return total\n\n\n"
    for name in ("alpha", "beta", "gamma", "delta")
)


def refused(result: ToolResult, code: str) -> str:
    return assert_error(result, code).text


# --- ambiguity ------------------------------------------------------------------------------------------


def test_an_ambiguous_edit_names_the_match_in_the_lines_the_session_read(root: Path, session: Session) -> None:
    (root / "m.py").write_text(FUNCTIONS)
    assert_ok(session.call("read", {"file_path": "m.py", "offset": 15, "limit": 7}))  # gamma's lines
    result = session.call("edit", {"file_path": "m.py", "old_string": "    total = 0", "new_string": "    total = 1"})
    text = refused(result, "FS_AMBIGUOUS_EDIT")
    assert "occurs 4 times in 'm.py', at lines 2, 9, 16, 23; the one at line 16 is in the lines this session " in text
    assert "last read (15–21)" in text
    assert (root / "m.py").read_text() == FUNCTIONS


def test_a_whole_file_read_names_no_match_as_the_likely_one(root: Path, session: Session) -> None:
    (root / "m.py").write_text(FUNCTIONS)
    assert_ok(session.call("read", {"file_path": "m.py"}))
    text = refused(
        session.call("edit", {"file_path": "m.py", "old_string": "    total = 0", "new_string": "    total = 1"}),
        "FS_AMBIGUOUS_EDIT",
    )
    assert "last read" not in text


def test_each_match_is_shown_with_what_encloses_it(root: Path, session: Session) -> None:
    """A match deep in a block is shown under its function; one at the left margin under its heading."""
    code = "class Shop:\n    def open(self):\n        if self.ready:\n\n            log('x')\n\n    def close(self):\n"
    code += "        if self.ready:\n\n            log('x')\n"
    (root / "shop.py").write_text(code)
    (root / "guide.md").write_text(
        "# Guide\n\n## Install\n\nFirst.\n\nRun the command.\n\n## Upgrade\n\nRun the command.\n"
    )
    assert_ok(session.call("read", {"file_path": "shop.py"}))
    assert_ok(session.call("read", {"file_path": "guide.md"}))
    text = refused(
        session.call("edit", {"file_path": "shop.py", "old_string": "            log('x')", "new_string": "pass"}),
        "FS_AMBIGUOUS_EDIT",
    )
    assert "     3\t        if self.ready:" in text and "     8\t        if self.ready:" in text
    text = refused(
        session.call("edit", {"file_path": "guide.md", "old_string": "Run the command.", "new_string": "Go."}),
        "FS_AMBIGUOUS_EDIT",
    )
    assert "     3\t## Install" in text and "     9\t## Upgrade" in text


def test_among_hundreds_of_matches_the_one_the_session_read_is_found(root: Path, session: Session) -> None:
    """Only the first matches are listed by line; the one in the lines the session read is looked for there."""
    (root / "big.py").write_text("".join(f"def f{i}():\n    x = compute()\n    return x\n\n" for i in range(300)))
    assert_ok(session.call("read", {"file_path": "big.py", "offset": 800, "limit": 10}))
    text = refused(
        session.call("edit", {"file_path": "big.py", "old_string": "    x = compute()", "new_string": "    x = 1"}),
        "FS_AMBIGUOUS_EDIT",
    )
    assert "occurs 300 times" in text and "and 250 more; the one at line 802 is in the lines this session" in text
    assert "   802\t    x = compute()" in text


# --- staleness ------------------------------------------------------------------------------------------


def test_a_stale_edit_shows_the_changed_lines_as_they_read_now(root: Path, session: Session) -> None:
    target = root / "a.py"
    target.write_text(FUNCTIONS)
    assert_ok(session.call("read", {"file_path": "a.py"}))
    target.write_text(FUNCTIONS.replace("def gamma(items):", "def gamma(items, limit):"))
    text = refused(
        session.call("edit", {"file_path": "a.py", "old_string": "def delta", "new_string": "def omega"}),
        "FS_STALE_VERSION",
    )
    assert text.endswith(
        "(line 15 changed; re-reading from offset 13 is enough); line 15 now reads:\n"
        "    15\tdef gamma(items, limit):\n — re-read the file, then retry"
    )
    assert "own change" not in text and "formatter" not in text


def test_a_change_of_whitespace_after_the_sessions_own_edit_is_named_a_formatters(root: Path, session: Session) -> None:
    target = root / "a.py"
    target.write_text("def f():\n    return 1\n")
    assert_ok(session.call("read", {"file_path": "a.py"}))
    assert_ok(session.call("edit", {"file_path": "a.py", "old_string": "return 1", "new_string": "return  10"}))
    target.write_text("def f():\n    return 10\n")  # the editor's formatter, on save
    text = refused(
        session.call("edit", {"file_path": "a.py", "old_string": "return 10", "new_string": "return 11"}),
        "FS_STALE_VERSION",
    )
    assert "after this session's own change of it, only whitespace: a formatter or an editor on save" in text
    assert "     2\t    return 10" in text


def test_another_writers_change_after_the_sessions_own_edit_is_named_so(root: Path, session: Session) -> None:
    target = root / "a.py"
    target.write_text("def f():\n    return 1\n")
    assert_ok(session.call("read", {"file_path": "a.py"}))
    assert_ok(session.call("edit", {"file_path": "a.py", "old_string": "return 1", "new_string": "return 10"}))
    target.write_text("def f():\n    return 99\n")
    text = refused(
        session.call("edit", {"file_path": "a.py", "old_string": "return 99", "new_string": "return 11"}),
        "FS_STALE_VERSION",
    )
    assert "after this session's own change of it: by another writer" in text
    assert target.read_text() == "def f():\n    return 99\n"


def test_a_stale_edit_shows_at_most_a_few_changed_lines(root: Path, session: Session) -> None:
    target = root / "a.txt"
    target.write_text("".join(f"line {n}\n" for n in range(1000)))
    assert_ok(session.call("read", {"file_path": "a.txt", "limit": 1}))
    target.write_text("".join(f"LINE {n}\n" for n in range(1000)))
    text = refused(
        session.call("edit", {"file_path": "a.txt", "old_string": "LINE 5", "new_string": "x"}), "FS_STALE_VERSION"
    )
    assert "(lines 1–1000 changed; re-reading from offset 1 is enough); those lines now read (the first 8" in text
    assert text.endswith("\n — re-read the file, then retry")
    assert text.count("\tLINE ") == 8 and len(text) < 600


# --- new_string equal to old_string ---------------------------------------------------------------------


def test_new_string_equal_to_old_string_says_where_that_text_is(root: Path, session: Session) -> None:
    (root / "a.py").write_text(FUNCTIONS)
    assert_ok(session.call("read", {"file_path": "a.py"}))
    text = refused(
        session.call("edit", {"file_path": "a.py", "old_string": "def beta(items):", "new_string": "def beta(items):"}),
        "INVALID_ARGS",
    )
    assert text.startswith("invalid arguments: /new_string: must differ from old_string — it is the same text")
    assert "already in the file at line 8: if it is as it should be, nothing is left to do" in text
    assert text.endswith("\n     8\tdef beta(items):")


def test_new_string_equal_to_an_old_string_not_in_the_file_is_diagnosed_as_not_found(
    root: Path, session: Session
) -> None:
    (root / "a.py").write_text(FUNCTIONS)
    assert_ok(session.call("read", {"file_path": "a.py"}))
    text = refused(
        session.call(
            "edit", {"file_path": "a.py", "old_string": "def betta(items):", "new_string": "def betta(items):"}
        ),
        "FS_EDIT_NOT_FOUND",
    )
    assert "it has 'betta' where the file has 'beta'" in text


def test_new_string_equal_to_old_string_on_a_file_not_read_asks_for_the_read_first(
    root: Path, session: Session
) -> None:
    """Alone, the violation is the edit's to answer, after its gates: the file's text is shown only to a
    session that may see it."""
    (root / "a.py").write_text(FUNCTIONS)
    text = refused(
        session.call("edit", {"file_path": "a.py", "old_string": "def beta", "new_string": "def beta"}),
        "FS_NOT_OBSERVED",
    )
    assert "def beta" not in text


def test_a_stale_edit_names_the_session_whose_change_made_the_file_as_it_is(workspace: Workspace, root: Path) -> None:
    """Two sessions of one workspace: the second's change makes the first's read stale, and the history
    (which records every session's changes) says whose change it was."""
    (root / "a.py").write_text("def f():\n    return 1\n")
    first, second = workspace.session("first"), workspace.session("second")
    for one in (first, second):
        assert_ok(one.call("read", {"file_path": "a.py"}))
    assert_ok(second.call("edit", {"file_path": "a.py", "old_string": "return 1", "new_string": "return 2"}))
    text = refused(
        first.call("edit", {"file_path": "a.py", "old_string": "return 1", "new_string": "return 3"}),
        "FS_STALE_VERSION",
    )
    assert "(line 2 changed, by session 'second' (its edit); re-reading from offset 1 is enough)" in text
    assert text.endswith("line 2 now reads:\n     2\t    return 2\n — re-read the file, then retry")


@pytest.mark.parametrize("store", ["memory", "sqlite"])
def test_every_history_store_lists_the_recent_entries_of_every_session(store: str, tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    chosen = None if store == "memory" else str(tmp_path / "store.sqlite")
    with Workspace(root, store=chosen) as ws:
        assert ws.history is not None
        recent_entries_of_every_session(ws.history)


def test_a_check_without_the_change_says_why_as_the_change_would(root: Path, session: Session) -> None:
    """Session.check (a harness hook's question) refuses a stale edit with the same words as the edit."""
    target = root / "a.py"
    target.write_text("def f():\n    return 1\n")
    assert_ok(session.call("read", {"file_path": "a.py"}))
    target.write_text("def f():\n    return  1\n")
    args = {"file_path": "a.py", "old_string": "return  1", "new_string": "return 2"}
    checked = refused(session.check("edit", args), "FS_STALE_VERSION")
    assert "only whitespace: a formatter or an editor on save" in checked
    assert checked == refused(session.call("edit", args), "FS_STALE_VERSION")
