"""The escape table (tests/safety/test_escape_table.py) against what the hooks call: ``Session.check`` of every
change the harnesses make, and ``Session.observe`` / ``adopt`` of every attempt's file. A check must answer
what the call answers (the table's expected code; a success is "checked") and change nothing, anywhere;
observe and adopt must refuse what read refuses and never touch, record or show what is outside."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fs_tools import Session, Workspace
from fs_tools.errors import HarnessError
from fs_tools.result import ToolResult
from tests.support.escape_table import (
    ATTEMPTS,
    BY_OP,
    Attempt,
    Paths,
    assert_no_leak,
    build,
    call_guarded,
    expected,
    temp_names,
    tree,
)

CHECKED = ("write", "write-new", "edit", "multi_edit", "notebook_edit")


class _Checking:
    """A session whose calls are checks: what call_guarded runs (in a thread, a hang failing the test)."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def call(self, tool: str, args: dict[str, Any]) -> ToolResult:
        return self.session.check(tool, args)


class _Taking:
    """A session whose "calls" are observe or adopt of the file named: a result either way."""

    def __init__(self, session: Session, how: str) -> None:
        self.session = session
        self.how = how

    def call(self, tool: str, args: dict[str, Any]) -> ToolResult:
        try:
            version = getattr(self.session, self.how)(args["file_path"])
        except HarnessError as exc:
            return ToolResult.failure(exc)
        return ToolResult.success("taken", {"version": version})


def _cases(ops: tuple[str, ...]) -> list[Any]:
    return [
        pytest.param(op, attempt, id=f"{op}-{attempt.id}")
        for attempt in ATTEMPTS
        for op in ops
        if expected(BY_OP[op if op in BY_OP else "read"], attempt).bug is None
    ]


@pytest.mark.parametrize(("op_id", "attempt"), _cases(CHECKED))
def test_a_check_answers_as_the_call_and_changes_nothing(op_id: str, attempt: Attempt, tmp_path: Path) -> None:
    op = BY_OP[op_id]
    env = build(tmp_path)
    attempt.setup(env)
    paths = Paths(attempt.file(env), attempt.dir(env), attempt.new(env))
    args = op.args(paths)
    secret_before = env.secret_identity
    outside_before = tree(env.tmp, skip="root")
    with Workspace(env.root) as ws:
        session = ws.session("hook")
        for path in op.prime(paths):
            call_guarded(session, "read", {"file_path": path}, env.root)
        root_before = tree(env.root)
        result = call_guarded(_Checking(session), op.tool, args, env.root)  # type: ignore[arg-type]
    code = result.error.code if result.error is not None else None
    assert code == expected(op, attempt).code, result.text
    if code is None:
        assert result.value == {"checked": True}
    assert_no_leak(env, result, args, secret_allowed=False)
    assert env.secret_identity == secret_before
    assert tree(env.tmp, skip="root") == outside_before
    assert tree(env.root) == root_before, "a check changed the root"
    assert temp_names(env.root) <= attempt.planted_temps


@pytest.mark.parametrize("how", ["observe", "adopt"])
@pytest.mark.parametrize("attempt", ATTEMPTS, ids=[attempt.id for attempt in ATTEMPTS])
def test_observe_and_adopt_refuse_what_read_refuses(how: str, attempt: Attempt, tmp_path: Path) -> None:
    env = build(tmp_path)
    attempt.setup(env)
    path = attempt.file(env)
    secret_before = env.secret_identity
    outside_before = tree(env.tmp, skip="root")
    with Workspace(env.root) as ws:
        root_before = tree(env.root)
        read = call_guarded(ws.session("reader"), "read", {"file_path": path}, env.root)
        taken = call_guarded(_Taking(ws.session("hook"), how), "read", {"file_path": path}, env.root)  # type: ignore[arg-type]
    refused = {"FS_SANDBOX_DENIED", "FS_NOT_REGULAR_FILE", "FS_NOT_DIRECTORY"}
    if read.error is not None and read.error.code in refused:
        assert taken.error is not None and taken.error.code == read.error.code, (read.text, taken.text)
    assert_no_leak(env, taken, {"file_path": path}, secret_allowed=False)
    assert env.secret_identity == secret_before
    assert tree(env.tmp, skip="root") == outside_before
    assert tree(env.root) == root_before
