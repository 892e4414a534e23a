"""Dialects (SPEC §14): each model family's tool names, argument names and output conventions, on the
same gates, codes and boundary; messages name the dialect's own arguments and tools."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fs_tools import Workspace
from fs_tools.result import ToolResult

APP = "import os\n\ndef f():\n\treturn 1\n\nvalue = 3\n"
TE = "str_replace_based_edit_tool"


def _ws(root: Path, dialect: str, **options: Any) -> Workspace:
    (root / "app.py").write_text(APP)
    return Workspace(root, dialect=dialect, **options)


def _code(result: ToolResult) -> str | None:
    return result.error.code if result.error is not None else None


SPEC_TOOLS = {
    "fs-tools": [
        "read",
        "write",
        "edit",
        "multi_edit",
        "list",
        "glob",
        "grep",
        "read_many",
        "stat",
        "move",
        "copy",
        "delete",
        "create_directory",
        "notebook_edit",
    ],
    "claude-code": ["Read", "Write", "Edit", "MultiEdit", "Glob", "Grep", "LS", "NotebookEdit"],
    "anthropic": [TE],
    "codex": ["apply_patch", "read", "list", "glob", "grep"],
    "gemini": ["read_file", "write_file", "replace", "glob", "grep_search", "list_directory", "read_many_files"],
}
SPEC_ARGUMENTS = {
    ("claude-code", "Read"): {"file_path", "offset", "limit", "pages"},  # its Read takes pages for PDFs
    ("claude-code", "Write"): {"file_path", "content"},
    ("claude-code", "Edit"): {"file_path", "old_string", "new_string", "replace_all"},
    ("claude-code", "MultiEdit"): {"file_path", "edits"},
    ("claude-code", "Glob"): {"pattern", "path"},
    ("claude-code", "Grep"): {
        "pattern",
        "path",
        "glob",
        "type",
        "output_mode",
        "-i",
        "-n",
        "-A",
        "-B",
        "-C",
        "head_limit",
        "multiline",
    },
    ("claude-code", "LS"): {"path", "ignore"},
    ("claude-code", "NotebookEdit"): {"notebook_path", "cell_id", "new_source", "cell_type", "edit_mode"},
    ("anthropic", TE): {
        "command",
        "path",
        "view_range",
        "file_text",
        "old_str",
        "new_str",
        "insert_line",
        "insert_text",
    },
    ("codex", "apply_patch"): {"input"},
    ("gemini", "read_file"): {"file_path", "start_line", "end_line"},
    ("gemini", "write_file"): {"file_path", "content"},
    ("gemini", "replace"): {"file_path", "old_string", "new_string", "allow_multiple", "instruction"},
    ("gemini", "glob"): {"pattern", "dir_path"},
    ("gemini", "grep_search"): {"pattern", "dir_path", "include_pattern"},
    ("gemini", "list_directory"): {"dir_path"},
    ("gemini", "read_many_files"): {"include"},
}


@pytest.mark.parametrize("dialect", list(SPEC_TOOLS))
def test_each_dialect_offers_exactly_its_tools_with_the_spec_arguments(root: Path, dialect: str) -> None:
    with _ws(root, dialect) as ws:
        schemas = {schema["name"]: schema["input_schema"] for schema in ws.tool_schemas()}
    assert list(schemas) == SPEC_TOOLS[dialect]
    for (name, tool), arguments in SPEC_ARGUMENTS.items():
        if name == dialect:
            assert set(schemas[tool]["properties"]) == arguments, tool
            assert schemas[tool]["additionalProperties"] is False


def test_an_unknown_dialect_is_a_host_error_naming_the_choices(root: Path) -> None:
    with pytest.raises(ValueError, match=r"unknown dialect 'claude'.*claude-code"):
        Workspace(root, dialect="claude")
    with pytest.raises(ValueError, match=r"unknown tool 'read' of the gemini dialect.*read_file"):
        Workspace(root, dialect="gemini", tools=["read"])


def test_a_dialect_answers_only_to_its_own_names(root: Path) -> None:
    with _ws(root, "claude-code") as ws:
        result = ws.session("s").call("read", {"file_path": "app.py"})
    assert _code(result) == "UNKNOWN_TOOL" and 'did you mean "Read"' in result.text


def test_apply_patch_is_offered_in_the_default_dialect_only_when_named(root: Path) -> None:
    with _ws(root, "fs-tools") as ws:
        assert "apply_patch" not in [s["name"] for s in ws.tool_schemas()]
    with _ws(root, "fs-tools", tools=["read", "apply_patch"]) as ws:
        schemas = {s["name"]: s["input_schema"] for s in ws.tool_schemas()}
        assert set(schemas["apply_patch"]["properties"]) == {"patch"}
        session = ws.session("s")
        patch = "*** Begin Patch\n*** Update File: app.py\n@@\n-value = 3\n+value = 4\n*** End Patch\n"
        assert _code(session.call("apply_patch", {"patch": patch})) == "FS_NOT_OBSERVED"
        session.call("read", {"file_path": "app.py"})
        assert _code(session.call("apply_patch", {"patch": patch})) is None
        broken = session.call("apply_patch", {"patch": "*** Begin Patch\n*** Frob File: x\n*** End Patch"})
    assert _code(broken) == "INVALID_ARGS" and broken.text.startswith("invalid arguments: /patch: patch line 2:")
    assert "value = 4" in (root / "app.py").read_text()


# --- claude-code ---------------------------------------------------------------------------------


def test_claude_code_edit_is_gated_and_teaches_in_its_own_tool_names(root: Path) -> None:
    with _ws(root, "claude-code") as ws:
        s = ws.session("s")
        unread = s.call("Edit", {"file_path": "app.py", "old_string": "value = 3", "new_string": "value = 4"})
        assert _code(unread) == "FS_NOT_OBSERVED" and "(Read)" in unread.text
        missing = s.call("Edit", {"file_path": "ap.py", "old_string": "x", "new_string": "y"})
        assert _code(missing) == "FS_NOT_FOUND" and "'app.py'" in missing.text and "use Write" in missing.text
        s.call("Read", {"file_path": "app.py"})
        tabs = s.call("Edit", {"file_path": "app.py", "old_string": "def f():\n    return 1", "new_string": "x"})
        assert _code(tabs) == "FS_EDIT_NOT_FOUND" and "tabs vs spaces" in tabs.text
        dry = s.call("Edit", {"file_path": "app.py", "old_string": "a", "new_string": "b", "dry_run": True})
        assert _code(dry) == "INVALID_ARGS" and "/dry_run: unknown property" in dry.text
        multi = s.call(
            "MultiEdit", {"file_path": "app.py", "edits": [{"old_string": "value = 3", "new_string": "value = 4"}]}
        )
        assert _code(multi) is None
    assert (root / "app.py").read_text().endswith("value = 4\n")


def test_claude_code_grep_speaks_ripgrep(root: Path) -> None:
    (root / "lib.py").write_text("def g():\n    return 2\n")
    (root / "notes.md").write_text("return to sender\n")
    with _ws(root, "claude-code") as ws:
        s = ws.session("s")
        files = s.call("Grep", {"pattern": "return"})
        assert files.text.splitlines()[0] == "Found 3 files"
        typed = s.call("Grep", {"pattern": "return", "type": "py"})
        assert typed.text == "Found 2 files\napp.py\nlib.py"
        content = s.call("Grep", {"pattern": "return", "path": "app.py", "output_mode": "content", "-C": 1})
        assert content.text.splitlines() == ["app.py-3-def f():", "app.py:4:\treturn 1", "app.py-5-"]
        counted = s.call("Grep", {"pattern": "RETURN", "output_mode": "count", "-i": True, "glob": "*.py"})
        assert counted.text.startswith("app.py:1\nlib.py:1")
        limited = s.call("Grep", {"pattern": "return", "output_mode": "content", "head_limit": 1, "-n": False})
        assert limited.text.splitlines()[0] == "app.py:\treturn 1" and "stopped at 1" in limited.text
        spanning = s.call("Grep", {"pattern": "f\\(\\):.\\treturn", "output_mode": "content", "multiline": True})
        assert spanning.text.splitlines() == ["app.py:3:def f():", "app.py:4:\treturn 1"]
        bad = s.call("Grep", {"pattern": "x", "type": "cobol", "-A": "2"})
        assert _code(bad) == "INVALID_ARGS"
        assert "/type: unknown file type 'cobol'" in bad.text and "/-A: expected integer, got string" in bad.text
        assert s.call("Grep", {"pattern": "absent"}).text == "No files found"


def test_claude_code_ls_leaves_out_what_ignore_names(root: Path) -> None:
    (root / "build").mkdir()
    (root / "build" / "out.o").write_text("")
    with _ws(root, "claude-code") as ws:
        listed = ws.session("s").call("LS", {"path": ".", "ignore": ["build"]})
    assert "app.py" in listed.text and "build" not in listed.text.split("\n\n")[0]
    assert "1 entry matching ignore not shown" in listed.text
    with _ws(root, "claude-code") as ws:
        bad = ws.session("s").call("LS", {"path": ".", "ignore": ["ok", "{" * 2000]})
    assert bad.error is not None and "/ignore/1: invalid glob pattern" in bad.text


# --- gemini --------------------------------------------------------------------------------------


def test_gemini_read_file_shows_lines_unnumbered_and_pages_with_its_own_names(root: Path) -> None:
    (root / "long.txt").write_text("".join(f"line {n}\n" for n in range(1, 2101)))
    with _ws(root, "gemini") as ws:
        s = ws.session("s")
        whole = s.call("read_file", {"file_path": "app.py"})
        assert whole.text == APP.rstrip("\n")
        window = s.call("read_file", {"file_path": "app.py", "start_line": 3, "end_line": 4})
        assert window.text.startswith("def f():\n\treturn 1\n\n[showing lines 3–4 of 6")
        assert "continue with start_line=5" in window.text
        tail = s.call("read_file", {"file_path": "app.py", "start_line": 6})
        assert tail.text == "value = 3"
        paged = s.call("read_file", {"file_path": "long.txt"})
        assert "continue with start_line=2001" in paged.text
        past = s.call("read_file", {"file_path": "app.py", "start_line": 9})
        assert _code(past) == "FS_NOT_FOUND" and "start_line 9 is past the end" in past.text
        assert "give start_line a value between 1 and 6" in past.text
        backwards = s.call("read_file", {"file_path": "app.py", "start_line": 4, "end_line": 2})
        assert _code(backwards) == "INVALID_ARGS" and "/end_line: must be at least start_line (4)" in backwards.text


def test_gemini_replace_names_allow_multiple_and_accepts_an_instruction(root: Path) -> None:
    (root / "twice.txt").write_text("a = 1\nb = 2\na = 1\n")
    with _ws(root, "gemini") as ws:
        s = ws.session("s")
        s.call("read_file", {"file_path": "twice.txt"})
        twice = s.call(
            "replace", {"file_path": "twice.txt", "old_string": "a = 1", "new_string": "a = 3", "instruction": "bump a"}
        )
        assert (
            _code(twice) == "FS_AMBIGUOUS_EDIT" and "allow_multiple" in twice.text and "replace_all" not in twice.text
        )
        every = s.call(
            "replace", {"file_path": "twice.txt", "old_string": "a = 1", "new_string": "a = 3", "allow_multiple": True}
        )
        assert _code(every) is None and every.value["replacements"] == 2


def test_gemini_grep_search_groups_rows_by_file(root: Path) -> None:
    (root / "lib.py").write_text("def g():\n    return 2\n")
    with _ws(root, "gemini") as ws:
        s = ws.session("s")
        found = s.call("grep_search", {"pattern": "return", "include_pattern": "*.py"})
        assert found.text == (
            'Found 2 matches for pattern "return" in the workspace directory:\n---\n'
            "File: app.py\nL4: \treturn 1\n---\nFile: lib.py\nL2:     return 2\n---"
        )
        none = s.call("grep_search", {"pattern": "absent", "dir_path": "."})
        assert none.text == 'No matches found for pattern "absent" in path ".".'


def test_gemini_read_many_files_takes_paths_and_globs_and_records_reads(root: Path) -> None:
    (root / "docs").mkdir()
    (root / "docs" / "a.md").write_text("# A\n")
    (root / "docs" / "b.md").write_text("# B\n")
    with _ws(root, "gemini") as ws:
        s = ws.session("s")
        read = s.call("read_many_files", {"include": ["docs/*.md", "app.py"]})
        assert _code(read) is None and [f["path"] for f in read.value["files"]] == ["docs/a.md", "docs/b.md", "app.py"]
        assert _code(s.call("write_file", {"file_path": "docs/a.md", "content": "# AA\n"})) is None
        listed = s.call("list_directory", {"dir_path": "docs"})
        extra = s.call("list_directory", {"dir_path": "docs", "ignore": ["b.*"]})
    assert "a.md" in listed.text and "b.md" in listed.text
    assert extra.error is not None and "/ignore: unknown property" in extra.text


# --- anthropic -----------------------------------------------------------------------------------


def test_anthropic_text_editor_views_creates_replaces_and_inserts(root: Path) -> None:
    (root / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    with _ws(root, "anthropic") as ws:
        s = ws.session("s")
        view = s.call(TE, {"command": "view", "path": "app.py", "view_range": [3, -1]})
        assert view.text.startswith(
            "Here's the result of running `cat -n` on 'app.py':\n     3\tdef f():\n     4\t\treturn 1"
        )
        listing = s.call(TE, {"command": "view", "path": "."})
        assert "up to 2 levels deep" in listing.text and "app.py" in listing.text
        replaced = s.call(
            TE, {"command": "str_replace", "path": "app.py", "old_str": "value = 3", "new_str": "value = 4"}
        )
        assert _code(replaced) is None
        missing = s.call(
            TE, {"command": "str_replace", "path": "app.py", "old_str": "def f():\n    return 1", "new_str": "x"}
        )
        assert (
            _code(missing) == "FS_EDIT_NOT_FOUND"
            and "4 spaces in old_str" in missing.text
            and "old_string" not in missing.text
        )
        s.call(TE, {"command": "view", "path": "crlf.txt"})
        inserted = s.call(
            TE, {"command": "insert", "path": "crlf.txt", "insert_line": 1, "insert_text": "\tin between"}
        )
        assert _code(inserted) is None
        older = s.call(TE, {"command": "insert", "path": "crlf.txt", "insert_line": 0, "new_str": "top\n"})
        assert _code(older) is None
        created = s.call(TE, {"command": "create", "path": "new/b.py", "file_text": "print(1)\n"})
        assert _code(created) is None
    assert (root / "crlf.txt").read_bytes() == b"top\r\none\r\n\tin between\r\ntwo\r\n"  # tabs and CRLF kept
    assert (root / "app.py").read_text().endswith("value = 4\n") and "\treturn 1" in (root / "app.py").read_text()
    assert (root / "new" / "b.py").read_text() == "print(1)\n"


def test_anthropic_text_editor_refuses_what_its_command_does_not_take(root: Path) -> None:
    (root / "seen.txt").write_text("x\n")
    with _ws(root, "anthropic") as ws:
        s = ws.session("s")
        foreign = s.call(TE, {"command": "create", "path": "a.txt", "file_text": "x", "old_str": "y"})
        assert _code(foreign) == "INVALID_ARGS" and "/old_str: not used by command 'create'" in foreign.text
        needs = s.call(TE, {"command": "str_replace", "path": "app.py"})
        assert "/old_str: required property is missing (command 'str_replace' needs it)" in needs.text
        unseen = s.call(TE, {"command": "create", "path": "seen.txt", "file_text": "replaced\n"})
        assert _code(unseen) == "FS_NOT_OBSERVED" and f"{TE} with command view" in unseen.text
        s.call(TE, {"command": "view", "path": "app.py"})
        far = s.call(TE, {"command": "insert", "path": "app.py", "insert_line": 99, "insert_text": "z"})
        assert _code(far) == "INVALID_ARGS" and "/insert_line: expected 0 to 6" in far.text
        ranged = s.call(TE, {"command": "view", "path": ".", "view_range": [1, 2]})
        assert _code(ranged) == "INVALID_ARGS"
    assert (root / "seen.txt").read_text() == "x\n" and not (root / "a.txt").exists()


# --- codex ---------------------------------------------------------------------------------------


def test_codex_apply_patch_points_into_input(root: Path) -> None:
    with _ws(root, "codex") as ws:
        s = ws.session("s")
        s.call("read", {"file_path": "app.py"})
        bad = s.call(
            "apply_patch",
            {"input": "*** Begin Patch\n*** Update File: app.py\n@@\n-value = 5\n+value = 6\n*** End Patch"},
        )
        assert _code(bad) == "FS_EDIT_NOT_FOUND" and bad.text.startswith("/input: hunk 1 of 'app.py' (patch line 3)")
        empty = s.call("apply_patch", {"input": "*** Begin Patch\n*** End Patch"})
        assert _code(empty) == "INVALID_ARGS" and empty.text.startswith("invalid arguments: /input: patch line 1")


def test_a_path_that_looks_like_an_argument_name_is_never_renamed(root: Path) -> None:
    (root / "old_string.py").write_text("x = 1\n")
    with _ws(root, "anthropic") as ws:
        s = ws.session("s")
        s.call(TE, {"command": "view", "path": "old_string.py"})
        miss = s.call(TE, {"command": "str_replace", "path": "old_string.py", "old_str": "x = 2", "new_str": "x = 3"})
    assert "'old_string.py'" in miss.text and miss.text.startswith("old_str was not found")


def test_the_anthropic_adapter_declares_the_built_in_text_editor(root: Path) -> None:
    from fs_tools.adapters.anthropic import tool_definitions, tool_results

    with _ws(root, "anthropic") as ws:
        assert tool_definitions(ws) == [{"type": "text_editor_20250728", "name": TE}]
        blocks = [{"type": "tool_use", "id": "t1", "name": TE, "input": {"command": "view", "path": "app.py"}}]
        (answer,) = tool_results(ws.session("s"), blocks)
        assert answer["tool_use_id"] == "t1" and "is_error" not in answer and "def f():" in answer["content"]
    with _ws(root, "anthropic", prefix="fs_") as ws:
        (declared,) = tool_definitions(ws)
        assert declared["name"] == f"fs_{TE}" and "input_schema" in declared


def test_the_openai_adapter_declares_and_answers_the_built_in_apply_patch(root: Path) -> None:
    from fs_tools.adapters import openai

    with _ws(root, "codex") as ws:
        declared = openai.tool_definitions(ws, api="responses", builtin_apply_patch=True)
        assert declared[0] == {"type": "apply_patch"} and declared[1]["name"] == "read"
        with pytest.raises(ValueError, match="builtin_apply_patch needs api='responses'"):
            openai.tool_definitions(ws, builtin_apply_patch=True)
        s = ws.session("s")
        item = {
            "type": "apply_patch_call",
            "call_id": "p1",
            "operation": {"type": "update_file", "path": "app.py", "diff": "@@\n-value = 3\n+value = 4\n"},
        }
        unread = openai.answer_tool_call(s, item)
        assert unread["status"] == "failed" and unread["output"].startswith("ERROR FS_NOT_OBSERVED:")
        s.call("read", {"file_path": "app.py"})
        assert openai.answer_tool_call(s, item) == {
            "type": "apply_patch_call_output",
            "call_id": "p1",
            "status": "completed",
            "output": "Success. Updated the following files:\nM 'app.py'",
        }
        again = openai.answer_tool_call(s, item)
        assert again["output"].startswith("ERROR FS_EDIT_NOT_FOUND: /operation/diff: hunk 1 of 'app.py' (diff line 1)")
        bad = {"type": "update_file", "path": "app.py", "diff": "@@\n?x\n"}
        malformed = openai.answer_tool_call(s, {**item, "operation": bad})
        assert "/operation/diff: diff line 2: hunk 1: expected a line starting with" in malformed["output"]
        created = openai.answer_tool_call(
            s, {**item, "operation": {"type": "create_file", "path": "n.txt", "diff": "+a\n+b\n"}}
        )
        assert created["status"] == "completed"
        nonsense = openai.answer_tool_call(s, {**item, "operation": {"type": "nuke", "path": ""}})
        assert nonsense["status"] == "failed" and "/operation/type: expected one of create_file" in nonsense["output"]
    assert (root / "app.py").read_text().endswith("value = 4\n") and (root / "n.txt").read_text() == "a\nb\n"


def test_dialect_messages_keep_the_validation_form(root: Path) -> None:
    with _ws(root, "claude-code") as ws:
        mode = ws.session("s").call("Grep", {"pattern": "x", "output_mode": "lines"})
    assert "/output_mode: expected one of 'content', 'files_with_matches' or 'count', got 'lines'" in mode.text
    with _ws(root, "anthropic") as ws:
        empty = ws.session("s").call(TE, {"command": "str_replace", "path": "app.py", "old_str": ""})
    assert "/old_str: must not be empty" in empty.text
    with pytest.raises(ValueError, match="no tool a read-only workspace can offer"):
        Workspace(root, dialect="anthropic", read_only=True)


def test_an_openai_operation_cannot_reach_another_file(root: Path) -> None:
    from fs_tools.adapters import openai

    (root / "b.txt").write_text("keep\n")
    with _ws(root, "codex") as ws:
        s = ws.session("s")
        s.call("read", {"file_path": "b.txt"})
        smuggled = {"type": "create_file", "path": "n.txt", "diff": "+x\n*** Delete File: b.txt"}
        first = openai.answer_tool_call(s, {"type": "apply_patch_call", "call_id": "p", "operation": smuggled})
        newline = {"type": "create_file", "path": "n.txt\n*** Add File: evil.txt", "diff": "+x\n"}
        second = openai.answer_tool_call(s, {"type": "apply_patch_call", "call_id": "q", "operation": newline})
    assert first["status"] == second["status"] == "failed"
    assert "a '*** ' header; the diff holds one file's hunks" in first["output"]
    assert "/operation/path: must be one line of printable characters" in second["output"]
    assert (root / "b.txt").exists() and not (root / "n.txt").exists() and not (root / "evil.txt").exists()
