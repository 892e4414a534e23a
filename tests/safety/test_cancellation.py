"""Cancellation: before dispatch, during a write (TOOL_ABORTED, nothing half-written), and through acall."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import xxhash

from fs_tools import Session, Workspace
from fs_tools.errors import Aborted
from fs_tools.provider import FileState, Snapshot, files

ORIGINAL = b"one\ntwo\n"


def _temps(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.name.endswith(".fs-tools.tmp")]


def _fsync_then(monkeypatch: pytest.MonkeyPatch, action: Callable[[], None]) -> list[int]:
    """Run ``action`` inside the first fsync of a temp file: after the temp is written, before publication."""
    calls: list[int] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        real(fd)
        if not calls:
            calls.append(fd)
            action()

    monkeypatch.setattr(files.os, "fsync", fsync)
    return calls


@pytest.mark.parametrize(
    ("tool", "args", "said"),
    [
        # a write's temp is written and synced before the file's lock is taken: the cancel is seen there
        ("write", {"file_path": "a.txt", "content": "new\n"}, "before anything was written; nothing was changed"),
        ("edit", {"file_path": "a.txt", "old_string": "two", "new_string": "2"}, "the file is intact"),
        (
            "multi_edit",
            {"file_path": "a.txt", "edits": [{"old_string": "two", "new_string": "2"}]},
            "the file is intact",
        ),
    ],
)
def test_cancel_during_a_write_aborts_before_publication(
    root: Path, session: Session, monkeypatch: pytest.MonkeyPatch, tool: str, args: dict[str, Any], said: str
) -> None:
    target = root / "a.txt"
    target.write_bytes(ORIGINAL)
    inode = target.stat().st_ino
    assert not session.call("read", {"file_path": "a.txt"}).is_error
    cancel = threading.Event()
    fired = _fsync_then(monkeypatch, cancel.set)

    result = session.call(tool, args, cancel=cancel)

    assert fired, "the cancellation point was never reached"
    assert result.error is not None and result.error.code == "TOOL_ABORTED", result.text
    assert "a.txt" in result.text and said in result.text
    assert isinstance(result.exception, Exception)
    assert isinstance(result.exception.__cause__, Aborted) and result.exception.__cause__.code == "FS_ABORTED"
    assert target.read_bytes() == ORIGINAL and target.stat().st_ino == inode
    assert _temps(root) == []
    monkeypatch.undo()
    retry = session.call(tool, args)  # the observation is untouched: the retry needs no re-read
    assert not retry.is_error, retry.text


def test_provider_commit_with_a_set_token_raises_fs_aborted(root: Path, workspace: Workspace) -> None:
    (root / "a.txt").write_bytes(ORIGINAL)
    cancel = threading.Event()
    cancel.set()
    version = xxhash.xxh3_128_hexdigest(ORIGINAL)

    class Expecting:
        def expect(self, file: FileState) -> str | None:
            return version

        def record(
            self, key: str, after: Snapshot, *, before: Snapshot | None = None, made: tuple[str, ...] = ()
        ) -> None:
            raise AssertionError("an aborted commit records nothing")

    with pytest.raises(Aborted) as caught:
        workspace.provider.commit("a.txt", Expecting(), b"x", cancel=cancel)
    assert caught.value.code == "FS_ABORTED"
    assert (root / "a.txt").read_bytes() == ORIGINAL
    assert _temps(root) == []


def test_acall_cancelled_mid_write_stops_the_worker_and_propagates(
    root: Path, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = root / "a.txt"
    target.write_bytes(ORIGINAL)
    assert not session.call("read", {"file_path": "a.txt"}).is_error
    entered = threading.Event()
    release = threading.Event()

    def block() -> None:
        entered.set()
        assert release.wait(10), "the test never released the writer"

    _fsync_then(monkeypatch, block)

    async def scenario() -> None:
        task = asyncio.ensure_future(session.acall("write", {"file_path": "a.txt", "content": "new\n"}))
        assert await asyncio.to_thread(entered.wait, 10)
        task.cancel()
        # Callbacks run in order: the task's cancellation handler (which sets the call's cancel token)
        # runs before this release, so the worker sees the token at its last check.
        asyncio.get_running_loop().call_soon(release.set)
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert target.read_bytes() == ORIGINAL
    assert _temps(root) == []
