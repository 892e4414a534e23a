"""The discovery tools ``list``, ``glob`` and ``grep`` on real trees (SPEC §7, §6, §8; issue 5).

Every test builds a real directory tree under the ``root`` fixture (whose sibling ``outside/secret.txt``
holds ``TOP-SECRET``) and drives the tools through ``session.call`` as a model would. Output is split into
rows and footer notes (the ``[...]`` lines after a blank line) so that format, caps and advice are asserted
separately.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fs_tools import Session, Workspace
from fs_tools.result import ToolResult

SECRET = "TOP-SECRET"
LIST_CAP = 500
GLOB_CAP = 1000
GREP_CAP = 200
GREP_LINE_CAP = 300


# --- helpers --------------------------------------------------------------------------------------------


def _ok(result: ToolResult) -> ToolResult:
    assert not result.is_error, result.text
    return result


def _error(result: ToolResult, code: str) -> str:
    assert result.is_error, f"expected {code}, got success: {result.text[:300]!r}"
    assert result.error is not None
    assert result.error.code == code, result.text
    assert result.value is None
    return result.text


def _split(text: str) -> tuple[list[str], list[str]]:
    """Rows, and footer notes (the bracketed lines after the last blank line, brackets removed)."""
    body, _, tail = text.rpartition("\n\n")
    tail_lines = tail.split("\n")
    if body and all(line.startswith("[") and line.endswith("]") for line in tail_lines):
        return body.split("\n"), [line[1:-1] for line in tail_lines]
    return text.split("\n"), []


def _rows(result: ToolResult) -> list[str]:
    return _split(_ok(result).text)[0]


def _notes(result: ToolResult) -> list[str]:
    return _split(_ok(result).text)[1]


def _write(root: Path, rel: str, content: str | bytes = "") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_bytes(content.encode())
    return path


def _outside(root: Path) -> Path:
    return root.parent / "outside"


def _assert_valid_utf8_single_lines(result: ToolResult) -> None:
    """The output encodes as UTF-8 and survives JSON (what an MCP client receives)."""
    result.text.encode("utf-8")  # raises on a lone surrogate
    json.dumps(result.to_dict(), ensure_ascii=False).encode("utf-8")


# --- list: format and arguments -------------------------------------------------------------------------


@pytest.fixture
def small_tree(root: Path) -> Path:
    _write(root, "a.txt", "abc")
    _write(root, "src/main.py", "print('hi')\n")
    _write(root, "src/pkg/mod.py", "x = 1\n")
    _write(root, "src/pkg/deep/leaf.py", "y = 2\n")
    return root


def test_list_default_is_an_indented_tree_two_levels_deep(small_tree: Path, session: Session) -> None:
    result = session.call("list", {})
    assert _rows(result) == ["a.txt  (3 bytes)", "src/", "  main.py  (12 bytes)", "  pkg/"]
    assert _notes(result) == ["1 director(ies) at depth 2 not expanded; pass a larger depth to see inside"]
    assert result.value == {"path": ".", "entries": 4, "hidden": 0, "truncated": False}


def test_list_depth_one_shows_only_the_top_level(small_tree: Path, session: Session) -> None:
    result = session.call("list", {"depth": 1})
    assert _rows(result) == ["a.txt  (3 bytes)", "src/"]
    assert any("depth 1 not expanded" in note and "larger depth" in note for note in _notes(result))


def test_list_larger_depth_shows_every_level_with_two_spaces_per_level(small_tree: Path, session: Session) -> None:
    result = session.call("list", {"depth": 4})
    assert _rows(result) == [
        "a.txt  (3 bytes)",
        "src/",
        "  main.py  (12 bytes)",
        "  pkg/",
        "    deep/",
        "      leaf.py  (6 bytes)",
        "    mod.py  (6 bytes)",
    ]
    assert _notes(result) == []  # nothing left unexpanded, hidden or capped


def test_list_depth_zero_is_invalid_args(small_tree: Path, session: Session) -> None:
    text = _error(session.call("list", {"depth": 0}), "INVALID_ARGS")
    assert text.startswith("invalid arguments: /depth:")
    assert "1" in text and "0" in text


def test_list_sizes_are_the_real_byte_counts(root: Path, session: Session) -> None:
    _write(root, "big.bin", b"\0" * 12_345)
    _write(root, "empty.txt", b"")
    _write(root, "utf8.txt", "é€\n")  # 2 + 3 + 1 bytes, 3 characters
    assert _rows(session.call("list", {})) == ["big.bin  (12,345 bytes)", "empty.txt  (0 bytes)", "utf8.txt  (6 bytes)"]


def test_list_is_sorted_whatever_the_creation_order(root: Path, session: Session) -> None:
    names = ["zeta.txt", "Beta.txt", "alpha.txt", "10.txt", "9.txt", "_under.txt"]
    for name in names:
        _write(root, name, "x")
    rows = _rows(session.call("list", {}))
    assert [row.split("  (")[0] for row in rows] == sorted(names)


def test_list_hidden_entries_are_counted_and_shown_on_request(root: Path, session: Session) -> None:
    _write(root, ".env", "KEY=1\n")
    _write(root, ".config/settings.json", "{}")
    _write(root, "visible.txt", "v")
    default = session.call("list", {})
    assert _rows(default) == ["visible.txt  (1 bytes)"]
    (note,) = _notes(default)
    assert note.startswith("2 hidden") and "include_hidden=true" in note
    assert default.value == {"path": ".", "entries": 1, "hidden": 2, "truncated": False}

    shown = session.call("list", {"include_hidden": True})
    assert _rows(shown) == [".config/", "  settings.json  (2 bytes)", ".env  (6 bytes)", "visible.txt  (1 bytes)"]
    assert _notes(shown) == []
    assert shown.value == {"path": ".", "entries": 4, "hidden": 0, "truncated": False}


def test_list_path_lists_that_directory(small_tree: Path, session: Session) -> None:
    expected = ["main.py  (12 bytes)", "pkg/", "  deep/", "  mod.py  (6 bytes)"]
    relative = session.call("list", {"path": "src"})
    assert _rows(relative) == expected
    assert relative.value == {"path": "src", "entries": 4, "hidden": 0, "truncated": False}
    assert _rows(session.call("list", {"path": "src/"})) == expected
    assert _rows(session.call("list", {"path": str(small_tree / "src")})) == expected


def test_list_of_an_empty_directory_says_it_is_empty(root: Path, session: Session) -> None:
    (root / "empty").mkdir()
    result = _ok(session.call("list", {"path": "empty"}))
    assert result.text == "(the directory 'empty' is empty)"
    assert result.value == {"path": "empty", "entries": 0, "hidden": 0, "truncated": False}


def test_list_marks_symlinks_and_never_follows_them(root: Path, session: Session) -> None:
    outside = _outside(root)
    _write(root, "real/inner.txt", "inner")
    os.symlink("real", root / "in_link")
    os.symlink("../outside", root / "out_rel")
    os.symlink(str(outside), root / "out_abs")
    os.symlink("../outside/secret.txt", root / "secret_rel")
    os.symlink(str(outside / "secret.txt"), root / "secret_abs")
    os.symlink("nowhere", root / "dangling")
    result = session.call("list", {"depth": 10, "include_hidden": True})
    assert _rows(result) == [
        "dangling@  (symlink, not followed)",
        "in_link@  (symlink, not followed)",
        "out_abs@  (symlink, not followed)",
        "out_rel@  (symlink, not followed)",
        "real/",
        "  inner.txt  (5 bytes)",
        "secret_abs@  (symlink, not followed)",
        "secret_rel@  (symlink, not followed)",
    ]
    assert SECRET not in result.text and "secret.txt" not in result.text
    assert str(outside) not in result.text


# --- list: cap ------------------------------------------------------------------------------------------


def test_list_exactly_at_the_cap_has_no_footer(root: Path, session: Session) -> None:
    for n in range(LIST_CAP):
        _write(root, f"f{n:04}.txt")
    result = session.call("list", {})
    assert len(_rows(result)) == LIST_CAP
    assert _notes(result) == []
    assert result.value == {"path": ".", "entries": LIST_CAP, "hidden": 0, "truncated": False}


def test_list_over_the_cap_stops_with_a_footer_whose_advice_works(root: Path, session: Session) -> None:
    for n in range(300):
        _write(root, f"d1/f{n:03}.txt")
        _write(root, f"d2/f{n:03}.txt")
    result = session.call("list", {})
    rows = _rows(result)
    assert len(rows) == LIST_CAP
    assert rows[:2] == ["d1/", "  f000.txt  (0 bytes)"]
    assert "  f299.txt  (0 bytes)" not in rows[LIST_CAP - 10 :]  # d2 was cut before its end
    (note,) = _notes(result)
    assert f"stopped at {LIST_CAP} entries" in note
    assert "list a subdirectory" in note
    assert result.value == {"path": ".", "entries": LIST_CAP, "hidden": 0, "truncated": True}
    # Following the advice shows what the cap hid.
    rest = session.call("list", {"path": "d2"})
    assert len(_rows(rest)) == 300 and _rows(rest)[-1] == "f299.txt  (0 bytes)"
    assert _notes(rest) == []


def test_list_cap_footer_in_a_flat_directory_names_a_route_that_can_work(root: Path, session: Session) -> None:
    """600 files directly in the root, depth 1: there is no subdirectory to list and no smaller depth,
    so the only way to see the other 100 names is another tool (glob) — the footer must say so."""
    for n in range(600):
        _write(root, f"f{n:04}.txt")
    result = session.call("list", {"depth": 1})
    assert len(_rows(result)) == LIST_CAP
    (note,) = _notes(result)
    assert f"stopped at {LIST_CAP} entries" in note
    assert "glob" in note, f"the footer's only advice cannot reveal the rest of a flat directory: {note!r}"


# --- glob -----------------------------------------------------------------------------------------------


@pytest.fixture
def code_tree(root: Path) -> Path:
    _write(root, "setup.py", "")
    _write(root, "README.md", "")
    _write(root, "src/app.py", "")
    _write(root, "src/web/a.js", "")
    _write(root, "src/web/b.ts", "")
    _write(root, "src/web/c.py", "")
    _write(root, "src/web/d.tsx", "")
    _write(root, "tests/test_app.py", "")
    (root / "pkg.py").mkdir()  # a directory whose name matches: never listed by glob
    _write(root, "pkg.py/inner.py", "")
    return root


def test_glob_globstar_lists_files_at_any_depth_relative_to_the_root_sorted(code_tree: Path, session: Session) -> None:
    result = session.call("glob", {"pattern": "**/*.py"})
    assert _rows(result) == ["pkg.py/inner.py", "setup.py", "src/app.py", "src/web/c.py", "tests/test_app.py"]
    assert _notes(result) == []
    assert result.value == {"pattern": "**/*.py", "matches": 5, "truncated": False}


def test_glob_star_does_not_cross_directories(code_tree: Path, session: Session) -> None:
    assert _rows(session.call("glob", {"pattern": "*.py"})) == ["setup.py"]
    assert _rows(session.call("glob", {"pattern": "src/*"})) == ["src/app.py"]


def test_glob_braces_alternate(code_tree: Path, session: Session) -> None:
    assert _rows(session.call("glob", {"pattern": "src/**/*.{js,ts}"})) == ["src/web/a.js", "src/web/b.ts"]
    assert _rows(session.call("glob", {"pattern": "{setup.py,README.md}"})) == ["README.md", "setup.py"]


def test_glob_lists_files_only(code_tree: Path, session: Session) -> None:
    rows = _rows(session.call("glob", {"pattern": "**"}))
    assert "pkg.py" not in rows and "src" not in rows and "src/web" not in rows
    assert all(not row.endswith("/") for row in rows)
    assert len(rows) == 9


def test_glob_path_searches_below_it_and_still_prints_paths_relative_to_the_root(
    code_tree: Path, session: Session
) -> None:
    result = session.call("glob", {"pattern": "*.py", "path": "src/web"})
    assert _rows(result) == ["src/web/c.py"]
    assert _rows(session.call("glob", {"pattern": "**/*.py", "path": "src"})) == ["src/app.py", "src/web/c.py"]
    absolute = session.call("glob", {"pattern": "**/*.py", "path": str(code_tree / "src")})
    assert _rows(absolute) == ["src/app.py", "src/web/c.py"]
    assert str(code_tree) not in absolute.text


def test_glob_with_no_match_says_so(code_tree: Path, session: Session) -> None:
    result = _ok(session.call("glob", {"pattern": "**/*.rs", "path": "src"}))
    assert "no files match" in result.text and "'**/*.rs'" in result.text and "'src'" in result.text
    assert result.value == {"pattern": "**/*.rs", "matches": 0, "truncated": False}


def test_glob_skips_version_control_directories(root: Path, session: Session) -> None:
    for vcs in (".git", ".hg", ".svn"):
        _write(root, f"{vcs}/hooks/tool.py", "")
        _write(root, f"sub/{vcs}/nested.py", "")
    _write(root, ".github/workflow.py", "")  # hidden but not VCS: found
    _write(root, "sub/real.py", "")
    assert _rows(session.call("glob", {"pattern": "**/*.py"})) == [".github/workflow.py", "sub/real.py"]


def test_glob_exactly_at_the_cap_has_no_footer(root: Path, session: Session) -> None:
    for n in range(GLOB_CAP):
        _write(root, f"f{n:04}.txt")
    result = session.call("glob", {"pattern": "*.txt"})
    assert len(_rows(result)) == GLOB_CAP and _notes(result) == []
    assert result.value == {"pattern": "*.txt", "matches": GLOB_CAP, "truncated": False}


def test_glob_over_the_cap_stops_with_a_footer_whose_advice_works(root: Path, session: Session) -> None:
    for n in range(600):
        _write(root, f"a/f{n:03}.txt")
    for n in range(405):
        _write(root, f"b/f{n:03}.txt")
    result = session.call("glob", {"pattern": "**/*.txt"})
    rows = _rows(result)
    assert len(rows) == GLOB_CAP
    assert rows[0] == "a/f000.txt" and rows[-1] == "b/f399.txt"
    (note,) = _notes(result)
    assert f"stopped at {GLOB_CAP} files" in note and "narrower pattern or path" in note
    assert result.value == {"pattern": "**/*.txt", "matches": GLOB_CAP, "truncated": True}
    rest = session.call("glob", {"pattern": "*.txt", "path": "b"})
    assert len(_rows(rest)) == 405 and _rows(rest)[-1] == "b/f404.txt" and _notes(rest) == []


# --- grep: format and arguments -------------------------------------------------------------------------


def test_grep_rows_are_path_line_text_with_one_based_line_numbers(root: Path, session: Session) -> None:
    lines = [f"line {n}" for n in range(1, 13)]
    lines[1] = "needle first"
    lines[4] = "  needle indented"
    lines[11] = "last needle"
    _write(root, "src/app.py", "\n".join(lines))  # no trailing newline on the last line
    result = session.call("grep", {"pattern": "needle"})
    assert _rows(result) == [
        "src/app.py:2: needle first",
        "src/app.py:5:   needle indented",
        "src/app.py:12: last needle",
    ]
    assert _notes(result) == []
    assert result.value == {
        "pattern": "needle",
        "matches": 3,
        "files_searched": 1,
        "files_with_matches": 1,
        "truncated": False,
    }


def test_grep_gives_one_row_per_line_however_many_matches_it_has(root: Path, session: Session) -> None:
    _write(root, "a.txt", "x x x\nnone\nx\n")
    result = session.call("grep", {"pattern": "x"})
    assert _rows(result) == ["a.txt:1: x x x", "a.txt:3: x"]
    assert result.value["matches"] == 2


def test_grep_lists_files_in_sorted_order_and_counts_them(root: Path, session: Session) -> None:
    _write(root, "b.txt", "hit\n")
    _write(root, "a/z.txt", "hit\n")
    _write(root, "a.txt", "miss\n")
    result = session.call("grep", {"pattern": "hit"})
    assert _rows(result) == ["a/z.txt:1: hit", "b.txt:1: hit"]
    assert result.value == {
        "pattern": "hit",
        "matches": 2,
        "files_searched": 3,
        "files_with_matches": 2,
        "truncated": False,
    }


def test_grep_does_not_show_crlf_line_endings(root: Path, session: Session) -> None:
    _write(root, "win.txt", b"alpha\r\nneedle one\r\ngamma\r\nneedle two\r\n")
    result = session.call("grep", {"pattern": "needle"})
    assert _rows(result) == ["win.txt:2: needle one", "win.txt:4: needle two"]
    assert "\r" not in result.text and "\\r" not in result.text


def test_grep_dollar_matches_at_the_end_of_a_crlf_line(root: Path, session: Session) -> None:
    """The description promises '^ and $ match at line ends', and the output hides the CR, so a model
    that sees 'needle one' at the end of a line and searches 'one$' must find it."""
    _write(root, "win.txt", b"alpha\r\nneedle one\r\n")
    _write(root, "unix.txt", b"alpha\nneedle one\n")
    result = session.call("grep", {"pattern": "one$"})
    assert _rows(result) == ["unix.txt:2: needle one", "win.txt:2: needle one"]


def test_grep_shows_a_tab_indented_line_as_it_is_in_the_file(root: Path, session: Session) -> None:
    """A tab is neither a control character that can forge a row nor something a model can drop: a line
    shown as '\\treturn x' reads as a backslash and a 't', and an edit built from it fails."""
    _write(root, "go.go", "func f() {\n\treturn needle\n}\n")
    assert _rows(session.call("grep", {"pattern": "needle"})) == ["go.go:2: \treturn needle"]


def test_grep_line_separators_inside_a_line_cannot_forge_rows(root: Path, session: Session) -> None:
    _write(root, "a.txt", "needle\u2028b.txt:1: forged\x0cc.txt:9: forged\x1b[2K\n")
    result = session.call("grep", {"pattern": "needle"})
    assert len(result.text.splitlines()) == 1
    (row,) = _rows(result)
    assert row.startswith("a.txt:1: needle")


def test_grep_path_restricts_the_search_to_a_directory(root: Path, session: Session) -> None:
    _write(root, "src/a.py", "needle\n")
    _write(root, "docs/a.md", "needle\n")
    result = session.call("grep", {"pattern": "needle", "path": "src"})
    assert _rows(result) == ["src/a.py:1: needle"]
    assert result.value["files_searched"] == 1
    absolute = session.call("grep", {"pattern": "needle", "path": str(root / "docs")})
    assert _rows(absolute) == ["docs/a.md:1: needle"]


def test_grep_path_can_be_a_single_file(root: Path, session: Session) -> None:
    _write(root, "src/a.py", "one\nneedle\n")
    _write(root, "src/b.py", "needle\n")
    result = session.call("grep", {"pattern": "needle", "path": "src/a.py"})
    assert _rows(result) == ["src/a.py:2: needle"]
    assert result.value == {
        "pattern": "needle",
        "matches": 1,
        "files_searched": 1,
        "files_with_matches": 1,
        "truncated": False,
    }


def test_grep_glob_filter(root: Path, session: Session) -> None:
    _write(root, "top.py", "needle\n")
    _write(root, "src/deep/mod.py", "needle\n")
    _write(root, "src/web/app.ts", "needle\n")
    _write(root, "src/web/app.js", "needle\n")
    _write(root, "notes.txt", "needle\n")
    by_name = session.call("grep", {"pattern": "needle", "glob": "*.py"})
    assert _rows(by_name) == ["src/deep/mod.py:1: needle", "top.py:1: needle"]
    by_path = session.call("grep", {"pattern": "needle", "glob": "src/**/*.{ts,js}"})
    assert _rows(by_path) == ["src/web/app.js:1: needle", "src/web/app.ts:1: needle"]
    assert by_path.value["files_searched"] == 2  # files the filter rejects are not searched


def test_grep_case_sensitivity(root: Path, session: Session) -> None:
    _write(root, "a.txt", "Needle\nneedle\nNEEDLE\n")
    assert _rows(session.call("grep", {"pattern": "needle"})) == ["a.txt:2: needle"]
    assert _rows(session.call("grep", {"pattern": "needle", "case_insensitive": False})) == ["a.txt:2: needle"]
    insensitive = session.call("grep", {"pattern": "needle", "case_insensitive": True})
    assert _rows(insensitive) == ["a.txt:1: Needle", "a.txt:2: needle", "a.txt:3: NEEDLE"]


def test_grep_with_no_match_says_how_many_files_it_searched(root: Path, session: Session) -> None:
    _write(root, "a.txt", "x\n")
    _write(root, "b.txt", "y\n")
    result = _ok(session.call("grep", {"pattern": "needle"}))
    assert "no matches" in result.text and "'needle'" in result.text and "2 file(s)" in result.text
    assert result.value == {
        "pattern": "needle",
        "matches": 0,
        "files_searched": 2,
        "files_with_matches": 0,
        "truncated": False,
    }


@pytest.mark.parametrize("pattern", ["(", "[a-", "a{2,1}", "*x", "(?P<n>a)(?P<n>b)", "\\"])
def test_grep_bad_regex_is_invalid_args_at_pattern_with_the_re_error(
    root: Path, session: Session, pattern: str
) -> None:
    _write(root, "a.txt", "a\n")
    with pytest.raises(re.error) as raised:
        re.compile(pattern)
    text = _error(session.call("grep", {"pattern": pattern}), "INVALID_ARGS")
    assert text.startswith("invalid arguments: /pattern: invalid regular expression:")
    assert str(raised.value) in text


# --- grep: caps -----------------------------------------------------------------------------------------


def test_grep_exactly_at_the_cap_has_no_footer(root: Path, session: Session) -> None:
    _write(root, "a.txt", "needle\n" * GREP_CAP)
    result = session.call("grep", {"pattern": "needle"})
    assert len(_rows(result)) == GREP_CAP and _notes(result) == []
    assert result.value["truncated"] is False


def test_grep_over_the_cap_stops_with_a_footer_whose_advice_works(root: Path, session: Session) -> None:
    _write(root, "a/many.txt", "needle\n" * 150)
    _write(root, "b/many.txt", "needle\n" * 150)
    result = session.call("grep", {"pattern": "needle"})
    rows = _rows(result)
    assert len(rows) == GREP_CAP
    assert rows[0] == "a/many.txt:1: needle" and rows[149] == "a/many.txt:150: needle"
    assert rows[-1] == "b/many.txt:50: needle"
    (note,) = _notes(result)
    assert f"stopped at {GREP_CAP} matching lines" in note and "narrow the pattern, path or glob" in note
    assert result.value["matches"] == GREP_CAP and result.value["truncated"] is True
    rest = session.call("grep", {"pattern": "needle", "path": "b"})
    assert len(_rows(rest)) == 150 and _notes(rest) == []


def test_grep_caps_each_line_and_says_how_long_it_was(root: Path, session: Session) -> None:
    long_line = "needle" + "x" * 984 + "TAILMARK!"  # 999 characters
    exact_line = "needle" + "y" * (GREP_LINE_CAP - 6)
    _write(root, "a.txt", f"{long_line}\n{exact_line}\n")
    rows = _rows(session.call("grep", {"pattern": "needle"}))
    assert len(rows) == 2
    assert rows[0].startswith("a.txt:1: " + long_line[:GREP_LINE_CAP])
    assert "TAILMARK" not in rows[0]
    assert "999 characters" in rows[0][len("a.txt:1: ") + GREP_LINE_CAP :]
    assert len(rows[0]) < len("a.txt:1: ") + GREP_LINE_CAP + 40
    assert rows[1] == f"a.txt:2: {exact_line}"  # exactly at the cap: shown whole, no marker


# --- grep: .gitignore, VCS, binary ----------------------------------------------------------------------


@pytest.fixture
def ignoring_tree(root: Path) -> Path:
    _write(root, ".gitignore", "*.log\nbuild/\n")
    _write(root, "app.py", "needle\n")
    _write(root, "debug.log", "needle\n")
    _write(root, "build/out.txt", "needle\n")
    _write(root, "build/more/deep.txt", "needle\n")
    _write(root, "src/build.txt", "needle\n")  # 'build/' names a directory only
    _write(root, "src/trace.log", "needle\n")
    _write(root, "sub/.gitignore", "local.txt\n")
    _write(root, "sub/local.txt", "needle\n")
    _write(root, "sub/kept.txt", "needle\n")
    _write(root, "other/local.txt", "needle\n")  # the nested rule applies only below sub/
    return root


def test_grep_respects_root_and_nested_gitignore_by_default(ignoring_tree: Path, session: Session) -> None:
    result = session.call("grep", {"pattern": "needle"})
    assert _rows(result) == [
        "app.py:1: needle",
        "other/local.txt:1: needle",
        "src/build.txt:1: needle",
        "sub/kept.txt:1: needle",
    ]
    (note,) = _notes(result)
    # debug.log, build/, src/trace.log, sub/local.txt
    assert note.startswith("4 path(s) excluded by .gitignore") and "include_ignored=true" in note
    assert result.value["files_searched"] == 6  # the four shown and the two .gitignore files


def test_grep_include_ignored_searches_ignored_files(ignoring_tree: Path, session: Session) -> None:
    result = session.call("grep", {"pattern": "needle", "include_ignored": True})
    assert _rows(result) == [
        "app.py:1: needle",
        "build/more/deep.txt:1: needle",
        "build/out.txt:1: needle",
        "debug.log:1: needle",
        "other/local.txt:1: needle",
        "src/build.txt:1: needle",
        "src/trace.log:1: needle",
        "sub/kept.txt:1: needle",
        "sub/local.txt:1: needle",
    ]
    assert _notes(result) == []


def test_grep_respects_the_root_gitignore_when_path_is_a_subdirectory(ignoring_tree: Path, session: Session) -> None:
    """Whether a file is ignored does not depend on where the search starts: git applies the root's
    .gitignore to src/trace.log whatever the current directory."""
    result = session.call("grep", {"pattern": "needle", "path": "src"})
    assert _rows(result) == ["src/build.txt:1: needle"]
    build = session.call("grep", {"pattern": "needle", "path": "sub"})
    assert _rows(build) == ["sub/kept.txt:1: needle"]


def test_grep_nested_gitignore_negation_overrides_the_parent(root: Path, session: Session) -> None:
    """As in git (`git check-ignore` agrees): a deeper .gitignore's '!keep.log' re-includes a file the
    root's '*.log' excluded."""
    _write(root, ".gitignore", "*.log\n")
    _write(root, "proj/.gitignore", "!keep.log\n")
    _write(root, "proj/keep.log", "needle\n")
    _write(root, "proj/drop.log", "needle\n")
    assert _rows(session.call("grep", {"pattern": "needle"})) == ["proj/keep.log:1: needle"]


def test_grep_skips_version_control_directories_even_with_include_ignored(root: Path, session: Session) -> None:
    for vcs in (".git", ".hg", ".svn"):
        _write(root, f"{vcs}/config", "needle\n")
        _write(root, f"sub/{vcs}/objects/x", "needle\n")
    _write(root, "sub/real.txt", "needle\n")
    for include_ignored in (False, True):
        result = session.call("grep", {"pattern": "needle", "include_ignored": include_ignored})
        assert _rows(result) == ["sub/real.txt:1: needle"]
        assert result.value["files_searched"] == 1


def test_grep_skips_binary_files_and_counts_them(root: Path, session: Session) -> None:
    _write(root, "blob.bin", b"needle\0\x01\x02needle\n")
    _write(root, "late.bin", b"x" * 100 + b"\0" + b"needle\n")
    _write(root, "text.txt", "needle\n")
    result = session.call("grep", {"pattern": "needle"})
    assert _rows(result) == ["text.txt:1: needle"]
    (note,) = _notes(result)
    assert note == "2 binary files skipped"
    assert result.value == {
        "pattern": "needle",
        "matches": 1,
        "files_searched": 3,
        "files_with_matches": 1,
        "truncated": False,
    }
    single = session.call("grep", {"pattern": "needle", "path": "blob.bin"})
    assert _rows(single) == ["(no matches for 'needle' in 1 file(s) under 'blob.bin')"]
    assert _notes(single) == ["1 binary file skipped"]
    assert single.value["matches"] == 0


# --- grep: time budget ----------------------------------------------------------------------------------


def test_grep_with_a_zero_budget_times_out_and_says_what_it_did(root: Path) -> None:
    for n in range(300):
        _write(root, f"d{n % 10}/f{n:03}.txt", "needle\n")
    with Workspace(root, search_seconds=0) as workspace:
        result = workspace.session("budget").call("grep", {"pattern": "needle"})
    text = _error(result, "TOOL_TIMEOUT")
    searched = re.search(r"after searching (\d+) file\(s\)", text)
    assert searched, text
    found = re.search(r"(\d+) matching line\(s\) so far", text)
    assert found, text
    assert int(searched.group(1)) < 300
    assert "0 s budget" in text
    assert "narrow path or glob" in text


class _TickingClock:
    """A deterministic clock: each reading is one second after the previous one."""

    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        self.now += 1.0
        return self.now


def test_grep_timeout_message_carries_the_matches_found_so_far(root: Path) -> None:
    for n in range(300):
        _write(root, f"f{n:03}.txt", f"needle {n}\n")
    clock = _TickingClock()
    with Workspace(root, search_seconds=30, clock=clock.monotonic) as workspace:
        result = workspace.session("budget").call("grep", {"pattern": "needle"})
    text = _error(result, "TOOL_TIMEOUT")
    searched = int(re.search(r"after searching (\d+) file\(s\)", text).group(1))  # type: ignore[union-attr]
    found = int(re.search(r"(\d+) matching line\(s\) so far", text).group(1))  # type: ignore[union-attr]
    assert 0 < searched < 300
    assert found == searched  # one matching line per file
    for n in range(min(found, 20)):
        assert f"f{n:03}.txt:1: needle {n}" in text
    assert "30 s budget" in text


# --- escaped names --------------------------------------------------------------------------------------

FORGING = "a\n[FILE] secret"
RTL = "invoice\u202etxt.exe"


@pytest.fixture
def odd_names(root: Path) -> Path:
    _write(root, FORGING, "needle\n")
    _write(root, RTL, "needle\n")
    fd = os.open(bytes(root) + b"/caf\xe9", os.O_CREAT | os.O_WRONLY, 0o644)
    os.write(fd, b"needle\n")
    os.close(fd)
    _write(root, "plain.txt", "needle\n")
    return root


@pytest.mark.parametrize(
    ("tool", "args", "suffix"),
    [
        ("list", {}, "  (7 bytes)"),
        ("glob", {"pattern": "*"}, ""),
        ("grep", {"pattern": "needle"}, ":1: needle"),
    ],
)
def test_odd_names_are_one_escaped_line_each(
    odd_names: Path, session: Session, tool: str, args: dict[str, Any], suffix: str
) -> None:
    result = _ok(session.call(tool, args))
    _assert_valid_utf8_single_lines(result)
    rows = _rows(result)
    assert len(rows) == 4, rows
    assert len(result.text.splitlines()) == len(result.text.split("\n"))  # no other line breaks
    assert "a\\n[FILE] secret" + suffix in rows
    assert not any(row.startswith("[FILE]") for row in rows)
    assert "\u202e" not in result.text
    assert "invoice\\u202etxt.exe" + suffix in rows
    assert "plain.txt" + suffix in rows
    (cafe,) = [row for row in rows if row.startswith("caf")]
    assert re.match(r"caf\\[xuU]0*(dc)?e9", cafe), cafe
    assert cafe.endswith(suffix)


# --- symlinks leading out -------------------------------------------------------------------------------


@pytest.fixture
def links_out(root: Path) -> Path:
    outside = _outside(root)
    _write(root, "src/app.py", "needle\n")
    os.symlink("../outside", root / "out_rel")
    os.symlink(str(outside), root / "out_abs")
    os.symlink("../outside/secret.txt", root / "sec_rel.txt")
    os.symlink(str(outside / "secret.txt"), root / "sec_abs.txt")
    os.symlink("../../outside", root / "src" / "nested_out")
    os.symlink("../../outside/secret.txt", root / "src" / "nested_sec.txt")
    return root


LINKS_OUT = ["out_rel", "out_abs", "sec_rel.txt", "sec_abs.txt", "src/nested_out", "src/nested_sec.txt"]


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("list", {"depth": 10, "include_hidden": True}),
        ("glob", {"pattern": "**"}),
        ("glob", {"pattern": "**/secret*"}),
        ("grep", {"pattern": "T.P-SEC.ET"}),
        ("grep", {"pattern": "T.P-SEC.ET", "include_ignored": True, "glob": "**"}),
        ("grep", {"pattern": "."}),
    ],
)
def test_symlinks_leading_out_are_never_followed(
    links_out: Path, session: Session, tool: str, args: dict[str, Any]
) -> None:
    result = _ok(session.call(tool, args))
    assert SECRET not in result.text
    assert str(_outside(links_out)) not in result.text
    assert "secret.txt" not in result.text  # the target's name never appears as a listed entry
    if tool == "grep":
        assert result.value["files_searched"] == 1  # src/app.py only: no link was opened
    if tool == "glob":
        assert not any(row in LINKS_OUT or row.startswith(("out_", "src/nested_out/")) for row in _rows(result))


def test_list_shows_links_out_as_links_not_as_their_targets_contents(links_out: Path, session: Session) -> None:
    rows = _rows(session.call("list", {"depth": 10}))
    assert rows == [
        "out_abs@  (symlink, not followed)",
        "out_rel@  (symlink, not followed)",
        "sec_abs.txt@  (symlink, not followed)",
        "sec_rel.txt@  (symlink, not followed)",
        "src/",
        "  app.py  (7 bytes)",
        "  nested_out@  (symlink, not followed)",
        "  nested_sec.txt@  (symlink, not followed)",
    ]


@pytest.mark.parametrize("tool", ["list", "glob", "grep"])
@pytest.mark.parametrize("link", [*LINKS_OUT, "out_rel/", "out_rel/secret.txt", "src/nested_out/secret.txt"])
def test_path_at_a_link_leading_out_is_sandbox_denied(links_out: Path, session: Session, tool: str, link: str) -> None:
    args: dict[str, Any] = {"path": link}
    if tool != "list":
        args["pattern"] = SECRET if tool == "grep" else "**"
    text = _error(session.call(tool, args), "FS_SANDBOX_DENIED")
    assert repr(link) in text
    assert "outside the workspace" in text
    assert SECRET not in text and str(_outside(links_out)) not in text


# --- path errors ----------------------------------------------------------------------------------------


def _path_args(tool: str, path: str) -> dict[str, Any]:
    if tool == "list":
        return {"path": path}
    return {"path": path, "pattern": "needle" if tool == "grep" else "**"}


@pytest.mark.parametrize("tool", ["list", "glob", "grep"])
@pytest.mark.parametrize("path", ["..", "../outside", "src/../../outside", "/etc", "OUTSIDE_ABSOLUTE"])
def test_path_escaping_the_root_is_sandbox_denied(root: Path, session: Session, tool: str, path: str) -> None:
    _write(root, "src/a.txt", "needle\n")
    if path == "OUTSIDE_ABSOLUTE":
        path = str(_outside(root))
    text = _error(session.call(tool, _path_args(tool, path)), "FS_SANDBOX_DENIED")
    assert repr(path) in text and re.search("outside (the|every) workspace", text), text
    assert SECRET not in text and "passwd" not in text


@pytest.mark.parametrize("tool", ["list", "glob", "grep"])
@pytest.mark.parametrize("path", ["missing", "src/missing", "missing/deeper"])
def test_missing_path_is_not_found(root: Path, session: Session, tool: str, path: str) -> None:
    _write(root, "src/a.txt", "needle\n")
    text = _error(session.call(tool, _path_args(tool, path)), "FS_NOT_FOUND")
    assert repr(path) in text and "does not exist" in text


@pytest.mark.parametrize("tool", ["list", "glob"])
def test_list_and_glob_of_a_file_are_not_directory(root: Path, session: Session, tool: str) -> None:
    _write(root, "src/a.txt", "needle\n")
    text = _error(session.call(tool, _path_args(tool, "src/a.txt")), "FS_NOT_DIRECTORY")
    assert text.startswith("'src/a.txt' is not a directory")


# --- observations ---------------------------------------------------------------------------------------


def test_searches_record_no_observations(root: Path, session: Session) -> None:
    _write(root, "src/a.txt", "needle\n")
    calls: list[tuple[str, dict[str, Any]]] = [
        ("list", {"path": "src"}),
        ("glob", {"pattern": "**/a.txt"}),
        ("grep", {"pattern": "needle"}),
        ("grep", {"pattern": "needle", "path": "src/a.txt"}),
    ]
    for name, args in calls:
        _ok(session.call(name, args))
    edit = session.call("edit", {"file_path": "src/a.txt", "old_string": "needle", "new_string": "pin"})
    text = _error(edit, "FS_NOT_OBSERVED")
    assert "src/a.txt" in text and "read the file" in text
    _error(session.call("write", {"file_path": "src/a.txt", "content": "over\n"}), "FS_NOT_OBSERVED")
    assert (root / "src/a.txt").read_text() == "needle\n"
    # The gate is what refused: after a read the same edit goes through.
    _ok(session.call("read", {"file_path": "src/a.txt"}))
    _ok(session.call("edit", {"file_path": "src/a.txt", "old_string": "needle", "new_string": "pin"}))
    assert (root / "src/a.txt").read_text() == "pin\n"


# --- value schemas --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "args", "keys"),
    [
        ("list", {}, {"path", "entries", "hidden", "truncated"}),
        ("glob", {"pattern": "**"}, {"pattern", "matches", "truncated"}),
        ("grep", {"pattern": "needle"}, {"pattern", "matches", "files_searched", "files_with_matches", "truncated"}),
    ],
)
def test_each_tool_value_has_its_fields(
    root: Path, session: Session, tool: str, args: dict[str, Any], keys: set[str]
) -> None:
    _write(root, "a.txt", "needle\n")
    result = _ok(session.call(tool, args))
    assert set(result.value) == keys
    json.dumps(result.value)


@pytest.fixture(autouse=True)
def _no_descriptor_leaks() -> Iterator[None]:
    """Walks open a descriptor per directory level: none may outlive the call."""
    before = set(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else set()
    yield
    if before:
        leaked = set(os.listdir("/proc/self/fd")) - before
        assert not leaked, f"descriptors left open: {sorted(leaked)}"
