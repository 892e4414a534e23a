"""Syntax errors a change introduces (SPEC §15): reported after an edit, a multi_edit or a write for every
language the grammars cover, never those that were already there, and refused instead on request."""

from __future__ import annotations

import logging
import typing
from pathlib import Path

import hypothesis
import hypothesis.strategies as st
import pytest

from fs_tools import Session, Workspace
from fs_tools.checks import syntax
from fs_tools.testing import assert_error, assert_ok

# name -> (valid text, the same after a change that breaks it, the line the error is on)
BREAKS: dict[str, tuple[str, str, int]] = {
    "a.py": ("def f(x):\n    return x\n", "def f(x):\n    return (x\n", 2),
    "a.js": ("function f(x) {\n  return x;\n}\n", "function f(x) {\n  return x;\n", 2),
    "a.ts": ("let x: number = 1;\n", "let x: number = ;\n", 1),
    "a.tsx": ("const A = () => <div>{x}</div>;\n", "const A = () => <div>{x</div>;\n", 1),
    "a.json": ('{"a": 1, "b": 2}\n', '{"a": 1,, "b": 2}\n', 1),
    "a.yaml": ("a: 1\nb: [1, 2]\n", "a: 1\nb: [1, 2\n", 1),
    "a.toml": ("a = 1\n", "a = \n", 1),
    "a.go": ("package main\n\nfunc main() {\n}\n", "package main\n\nfunc main() {\n", 3),
    "a.rs": ("fn main() {\n}\n", "fn main() {\n", 1),
    "a.java": ("class A {\n  void f() {}\n}\n", "class A {\n  void f() {\n}\n", 3),
    "a.c": ("int main(void) {\n  return 0;\n}\n", "int main(void) {\n  return 0\n}\n", 2),
    "a.cpp": ("int main() {\n  return 0;\n}\n", "int main() {\n  return 0\n}\n", 2),
    "a.sh": ("if true; then\n  echo hi\nfi\n", "if true; then\n  echo hi\n", 2),
}


def _edit(session: Session, name: str, old: str, new: str) -> dict[str, object]:
    result = assert_ok(session.call("edit", {"file_path": name, "old_string": old, "new_string": new}))
    assert result.value is not None
    return result.value


def _observed(root: Path, session: Session, name: str, text: str) -> Path:
    path = root / name
    path.write_text(text)
    assert_ok(session.call("read", {"file_path": name}))
    return path


@pytest.mark.parametrize("name", sorted(BREAKS))
def test_a_change_that_breaks_the_syntax_is_written_and_reported(root: Path, session: Session, name: str) -> None:
    good, bad, line = BREAKS[name]
    path = _observed(root, session, name, good)
    result = assert_ok(session.call("write", {"file_path": name, "content": bad}))
    assert path.read_text() == bad
    assert result.value is not None
    errors = result.value["syntax_errors"]
    assert errors and errors[0]["line"] <= line <= errors[0]["end_line"], errors
    assert "syntax error" in result.text and "the file was written" in result.text
    back = assert_ok(session.call("write", {"file_path": name, "content": good}))
    assert back.value is not None and back.value["syntax_errors"] == []  # fixing it introduces nothing


def test_only_the_errors_the_change_introduced_are_reported(root: Path, session: Session) -> None:
    _observed(root, session, "a.py", "def f(x):\n    return x\n\nbroken = (\n")
    assert _edit(session, "a.py", "    return x", "    return x + 1")["syntax_errors"] == []  # was broken before
    errors = _edit(session, "a.py", "def f(x):", "def f(x:")["syntax_errors"]
    assert isinstance(errors, list) and errors and errors[0]["line"] == 1
    assert _edit(session, "a.py", "def f(x:", "def f(x):")["syntax_errors"] == []
    assert _edit(session, "a.py", "broken = (", "fixed = ()")["syntax_errors"] == []


def test_a_multi_edit_is_checked_once_as_a_whole(root: Path, session: Session) -> None:
    _observed(root, session, "a.py", "x = [1,\n     2]\n")
    edits = [{"old_string": "2]", "new_string": "2"}, {"old_string": "2\n", "new_string": "2]\n"}]
    result = assert_ok(session.call("multi_edit", {"file_path": "a.py", "edits": edits}))
    assert result.value is not None and result.value["syntax_errors"] == []  # broken between edits only


def test_refusing_writes_nothing_and_names_the_line(root: Path) -> None:
    with Workspace(root, refuse_syntax_errors=True) as workspace:
        session = workspace.session("s")
        path = _observed(root, session, "a.py", "def f(x):\n    return x\n")
        message = assert_error(
            session.call("edit", {"file_path": "a.py", "old_string": "return x", "new_string": "return (x"}),
            "FS_SYNTAX_ERROR",
        ).text
        assert "line 2" in message and "nothing was written" in message
        edits = [{"old_string": "return x", "new_string": "return [x"}]
        assert_error(session.call("multi_edit", {"file_path": "a.py", "edits": edits}), "FS_SYNTAX_ERROR")
        assert_error(session.call("write", {"file_path": "a.py", "content": "def f(:\n"}), "FS_SYNTAX_ERROR")
        assert_error(session.call("write", {"file_path": "new.py", "content": "def f(:\n"}), "FS_SYNTAX_ERROR")
        assert path.read_text() == "def f(x):\n    return x\n" and not (root / "new.py").exists()
        assert_ok(session.call("write", {"file_path": "ok.json", "content": "{}\n"}))
        dry = session.call(
            "edit", {"file_path": "a.py", "old_string": "return x", "new_string": "return (x", "dry_run": True}
        )
        assert_ok(dry)  # a dry run writes nothing anyway: it shows the diff


def test_the_check_can_be_turned_off_and_other_files_are_not_checked(root: Path) -> None:
    with Workspace(root, check_syntax=False) as workspace:
        session = workspace.session("s")
        result = assert_ok(session.call("write", {"file_path": "a.py", "content": "def f(:\n"}))
        assert result.value is not None and result.value["syntax_errors"] == [] and "Warning" not in result.text
    with Workspace(root) as workspace:
        result = assert_ok(workspace.session("s").call("write", {"file_path": "notes.txt", "content": "def f(:\n"}))
        assert result.value is not None and result.value["syntax_errors"] == []


def test_a_file_over_the_limit_is_not_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(syntax, "MAX_CHECKED_BYTES", 10)
    found = syntax.check("a.py", None, b"def f(:\n    pass\n")
    assert found.introduced == () and found.skipped == "the file is over 0 KB"
    assert syntax.report(found) == ("\nSyntax not checked: the file is over 0 KB.", [])


def test_a_grammar_that_cannot_be_loaded_turns_its_check_off(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    syntax._language.cache_clear()
    monkeypatch.setitem(syntax._GRAMMARS, ".py", ("tree_sitter_no_such_grammar", "language", "Python"))
    with caplog.at_level(logging.WARNING, logger="fs_tools.syntax"):
        found = syntax.check("a.py", None, b"def f(:\n")
        again = syntax.check("b.py", None, b"def f(:\n")
    syntax._language.cache_clear()
    assert found.introduced == () and found.skipped == "its grammar is not installed" and again == found
    assert sum("syntax checks of tree_sitter_no_such_grammar files are off" in r.message for r in caplog.records) == 1


def test_the_check_never_raises_on_strange_bytes() -> None:
    for data in (b"\xff\xfe\x00garbage", b"(" * 10_000, b"\x00" * 100, "é".encode() * 1000):
        syntax.check("a.py", None, data)
        syntax.check("a.json", data, data + b"}")


def test_a_write_over_a_file_too_large_to_parse_says_it_was_not_checked(root: Path, session: Session) -> None:
    _observed(root, session, "big.py", "x = 1\n" * (syntax.MAX_CHECKED_BYTES // 6 + 10))
    result = assert_ok(session.call("write", {"file_path": "big.py", "content": "def f(:\n"}))
    assert result.value is not None and result.value["syntax_errors"] == []
    assert "Syntax not checked: the file is over 256 KB." in result.text


# --- incremental parses give the answers whole ones do -------------------------------------------------------

_REAL = {
    "typing.py": Path(typing.__file__).read_bytes()[: 120 << 10],  # the standard library's, cut within the limit
    "syntax.py": Path(syntax.__file__).read_bytes(),  # this project's own
    "app.js": b"function f(a, b) {\n  if (a) { return [a, b]; }\n  return {a: 1, 'b': `x${b}`};\n}\n" * 40,
    "a.json": b'{"a": [1, 2, {"b": null}], "c": "d"}\n',
}
_PIECES = [b"", b"(", b")", b"]", b"{", b"}", b":", b"\n", b"    ", b"\t", b"def g(:", b"x = ", b"'", b'"', b"#", b",,"]


@hypothesis.settings(max_examples=60, deadline=None, suppress_health_check=[hypothesis.HealthCheck.too_slow])
@hypothesis.given(
    name=st.sampled_from(sorted(_REAL)),
    edits=st.lists(
        st.tuples(st.floats(0, 1), st.integers(0, 40), st.lists(st.sampled_from(_PIECES), max_size=4)),
        min_size=1,
        max_size=6,
    ),
)
def test_a_run_of_edits_checked_incrementally_finds_what_whole_parses_find(
    name: str, edits: list[tuple[float, int, list[bytes]]]
) -> None:
    """Each edit of the run is checked twice: against the parse kept from the check before (incremental)
    and with nothing kept (both texts parsed whole). The answers are the same, edit after edit."""
    text = _REAL[name]
    syntax._KEPT.clear()
    syntax.check(name, None, text)  # the run starts from a kept parse, as after a write
    for at, removed, inserted in edits:
        start = int(at * len(text))
        changed = text[:start] + b"".join(inserted) + text[start + removed :]
        incremental = syntax.check(name, text, changed)
        kept = dict(syntax._KEPT._kept)
        syntax._KEPT.clear()
        assert syntax.check(name, text, changed) == incremental
        syntax._KEPT._kept.update(kept)
        text = changed


def test_kept_parses_are_bounded_by_count_and_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    trees = syntax._Trees()
    monkeypatch.setattr(trees, "COUNT", 3)
    monkeypatch.setattr(trees, "BYTES", 100)
    parse = syntax._Parse(None, [])
    for n in range(5):
        trees.put("g", bytes([n]) * 10, parse)
    assert len(trees._kept) == 3 and trees.get("g", bytes([0]) * 10) is None and trees.get("g", b"\x04" * 10)
    trees.put("g", b"x" * 95, parse)
    assert len(trees._kept) == 1 and trees._bytes == 95
