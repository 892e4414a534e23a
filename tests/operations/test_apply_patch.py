"""``apply_patch`` (SPEC §14): the Codex format and unified diffs, gated per file, all or nothing, hunks
located exactly (trailing whitespace and line endings aside) and taught like ``edit``; and the Codex
project's own scenarios, with every deliberate difference stated."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from fs_tools import Session, Workspace
from fs_tools.result import ToolResult
from tests.support.patches import WritesBetween

SCENARIOS = Path(__file__).parents[1] / "codex_scenarios"
# Where fs-tools keeps a guarantee Codex does not: the scenario's expected tree is not ours.
DIFFERENT = {
    # Codex leaves the file an earlier section added when a later one fails; a patch here applies whole or
    # not at all, so the workspace is as it was and the error names the missing file.
    "015_failure_after_partial_success_leaves_changes": ("FS_NOT_FOUND", {}),
}


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _code(result: ToolResult) -> str | None:
    return result.error.code if result.error is not None else None


@pytest.mark.parametrize("scenario", sorted(p.name for p in SCENARIOS.iterdir() if p.is_dir()))
def test_codex_scenario(scenario: str, tmp_path: Path) -> None:
    source = SCENARIOS / scenario
    root = tmp_path / "root"
    root.mkdir()
    if (source / "input").exists():
        shutil.copytree(source / "input", root, dirs_exist_ok=True)
    before = _tree(root)
    with Workspace(root, dialect="codex") as ws:
        session = ws.session("s")
        for path in before:
            assert _code(session.call("read", {"file_path": path})) is None
        result = session.call("apply_patch", {"input": (source / "patch.txt").read_text()})
    expected = _tree(source / "expected") if (source / "expected").exists() else {}
    if scenario in DIFFERENT:
        code, _ = DIFFERENT[scenario]
        assert _code(result) == code
        assert _tree(root) == before  # nothing written
        return
    assert _tree(root) == expected, result.text
    if expected == before:
        assert result.is_error  # Codex refuses these too; ours says why with a code
    else:
        assert _code(result) is None, result.text


@pytest.fixture
def files(session: Session, root: Path) -> Session:
    (root / "a.py").write_text("def one():\n    return 1\n\ndef two():\n    return 2\n")
    (root / "b.txt").write_text("alpha\nbeta\ngamma\n")
    for name in ("a.py", "b.txt"):
        session.call("read", {"file_path": name})
    return session


def _patch(session: Session, text: str) -> ToolResult:
    return session.workspace.dispatch(session.key, "apply_patch", {"patch": text})


@pytest.fixture
def session(root: Path) -> Session:
    return Workspace(root, tools=["read", "write", "apply_patch"]).session("s")


def test_every_hunk_must_match_or_nothing_is_written(files: Session, root: Path) -> None:
    before = _tree(root)
    result = _patch(
        files,
        "*** Begin Patch\n*** Update File: b.txt\n@@\n-beta\n+BETA\n*** Update File: a.py\n@@\n-    return 3\n"
        "+    return 4\n*** End Patch\n",
    )
    assert _code(result) == "FS_EDIT_NOT_FOUND"
    assert result.text.startswith("/patch: hunk 1 of 'a.py' (patch line 7) does not match 'a.py'")
    assert "nothing was written" in result.text and "hunk 1" in result.text.split("(nothing")[1]
    assert _tree(root) == before


def test_gates_come_before_matching_and_parse_errors_before_gates(session: Session, root: Path) -> None:
    (root / "c.txt").write_text("x\n")
    garbage = "*** Begin Patch\n*** Update File: c.txt\n@@\n-nothing like it\n+y\n*** End Patch"
    assert _code(_patch(session, garbage)) == "FS_NOT_OBSERVED"  # unread: the gate answers, not the matcher
    broken = _patch(session, "*** Begin Patch\n*** Update File: c.txt\n@@\n?x\n*** End Patch")
    assert (
        _code(broken) == "INVALID_ARGS"
        and "patch line 4: hunk 1: expected a line starting with ' ', '-' or '+'" in broken.text
    )


def test_add_and_move_never_replace_an_unread_file(files: Session, root: Path) -> None:
    (root / "unread.txt").write_text("keep\n")
    add = _patch(files, "*** Begin Patch\n*** Add File: unread.txt\n+new\n*** End Patch")
    assert _code(add) == "FS_NOT_OBSERVED"
    move = _patch(
        files, "*** Begin Patch\n*** Update File: b.txt\n*** Move to: unread.txt\n@@\n-beta\n+b\n*** End Patch"
    )
    assert _code(move) == "FS_NOT_OBSERVED"
    assert (root / "unread.txt").read_text() == "keep\n" and (root / "b.txt").exists()
    files.call("read", {"file_path": "unread.txt"})
    assert _code(_patch(files, "*** Begin Patch\n*** Add File: unread.txt\n+new\n*** End Patch")) is None
    assert (root / "unread.txt").read_text() == "new\n"


def test_a_file_changed_since_the_read_is_stale(files: Session, root: Path) -> None:
    (root / "b.txt").write_text("alpha\nbeta\ngamma\ndelta\n")
    result = _patch(files, "*** Begin Patch\n*** Update File: b.txt\n@@\n-beta\n+B\n*** End Patch")
    assert _code(result) == "FS_STALE_VERSION"


def test_ambiguous_hunks_unless_context_or_numbers_pick_one(files: Session, root: Path) -> None:
    (root / "r.txt").write_text("[a]\nx = 1\n[b]\nx = 1\n")
    files.call("read", {"file_path": "r.txt"})
    plain = _patch(files, "*** Begin Patch\n*** Update File: r.txt\n@@\n-x = 1\n+x = 2\n*** End Patch")
    assert _code(plain) == "FS_AMBIGUOUS_EDIT" and "matches 2 places" in plain.text and "lines 2, 4" in plain.text
    chosen = _patch(files, "*** Begin Patch\n*** Update File: r.txt\n@@ [b]\n-x = 1\n+x = 2\n*** End Patch")
    assert _code(chosen) is None and (root / "r.txt").read_text() == "[a]\nx = 1\n[b]\nx = 2\n"
    numbered = _patch(files, "--- a/r.txt\n+++ b/r.txt\n@@ -2,1 +2,1 @@\n-x = 1\n+x = 3\n")
    assert _code(numbered) is None and (root / "r.txt").read_text() == "[a]\nx = 3\n[b]\nx = 2\n"


def test_unified_diff_with_stale_numbers_git_headers_and_no_newline_markers(files: Session, root: Path) -> None:
    diff = (
        "diff --git a/b.txt b/b.txt\nindex 111..222 100644\n--- a/b.txt\n+++ b/b.txt\n@@ -10,3 +10,3 @@\n"
        " alpha\n-beta\n+BETA\n gamma\n\\ No newline at end of file\n"
    )
    assert _code(_patch(files, diff)) is None
    assert (root / "b.txt").read_text() == "alpha\nBETA\ngamma"  # the marker is said of the new side too
    created = _patch(files, "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n")
    assert _code(created) is None and (root / "new.txt").read_text() == "one\ntwo\n"
    deleted = _patch(files, "--- a/new.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-one\n-two\n")
    assert _code(deleted) is None and not (root / "new.txt").exists()


def test_only_harmless_differences_are_forgiven(files: Session, root: Path) -> None:
    (root / "w.txt").write_bytes(b"keep   \r\nsay \xe2\x80\x9chi\xe2\x80\x9d\r\n")
    files.call("read", {"file_path": "w.txt"})
    trailing = _patch(
        files,
        "*** Begin Patch\r\n*** Update File: w.txt\r\n@@\r\n keep\r\n-say \u201chi\u201d\r\n+say hello\r\n"
        "*** End Patch\r\n",
    )
    assert _code(trailing) is None
    assert (root / "w.txt").read_bytes() == b"keep   \r\nsay hello\r\n"  # CRLF kept, untouched bytes kept
    curly = _patch(files, '*** Begin Patch\n*** Update File: w.txt\n@@\n-say "hello"\n+x\n*** End Patch')
    assert _code(curly) == "FS_EDIT_NOT_FOUND"


def test_curly_quotes_are_taught_not_folded(files: Session, root: Path) -> None:
    (root / "q.py").write_text('print("hi")\n')
    files.call("read", {"file_path": "q.py"})
    result = _patch(
        files, "*** Begin Patch\n*** Update File: q.py\n@@\n-print(\u201chi\u201d)\n+print(1)\n*** End Patch"
    )
    assert _code(result) == "FS_EDIT_NOT_FOUND" and "U+201C" in result.text and "hunk 1" in result.text


def test_trailing_newline_state_is_kept_and_a_pure_addition_appends(files: Session, root: Path) -> None:
    (root / "n.txt").write_text("last")
    files.call("read", {"file_path": "n.txt"})
    assert _code(_patch(files, "*** Begin Patch\n*** Update File: n.txt\n@@\n-last\n+final\n*** End Patch")) is None
    assert (root / "n.txt").read_text() == "final"
    assert _code(_patch(files, "*** Begin Patch\n*** Update File: b.txt\n@@\n+omega\n*** End Patch")) is None
    assert (root / "b.txt").read_text() == "alpha\nbeta\ngamma\nomega\n"


def test_end_of_file_anchors_and_hunks_go_in_order(files: Session, root: Path) -> None:
    (root / "e.txt").write_text("x\ny\nx\n")
    files.call("read", {"file_path": "e.txt"})
    anchored = _patch(files, "*** Begin Patch\n*** Update File: e.txt\n@@\n-x\n+z\n*** End of File\n*** End Patch")
    assert _code(anchored) is None and (root / "e.txt").read_text() == "x\ny\nz\n"
    order = _patch(
        files,
        "*** Begin Patch\n*** Update File: a.py\n@@ def two():\n-    return 2\n+    return 22\n@@ def one():\n"
        "-    return 1\n+    return 11\n*** End Patch",
    )
    assert _code(order) == "FS_EDIT_NOT_FOUND" and "before the previous hunk" in order.text


def test_a_file_named_twice_and_a_directory_deleted_are_refused(files: Session, root: Path) -> None:
    twice = _patch(
        files, "*** Begin Patch\n*** Delete File: b.txt\n*** Update File: b.txt\n@@\n-beta\n+b\n*** End Patch"
    )
    assert _code(twice) == "INVALID_ARGS" and "'b.txt' is changed again (first at patch line 2)" in twice.text
    (root / "d").mkdir()
    directory = _patch(files, "*** Begin Patch\n*** Delete File: d\n*** End Patch")
    assert _code(directory) == "FS_NOT_REGULAR_FILE" and (root / "d").is_dir()


def test_heredoc_wrapping_and_padded_markers_are_tolerated(files: Session, root: Path) -> None:
    wrapped = "apply_patch <<'EOF'\n  *** Begin Patch\n*** Update File: b.txt\n@@\n-beta\n+BETA\n *** End Patch \nEOF\n"
    assert _code(_patch(files, wrapped)) is None and "BETA" in (root / "b.txt").read_text()


def test_the_success_text_names_each_changed_file(files: Session, root: Path) -> None:
    result = _patch(
        files,
        "*** Begin Patch\n*** Add File: docs/new.md\n+# New\n*** Delete File: b.txt\n*** Update File: a.py\n"
        "*** Move to: lib/a.py\n@@\n-    return 1\n+    return 10\n*** End Patch",
    )
    assert _code(result) is None
    assert result.text == "Success. Updated the following files:\nA 'docs/new.md'\nD 'b.txt'\nM 'a.py' → 'lib/a.py'"
    assert [f["action"] for f in result.value["files"]] == ["added", "deleted", "updated"]
    assert not (root / "a.py").exists() and "return 10" in (root / "lib" / "a.py").read_text()
    # the session observed what it wrote: editing the moved file needs no new read
    again = _patch(
        files, "*** Begin Patch\n*** Update File: lib/a.py\n@@\n-    return 10\n+    return 100\n*** End Patch"
    )
    assert _code(again) is None


def test_a_file_changed_between_check_and_commit_puts_back_what_was_written(files: Session, root: Path) -> None:
    (root / "gone.txt").write_text("bye\n")
    files.call("read", {"file_path": "gone.txt"})
    provider = files.workspace.provider
    listener = WritesBetween(provider.key_of("b.txt"), root / "b.txt", b"someone else\n")
    unlisten = provider.listen(listener)
    try:
        result = _patch(
            files,
            "*** Begin Patch\n*** Update File: a.py\n@@\n-    return 1\n+    return 10\n*** Delete File: gone.txt\n"
            "*** Add File: new.txt\n+new\n*** Update File: b.txt\n@@\n-beta\n+BETA\n*** End Patch",
        )
    finally:
        unlisten()
    assert listener.starts >= 2
    assert _code(result) == "FS_STALE_VERSION" and "were put back; nothing is changed" in result.text
    assert "return 1\n" in (root / "a.py").read_text() and "return 10" not in (root / "a.py").read_text()
    assert (root / "gone.txt").read_text() == "bye\n" and not (root / "new.txt").exists()
    assert (root / "b.txt").read_bytes() == b"someone else\n"  # the other writer's change is kept


# --- found on review -----------------------------------------------------------------------------


def test_unified_hunks_after_the_first_count_the_lines_it_added(files: Session, root: Path) -> None:
    (root / "n.txt").write_text("".join(f"{n}\n" for n in range(1, 11)))
    files.call("read", {"file_path": "n.txt"})
    diff = "--- a/n.txt\n+++ b/n.txt\n@@ -1,0 +2,2 @@\n+A\n+B\n@@ -5,0 +8 @@\n+C\n"  # diff -U0: numbers of the original
    assert _code(_patch(files, diff)) is None
    assert (root / "n.txt").read_text().split() == ["1", "A", "B", "2", "3", "4", "5", "C", "6", "7", "8", "9", "10"]


def test_line_numbers_pick_among_many_identical_places_and_end_of_file_anchors_past_them(
    files: Session, root: Path
) -> None:
    (root / "same.txt").write_text("x\n" * 3000)
    files.call("read", {"file_path": "same.txt"})
    assert _code(_patch(files, "--- a/same.txt\n+++ b/same.txt\n@@ -2500 +2500 @@\n-x\n+CHANGED\n")) is None
    lines = (root / "same.txt").read_text().split("\n")
    assert lines.index("CHANGED") == 2499
    eof = "*** Begin Patch\n*** Update File: same.txt\n@@\n-x\n+LAST\n*** End of File\n*** End Patch"
    assert _code(_patch(files, eof)) is None and (root / "same.txt").read_text().endswith("x\nLAST\n")
    many = _patch(files, "*** Begin Patch\n*** Update File: same.txt\n@@\n-x\n+y\n*** End Patch")
    assert _code(many) == "FS_AMBIGUOUS_EDIT" and "matches more than 1000 places" in many.text


def test_a_git_copy_is_refused_and_different_names_without_a_rename_change_the_new_one(
    files: Session, root: Path
) -> None:
    copy = "diff --git a/b.txt b/c.txt\nsimilarity index 90%\ncopy from b.txt\ncopy to c.txt\n"
    result = _patch(files, copy)
    assert _code(result) == "INVALID_ARGS" and "git copies are not supported" in result.text
    plain = _patch(files, "--- b.txt.orig\n+++ b.txt\n@@ -1,3 +1,3 @@\n alpha\n-beta\n+BETA\n gamma\n")
    assert _code(plain) is None and (root / "b.txt").read_text() == "alpha\nBETA\ngamma\n"
    assert not (root / "b.txt.orig").exists()


def test_git_paths_with_spaces_and_quotes(files: Session, root: Path) -> None:
    (root / "t\u00e9st.txt").write_text("one\n")
    files.call("read", {"file_path": "t\u00e9st.txt"})
    diff = (
        'diff --git "a/t\\303\\251st.txt" "b/n\\303\\266w.txt"\nsimilarity index 100%\n'
        'rename from "t\\303\\251st.txt"\nrename to "n\\303\\266w.txt"\n'
        "diff --git a/new empty.txt b/new empty.txt\nnew file mode 100644\nindex 0000000..e69de29\n"
    )
    assert _code(_patch(files, diff)) is None
    assert (root / "n\u00f6w.txt").read_text() == "one\n" and (root / "new empty.txt").read_bytes() == b""


@pytest.mark.parametrize(
    ("patch", "says"),
    [
        ('--- "a/\\x"\n+++ "b/\\x"\n@@ -1 +1 @@\n-x\n+y\n', "a quoted path that cannot be read"),
        ("--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-alpha\n+A\nnew file mode 100644\n", "belongs after a 'diff --git"),
        ("*** Begin Patch\n*** Add File: a\x00b\n+x\n*** End Patch", "must not contain a NUL character"),
        ("*** Begin Patch\n*** Add File: sub/\n+x\n*** End Patch", "must name a file, but it ends with '/'"),
        ("--- a/b.txt\n+++ b/b.txt\n@@ -1,2 +1,2 @@\n alpha\n-beta\n+BETA\n gamma\n", "but more lines follow"),
        (
            "*** Begin Patch\n*** Update File: b.txt\n*** Move to: b.txt\n@@\n-beta\n+b\n*** End Patch",
            "names 'b.txt' itself",
        ),
    ],
)
def test_malformed_patches_are_invalid_args_naming_the_line(files: Session, root: Path, patch: str, says: str) -> None:
    before = _tree(root)
    result = _patch(files, patch)
    assert _code(result) == "INVALID_ARGS" and says in result.text, result.text
    assert _tree(root) == before


def test_a_patch_is_refused_whole_when_it_brings_a_placeholder_a_syntax_error_or_too_many_bytes(root: Path) -> None:
    (root / "m.py").write_text("def f():\n    a = 1\n    return a\n")
    (root / "b.txt").write_text("beta\n")
    with Workspace(root, tools=["read", "apply_patch"], refuse_syntax_errors=True, max_file_bytes=200) as ws:
        s = ws.session("s")
        for name in ("m.py", "b.txt"):
            s.call("read", {"file_path": name})
        first = "*** Update File: b.txt\n@@\n-beta\n+BETA\n"
        holder = _patch_in(
            s, first + "*** Update File: m.py\n@@\n def f():\n-    a = 1\n+    # ... rest of code unchanged\n"
        )
        assert _code(holder) == "FS_OMISSION_PLACEHOLDER" and "make hunk 1 cover only" in holder.text
        broken = _patch_in(s, first + "*** Update File: m.py\n@@\n-    return a\n+    return (a +\n")
        assert _code(broken) == "FS_SYNTAX_ERROR"
        big = _patch_in(s, first + "*** Add File: big.txt\n" + "+" + "x" * 300 + "\n")
        assert _code(big) == "FS_TOO_LARGE" and "nothing was written" in big.text
    assert (root / "b.txt").read_text() == "beta\n" and not (root / "big.txt").exists()


def _patch_in(session: Session, sections: str) -> ToolResult:
    return session.call("apply_patch", {"patch": f"*** Begin Patch\n{sections}*** End Patch"})


def test_the_syntax_errors_a_patch_brings_are_reported(files: Session, root: Path) -> None:
    result = _patch(files, "*** Begin Patch\n*** Update File: a.py\n@@\n-    return 1\n+    return (1 +\n*** End Patch")
    assert _code(result) is None and "Warning: this change introduced 1 Python syntax error" in result.text
    assert result.value["files"][0]["syntax_errors"][0]["line"] == 2


def test_adding_or_moving_onto_a_directory_is_not_a_regular_file(files: Session, root: Path) -> None:
    (root / "d").mkdir()
    result = _patch(files, "*** Begin Patch\n*** Add File: d\n+x\n*** End Patch")
    assert _code(result) == "FS_NOT_REGULAR_FILE" and "'d' is a directory" in result.text


def test_messages_for_hunks_out_of_order_a_stray_blank_line_and_a_missing_file(files: Session, root: Path) -> None:
    order = _patch(
        files,
        "*** Begin Patch\n*** Update File: b.txt\n@@\n-gamma\n+G\n@@\n-alpha\n+A\n*** End Patch",
    )
    assert _code(order) == "FS_EDIT_NOT_FOUND" and "its lines are at line 1, before the previous hunk's" in order.text
    blank = _patch(files, "*** Begin Patch\n*** Update File: b.txt\n@@\n-gamma\n+G\n\n*** End Patch")
    assert _code(blank) == "FS_EDIT_NOT_FOUND" and "ends with 1 blank line(s)" in blank.text
    missing = _patch(files, "*** Begin Patch\n*** Update File: nope.txt\n@@\n-x\n+y\n*** End Patch")
    assert _code(missing) == "FS_NOT_FOUND" and "use '*** Add File: nope.txt'" in missing.text


def test_an_update_of_a_file_this_session_deleted_says_so(files: Session, root: Path) -> None:
    assert _code(_patch(files, "*** Begin Patch\n*** Delete File: b.txt\n*** End Patch")) is None
    result = _patch(files, "*** Begin Patch\n*** Update File: b.txt\n@@\n-beta\n+BETA\n*** End Patch")
    assert _code(result) == "FS_NOT_FOUND"
    assert "'b.txt' does not exist (this session found it absent, or moved or deleted it)" in result.text, result.text
    assert not (root / "b.txt").exists()
