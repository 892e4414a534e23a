"""``fs-tools hook`` (SPEC §19) on the events each harness sends, as recorded from Claude Code 2.1.332 and
Gemini CLI 0.61.0 (the field names and shapes of their hook JSON): gates before a change, observations
after a read, changes adopted into history, and "no opinion" whenever the hook cannot judge."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fs_tools.hooks import HookGates, Reply, hook_event
from fs_tools.hooks import command as hook_command


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "a.py").write_text("def f():\n\treturn 1\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("TOP-SECRET\n")
    return root


@pytest.fixture
def store(tmp_path: Path) -> str:
    return str(tmp_path / "state" / "observations.sqlite")


def claude(project: Path, event: str, tool: str, tool_input: dict[str, Any], session: str = "S1") -> dict[str, Any]:
    """A Claude Code hook event as 2.1.332 sends it."""
    payload: dict[str, Any] = {
        "session_id": session,
        "transcript_path": f"/home/u/.claude/projects/x/{session}.jsonl",
        "cwd": str(project),
        "prompt_id": "p1",
        "permission_mode": "acceptEdits",
        "effort": "medium",
        "hook_event_name": event,
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": "toolu_01",
    }
    if event == "PostToolUse":
        payload["tool_response"] = {"filePath": tool_input.get("file_path")}
        payload["duration_ms"] = 3
    return payload


def gemini(project: Path, event: str, tool: str, tool_input: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """A Gemini CLI hook event as 0.61.0 sends it (paths as the model wrote them: relative ones too)."""
    payload = {
        "session_id": "G1",
        "transcript_path": "/home/u/.gemini/tmp/x/chats/session.json",
        "cwd": str(project),
        "hook_event_name": event,
        "timestamp": "2026-12-05T04:00:00.000Z",
        "tool_name": tool,
        "tool_input": tool_input,
    }
    return {**payload, **extra}


EDIT = {"old_string": "\treturn 1", "new_string": "\treturn 2", "replace_all": False}


def _edit(project: Path, **changes: Any) -> dict[str, Any]:
    return {"file_path": str(project / "a.py"), **EDIT, **changes}


def test_a_change_to_a_file_not_read_is_denied_with_the_reason(project: Path, store: str) -> None:
    reply = hook_event("claude-code", claude(project, "PreToolUse", "Edit", _edit(project)), store=store)
    assert reply.deny
    assert "has not been read in this session" in reply.reason and "(Read)" in reply.reason
    reply = hook_event(
        "claude-code",
        claude(project, "PreToolUse", "Write", {"file_path": str(project / "a.py"), "content": "x"}),
        store=store,
    )
    assert reply.deny and "this session has not read it" in reply.reason
    assert (project / "a.py").read_text() == "def f():\n\treturn 1\n"


def test_read_then_edit_is_allowed_and_the_edit_adopted(project: Path, store: str) -> None:
    hook = HookGates("claude-code", store=store)
    assert hook.handle(claude(project, "PostToolUse", "Read", {"file_path": str(project / "a.py")})) == Reply()
    assert hook.handle(claude(project, "PreToolUse", "Edit", _edit(project))) == Reply()
    (project / "a.py").write_text("def f():\n\treturn 2\n")  # what Claude Code's Edit does
    assert hook.handle(claude(project, "PostToolUse", "Edit", _edit(project))) == Reply()
    # its own change: the next edit needs no new read
    again = _edit(project, old_string="\treturn 2", new_string="\treturn 3")
    assert hook.handle(claude(project, "PreToolUse", "Edit", again)) == Reply()
    hook.close()


def test_a_file_changed_since_the_read_is_stale_with_its_lines(project: Path, store: str) -> None:
    hook_event("claude-code", claude(project, "PostToolUse", "Read", {"file_path": str(project / "a.py")}), store=store)
    (project / "a.py").write_text("def f():\n\treturn 9\n")  # another agent, a formatter, the user
    reply = hook_event("claude-code", claude(project, "PreToolUse", "Edit", _edit(project)), store=store)
    assert reply.deny
    assert "changed since this session last read it" in reply.reason and "line 2" in reply.reason


def test_a_touch_is_not_a_change(project: Path, store: str) -> None:
    hook_event("claude-code", claude(project, "PostToolUse", "Read", {"file_path": str(project / "a.py")}), store=store)
    later = time.time() + 60
    os.utime(project / "a.py", (later, later))
    assert hook_event("claude-code", claude(project, "PreToolUse", "Edit", _edit(project)), store=store) == Reply()


@pytest.mark.parametrize(
    ("old_string", "kind"),
    [("    return 1", "tabs vs spaces"), ("\treturn \u0661", None)],
    ids=["tabs", "look-alike"],
)
def test_a_near_miss_is_denied_with_the_diagnosis(project: Path, store: str, old_string: str, kind: str | None) -> None:
    """Gemini CLI asks its hook before replace matches: the diagnosis reaches the model. (Claude Code matches
    an Edit before its hook runs: see test_claude_codes_own_matching_is_not_second_guessed.)"""
    hook_event("gemini", gemini(project, "AfterTool", "read_file", {"file_path": "a.py"}), store=store)
    replace = {"file_path": "a.py", "old_string": old_string, "new_string": "\treturn 2"}
    reply = hook_event("gemini", gemini(project, "BeforeTool", "replace", replace), store=store)
    assert reply.deny
    assert "old_string was not found" in reply.reason and "line 2" in reply.reason
    if kind is not None:
        assert kind in reply.reason


def test_a_change_outside_the_roots_is_denied(project: Path, store: str) -> None:
    secret = project.parent / "outside" / "secret.txt"
    (project / "link").symlink_to(project.parent / "outside")
    for path in (secret, project / "link" / "secret.txt", project / "link" / "new.txt"):
        reply = hook_event(
            "claude-code", claude(project, "PreToolUse", "Write", {"file_path": str(path), "content": "x"}), store=store
        )
        assert reply.deny, path
        assert "outside" in reply.reason or "leads outside" in reply.reason
    assert secret.read_text() == "TOP-SECRET\n"


def test_protected_and_read_only(project: Path, store: str) -> None:
    (project / ".env").write_text("K=1\n")
    write = {"file_path": str(project / ".env"), "content": "K=2\n"}
    hook_event("claude-code", claude(project, "PostToolUse", "Read", {"file_path": write["file_path"]}), store=store)
    reply = hook_event("claude-code", claude(project, "PreToolUse", "Write", write), store=store, protected=[".env"])
    assert reply.deny and "protected" in reply.reason
    new = {"file_path": str(project / "b.txt"), "content": "x"}
    reply = hook_event("claude-code", claude(project, "PreToolUse", "Write", new), store=store, read_only=True)
    assert reply.deny and "read-only" in reply.reason


def test_a_new_file_is_the_sessions_and_rewinds(project: Path, store: str) -> None:
    new = {"file_path": str(project / "pkg" / "b.py"), "content": "x = 1\n"}
    assert hook_event("claude-code", claude(project, "PreToolUse", "Write", new), store=store) == Reply()
    assert not (project / "pkg").exists()  # the check made nothing
    (project / "pkg").mkdir()
    (project / "pkg" / "b.py").write_text("x = 1\n")
    hook_event("claude-code", claude(project, "PostToolUse", "Write", new), store=store)

    def fs_tools(*arguments: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "fs_tools", *arguments, "--session", "S1", "--root", str(project)],
            capture_output=True,
            text=True,
            env={**os.environ, "FS_TOOLS_STATE": store},
            check=True,
        )
        return done.stdout

    assert "+x = 1" in fs_tools("diff")
    mark = fs_tools("history").split()[0]
    fs_tools("rewind", mark)
    assert not (project / "pkg" / "b.py").exists()


def test_a_rewind_never_clobbers_another_sessions_change(project: Path, store: str) -> None:
    from fs_tools import Workspace

    with Workspace(project, store=store) as workspace:
        mark = workspace.session("S1").checkpoint()
    hook_event("claude-code", claude(project, "PostToolUse", "Read", {"file_path": str(project / "a.py")}), store=store)
    hook_event("claude-code", claude(project, "PreToolUse", "Edit", _edit(project)), store=store)
    (project / "a.py").write_text("def f():\n\treturn 2\n")
    hook_event("claude-code", claude(project, "PostToolUse", "Edit", _edit(project)), store=store)
    (project / "a.py").write_text("def f():\n\treturn 2  # someone else\n")
    with Workspace(project, store=store) as workspace:
        report = workspace.session("S1").rewind(mark)
    assert [item.code for item in report.skipped] == ["FS_STALE_VERSION"]
    assert (project / "a.py").read_text() == "def f():\n\treturn 2  # someone else\n"


def test_two_sessions_racing_on_one_file_lose_no_update(project: Path, store: str) -> None:
    read = {"file_path": str(project / "a.py")}
    for session in ("A", "B"):
        hook_event("claude-code", claude(project, "PostToolUse", "Read", read, session=session), store=store)
    write_a = {"file_path": read["file_path"], "content": "A\n"}
    write_b = {"file_path": read["file_path"], "content": "B\n"}
    assert (
        hook_event("claude-code", claude(project, "PreToolUse", "Write", write_a, session="A"), store=store) == Reply()
    )
    # B's change comes between A's allowed check and A's write: held off, then stale once A wrote
    busy = hook_event("claude-code", claude(project, "PreToolUse", "Write", write_b, session="B"), store=store)
    assert busy.deny and "being changed by another agent's session" in busy.reason
    (project / "a.py").write_text("A\n")
    hook_event("claude-code", claude(project, "PostToolUse", "Write", write_a, session="A"), store=store)
    stale = hook_event("claude-code", claude(project, "PreToolUse", "Write", write_b, session="B"), store=store)
    assert stale.deny and "changed since this session last read it" in stale.reason
    hook_event("claude-code", claude(project, "PostToolUse", "Read", read, session="B"), store=store)
    assert (
        hook_event("claude-code", claude(project, "PreToolUse", "Write", write_b, session="B"), store=store) == Reply()
    )


def test_a_failed_change_releases_its_lease(project: Path, store: str) -> None:
    read = {"file_path": str(project / "a.py")}
    for session in ("A", "B"):
        hook_event("claude-code", claude(project, "PostToolUse", "Read", read, session=session), store=store)
    hook_event("claude-code", claude(project, "PreToolUse", "Edit", _edit(project), session="A"), store=store)
    failed = {**claude(project, "PostToolUseFailure", "Edit", _edit(project), session="A"), "error": "boom"}
    hook_event("claude-code", failed, store=store)
    assert (
        hook_event("claude-code", claude(project, "PreToolUse", "Edit", _edit(project), session="B"), store=store)
        == Reply()
    )


@pytest.mark.parametrize(
    "event",
    [
        "not an object",
        {"hook_event_name": "PreToolUse", "tool_name": "Edit", "tool_input": {"file_path": "/x"}},  # no session
        {"hook_event_name": "PreToolUse", "session_id": "S", "tool_name": "Edit"},  # no tool_input
        {"hook_event_name": "PreToolUse", "session_id": "S", "tool_name": 3, "tool_input": {}},
        {"hook_event_name": "PreToolUse", "session_id": "S", "tool_name": "Edit", "tool_input": {"old_string": "x"}},
        {"hook_event_name": "PreToolUse", "session_id": "S", "tool_name": "Edit", "tool_input": {"file_path": "a"}},
    ],
)
def test_what_cannot_be_judged_is_no_opinion_with_a_note(event: object, store: str) -> None:
    reply = hook_event("claude-code", event, store=store)
    assert not reply.deny
    assert reply.note.startswith("fs-tools hook: ") and "no opinion" in reply.note


@pytest.mark.parametrize(
    "event",
    [
        {"hook_event_name": "SessionStart", "session_id": "S"},
        {"hook_event_name": "PreToolUse", "session_id": "S", "tool_name": "Bash", "tool_input": {"command": "ls"}},
        {"hook_event_name": "PreToolUse", "session_id": "S", "tool_name": "Read", "tool_input": {"file_path": "/a"}},
    ],
)
def test_what_is_not_ours_is_silent(event: object, store: str) -> None:
    assert hook_event("claude-code", event, store=store) == Reply()


def test_an_unreachable_store_or_a_bug_is_no_opinion(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reply = hook_event(
        "claude-code", claude(project, "PreToolUse", "Edit", _edit(project)), store="redis://127.0.0.1:1/0"
    )
    assert not reply.deny and "no opinion" in reply.note

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug")

    from fs_tools.workspace import Session

    monkeypatch.setattr(Session, "check", broken)
    reply = hook_event("claude-code", claude(project, "PreToolUse", "Edit", _edit(project)))
    assert not reply.deny and "RuntimeError: a bug" in reply.note


def test_no_verdict_in_time_is_no_opinion(
    project: Path, store: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from fs_tools.hooks import engine

    def slow(*args: object, **kwargs: object) -> Reply:
        time.sleep(5)
        return Reply(deny=True, reason="too late")

    monkeypatch.setattr(engine, "hook_event", slow)
    monkeypatch.setattr(
        sys,
        "stdin",
        io.TextIOWrapper(io.BytesIO(json.dumps(claude(project, "PreToolUse", "Edit", _edit(project))).encode())),
    )
    status = hook_command.run("claude-code", roots=[], store=store, protected=[], read_only=False, timeout=0.2)
    assert status == 0 and "no verdict within 0.2 s" in capsys.readouterr().err


def _run(harness: str, event: object, store: str, *options: str) -> subprocess.CompletedProcess[str]:
    data = event if isinstance(event, str) else json.dumps(event)
    return subprocess.run(
        [sys.executable, "-m", "fs_tools", "hook", "--harness", harness, "--store", store, *options],
        input=data,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_command_speaks_claude_codes_protocol(project: Path, store: str) -> None:
    denied = _run("claude-code", claude(project, "PreToolUse", "Edit", _edit(project)), store)
    assert (denied.returncode, denied.stdout) == (2, "")
    assert "has not been read in this session" in denied.stderr
    garbage = _run("claude-code", "{not json", store)
    assert garbage.returncode == 0 and "no opinion" in garbage.stderr and garbage.stdout == ""
    read = _run("claude-code", claude(project, "PostToolUse", "Read", {"file_path": str(project / "a.py")}), store)
    assert (read.returncode, read.stdout, read.stderr) == (0, "", "")
    allowed = _run("claude-code", claude(project, "PreToolUse", "Edit", _edit(project)), store)
    assert (allowed.returncode, allowed.stdout, allowed.stderr) == (0, "", "")


def test_the_command_speaks_gemini_clis_protocol(project: Path, store: str) -> None:
    replace = {"file_path": "a.py", "instruction": "bump", "old_string": "    return 1", "new_string": "    return 2"}
    denied = _run("gemini", gemini(project, "BeforeTool", "replace", replace), store)
    assert denied.returncode == 0
    decision = json.loads(denied.stdout)
    assert decision["decision"] == "deny" and "has not been read" in decision["reason"]
    _run(
        "gemini",
        gemini(
            project,
            "AfterTool",
            "read_file",
            {"file_path": "a.py"},
            tool_response={"llmContent": "def f():\n\treturn 1\n"},
        ),
        store,
    )
    near = json.loads(_run("gemini", gemini(project, "BeforeTool", "replace", replace), store).stdout)
    assert "tabs vs spaces" in near["reason"]
    exact = {**replace, "old_string": "\treturn 1", "new_string": "\treturn 2"}
    allowed = _run("gemini", gemini(project, "BeforeTool", "replace", exact), store)
    assert (allowed.returncode, allowed.stdout) == (0, "")


def test_gemini_after_a_failed_tool_adopts_nothing(project: Path, store: str) -> None:
    read = gemini(
        project, "AfterTool", "read_file", {"file_path": "a.py"}, tool_response={"llmContent": "def f():\n\treturn 1\n"}
    )
    hook_event("gemini", read, store=store)
    replace = {"file_path": "a.py", "old_string": "\treturn 1", "new_string": "\treturn 2"}
    hook_event("gemini", gemini(project, "BeforeTool", "replace", replace), store=store)
    failed = gemini(project, "AfterTool", "replace", replace, tool_response={"llmContent": "", "error": "boom"})
    hook_event("gemini", failed, store=store)
    assert hook_event("gemini", gemini(project, "BeforeTool", "replace", replace), store=store) == Reply()


# --- install / uninstall --------------------------------------------------------------------------------


def _cli(*args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fs_tools", "hook", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "HOME": str(home)},
        timeout=60,
    )


@pytest.mark.parametrize(
    ("harness", "settings"),
    [("claude-code", ".claude/settings.json"), ("gemini", ".gemini/settings.json"), ("codex", ".codex/hooks.json")],
)
def test_install_merges_and_uninstall_removes_only_ours(
    project: Path, tmp_path: Path, harness: str, settings: str
) -> None:
    path = project / settings
    path.parent.mkdir()
    theirs = {"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]}
    before = {"model": "x", "hooks": {"PreToolUse": [theirs], "BeforeTool": [theirs]}}
    path.write_text(json.dumps(before))
    for _ in range(2):  # installing again replaces ours, never duplicates it
        done = _cli("install", "--harness", harness, "--protected", ".env", cwd=project, home=tmp_path)
        assert done.returncode == 0, done.stderr
    installed = json.loads(path.read_text())
    assert installed["model"] == "x"
    commands = [h["command"] for groups in installed["hooks"].values() for g in groups for h in g["hooks"]]
    ours = [c for c in commands if hook_command.MARKER in c]
    assert commands.count("audit.sh") == 2 and len(ours) == len(commands) - 2
    assert all(f"--harness {harness}" in c and "--protected=.env" in c for c in ours)
    removed = _cli("uninstall", "--harness", harness, cwd=project, home=tmp_path)
    assert removed.returncode == 0
    assert json.loads(path.read_text()) == before


def test_install_refuses_settings_it_cannot_read(project: Path, tmp_path: Path) -> None:
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text("{broken")
    done = _cli("install", "--harness", "claude-code", cwd=project, home=tmp_path)
    assert done.returncode == 2 and "not valid JSON" in done.stderr
    assert (project / ".claude" / "settings.json").read_text() == "{broken"


def test_install_in_the_users_settings(project: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    done = _cli("install", "--harness", "claude-code", "--scope", "user", cwd=project, home=home)
    assert done.returncode == 0, done.stderr
    assert "PreToolUse" in json.loads((home / ".claude" / "settings.json").read_text())["hooks"]


# --- Codex: apply_patch as a tool or a shell heredoc, reads only through the shell -------------------------


def codex(project: Path, event: str, tool: str, command: str, **extra: Any) -> dict[str, Any]:
    """A Codex hook event as 0.171.0 sends it."""
    payload = {
        "session_id": "01a24433-f5b9",
        "turn_id": "01a24433-f5e3",
        "transcript_path": "/home/u/.codex/sessions/rollout.jsonl",
        "cwd": str(project),
        "hook_event_name": event,
        "model": "gpt-5.5",
        "permission_mode": "bypassPermissions",
        "tool_name": tool,
        "tool_input": {"command": command},
        "tool_use_id": "call_1",
    }
    return {**payload, **extra}


UPDATE = "*** Begin Patch\n*** Update File: a.py\n@@\n def f():\n-\treturn 1\n+\treturn 2\n*** End Patch\n"


@pytest.mark.parametrize("form", ["tool", "heredoc"])
def test_codex_patches_are_gated(project: Path, store: str, form: str) -> None:
    def pre(patch: str) -> dict[str, Any]:
        if form == "tool":
            return codex(project, "PreToolUse", "apply_patch", patch)
        return codex(project, "PreToolUse", "Bash", f"apply_patch <<'EOF'\n{patch}EOF")

    unread = hook_event("codex", pre(UPDATE), store=store)
    assert unread.deny and "has not been read" in unread.reason
    hook_event(
        "codex",
        codex(project, "PostToolUse", "Bash", "sed -n '1,80p' a.py", tool_response="def f():\n\treturn 1\n"),
        store=store,
    )
    near = hook_event("codex", pre(UPDATE.replace("-\treturn 1", "-    return 1")), store=store)
    assert near.deny and "line 2" in near.reason
    assert hook_event("codex", pre(UPDATE), store=store) == Reply()
    added = "*** Begin Patch\n*** Add File: pkg/new.py\n+x = 1\n*** End Patch\n"
    assert hook_event("codex", pre(added), store=store) == Reply()
    outside = "*** Begin Patch\n*** Add File: ../outside/new.py\n+x = 1\n*** End Patch\n"
    denied = hook_event("codex", pre(outside), store=store)
    assert denied.deny and "outside" in denied.reason
    assert not (project / "pkg").exists()


def test_codex_adopts_an_applied_patch(project: Path, store: str) -> None:
    hook_event(
        "codex", codex(project, "PostToolUse", "Bash", "cat a.py", tool_response="def f():\n\treturn 1\n"), store=store
    )
    assert hook_event("codex", codex(project, "PreToolUse", "apply_patch", UPDATE), store=store) == Reply()
    (project / "a.py").write_text("def f():\n\treturn 2\n")
    done = "Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\nM a.py\n"
    hook_event("codex", codex(project, "PostToolUse", "apply_patch", UPDATE, tool_response=done), store=store)
    again = UPDATE.replace("-\treturn 1\n+\treturn 2", "-\treturn 2\n+\treturn 3")
    assert hook_event("codex", codex(project, "PreToolUse", "apply_patch", again), store=store) == Reply()


@pytest.mark.parametrize(
    ("command", "paths"),
    [
        ("cat a.py", ("a.py",)),
        ("cat a.py b.py", ("a.py", "b.py")),
        ("sed -n '1,80p' a.py", ("a.py",)),
        ("head -n 40 a.py", ("a.py",)),
        ("nl -ba a.py", ("a.py",)),
        ("cat a.py | grep x", None),
        ("cat a.py > b.py", None),
        ("cat $(ls)", None),
        ("rm a.py", None),
        ("sed -i 's/a/b/' a.py", None),
        ("sed -n -i s/x/X/ a.py", None),
        ("cat -n a.py", ("a.py",)),
        ("nl -ba a.py | sed -n '1,80p'", ("a.py",)),
        ("sed -n '1,5p' a.py | head -n 3", ("a.py",)),
        ("cat a.py | grep x", None),
        ("cat a.py || true", None),
        ("cat a.py | head b.py", None),
    ],
)
def test_codex_reads_only_plain_read_commands(command: str, paths: tuple[str, ...] | None) -> None:
    from fs_tools.hooks.harnesses import _shell_read

    assert _shell_read(command) == paths


def test_a_read_is_recorded_only_as_the_model_saw_it(project: Path, store: str) -> None:
    """Between Claude Code's Read and its hook, another agent changes the file: the version the hook finds
    is not what the model saw, so it is not recorded as seen; the older one the model saw is, and a Write
    resting on that read is denied as stale (not as unread: the model did read the file)."""
    read = claude(project, "PostToolUse", "Read", {"file_path": str(project / "a.py")})
    shown = {
        "type": "text",
        "file": {
            "filePath": str(project / "a.py"),
            "content": "def f():\n\treturn 1\n",
            "numLines": 3,
            "startLine": 1,
            "totalLines": 3,
        },
    }
    (project / "a.py").write_text("def f():\n\treturn 7\n")  # in between
    hook_event("claude-code", {**read, "tool_response": shown}, store=store)
    write = {"file_path": str(project / "a.py"), "content": "def f():\n\treturn 2\n"}
    denied = hook_event("claude-code", claude(project, "PreToolUse", "Write", write), store=store)
    assert denied.deny and "changed since this session last read it" in denied.reason, denied
    # what it showed is what is there: recorded (a window of lines too)
    now = {"type": "text", "file": {"content": "\treturn 7", "numLines": 1, "startLine": 2, "totalLines": 3}}
    hook_event("claude-code", {**read, "tool_response": now}, store=store)
    assert hook_event("claude-code", claude(project, "PreToolUse", "Write", write), store=store) == Reply()


def test_a_shell_patch_takes_no_lease(project: Path, store: str) -> None:
    """Codex sends no PostToolUse after a heredoc patch: a lease would keep others off the file until it
    ran out. It is checked, not leased."""
    for session in ("A", "B"):
        read = {
            **codex(project, "PostToolUse", "Bash", "cat a.py", tool_response="def f():\n\treturn 1\n"),
            "session_id": session,
        }
        hook_event("codex", read, store=store)
    heredoc = {**codex(project, "PreToolUse", "Bash", f"apply_patch <<'EOF'\n{UPDATE}EOF"), "session_id": "A"}
    assert hook_event("codex", heredoc, store=store) == Reply()
    other = {**codex(project, "PreToolUse", "apply_patch", UPDATE), "session_id": "B"}
    assert hook_event("codex", other, store=store) == Reply()


def test_a_codex_patch_is_judged_where_codex_applies_it(tmp_path: Path, store: str) -> None:
    """The session's cwd is a subdirectory of the root: the patch's paths are taken from there, as Codex
    takes them, not from the root (where another a.py, which the session read, holds the same text)."""
    root = tmp_path / "proj"
    (root / "sub").mkdir(parents=True)
    for where in (root, root / "sub"):
        (where / "a.py").write_text("def f():\n\treturn 1\n")
    hook_event(
        "codex", codex(root, "PostToolUse", "Bash", "cat a.py", tool_response="def f():\n\treturn 1\n"), store=store
    )
    inside = codex(root / "sub", "PreToolUse", "apply_patch", UPDATE)
    denied = hook_event("codex", inside, store=store, roots=[str(root)])
    assert denied.deny and "sub/a.py" in denied.reason and "has not been read" in denied.reason
    assert "`cat FILE`" in denied.reason  # what counts as a read, in Codex
    heredoc = codex(root, "PreToolUse", "Bash", f"cd sub && apply_patch <<'EOF'\n{UPDATE}EOF\n")
    assert hook_event("codex", heredoc, store=store, roots=[str(root)]).deny
    hook_event(
        "codex",
        codex(root, "PostToolUse", "Bash", "cd sub && cat a.py", tool_response="def f():\n\treturn 1\n"),
        store=store,
    )
    assert hook_event("codex", heredoc, store=store, roots=[str(root)]) == Reply()


@pytest.mark.parametrize(
    "command",
    [
        "applypatch <<'EOF'\n{patch}EOF",
        "apply_patch <<EOF\n{patch}EOF\n",
        "apply_patch <<'EOF'\n{patch}EOF\npython -m pytest -q",
        "apply_patch <<'EOF'\n{patch}EOF\napply_patch <<'EOF'\n{patch}EOF",
    ],
    ids=["applypatch", "bare-delimiter", "then-a-command", "two-heredocs"],
)
def test_codex_heredoc_forms_are_checked(project: Path, store: str, command: str) -> None:
    reply = hook_event("codex", codex(project, "PreToolUse", "Bash", command.format(patch=UPDATE)), store=store)
    assert reply.deny and "has not been read" in reply.reason


def test_a_failed_read_of_a_missing_file_lets_the_session_create_it(project: Path, store: str) -> None:
    """The session read a.py; it is deleted (a shell rm, a checkout). Writing it again is stale until the
    session looks; its Read fails, and that failure says the file is gone."""
    path = str(project / "a.py")
    hook_event("claude-code", claude(project, "PostToolUse", "Read", {"file_path": path}), store=store)
    (project / "a.py").unlink()
    write = {"file_path": path, "content": "x = 1\n"}
    stale = hook_event("claude-code", claude(project, "PreToolUse", "Write", write), store=store)
    assert stale.deny and "no longer exists" in stale.reason
    failed = {**claude(project, "PostToolUseFailure", "Read", {"file_path": path}), "error": "File does not exist."}
    hook_event("claude-code", failed, store=store)
    assert hook_event("claude-code", claude(project, "PreToolUse", "Write", write), store=store) == Reply()


def test_a_failed_read_of_a_file_that_is_there_records_nothing(project: Path, store: str) -> None:
    failed = {**claude(project, "PostToolUseFailure", "Read", {"file_path": str(project / "a.py")}), "error": "x"}
    hook_event("claude-code", failed, store=store)
    assert hook_event("claude-code", claude(project, "PreToolUse", "Edit", _edit(project)), store=store).deny


def test_claude_codes_own_matching_is_not_second_guessed(project: Path, store: str) -> None:
    """Claude Code matched old_string before its hook ran, forgiving curly quotes: fs-tools, matching
    exactly, would deny an edit Claude Code applies correctly."""
    (project / "q.py").write_text("print(\u201chi\u201d)\n")
    hook_event("claude-code", claude(project, "PostToolUse", "Read", {"file_path": str(project / "q.py")}), store=store)
    edit = {"file_path": str(project / "q.py"), "old_string": 'print("hi")', "new_string": 'print("ho")'}
    assert hook_event("claude-code", claude(project, "PreToolUse", "Edit", edit), store=store) == Reply()


def test_the_harnesss_own_files_are_not_judged(
    project: Path, store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "claude-config"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    plan = {"file_path": str(config / "plans" / "plan.md"), "content": "# plan\n"}
    assert hook_event("claude-code", claude(project, "PreToolUse", "Write", plan), store=store) == Reply()
    outside = {"file_path": str(tmp_path / "elsewhere.md"), "content": "x"}
    assert hook_event("claude-code", claude(project, "PreToolUse", "Write", outside), store=store).deny


@pytest.mark.parametrize(
    "arguments",
    [["--bogus"], ["--timeout", "soon"], ["--harness", "nope"]],
    ids=["unknown-option", "bad-value", "unknown-harness"],
)
def test_a_hook_that_cannot_start_is_no_opinion(project: Path, store: str, arguments: list[str]) -> None:
    """To every harness exit 2 is "deny": a bad option (one a later release dropped) must not block every
    change."""
    event = json.dumps(claude(project, "PreToolUse", "Edit", _edit(project)))
    base = [sys.executable, "-m", "fs_tools", "hook"]
    argv = base + (arguments if "--harness" in arguments else ["--harness", "claude-code", *arguments])
    done = subprocess.run(argv, input=event, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "no opinion" in done.stderr
    bad_env = subprocess.run(
        [*base, "--harness", "claude-code", "--store", store],
        input=event,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "FS_TOOLS_LOG_LEVEL": "verbose"},
    )
    assert bad_env.returncode == 0 and "no opinion" in bad_env.stderr


def test_install_writes_absolute_paths_and_refuses_a_store_inside_the_root(project: Path, tmp_path: Path) -> None:
    done = _cli(
        "install", "--harness", "claude-code", "--root", ".", "--store", "../state.sqlite", cwd=project, home=tmp_path
    )
    assert done.returncode == 0, done.stderr
    command = json.loads((project / ".claude" / "settings.json").read_text())["hooks"]["PreToolUse"][0]["hooks"][0]
    assert f"--root={project}" in command["command"] and f"--store={tmp_path / 'state.sqlite'}" in command["command"]
    inside = _cli("install", "--harness", "claude-code", "--store", ".fs/obs.sqlite", cwd=project, home=tmp_path)
    assert inside.returncode == 2 and "inside" in inside.stderr


def test_install_follows_a_linked_settings_file(project: Path, tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles" / "settings.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text('{"model": "x"}')
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").symlink_to(dotfiles)
    assert _cli("install", "--harness", "claude-code", cwd=project, home=tmp_path).returncode == 0
    assert (project / ".claude" / "settings.json").is_symlink()
    assert "PreToolUse" in json.loads(dotfiles.read_text())["hooks"]


def test_uninstall_leaves_commands_that_only_look_like_ours(project: Path, tmp_path: Path) -> None:
    (project / ".claude").mkdir()
    theirs = {"matcher": "*", "hooks": [{"type": "command", "command": "python -m fs_tools hooks_audit --x"}]}
    (project / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [theirs]}}))
    _cli("install", "--harness", "claude-code", cwd=project, home=tmp_path)
    _cli("uninstall", "--harness", "claude-code", cwd=project, home=tmp_path)
    assert json.loads((project / ".claude" / "settings.json").read_text()) == {"hooks": {"PreToolUse": [theirs]}}


def test_user_scope_follows_the_harnesss_home(project: Path, tmp_path: Path) -> None:
    codex_home = tmp_path / "codex-home"
    done = subprocess.run(
        [sys.executable, "-m", "fs_tools", "hook", "install", "--harness", "codex", "--scope", "user"],
        capture_output=True,
        text=True,
        cwd=project,
        env={**os.environ, "HOME": str(tmp_path), "CODEX_HOME": str(codex_home)},
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "PreToolUse" in json.loads((codex_home / "hooks.json").read_text())["hooks"]


def test_a_gemini_read_is_recorded_only_as_the_model_saw_it(project: Path, store: str) -> None:
    (project / "a.py").write_text("def f():\n\treturn 7\n")  # changed between read_file and its hook
    saw = {"llmContent": "def f():\n\treturn 1\n", "returnDisplay": ""}
    hook_event(
        "gemini", gemini(project, "AfterTool", "read_file", {"file_path": "a.py"}, tool_response=saw), store=store
    )
    write = {"file_path": "a.py", "content": "x\n"}
    assert hook_event("gemini", gemini(project, "BeforeTool", "write_file", write), store=store).deny
    now = {"llmContent": "\ufeffdef f():\r\n\treturn 7\r\n", "returnDisplay": ""}  # a BOM, CRLF: the same lines
    hook_event(
        "gemini", gemini(project, "AfterTool", "read_file", {"file_path": "a.py"}, tool_response=now), store=store
    )
    assert hook_event("gemini", gemini(project, "BeforeTool", "write_file", write), store=store) == Reply()
    window = {"llmContent": "IMPORTANT: The file content has been truncated.\n…", "returnDisplay": ""}
    (project / "a.py").write_text("def f():\n\treturn 8\n")
    windowed = gemini(project, "AfterTool", "read_file", {"file_path": "a.py", "start_line": 1}, tool_response=window)
    hook_event("gemini", windowed, store=store)  # not compared: recorded as a read
    assert hook_event("gemini", gemini(project, "BeforeTool", "write_file", write), store=store) == Reply()


def test_a_codex_shell_read_is_recorded_only_as_the_model_saw_it(project: Path, store: str) -> None:
    """A late PostToolUse of ``cat`` (another agent wrote the file since): the output is not the file now,
    so the read is not recorded, and the patch resting on it is denied."""
    (project / "a.py").write_text("def f():\n\treturn 7\n")
    late = codex(project, "PostToolUse", "Bash", "cat a.py", tool_response="def f():\n\treturn 1\n")
    hook_event("codex", late, store=store)
    assert hook_event("codex", codex(project, "PreToolUse", "apply_patch", UPDATE), store=store).deny
    window = codex(project, "PostToolUse", "Bash", "sed -n '2,2p' a.py", tool_response="\treturn 7\n")
    hook_event("codex", window, store=store)
    patch = UPDATE.replace("-\treturn 1\n+\treturn 2", "-\treturn 7\n+\treturn 8")
    assert hook_event("codex", codex(project, "PreToolUse", "apply_patch", patch), store=store) == Reply()


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=10), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    harness=st.sampled_from(["claude-code", "gemini", "codex"]),
    event=st.sampled_from(["PreToolUse", "PostToolUse", "PostToolUseFailure", "BeforeTool", "AfterTool"]),
    tool=st.sampled_from(
        ["Read", "Write", "Edit", "NotebookEdit", "read_file", "write_file", "replace", "Bash", "apply_patch"]
    ),
    tool_input=st.dictionaries(
        st.sampled_from(["file_path", "notebook_path", "content", "old_string", "new_string", "command", "x"]),
        _JSON,
        max_size=4,
    ),
    response=_JSON,
)
def test_any_event_gets_a_reply_and_changes_nothing(
    project: Path, store: str, harness: str, event: str, tool: str, tool_input: dict[str, Any], response: object
) -> None:
    before = (project / "a.py").read_bytes()
    payload = {
        "session_id": "F",
        "cwd": str(project),
        "hook_event_name": event,
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_response": response,
    }
    reply = hook_event(harness, payload, store=store)
    assert isinstance(reply, Reply)
    assert not reply.deny or reply.reason  # a denial always says why
    assert sorted(p.name for p in project.iterdir()) == ["a.py"] and (project / "a.py").read_bytes() == before


def test_a_leases_lock_held_too_long_is_no_opinion(project: Path, store: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A writer stopped while it held the leases' lock (Ctrl-Z) does not hold every check up: a hook
    server has no alarm to cut the wait, so the wait is bounded."""
    import fcntl

    from fs_tools.hooks import engine

    monkeypatch.setattr(engine, "LEASE_LOCK_SECONDS", 0.2)
    read = {"file_path": str(project / "a.py")}
    hook_event("claude-code", claude(project, "PostToolUse", "Read", read), store=store)
    leases = Path(f"{store}.leases")
    leases.mkdir(parents=True, exist_ok=True)
    with open(leases / ".lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        started = time.monotonic()
        reply = hook_event("claude-code", claude(project, "PreToolUse", "Edit", _edit(project)), store=store)
    assert not reply.deny and "was held for over 0.2 s" in reply.note
    assert time.monotonic() - started < 5


def test_a_relay_that_fails_leaves_the_event_to_the_command(
    project: Path, store: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from fs_tools import cli
    from fs_tools.hooks import relay

    def broken(words: list[str]) -> int | None:
        raise RuntimeError("a bug in the relay")

    monkeypatch.setattr(relay, "answer", broken)
    event = claude(project, "PreToolUse", "Edit", _edit(project))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(json.dumps(event).encode())))
    status = cli.main(["hook", "--harness", "claude-code", "--store", store])
    assert status == 2 and "has not been read in this session" in capsys.readouterr().err


def test_no_lease_is_taken_once_the_command_that_asked_gave_up(project: Path, store: str) -> None:
    """A hook server judges an event within the wait of the command that sent it: past it, no lease is
    written (it would outlive the post event the command's harness already sent)."""
    from fs_tools.hooks import engine

    read = {"file_path": str(project / "a.py")}
    with HookGates("claude-code", store=store) as gates:
        gates.handle(claude(project, "PostToolUse", "Read", read))
        token = engine.DEADLINE.set(time.monotonic() - 1)
        try:
            late = gates.handle(claude(project, "PreToolUse", "Edit", _edit(project)))
        finally:
            engine.DEADLINE.reset(token)
        assert not late.deny and "stopped waiting" in late.note
        assert not [p for p in Path(f"{store}.leases").iterdir() if p.name != ".lock"]
        assert gates.handle(claude(project, "PreToolUse", "Edit", _edit(project))) == Reply()
