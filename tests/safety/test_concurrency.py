"""Concurrent calls never lose an update (SPEC §6, §8), on a real directory: many threads editing one
file, sessions racing to replace a file, and sessions racing to create one."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from fs_tools import Session, ToolResult, Workspace

THREADS = 8
EDITS_PER_THREAD = 50
ROUNDS = 50
# Deadlock guard only (a hung thread fails the test instead of hanging it); never a timing assertion.
BARRIER_TIMEOUT = 60.0
# Livelock guard: some writer always wins each conflict, so this is never reached when the product works.
MAX_ATTEMPTS_PER_EDIT = 2_000


def code(result: ToolResult) -> str | None:
    return None if result.error is None else result.error.code


def temp_files(directory: Path) -> list[str]:
    return [name for _, _, names in os.walk(directory) for name in names if name.endswith(".fs-tools.tmp")]


def read_ok(session: Session, path: str) -> None:
    result = session.call("read", {"file_path": path})
    assert not result.is_error, result.text


def edit_until_applied(session: Session, path: str, old: str, new: str) -> int:
    """Edit; on FS_STALE_VERSION re-read and retry. Returns how many stale answers it took."""
    for stale in range(MAX_ATTEMPTS_PER_EDIT):
        result = session.call("edit", {"file_path": path, "old_string": old, "new_string": new})
        if not result.is_error:
            return stale
        assert code(result) == "FS_STALE_VERSION", result.text
        read_ok(session, path)
    raise AssertionError(f"edit {old!r} -> {new!r} never applied after {MAX_ATTEMPTS_PER_EDIT} attempts")


def run_together(workers: list[Callable[[], object]]) -> list[object]:
    """Run every worker in its own thread, released at the same moment; re-raise the first failure."""
    barrier = threading.Barrier(len(workers))

    def start(worker: Callable[[], object]) -> object:
        barrier.wait(BARRIER_TIMEOUT)
        return worker()

    with ThreadPoolExecutor(max_workers=len(workers)) as pool:
        futures = [pool.submit(start, worker) for worker in workers]
        return [future.result() for future in futures]


# --- many threads, one file, distinct lines -----------------------------------------------------


@pytest.mark.parametrize("shared_key", [False, True], ids=["own-session-each", "one-shared-session"])
def test_parallel_edits_to_distinct_lines_lose_nothing(root: Path, workspace: Workspace, shared_key: bool) -> None:
    total = THREADS * EDITS_PER_THREAD
    target = root / "lines.txt"
    target.write_text("".join(f"line-{i}-v0\n" for i in range(total)))

    def worker(thread: int) -> Callable[[], int]:
        session = workspace.session("shared" if shared_key else f"thread-{thread}")

        def run() -> int:
            read_ok(session, "lines.txt")
            stale = 0
            for i in range(thread, total, THREADS):  # this thread's own lines, interleaved with the others'
                stale += edit_until_applied(session, "lines.txt", f"line-{i}-v0\n", f"line-{i}-v1\n")
            return stale

        return run

    run_together([worker(t) for t in range(THREADS)])

    assert target.read_text().splitlines() == [f"line-{i}-v1" for i in range(total)]
    assert temp_files(root) == []
    assert sorted(os.listdir(root)) == ["lines.txt"]


# --- two sessions racing to replace one file ----------------------------------------------------


@pytest.mark.parametrize("layout", ["one-workspace", "two-workspaces"])
def test_two_sessions_racing_to_write_exactly_one_wins(root: Path, workspace: Workspace, layout: str) -> None:
    """Both sessions read the file, then replace it at the same moment. With two Workspace instances on
    one root (a harness with a Workspace per conversation, or concurrent ``fs-tools call`` processes) the
    in-process per-file locks are not shared, and the version check must still hold (SPEC §8)."""
    target = root / "race.txt"
    target.write_text("start\n")
    second = Workspace(root)
    sessions = {
        "A": workspace.session("A"),
        "B": (second if layout == "two-workspaces" else workspace).session("B"),
    }
    barrier = threading.Barrier(len(sessions))

    def race(session: Session, content: str) -> ToolResult:
        barrier.wait(BARRIER_TIMEOUT)
        return session.call("write", {"file_path": "race.txt", "content": content})

    with second, ThreadPoolExecutor(max_workers=len(sessions)) as pool:
        for round_no in range(ROUNDS):
            for session in sessions.values():
                read_ok(session, "race.txt")
            contents = {name: f"round {round_no}: written by {name}\n" for name in sessions}
            futures = {name: pool.submit(race, sessions[name], contents[name]) for name in sessions}
            results = {name: future.result() for name, future in futures.items()}

            winners = [name for name, result in results.items() if not result.is_error]
            assert len(winners) == 1, {name: r.text for name, r in results.items()}
            (loser,) = set(sessions) - set(winners)
            assert code(results[loser]) == "FS_STALE_VERSION", results[loser].text
            assert target.read_text() == contents[winners[0]]

    assert temp_files(root) == []
    assert sorted(os.listdir(root)) == ["race.txt"]


def test_racing_edit_loser_is_stale_and_nothing_is_lost(root: Path, workspace: Workspace) -> None:
    """Two sessions edit different lines from the same observed version: one is applied, the other is
    refused as stale (not silently merged over), and after a re-read it applies too."""
    target = root / "race.txt"
    sessions = {"A": workspace.session("A"), "B": workspace.session("B")}
    barrier = threading.Barrier(len(sessions))

    def race(session: Session, old: str, new: str) -> ToolResult:
        barrier.wait(BARRIER_TIMEOUT)
        return session.call("edit", {"file_path": "race.txt", "old_string": old, "new_string": new})

    with ThreadPoolExecutor(max_workers=len(sessions)) as pool:
        for round_no in range(ROUNDS):
            target.write_text(f"a-{round_no}\nb-{round_no}\n")
            for session in sessions.values():
                read_ok(session, "race.txt")
            edits = {"A": (f"a-{round_no}", f"A-{round_no}"), "B": (f"b-{round_no}", f"B-{round_no}")}
            futures = {name: pool.submit(race, sessions[name], *edits[name]) for name in sessions}
            results = {name: future.result() for name, future in futures.items()}

            winners = [name for name, result in results.items() if not result.is_error]
            assert len(winners) == 1, {name: r.text for name, r in results.items()}
            (loser,) = set(sessions) - set(winners)
            assert code(results[loser]) == "FS_STALE_VERSION", results[loser].text
            if winners == ["A"]:
                assert target.read_text() == f"A-{round_no}\nb-{round_no}\n"
            else:
                assert target.read_text() == f"a-{round_no}\nB-{round_no}\n"
            assert edit_until_applied(sessions[loser], "race.txt", *edits[loser]) == 1
            assert target.read_text() == f"A-{round_no}\nB-{round_no}\n"

    assert temp_files(root) == []


# --- two sessions racing to create one new file -------------------------------------------------


@pytest.mark.parametrize("layout", ["one-workspace", "two-workspaces"])
def test_two_sessions_racing_to_create_exactly_one_wins(root: Path, workspace: Workspace, layout: str) -> None:
    """Neither session has seen the file. The loser must get FS_NOT_OBSERVED, never clobber. With two
    Workspace instances the per-file locks are not shared, so only the no-replace publication guards it."""
    with Workspace(root) as second:
        sessions = {
            "A": workspace.session("A"),
            "B": (second if layout == "two-workspaces" else workspace).session("B"),
        }
        barrier = threading.Barrier(len(sessions))

        def race(session: Session, path: str, content: str) -> ToolResult:
            barrier.wait(BARRIER_TIMEOUT)
            return session.call("write", {"file_path": path, "content": content})

        with ThreadPoolExecutor(max_workers=len(sessions)) as pool:
            for round_no in range(ROUNDS):
                path = f"new-{round_no}.txt"
                contents = {name: f"created by {name} in round {round_no}\n" for name in sessions}
                futures = {name: pool.submit(race, sessions[name], path, contents[name]) for name in sessions}
                results = {name: future.result() for name, future in futures.items()}

                winners = [name for name, result in results.items() if not result.is_error]
                assert len(winners) == 1, {name: r.text for name, r in results.items()}
                (loser,) = set(sessions) - set(winners)
                assert code(results[loser]) == "FS_NOT_OBSERVED", results[loser].text
                assert results[winners[0]].value["created"] is True
                assert (root / path).read_text() == contents[winners[0]]

    assert temp_files(root) == []
    assert sorted(os.listdir(root)) == sorted(f"new-{n}.txt" for n in range(ROUNDS))
