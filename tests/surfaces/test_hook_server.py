"""The hook server (fs_tools.hooks.relay / fs_tools.hooks.server): the command a harness runs, with the event on
stdin, answered by a server kept between events — the same answers as the command gives by itself, and
never in the way when the server is gone, stale or not the command's."""

from __future__ import annotations

import concurrent.futures
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fs_tools.hooks import relay
from fs_tools.hooks.harnesses import HARNESSES

pytestmark = pytest.mark.skipif(not hasattr(os, "fork") or sys.platform == "win32", reason="Unix sockets")


@pytest.fixture
def state(tmp_path: Path) -> Iterator[Path]:
    """A state directory of its own (its servers, its store), the server on; what started is stopped."""
    # short: a Unix socket's path has a length limit (108 bytes here)
    directory = Path(os.environ.get("TMPDIR", "/tmp")) / f"fsh-{os.getpid()}-{time.monotonic_ns() % 10**9}"
    directory.mkdir()
    try:
        yield directory
    finally:
        for _ in range(2):
            relay.stop_servers(str(directory / "fs-tools"))
            if _wait_until(lambda: not _live_servers(directory), 10):
                break
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "a.py").write_text("def f():\n    return 1\n")
    return root


def _env(state: Path, **more: str) -> dict[str, str]:
    return {**os.environ, "XDG_STATE_HOME": str(state), "FS_TOOLS_HOOK_SERVER": "1", **more}


def _event(project: Path, event: str, tool: str, tool_input: dict[str, Any], session: str = "S1") -> bytes:
    payload = {"session_id": session, "cwd": str(project), "hook_event_name": event, "tool_name": tool}
    return json.dumps({**payload, "tool_input": tool_input}).encode()


def _hook(project: Path, env: dict[str, str], event: bytes, *extra: str) -> subprocess.CompletedProcess[bytes]:
    store = str(Path(env["XDG_STATE_HOME"]) / "observations.sqlite")
    argv = [sys.executable, "-X", "importtime", "-m", "fs_tools", "hook", "--harness", "claude-code", "--store", store]
    return subprocess.run([*argv, *extra], input=event, capture_output=True, env=env, cwd=project, timeout=60)


def _answer(done: subprocess.CompletedProcess[bytes]) -> tuple[int, bytes, bytes]:
    """The command's answer, without -X importtime's lines."""
    err = b"".join(line for line in done.stderr.splitlines(keepends=True) if not line.startswith(b"import time:"))
    return done.returncode, done.stdout, err


def _served(done: subprocess.CompletedProcess[bytes]) -> bool:
    """Whether the answer came from a server: the command never imported the workspace."""
    return b"fs_tools.workspace" not in done.stderr


def _live_servers(state: Path) -> list[int]:
    found = []
    for lock in (state / "fs-tools" / "hookd").glob("*.sock.lock"):
        try:
            pid = int(lock.read_text().strip() or 0)
            os.kill(pid, 0)
            if b"fs_tools.hooks.server" in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(pid)
        except (OSError, ValueError):
            continue
    return found


def _wait_until(condition: Any, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return bool(condition())


def _started(project: Path, env: dict[str, str]) -> None:
    """A first event (answered by the command), then the server it started, listening."""
    first = _hook(project, env, _event(project, "PostToolUse", "Bash", {"command": "true"}))
    assert first.returncode == 0
    assert _wait_until(
        lambda: (
            _hook(project, env, _event(project, "PostToolUse", "Bash", {})).returncode == 0
            and _live_servers(Path(env["XDG_STATE_HOME"]))
        ),
        30,
    )
    assert _wait_until(lambda: _served(_hook(project, env, _event(project, "PostToolUse", "Bash", {}))), 30)


def _steps(project: Path) -> list[bytes]:
    path = str(project / "a.py")
    edit = {"file_path": path, "old_string": "return 1", "new_string": "return 2", "replace_all": False}
    return [
        _event(project, "PreToolUse", "Edit", edit),  # not read yet: denied
        _event(project, "PostToolUse", "Read", {"file_path": path}),
        _event(project, "PreToolUse", "Edit", edit),  # read: allowed
        _event(project, "PreToolUse", "Edit", edit, session="S2"),  # S1 holds the lease: denied
        _event(project, "PostToolUse", "Edit", edit),  # S1's change adopted
        _event(project, "PreToolUse", "Edit", {**edit, "old_string": "return 2"}, session="S2"),  # S2 never read it
        _event(project, "PreToolUse", "Write", {"file_path": str(project / "b.py"), "content": "x\n"}),  # new file
        _event(project, "PreToolUse", "Edit", {"file_path": "/etc/passwd", "old_string": "a", "new_string": "b"}),
        b"{not json",
    ]


def test_the_server_answers_as_the_command_does_by_itself(project: Path, state: Path, tmp_path: Path) -> None:
    served_env = _env(state)
    _started(project, served_env)
    alone_state = tmp_path / "alone"
    alone_state.mkdir()
    alone_env = {**_env(alone_state), "FS_TOOLS_HOOK_SERVER": "0"}
    twin = tmp_path / "twin" / "project"  # the same files at another path: the answers name their own path
    shutil.copytree(project, twin)
    served, alone = [], []
    for event in _steps(project):
        changed = _hook(project, served_env, event)
        assert _served(changed), changed.stderr[-400:]
        if b'"PostToolUse", "tool_name": "Edit"' in event:
            (project / "a.py").write_text("def f():\n    return 2\n")  # what the harness's Edit did
        served.append(_answer(changed))
    for event in _steps(twin):
        done = _hook(twin, alone_env, event)
        if b'"PostToolUse", "tool_name": "Edit"' in event:
            (twin / "a.py").write_text("def f():\n    return 2\n")
        alone.append(_answer(done))
    assert not (alone_state / "fs-tools" / "hookd").exists()  # answered by the command alone
    mine = [(status, out, err.replace(str(project).encode(), b"<project>")) for status, out, err in served]
    theirs = [(status, out, err.replace(str(twin).encode(), b"<project>")) for status, out, err in alone]
    assert mine == theirs
    statuses = [status for status, _, _ in mine]
    assert statuses == [2, 0, 0, 2, 0, 2, 0, 2, 0]
    assert b"has not been read in this session" in mine[0][2] and b"has not been read" in mine[5][2]
    assert b"being changed by another agent's session" in mine[3][2]
    assert b"outside every workspace root" in mine[7][2] and b"not JSON" in mine[8][2]


def test_a_server_gone_or_killed_is_no_trouble(project: Path, state: Path) -> None:
    env = _env(state)
    _started(project, env)
    read = _event(project, "PostToolUse", "Read", {"file_path": str(project / "a.py")})
    edit = _event(
        project,
        "PreToolUse",
        "Edit",
        {"file_path": str(project / "a.py"), "old_string": "return 1", "new_string": "return 3"},
    )
    assert _hook(project, env, read).returncode == 0
    for pid in _live_servers(state):
        os.kill(pid, signal.SIGKILL)
    assert _wait_until(lambda: not _live_servers(state), 10)
    # the socket is left behind by the killed server: the command answers itself, and another is started
    # (once the last start is START_GRACE seconds old)
    again = _hook(project, env, edit)
    assert again.returncode == 0 and not _served(again), again.stderr[-400:]
    assert _wait_until(lambda: _served(_hook(project, env, read)), 60)
    assert len(_live_servers(state)) == 1


def test_a_server_that_does_not_share_the_setting_does_not_answer(project: Path, state: Path) -> None:
    env = _env(state)
    _started(project, env)
    (path,) = (state / "fs-tools" / "hookd").glob("*.sock")
    event = _event(project, "PostToolUse", "Read", {"file_path": str(project / "a.py")})
    with pytest.raises(relay.Unanswered):
        relay.ask(str(path), b"another setting", ["hook", "--harness", "claude-code"], event, 10)
    # a setting that differs only in a variable fs-tools reads goes to a server of its own
    other = _hook(project, _env(state, CLAUDE_PROJECT_DIR=str(project)), event)
    assert other.returncode == 0 and not _served(other)
    assert _wait_until(lambda: len(_live_servers(state)) == 2, 30)


def test_a_server_idle_for_long_enough_leaves(project: Path, state: Path) -> None:
    env = _env(state, FS_TOOLS_HOOK_IDLE="1")
    _hook(project, env, _event(project, "PostToolUse", "Bash", {}))
    assert _wait_until(lambda: _live_servers(state), 30)
    assert _wait_until(lambda: not _live_servers(state), 30)
    assert list((state / "fs-tools" / "hookd").glob("*.sock")) == []


def test_a_root_removed_and_made_again_is_opened_afresh(project: Path, state: Path) -> None:
    env = _env(state)
    _started(project, env)
    path = str(project / "a.py")
    read = _event(project, "PostToolUse", "Read", {"file_path": path})
    edit = _event(project, "PreToolUse", "Edit", {"file_path": path, "old_string": "return", "new_string": "yield"})
    assert _served(_hook(project, env, read))
    shutil.rmtree(project)
    project.mkdir()
    (project / "a.py").write_text("def f():\n    return 100\n")
    denied = _hook(project, env, edit)  # the old directory's handle would find no a.py at all
    assert _served(denied)
    assert denied.returncode == 2 and b"has changed since this session last read it" in denied.stderr


def test_changes_racing_through_one_server_are_held_off_one_by_one(project: Path, state: Path) -> None:
    env = _env(state)
    _started(project, env)
    path = str(project / "a.py")
    sessions = [f"S{n}" for n in range(6)]
    for session in sessions:
        assert _hook(project, env, _event(project, "PostToolUse", "Read", {"file_path": path}, session)).returncode == 0
    write = {"file_path": path, "content": "mine\n"}
    with concurrent.futures.ThreadPoolExecutor(len(sessions)) as pool:
        done = list(pool.map(lambda s: _hook(project, env, _event(project, "PreToolUse", "Write", write, s)), sessions))
    assert all(_served(d) for d in done)
    assert sorted(d.returncode for d in done) == [0, 2, 2, 2, 2, 2]
    assert all(b"being changed by another agent's session" in d.stderr for d in done if d.returncode == 2)


def test_the_setting_names_every_variable_a_harness_reads() -> None:
    named = {v for h in HARNESSES.values() for v in (*h.project_variables, h.home[0]) if v}
    assert named <= set(relay.WATCHED)


def test_off_and_logging_runs_answer_themselves(project: Path, state: Path) -> None:
    for env, extra in ((_env(state, FS_TOOLS_HOOK_SERVER="0"), ()), (_env(state), ("--log-level", "debug"))):
        done = _hook(project, env, _event(project, "PostToolUse", "Read", {"file_path": str(project / "a.py")}), *extra)
        assert done.returncode == 0 and not _served(done)
    assert not (state / "fs-tools" / "hookd").exists() or not _live_servers(state)


def test_a_served_command_imports_next_to_nothing(project: Path, state: Path) -> None:
    """What the harness waits for on every tool call: the interpreter, the relay, a socket."""
    env = _env(state)
    _started(project, env)
    done = _hook(project, env, _event(project, "PostToolUse", "Read", {"file_path": str(project / "a.py")}))
    bare = subprocess.run([sys.executable, "-X", "importtime", "-c", "pass"], capture_output=True, env=env, check=True)

    def imported(stderr: bytes) -> set[str]:
        return {line.split(b"|")[-1].strip().decode() for line in stderr.splitlines() if b"|" in line}

    more = imported(done.stderr) - imported(bare.stderr)
    assert {name for name in more if name.split(".")[0] in ("fs_tools", "policy")} == {
        "fs_tools",
        "fs_tools.lazy",
        "fs_tools.state",
        "fs_tools.hooks",
        "fs_tools.hooks.relay",
    }
    assert not {"typing", "json", "pydantic", "subprocess", "sqlite3", "argparse"} & more, sorted(more)


def test_an_event_that_never_ends_is_no_opinion_in_the_hooks_time(project: Path, state: Path) -> None:
    """A harness that never closes the hook's stdin: the command gives up within its --timeout."""
    env = _env(state)
    _started(project, env)
    store = str(state / "observations.sqlite")
    argv = [sys.executable, "-m", "fs_tools", "hook", "--harness", "claude-code", "--store", store, "--timeout", "1"]
    started = time.monotonic()
    process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert process.stdin is not None
    process.stdin.write(b'{"session_id": "S1", ')
    process.stdin.flush()
    try:
        process.wait(timeout=30)  # stdin still open: only the hook's own timeout ends it
    finally:
        process.stdin.close()
        process.kill()
    err = process.stderr.read() if process.stderr is not None else b""
    assert process.returncode == 0 and b"no verdict within 1 s" in err
    assert time.monotonic() - started < 15


def test_a_server_leaves_once_fs_tools_changed_under_it(project: Path, state: Path) -> None:
    env = _env(state)
    _started(project, env)
    (first,) = _live_servers(state)
    read = _event(project, "PostToolUse", "Read", {"file_path": str(project / "a.py")})
    os.utime(relay.__file__)  # as an upgrade, or an edit of an editable install, changes its files
    time.sleep(relay.SOURCES_LOOKED_EVERY + 0.1)
    assert _wait_until(lambda: _hook(project, env, read).returncode == 0 and first not in _live_servers(state), 30)
    assert _wait_until(lambda: _served(_hook(project, env, read)), 60)
    assert first not in _live_servers(state)


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0, reason="needs root, to listen as another user")
def test_a_socket_another_user_listens_on_is_never_asked(state: Path) -> None:
    """The command checks who listens (SO_PEERCRED) before it sends the event: a socket planted by another
    user (a directory swapped for theirs) gets nothing, and the command answers itself."""
    state.chmod(0o777)  # (under /tmp: another user can reach it)
    path = state / "s.sock"
    listener = (
        "import os, socket, sys, time\n"
        "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.bind(sys.argv[1]); s.listen(1)\n"
        "c, _ = s.accept(); time.sleep(5)\n"
    )
    python = "/usr/bin/python3"  # one another user may run (this one may be in root's home)
    if not os.access(python, os.X_OK):
        pytest.skip("no system python3 for another user to run")
    child = subprocess.Popen([python, "-c", listener, str(path)], preexec_fn=lambda: os.setuid(65534))
    try:
        assert _wait_until(path.exists, 10)
        with pytest.raises(relay.Unanswered, match="another user's"):
            relay.ask(str(path), relay.setting(), ["hook", "--harness", "claude-code"], b"{}", 5)
    finally:
        child.kill()
        child.wait()


def test_what_the_relay_spent_is_taken_from_the_commands_own_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(relay, "deadline", None)
    assert relay.remaining(20) == 20
    monkeypatch.setattr(relay, "deadline", time.monotonic() + 5)
    assert 4 < relay.remaining(20) <= 5 and relay.remaining(2) == 2
    monkeypatch.setattr(relay, "deadline", time.monotonic() - 1)
    assert relay.remaining(20) == 0.001  # the command gives up at once, saying so


def test_the_relay_reads_timeout_and_harness_as_argparse_does() -> None:
    assert relay.timeout_of(["hook", "--time", "5"]) == 5
    assert relay.timeout_of(["hook", "--timeout", "60", "--harness", "codex", "--timeout=5"]) == 5
    assert relay.timeout_of(["hook", "--timeout", "soon"]) == relay.DEFAULT_TIMEOUT
    assert relay.timeout_of(["hook"]) == relay.DEFAULT_TIMEOUT
    assert relay._harness_of(["hook", "--harn", "gemini"]) == "gemini"
    assert relay._harness_of(["hook", "--h", "gemini"]) is None  # (--help's prefix too)


def test_a_start_marker_from_the_future_does_not_hold_starts_off(state: Path, project: Path) -> None:
    env = _env(state)
    read = _event(project, "PostToolUse", "Read", {"file_path": str(project / "a.py")})
    setting_path = Path(
        subprocess.run(
            [sys.executable, "-c", "from fs_tools.hooks import relay; print(relay.socket_path(relay.setting()))"],
            env=env,
            cwd=project,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    future = Path(str(setting_path) + ".start")
    future.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    future.touch()
    os.utime(future, (time.time() + 3600, time.time() + 3600))
    assert _wait_until(lambda: _served(_hook(project, env, read)), 30)
