"""A root with a world outside it, the tools that take a path, and a call that cannot hang: shared by the
sandbox and attack tests."""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fs_tools import Session
from fs_tools.result import ToolResult

SECRET = "TOP-SECRET"


TOOLS = ("read", "write", "edit", "multi_edit")


MUTATING = ("write", "edit", "multi_edit")


HANG_GUARD_SECONDS = 60.0  # only a guard against a hang, never a timing assertion


Entry = tuple[Any, ...]


def tool_args(tool: str, path: str) -> dict[str, Any]:
    """Arguments that would leak or damage the secret if the path reached it."""
    if tool == "read":
        return {"file_path": path}
    if tool == "write":
        return {"file_path": path, "content": "PWNED\n"}
    if tool == "edit":
        return {"file_path": path, "old_string": SECRET, "new_string": "PWNED"}
    assert tool == "multi_edit"
    return {"file_path": path, "edits": [{"old_string": SECRET, "new_string": "PWNED"}]}


def tree(base: Path) -> dict[str, Entry]:
    """Everything under ``base`` (not following symlinks): kind, mode, and bytes or link target."""
    out: dict[str, Entry] = {}
    for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
        for name in sorted(dirnames + filenames):
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, base)
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(full))
            elif stat.S_ISREG(st.st_mode):
                out[rel] = ("file", stat.S_IMODE(st.st_mode), st.st_ino, Path(full).read_bytes())
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", stat.S_IMODE(st.st_mode))
            else:
                out[rel] = ("special", st.st_mode)
    return out


def world(tmp_path: Path) -> dict[str, Any]:
    """The state no denied call may change: the whole tmp tree, its parent's listing, /etc/passwd."""
    return {
        "tmp": tree(tmp_path),
        "parent": sorted(os.listdir(tmp_path.parent)),
        "passwd": Path("/etc/passwd").read_bytes(),
    }


def outside_world(tmp_path: Path) -> dict[str, Any]:
    """The state outside the root (for calls that legitimately change the root)."""
    state = world(tmp_path)
    state["tmp"] = {k: v for k, v in state["tmp"].items() if k != "root" and not k.startswith("root/")}
    return state


def call_guarded(
    session: Session, tool: str, args: dict[str, Any] | str, on_hang: Callable[[], None] | None = None
) -> ToolResult:
    """Run one call in a thread so that a hang fails the test instead of freezing the suite."""
    results: list[ToolResult] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            results.append(session.call(tool, args))
        except BaseException as exc:  # a call must never raise; report it instead of losing it
            errors.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(HANG_GUARD_SECONDS)
    if worker.is_alive():
        if on_hang is not None:
            on_hang()
        pytest.fail(f"{tool} {args!r} did not return: it hangs")
    if errors:
        raise AssertionError(f"{tool} raised instead of returning a result") from errors[0]
    return results[0]


def code_of(result: ToolResult) -> str | None:
    return result.error.code if result.error is not None else None
