"""Calls under injected faults: a guard that turns a hang into a failure, what a failed call left on the
disk, and the codes and causes of its result."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest

from fs_tools import Session
from fs_tools.result import ToolResult

TEMP_GLOB = "*.fs-tools.tmp"


needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def temps_under(base: Path) -> list[Path]:
    return sorted(base.rglob(TEMP_GLOB))


def read_ok(session: Session, path: str) -> None:
    result = session.call("read", {"file_path": path})
    assert not result.is_error, result.text


def code_of(result: ToolResult) -> str | None:
    return result.error.code if result.error is not None else None


HANG_GUARD = 60.0  # seconds; only turns a call blocked forever into a failure, never measures anything


def call_guarded(session: Session, name: str, arguments: dict[str, Any]) -> ToolResult:
    """``session.call`` in a helper thread, for tests that hold a lock the product must never wait on: a call
    blocked on it forever is a failure, not a hung suite."""
    box: list[ToolResult] = []
    worker = threading.Thread(target=lambda: box.append(session.call(name, arguments)), daemon=True)
    worker.start()
    worker.join(HANG_GUARD)
    assert box, f"{name} never returned: blocked on a lock held by another writer?"
    return box[0]


def mutate(session: Session, tool: str, path: str, old: str, new: str) -> ToolResult:
    """Change ``old`` into ``new`` with ``tool``; for write, ``new`` is the whole content."""
    if tool == "write":
        return session.call("write", {"file_path": path, "content": new})
    if tool == "edit":
        return session.call("edit", {"file_path": path, "old_string": old, "new_string": new})
    assert tool == "multi_edit"
    return session.call("multi_edit", {"file_path": path, "edits": [{"old_string": old, "new_string": new}]})


def cause_errnos(result: ToolResult) -> list[int | None]:
    """The errno of every OSError in the result's exception chain."""
    found: list[int | None] = []
    exc: BaseException | None = result.exception
    while exc is not None:
        if isinstance(exc, OSError):
            found.append(exc.errno)
        exc = exc.__cause__ or exc.__context__
    return found
