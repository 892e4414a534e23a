"""A write's temp is written and synced before the file's lock is taken (issue 18): what happens when the
file changes between that temp and the lock — its mode, its content, its existence — on a real disk."""

from __future__ import annotations

import errno
import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path

from fs_tools import ToolResult, Workspace
from fs_tools.provider import FileProvider, Primitives


def _temps(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.name.endswith(".fs-tools.tmp")]


class _AtCommit:
    """Runs ``action`` once, when the commit to the file starts under its lock (after the early temp)."""

    def __init__(self, action: Callable[[], None]) -> None:
        self.action = action
        self.fired = False

    def operation_started(self, key: str) -> None:
        if key.endswith("a.txt") and not self.fired:
            self.fired = True
            self.action()

    def read_recorded(self, key: str) -> None:
        pass

    def version_checked(self, key: str) -> None:
        pass


def _write_after(root: Path, action: Callable[[], None]) -> tuple[ToolResult, _AtCommit]:
    with Workspace(root) as ws:
        session = ws.session("s")
        assert not session.call("read", {"file_path": "a.txt"}).is_error
        listener = _AtCommit(action)
        ws.provider.listen(listener)
        return session.call("write", {"file_path": "a.txt", "content": "new\n"}), listener


def test_a_mode_changed_before_the_lock_is_kept_and_the_early_temp_removed(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_text("old\n")
    target.chmod(0o640)
    result, listener = _write_after(tmp_path, lambda: target.chmod(0o604))
    assert listener.fired
    assert not result.is_error, result.text
    assert target.read_text() == "new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o604  # the mode the file had under the lock
    assert _temps(tmp_path) == []


def test_a_file_changed_before_the_lock_is_stale_and_leaves_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_text("old\n")
    result, listener = _write_after(tmp_path, lambda: target.write_text("theirs\n"))
    assert listener.fired
    assert result.error is not None and result.error.code == "FS_STALE_VERSION", result.text
    assert target.read_text() == "theirs\n"
    assert _temps(tmp_path) == []


def test_a_file_removed_before_the_lock_is_stale_and_leaves_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_text("old\n")
    result, listener = _write_after(tmp_path, lambda: os.unlink(target))
    assert listener.fired
    assert result.error is not None and result.error.code == "FS_STALE_VERSION", result.text
    assert not target.exists()
    assert _temps(tmp_path) == []


def test_writers_racing_one_file_lose_no_update_and_leave_no_temp(tmp_path: Path) -> None:
    """Eight sessions read and write one file at once: every write that succeeds was made against the
    version it read, so the last success is what the file holds."""
    target = tmp_path / "a.txt"
    target.write_text("start\n")
    successes: list[str] = []
    guard = threading.Lock()
    with Workspace(tmp_path) as ws:

        def writer(name: str) -> None:
            session = ws.session(name)
            for n in range(25):
                session.call("read", {"file_path": "a.txt"})
                content = f"{name} {n}\n"
                if not session.call("write", {"file_path": "a.txt", "content": content}).is_error:
                    with guard:
                        successes.append(content)

        threads = [threading.Thread(target=writer, args=(f"w{i}",)) for i in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert successes and target.read_text() == successes[-1]
    assert _temps(tmp_path) == []


def test_a_new_file_whose_early_temp_fails_leaves_no_directory_it_made(tmp_path: Path) -> None:
    """Without staging (the portable primitives), missing parents are made before the temp is written:
    a temp that cannot be written (no space) must not leave them behind."""

    class Full(Primitives):
        def write_all(self, fd: int, data: bytes) -> None:
            raise OSError(errno.ENOSPC, "No space left on device")

    with Workspace(FileProvider([tmp_path], primitives=Full(False, None))) as ws:
        result = ws.session("s").call("write", {"file_path": "new/dir/a.txt", "content": "x\n"})
    assert result.error is not None and result.error.code == "FS_NO_SPACE", result.text
    assert list(tmp_path.iterdir()) == []
