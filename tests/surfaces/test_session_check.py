"""``Session.check``, ``observe`` and ``adopt`` (SPEC §19): the gates of a change without making it, a read
made by other tools, and a change made by other tools taken in as the session's own. The hooks stand on
these; here they are held to what ``call`` does."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from fs_tools import Session, Workspace
from fs_tools.result import ToolResult

SCENARIOS = Path(__file__).parents[1] / "codex_scenarios"


def _tree(root: Path) -> dict[str, bytes]:
    """Every entry under ``root``: a file's bytes, a directory as None-like marker."""
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else b"<dir>") for p in sorted(root.rglob("*"))}


def _code(result: ToolResult) -> str | None:
    return result.error.code if result.error is not None else None


def _checked(result: ToolResult) -> bool:
    return result.error is None and result.value == {"checked": True}


@pytest.mark.parametrize("scenario", sorted(p.name for p in SCENARIOS.iterdir() if p.is_dir()))
def test_a_check_answers_as_the_patch_would_and_writes_nothing(scenario: str, tmp_path: Path) -> None:
    source = SCENARIOS / scenario
    trees = []
    outcomes = []
    for mode in ("check", "call"):
        root = tmp_path / mode
        root.mkdir()
        if (source / "input").exists():
            shutil.copytree(source / "input", root, dirs_exist_ok=True)
        with Workspace(root, dialect="codex") as ws:
            session = ws.session("s")
            for path in _tree(root):
                if (root / path).is_file():
                    session.call("read", {"file_path": path})
            before = _tree(root)
            run = session.check if mode == "check" else session.call
            outcomes.append(run("apply_patch", {"input": (source / "patch.txt").read_text()}))
            trees.append((before, _tree(root)))
    checked, called = outcomes
    assert trees[0][0] == trees[0][1]  # the check wrote nothing, made no directory
    if called.error is None:
        assert _checked(checked), checked.text
    else:
        assert _code(checked) == _code(called)
        assert checked.text == called.text


@pytest.fixture
def cc(root: Path) -> Session:
    (root / "a.py").write_text("def f():\n\treturn 1\n")
    (root / "notes.txt").write_text("one\none\n")
    return Workspace(root, dialect="claude-code").session("s")


EDITS = [
    ("Edit", {"file_path": "a.py", "old_string": "\treturn 1", "new_string": "\treturn 2"}),
    ("Edit", {"file_path": "a.py", "old_string": "    return 1", "new_string": "    return 2"}),
    ("Edit", {"file_path": "notes.txt", "old_string": "one", "new_string": "two"}),
    ("Edit", {"file_path": "notes.txt", "old_string": "one", "new_string": "two", "replace_all": True}),
    ("Edit", {"file_path": "missing.txt", "old_string": "one", "new_string": "two"}),
    (
        "MultiEdit",
        {
            "file_path": "a.py",
            "edits": [{"old_string": "def f", "new_string": "def g"}, {"old_string": "nope", "new_string": "x"}],
        },
    ),
    ("Write", {"file_path": "a.py", "content": "x = 1\n"}),
    ("Write", {"file_path": "new/dir/b.py", "content": "x = 1\n"}),
    ("Write", {"file_path": "../outside/secret.txt", "content": "x"}),
    ("Write", {"file_path": "new", "content": "x"}),
    ("Edit", {"file_path": "a.py", "old_string": "same", "new_string": "same"}),
]


@pytest.mark.parametrize("read", [False, True], ids=["unread", "read"])
@pytest.mark.parametrize(("tool", "arguments"), EDITS, ids=[f"{t}-{i}" for i, (t, _) in enumerate(EDITS)])
def test_a_check_answers_as_the_call_would(
    cc: Session, root: Path, tool: str, arguments: dict[str, object], read: bool
) -> None:
    if read:
        for name in ("a.py", "notes.txt"):
            cc.call("Read", {"file_path": name})
    before = _tree(root.parent)
    checked = cc.check(tool, arguments)
    assert _tree(root.parent) == before
    called = cc.call(tool, arguments)
    if called.error is None:
        assert _checked(checked), checked.text
    else:
        assert (_code(checked), checked.text) == (_code(called), called.text)


def test_a_check_sees_what_changed_since_the_read(cc: Session, root: Path) -> None:
    cc.call("Read", {"file_path": "a.py"})
    (root / "a.py").write_text("def f():\n\treturn 3\n")
    result = cc.check("Edit", {"file_path": "a.py", "old_string": "\treturn 1", "new_string": "\treturn 2"})
    assert _code(result) == "FS_STALE_VERSION"
    assert "line 2" in result.text


def test_a_check_honours_read_only_and_protected_paths(root: Path) -> None:
    (root / "a.env").write_text("K=1\n")
    with Workspace(root, dialect="claude-code", protected=["*.env"]) as ws:
        session = ws.session("s")
        session.call("Read", {"file_path": "a.env"})
        assert _code(session.check("Write", {"file_path": "a.env", "content": "K=2\n"})) == "FS_SANDBOX_DENIED"
    with Workspace(root, dialect="claude-code", read_only=True) as ws:
        result = ws.session("s").check("Write", {"file_path": "b.txt", "content": "x"})
        assert _code(result) == "FS_SANDBOX_DENIED"
    assert not (root / "b.txt").exists()


def test_only_a_change_can_be_checked(cc: Session) -> None:
    with pytest.raises(ValueError, match="Read"):
        cc.check("Read", {"file_path": "a.py"})
    assert _code(cc.check("Nope", {})) == "UNKNOWN_TOOL"
    assert _code(cc.check("Edit", {"file_path": "a.py"})) == "INVALID_ARGS"


def test_observe_records_what_a_read_would(cc: Session, root: Path) -> None:
    version = cc.observe("a.py")
    assert version is not None
    assert _checked(cc.check("Edit", {"file_path": "a.py", "old_string": "\treturn 1", "new_string": "\treturn 2"}))
    assert cc.observe("gone.txt") is None  # observed absent: a create is allowed, an edit is not
    assert _checked(cc.check("Write", {"file_path": "gone.txt", "content": "x"}))
    (root / "gone.txt").write_text("appeared\n")
    assert _code(cc.check("Write", {"file_path": "gone.txt", "content": "x"})) == "FS_STALE_VERSION"


def test_observe_and_adopt_stay_inside_the_roots(cc: Session) -> None:
    from fs_tools.errors import HarnessError

    for method in (cc.observe, cc.adopt):
        with pytest.raises(HarnessError) as caught:
            method("../outside/secret.txt")
        assert caught.value.code == "FS_SANDBOX_DENIED"


def test_an_adopted_change_is_the_sessions_own_and_rewinds(cc: Session, root: Path) -> None:
    mark = cc.checkpoint()
    cc.observe("a.py")
    (root / "a.py").write_text("def f():\n\treturn 2\n")  # the harness's Edit
    assert cc.adopt("a.py", tool="Edit") is not None
    # its own change: the next edit is allowed, and history has it
    assert _checked(cc.check("Edit", {"file_path": "a.py", "old_string": "\treturn 2", "new_string": "\treturn 3"}))
    assert [entry.tool for entry in cc.history() if entry.kind == "change"] == ["Edit"]
    assert "-\treturn 1\n+\treturn 2" in cc.diff(mark)
    cc.observe("c.txt")
    (root / "c.txt").write_text("new\n")  # the harness's Write of a new file
    cc.adopt("c.txt", tool="Write")
    report = cc.rewind(mark)
    assert not report.is_error, report.message
    assert (root / "a.py").read_text() == "def f():\n\treturn 1\n"
    assert not (root / "c.txt").exists()


def test_a_change_from_an_unknown_state_is_seen_but_never_rewound(cc: Session, root: Path) -> None:
    mark = cc.checkpoint()
    (root / "a.py").write_text("someone's\n")  # never observed: what it replaced is unknown
    cc.adopt("a.py", tool="Write")
    assert not [entry for entry in cc.history() if entry.kind == "change"]
    assert _checked(cc.check("Write", {"file_path": "a.py", "content": "mine\n"}))
    cc.rewind(mark)
    assert (root / "a.py").read_text() == "someone's\n"


def test_an_adopted_removal(cc: Session, root: Path) -> None:
    cc.observe("a.py")
    (root / "a.py").unlink()
    assert cc.adopt("a.py", tool="apply_patch") is None
    assert _code(cc.check("Edit", {"file_path": "a.py", "old_string": "x", "new_string": "y"})) == "FS_NOT_FOUND"


def test_a_check_refuses_content_over_the_size_limit_as_the_write_would(root: Path) -> None:
    with Workspace(root, dialect="claude-code", max_file_bytes=1024) as ws:
        session = ws.session("s")
        arguments = {"file_path": "big.txt", "content": "x" * 2048}
        checked, called = session.check("Write", arguments), session.call("Write", arguments)
        assert (_code(checked), checked.text) == (_code(called), called.text) == ("FS_TOO_LARGE", called.text)
