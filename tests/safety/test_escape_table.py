"""One table of escape attempts, each run against every operation (in the manner of Go's ``os.Root``
``root_test.go``), with a control case (SPEC §5-8, §13).

Every test builds a fresh tree in ``tmp_path``::

    tmp_path/
      root/                 the workspace root: plain.txt, mover.txt, sub/inner.txt (+ the attempt's setup)
      outside/secret.txt    "TOP-SECRET\\n", mode 0640: what no call may read, change or name

and sends one operation the path of one attempt. Whatever the outcome, afterwards:

- the call returned a result (a raised exception or a hang fails the test), with the exact code expected;
- the outside secret has the same bytes, inode and mode; nothing new exists outside the root;
- no fs-tools temp name (``TEMP_NAME``) is left in the root, other than one the setup planted;
- a refused call changed nothing in the root either;
- no text, ``to_dict()`` or value holds ``TOP-SECRET`` or the outside directory's path (``../outside``
  included: the target of the chained link), other than inside a path string the caller sent itself.

The one attempt where the secret's bytes may legitimately show is the hard link (HARDLINK_NOTE below).
A pair where the library disagrees with SPEC gets ``Outcome(..., bug=reason)``: an ``xfail(strict=True)``
whose expectation stays what SPEC asks (none today: the three the table found first — a move onto a link
that leads outside, a move or delete of a FIFO — are fixed).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from fs_tools import Workspace
from fs_tools.result import ToolResult
from tests.support.escape_table import (
    ATTEMPTS,
    DENIED,
    EXPECTED,
    NOT_REGULAR,
    OK,
    OPERATIONS,
    RESERVED_FILE,
    Attempt,
    Check,
    Env,
    Operation,
    Outcome,
    Paths,
    assert_no_leak,
    build,
    call_guarded,
    expected,
    temp_names,
    tree,
)

# HARDLINK_NOTE -- why the hard link is expected to behave as an ordinary in-root file:
# A hard link is a second name for the same inode, and the kernel gives no way to tell the name made
# "first": ``root/hard.txt`` *is* a regular file inside the root. So the library treats it as one
# (docs/security.md, "Hard links"; Go's os.Root does the same): it can be read and searched, showing the
# secret's bytes, which is the host's doing (whoever made the link could already read the file). What it
# must never do is modify the outside inode: write, edit, move-onto and delete replace or remove the
# *directory entry* in the root (atomic rename / unlink), so outside/secret.txt keeps its bytes, inode and
# mode. Refusing every file with st_nlink > 1 would break legitimate trees (git worktrees, pnpm stores).


# --- the tree --------------------------------------------------------------------------------------------


# --- the attempts ----------------------------------------------------------------------------------------


BY_ID = {attempt.id: attempt for attempt in ATTEMPTS}


# --- the operations --------------------------------------------------------------------------------------



READERS = {"read", "read_many", "grep", "grep-glob", "grep-root"}  # ops whose output shows file content


# --- what each pair must give ----------------------------------------------------------------------------


def _link_removed(name: str) -> Check:
    def check(env: Env, result: ToolResult) -> None:
        assert not os.path.lexists(env.root / name)
        assert result.value["kind"] == "symlink", result.value
        assert "its target is untouched" in result.text

    return check


for _link in ("link-to-file", "dangling-link", "link-chain"):
    # SPEC §13: a symlink as the target of delete is removed as a link, never its target (no observation)
    EXPECTED["delete", _link] = Outcome(OK, _link_removed(BY_ID[_link].leaf or ""))
    EXPECTED["move-destination", _link] = Outcome(DENIED)
    EXPECTED["move-new", _link] = Outcome(DENIED)


# --- running one call ------------------------------------------------------------------------------------


def code_of(op: Operation, result: ToolResult) -> str | None:
    if op.tool == "read_many":
        # errors are inline, per file; the call itself fails only for invalid arguments (SPEC §13)
        assert not result.is_error, result.text
        files = result.value["files"]
        assert len(files) == 1 and result.value["failed"] == (files[0]["code"] is not None), result.value
        inline: str | None = files[0]["code"]
        return inline
    return result.error.code if result.error is not None else None


# --- the table -------------------------------------------------------------------------------------------


def _cases() -> list[Any]:
    cases = []
    for attempt in ATTEMPTS:
        for op in OPERATIONS:
            outcome = expected(op, attempt)
            marks = [pytest.mark.xfail(strict=True, reason=outcome.bug)] if outcome.bug else []
            cases.append(pytest.param(op, attempt, outcome, id=f"{op.id}-{attempt.id}", marks=marks))
    return cases


@pytest.mark.parametrize(("op", "attempt", "outcome"), _cases())
def test_escape_attempt(op: Operation, attempt: Attempt, outcome: Outcome, tmp_path: Path) -> None:
    env = build(tmp_path)
    attempt.setup(env)
    paths = Paths(attempt.file(env), attempt.dir(env), attempt.new(env))
    args = op.args(paths)
    secret_before = env.secret_identity
    outside_before = tree(tmp_path, skip="root")
    parent_before = sorted(os.listdir(tmp_path.parent))
    secret_allowed = attempt.secret_readable and op.id in READERS

    with Workspace(env.root) as ws:
        session = ws.session(f"{op.id}-{attempt.id}")
        for path in op.prime(paths):  # read first, so that a broken sandbox would pass the gates as well
            primed = call_guarded(session, "read", {"file_path": path}, env.root)
            assert_no_leak(env, primed, {"file_path": path}, secret_allowed=attempt.secret_readable)
        root_before = tree(env.root)
        result = call_guarded(session, op.tool, args, env.root)

        code = code_of(op, result)
        assert code == outcome.code, result.text
        if op.tool != "read_many" and outcome.code is not None:
            assert result.value is None
            if outcome.code in (DENIED, NOT_REGULAR) and op.escaping is not None:
                sent = getattr(paths, op.escaping)  # the message names the argument the model sent
                assert repr(sent) in result.text, result.text
        assert_no_leak(env, result, args, secret_allowed=secret_allowed)
        if outcome.code is None and outcome.check is not None:
            outcome.check(env, result)

    # on the disk: the secret untouched, nothing new outside the root, no temp left in the root
    assert env.secret_identity == secret_before
    assert tree(tmp_path, skip="root") == outside_before
    assert sorted(os.listdir(tmp_path.parent)) == parent_before
    assert temp_names(env.root) <= attempt.planted_temps
    if outcome.code is not None or not op.mutating:
        assert tree(env.root) == root_before, "a refused or read-only call changed the root"


def test_every_pair_is_in_the_table(tmp_path: Path) -> None:
    """The table cannot silently lose a column: every operation meets every attempt, and every
    explicit expectation names a real operation and attempt."""
    ids = {(op.id, attempt.id) for op in OPERATIONS for attempt in ATTEMPTS}
    assert len(ids) == len(OPERATIONS) * len(ATTEMPTS)
    assert set(EXPECTED) <= ids
    tools = {op.tool for op in OPERATIONS}
    with Workspace(tmp_path) as ws:
        assert tools == {schema["name"] for schema in ws.tool_schemas()}


def test_the_leak_checks_can_fail(tmp_path: Path) -> None:
    """The disk and text checks above are not vacuous: they see a changed secret and a leaked path."""
    env = build(tmp_path)
    before = env.secret_identity
    env.secret.chmod(0o600)
    assert env.secret_identity != before
    leaked = ToolResult.success(f"see {env.outside}/secret.txt", None)
    with pytest.raises(AssertionError):
        assert_no_leak(env, leaked, {"file_path": "x"}, secret_allowed=False)
    with pytest.raises(AssertionError):
        assert_no_leak(env, ToolResult.success("TOP-SECRET", None), {}, secret_allowed=False)
    (env.root / RESERVED_FILE).write_bytes(b"x")
    assert temp_names(env.root) == {RESERVED_FILE}
