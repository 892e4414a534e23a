"""What a rewind or the undo of a failed patch puts back keeps its permissions (issue 31): a deleted
file comes back with the mode it had when it was taken away (recorded in history; rows written before
modes were still load), whatever the umask; a file put back in place keeps its mode, owner and group.
Every assertion is on the disk."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from fs_tools import Session, Workspace
from fs_tools.history.model import decode_steps, encode_steps
from tests.support.patches import WritesBetween
from tests.support.redis_server import RedisServer


@pytest.fixture(params=[0o022, 0o077], ids=["umask-022", "umask-077"])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    """The process umask during the test: a recreated file's mode must not depend on it."""
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _ok(session: Session, tool: str, arguments: dict[str, object]) -> None:
    result = session.call(tool, arguments)
    assert result.error is None, result.text


def _files(root: Path) -> dict[str, tuple[bytes, int]]:
    """An executable, a private secret, a read-only file and a plain one: name -> (bytes, mode)."""
    made = {
        "run.sh": (b"#!/bin/sh\necho hi\n", 0o755),
        "secret.env": (b"TOKEN=hunter2\n", 0o600),
        "frozen.txt": (b"do not touch\n", 0o444),
        "plain.txt": (b"plain\n", 0o644),
    }
    for name, (data, mode) in made.items():
        (root / name).write_bytes(data)
        (root / name).chmod(mode)
    return made


def test_a_rewind_recreates_deleted_files_with_the_modes_they_had(root: Path, umask: int) -> None:
    made = _files(root)
    with Workspace(root, tools=["read", "delete", "apply_patch"]) as ws:
        s = ws.session("agent")
        for name in made:
            _ok(s, "read", {"file_path": name})
        mark = s.checkpoint()
        _ok(s, "delete", {"file_path": "run.sh"})
        _ok(s, "delete", {"file_path": "secret.env"})
        _ok(s, "apply_patch", {"patch": "*** Begin Patch\n*** Delete File: frozen.txt\n*** End Patch"})
        _ok(s, "delete", {"file_path": "plain.txt"})
        assert not any((root / name).exists() for name in made)
        report = s.rewind(mark)
    assert not report.is_error and sorted(report.restored) == sorted(made)
    for name, (data, mode) in made.items():
        assert (root / name).read_bytes() == data
        assert _mode(root / name) == mode, (name, oct(_mode(root / name)), oct(mode))  # was 0o644 & ~umask


def test_a_file_rewound_in_place_keeps_its_mode_owner_and_group(root: Path, umask: int) -> None:
    made = _files(root)
    owner = (4321, 8765) if os.geteuid() == 0 else (os.geteuid(), os.getegid())
    for name in made:
        os.chown(root / name, *owner)
    with Workspace(root, tools=["read", "write"]) as ws:
        s = ws.session("agent")
        mark = s.checkpoint()
        for name in made:
            _ok(s, "read", {"file_path": name})
            if name == "frozen.txt":
                continue  # the write of a read-only file would be refused by the kernel for a non-root user
            _ok(s, "write", {"file_path": name, "content": "changed\n"})
        assert not s.rewind(mark).is_error
    for name, (data, mode) in made.items():
        info = (root / name).stat()
        assert (root / name).read_bytes() == data
        assert (stat.S_IMODE(info.st_mode), info.st_uid, info.st_gid) == (mode, *owner), name


def test_a_file_a_move_replaced_comes_back_with_its_mode(root: Path, umask: int) -> None:
    (root / "secret.env").write_text("TOKEN=hunter2\n")
    (root / "secret.env").chmod(0o600)
    (root / "draft.env").write_text("TOKEN=draft\n")
    (root / "draft.env").chmod(0o644)
    with Workspace(root, tools=["read", "move"]) as ws:
        s = ws.session("agent")
        _ok(s, "read", {"file_path": "secret.env"})
        _ok(s, "read", {"file_path": "draft.env"})
        mark = s.checkpoint()
        _ok(s, "move", {"source": "draft.env", "destination": "secret.env", "overwrite": True})
        assert _mode(root / "secret.env") == 0o644
        assert not s.rewind(mark).is_error
    assert (root / "secret.env").read_text() == "TOKEN=hunter2\n" and _mode(root / "secret.env") == 0o600
    assert (root / "draft.env").read_text() == "TOKEN=draft\n" and _mode(root / "draft.env") == 0o644


def test_a_file_deleted_and_written_again_comes_back_with_its_own_mode(root: Path, umask: int) -> None:
    (root / "secret.env").write_text("TOKEN=hunter2\n")
    (root / "secret.env").chmod(0o600)
    with Workspace(root, tools=["read", "write", "delete"]) as ws:
        s = ws.session("agent")
        _ok(s, "read", {"file_path": "secret.env"})
        mark = s.checkpoint()
        _ok(s, "delete", {"file_path": "secret.env"})
        _ok(s, "write", {"file_path": "secret.env", "content": "TOKEN=mine\n"})  # a new file: 0666 & ~umask
        _ok(s, "write", {"file_path": "secret.env", "content": "TOKEN=mine, again\n"})
        assert _mode(root / "secret.env") == 0o666 & ~umask
        assert not s.rewind(mark).is_error  # put back in place over the new file: with the secret's mode
    assert (root / "secret.env").read_text() == "TOKEN=hunter2\n" and _mode(root / "secret.env") == 0o600


def test_a_rewound_rewind_recreates_with_the_mode_too(root: Path, umask: int) -> None:
    (root / "secret.env").write_text("TOKEN=hunter2\n")
    (root / "secret.env").chmod(0o600)
    with Workspace(root, tools=["read", "delete"]) as ws:
        s = ws.session("agent")
        _ok(s, "read", {"file_path": "secret.env"})
        before = s.checkpoint()
        _ok(s, "delete", {"file_path": "secret.env"})
        deleted = s.checkpoint()
        assert not s.rewind(before).is_error  # back, 0600
        _ok(s, "read", {"file_path": "secret.env"})
        assert not s.rewind(deleted).is_error  # the rewind undone: gone again
        assert not (root / "secret.env").exists()
        assert not s.rewind(before).is_error
    assert _mode(root / "secret.env") == 0o600 and (root / "secret.env").read_text() == "TOKEN=hunter2\n"


def _strip_modes(store: Path) -> int:
    """Rewrite every history row as a version before modes wrote it; how many rows held one."""
    stripped = 0
    with sqlite3.connect(store) as db:
        for seq, steps in db.execute("SELECT seq, steps FROM history").fetchall():
            rows = json.loads(steps)
            old = [row[:4] if row[0] == "e" else row[:7] for row in rows]
            stripped += old != rows
            db.execute("UPDATE history SET steps = ? WHERE seq = ?", (json.dumps(old), seq))
    return stripped


def test_history_written_before_modes_still_loads_and_rewinds(root: Path, tmp_path: Path, umask: int) -> None:
    store = tmp_path / "state.db"
    (root / "secret.env").write_text("TOKEN=hunter2\n")
    (root / "secret.env").chmod(0o600)
    with Workspace(root, store=store) as ws:
        s = ws.session("agent")
        _ok(s, "read", {"file_path": "secret.env"})
        mark = s.checkpoint()
        _ok(s, "delete", {"file_path": "secret.env"})
    assert _strip_modes(store) == 1
    with Workspace(root, store=store) as ws:
        s = ws.session("agent")
        assert [entry.tool for entry in s.history() if entry.kind == "change"] == ["delete"]
        assert not s.rewind(mark).is_error
    # no mode was recorded: the file comes back as any new file is made
    assert (root / "secret.env").read_text() == "TOKEN=hunter2\n"
    assert _mode(root / "secret.env") == 0o666 & ~umask


def test_a_mode_from_history_never_brings_back_set_id_bits(root: Path, tmp_path: Path) -> None:
    store = tmp_path / "state.db"
    (root / "tool").write_text("#!/bin/sh\n")
    (root / "tool").chmod(0o755)
    with Workspace(root, store=store) as ws:
        s = ws.session("agent")
        _ok(s, "read", {"file_path": "tool"})
        mark = s.checkpoint()
        _ok(s, "delete", {"file_path": "tool"})
    with sqlite3.connect(store) as db:  # a store tampered with: set-user-ID, set-group-ID and sticky
        (steps,) = db.execute("SELECT steps FROM history WHERE tool = 'delete'").fetchone()
        [row] = json.loads(steps)
        assert row[4] == 0o755
        db.execute("UPDATE history SET steps = ? WHERE tool = 'delete'", (json.dumps([[*row[:4], 0o7755]]),))
    with Workspace(root, store=store) as ws:
        assert not ws.session("agent").rewind(mark).is_error
    assert _mode(root / "tool") == 0o755


@pytest.mark.parametrize("mode", ["0755", -1, 0o10000, True, 1.5])
def test_a_mode_that_is_no_mode_is_a_damaged_row(root: Path, tmp_path: Path, mode: object) -> None:
    store = tmp_path / "state.db"
    (root / "a.txt").write_text("a\n")
    with Workspace(root, store=store, tools=["read", "delete", "history"]) as ws:
        s = ws.session("agent")
        _ok(s, "read", {"file_path": "a.txt"})
        _ok(s, "delete", {"file_path": "a.txt"})
    with sqlite3.connect(store) as db:
        (steps,) = db.execute("SELECT steps FROM history WHERE tool = 'delete'").fetchone()
        [row] = json.loads(steps)
        db.execute("UPDATE history SET steps = ? WHERE tool = 'delete'", (json.dumps([[*row[:4], mode]]),))
    with Workspace(root, store=store, tools=["read", "delete", "history"]) as ws:
        result = ws.session("agent").call("history", {})
    assert result.error is not None and result.error.code == "STORE_UNAVAILABLE"
    assert "entry 1 is damaged (a mode is" in result.text and "not permission bits" in result.text


def test_steps_keep_their_modes_through_the_stores_encoding() -> None:
    from fs_tools.history.model import Effect, Move

    steps = (
        Effect("/r/a", "0" * 32, None, 0o600),
        Effect("/r/b", None, "1" * 32),
        Move("/r/c", "/r/d", "file", "2" * 32, "3" * 32, "", 0o640),
        Move("/r/e", "/r/f", "directory", identity="1:2"),
    )
    assert decode_steps(json.loads(json.dumps(encode_steps(steps)))) == steps
    assert [len(row) for row in encode_steps(steps)] == [5, 4, 8, 7]  # a row without a mode is as before


def test_a_rewind_through_redis_recreates_with_the_mode(root: Path, redis_server: RedisServer, umask: int) -> None:
    redis_server.flush()
    made = _files(root)
    with Workspace(root, store=redis_server.url, tools=["read", "delete", "move"]) as ws:
        s = ws.session("agent")
        for name in made:
            _ok(s, "read", {"file_path": name})
        mark = s.checkpoint()
        _ok(s, "delete", {"file_path": "run.sh"})
        _ok(s, "move", {"source": "plain.txt", "destination": "secret.env", "overwrite": True})
    with Workspace(root, store=redis_server.url) as ws:  # another process's view of the same history
        assert not ws.session("agent").rewind(mark).is_error
    for name, (data, mode) in made.items():
        assert (root / name).read_bytes() == data and _mode(root / name) == mode, name


# --- the undo of a failed apply_patch ------------------------------------------------------------------------


def test_a_failed_patch_puts_deleted_and_moved_files_back_with_their_modes(root: Path, umask: int) -> None:
    made = _files(root)
    (root / "last.txt").write_text("one\n")
    with Workspace(root, tools=["read", "apply_patch"]) as ws:
        s = ws.session("agent")
        for name in [*made, "last.txt"]:
            _ok(s, "read", {"file_path": name})
        patch = (
            "*** Begin Patch\n*** Delete File: secret.env\n*** Delete File: frozen.txt\n"
            "*** Update File: run.sh\n*** Move to: bin/run.sh\n@@\n-echo hi\n+echo hello\n"
            "*** Update File: plain.txt\n@@\n-plain\n+PLAIN\n"
            "*** Update File: last.txt\n@@\n-one\n+two\n*** End Patch"
        )
        listener = WritesBetween(ws.provider.key_of("last.txt"), root / "last.txt", b"someone else\n")
        unlisten = ws.provider.listen(listener)
        try:
            result = s.call("apply_patch", {"patch": patch})
        finally:
            unlisten()
    assert listener.starts >= 2
    assert result.error is not None and result.error.code == "FS_STALE_VERSION", result.text
    assert "were put back; nothing is changed" in result.text
    for name, (data, mode) in made.items():
        assert (root / name).read_bytes() == data
        assert _mode(root / name) == mode, (name, oct(_mode(root / name)), oct(mode))  # was 0o644 & ~umask
    assert not (root / "bin" / "run.sh").exists()
    assert (root / "last.txt").read_bytes() == b"someone else\n"


def test_a_patch_that_moves_a_file_keeps_its_mode(root: Path, umask: int) -> None:
    made = _files(root)
    with Workspace(root, tools=["read", "apply_patch"]) as ws:
        s = ws.session("agent")
        for name in made:
            _ok(s, "read", {"file_path": name})
        patch = (
            "*** Begin Patch\n*** Update File: run.sh\n*** Move to: bin/run.sh\n@@\n-echo hi\n+echo hello\n"
            "*** Update File: secret.env\n*** Move to: secret.old\n@@\n-TOKEN=hunter2\n+TOKEN=old\n*** End Patch"
        )
        _ok(s, "apply_patch", {"patch": patch})
    assert (root / "bin" / "run.sh").read_text() == "#!/bin/sh\necho hello\n" and _mode(
        root / "bin" / "run.sh"
    ) == 0o755
    assert (root / "secret.old").read_text() == "TOKEN=old\n" and _mode(root / "secret.old") == 0o600
    assert not (root / "run.sh").exists() and not (root / "secret.env").exists()
