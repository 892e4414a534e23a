"""External-change hints on a real directory: what changed is reported by hash, within a bounded wait."""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fs_tools import Workspace
from fs_tools.provider import version_of
from fs_tools.watcher import CREATED, DELETED, MODIFIED, WATCHDOG_NEEDED, Change, watchdog_version

# fs-tools installs with watchdog 6 (Google ADK pins it), where Workspace(watch=True) is refused instead:
# tests/surfaces/test_watchdog_floor.py checks that refusal there, and these run wherever watching is possible.
pytestmark = pytest.mark.skipif(
    watchdog_version() < WATCHDOG_NEEDED, reason="watchdog < 7.1 installed: Workspace(watch=True) is refused"
)

WAIT_SECONDS = 10.0


def _wait_for(condition: Callable[[], bool]) -> bool:
    """Poll until ``condition`` holds or the bound runs out (events arrive on another thread)."""
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def _kinds(changes: list[Change], root: Path) -> dict[str, str]:
    return {os.path.relpath(c.path, os.path.realpath(root)): c.kind for c in changes}


@pytest.fixture
def watched(root: Path) -> Workspace:
    ws = Workspace(root, watch=True)
    yield ws  # type: ignore[misc]
    ws.close()


def test_outside_changes_are_reported_by_kind_and_touches_are_not(root: Path, watched: Workspace) -> None:
    for name in "abcdef":
        (root / f"{name}.txt").write_text(f"{name}\n")
    session = watched.session("s")
    for name in "abcdef":
        assert not session.call("read", {"file_path": f"{name}.txt"}).is_error
    assert session.call("read", {"file_path": "new.txt"}).is_error is not False  # absent observation
    (root / "a.txt").write_text("a changed\n")  # modified in place
    (root / "b.txt").unlink()  # deleted
    (root / "c.tmp").write_text("c saved by an editor\n")
    os.replace(root / "c.tmp", root / "c.txt")  # an editor's atomic save
    os.utime(root / "d.txt")  # touch: not a change
    (root / "e.txt").write_text("e\n")  # identical rewrite: not a change
    os.rename(root / "f.txt", root / "f-moved.txt")  # moved away
    (root / "new.txt").write_text("appeared\n")  # absent when read, present now
    expected = {"a.txt": MODIFIED, "b.txt": DELETED, "c.txt": MODIFIED, "f.txt": DELETED, "new.txt": CREATED}
    assert _wait_for(lambda: _kinds(session.changed(), root) == expected), _kinds(session.changed(), root)


def test_the_sessions_own_writes_are_not_reported(root: Path, watched: Workspace) -> None:
    (root / "a.txt").write_text("one\n")
    session = watched.session("s")
    assert not session.call("read", {"file_path": "a.txt"}).is_error
    assert not session.call("edit", {"file_path": "a.txt", "old_string": "one", "new_string": "two"}).is_error
    assert not session.call("write", {"file_path": "b.txt", "content": "new\n"}).is_error
    (root / "marker.txt").write_text("x")  # an unrelated event, so we know events have been flowing
    assert not session.call("read", {"file_path": "marker.txt"}).is_error
    (root / "marker.txt").write_text("y")
    assert _wait_for(lambda: _kinds(session.changed(), root) == {"marker.txt": MODIFIED})


def test_another_sessions_view_is_its_own(root: Path, watched: Workspace) -> None:
    (root / "a.txt").write_text("one\n")
    first, second = watched.session("first"), watched.session("second")
    assert not first.call("read", {"file_path": "a.txt"}).is_error
    assert not second.call("read", {"file_path": "a.txt"}).is_error
    assert not first.call("edit", {"file_path": "a.txt", "old_string": "one", "new_string": "two"}).is_error
    assert _wait_for(lambda: _kinds(second.changed(), root) == {"a.txt": MODIFIED})
    assert first.changed() == []


def test_subscribers_are_told_of_real_changes_only(root: Path, watched: Workspace) -> None:
    (root / "a.txt").write_text("one\n")
    (root / "b.txt").write_text("b\n")
    session = watched.session("s")
    assert not session.call("read", {"file_path": "a.txt"}).is_error
    assert not session.call("read", {"file_path": "b.txt"}).is_error
    told: list[Change] = []
    unsubscribe = session.on_change(told.append)
    os.utime(root / "b.txt")  # not a change
    assert not session.call("edit", {"file_path": "a.txt", "old_string": "one", "new_string": "two"}).is_error
    (root / "a.txt").write_text("three\n")
    two, three, four = version_of(b"two\n"), version_of(b"three\n"), version_of(b"four\n")
    # a non-atomic writer may be seen mid-write (say, truncated); the final state is announced too
    assert _wait_for(lambda: any(c.kind == MODIFIED and c.version == three for c in told))
    assert {os.path.basename(c.path) for c in told} == {"a.txt"}
    # the rename's event arrives while the edit is still committing (it fsyncs the directory, then
    # records "two"): compared with the observation as it was then, the session's own edit looked foreign
    assert all(c.version != two for c in told)
    unsubscribe()
    # an announcement already under way (for "three") may hash the file after this write: it must not
    # reach the callback, which has unsubscribed (forced below, in the test that follows)
    (root / "a.txt").write_text("four\n")
    assert _wait_for(lambda: [c.version for c in session.changed()] == [four])
    assert all(c.version != four for c in told)


def test_a_callback_is_never_called_once_unsubscribe_returns(root: Path, watched: Workspace) -> None:
    """The interleaving of the test above, forced: the watcher has taken up an event (for "two") when the
    callback unsubscribes, and the file changes again before the watcher hashes it for that callback's
    session. The first session's callback, run on the watcher's thread between the two sessions'
    checks, is what unsubscribes the second and writes."""
    (root / "a.txt").write_text("one\n")
    (root / "marker.txt").write_text("m\n")
    first, second = watched.session("first"), watched.session("second")
    for each, name in [(first, "a.txt"), (first, "marker.txt"), (second, "a.txt")]:
        assert not each.call("read", {"file_path": name}).is_error
    told_first: list[Change] = []
    told_second: list[Change] = []
    armed = threading.Event()
    unsubscribed = threading.Event()

    def first_told(change: Change) -> None:
        told_first.append(change)
        if armed.is_set() and change.path.endswith("a.txt") and not unsubscribed.is_set():
            unsubscribe_second()
            (root / "a.txt").write_text("after the unsubscribe\n")
            unsubscribed.set()

    first.on_change(first_told)  # subscribed first, so checked first
    unsubscribe_second = second.on_change(told_second.append)
    # Settle first: events of the writes above can still be on their way, and one handled for a.txt after
    # the save below could find first's view unchanged yet tell second. Events are handled in order, so
    # once first is told of this marker, every earlier one has been handled.
    (root / "marker.txt").write_text("settle\n")
    assert _wait_for(lambda: any(c.path.endswith("marker.txt") for c in told_first))
    assert told_second == []
    told_first.clear()
    armed.set()
    # saved atomically: a write in place could still be under way when the callback writes
    (root / "a.tmp").write_text("two\n")
    os.replace(root / "a.tmp", root / "a.txt")
    assert _wait_for(unsubscribed.is_set)
    (root / "marker.txt").write_text("done\n")  # events are handled in order: once this one is told,
    assert _wait_for(lambda: any(c.path.endswith("marker.txt") for c in told_first))  # all before it are
    assert told_second == []
    later = version_of(b"after the unsubscribe\n")
    assert [c.version for c in second.changed()] == [later]  # the change is real: only the callback is gone


def test_without_a_watcher_changed_rehashes_every_observation(root: Path, workspace: Workspace) -> None:
    (root / "a.txt").write_text("one\n")
    session = workspace.session("s")
    assert not session.call("read", {"file_path": "a.txt"}).is_error
    assert session.changed() == []
    (root / "a.txt").write_text("two\n")
    assert _kinds(session.changed(), root) == {"a.txt": MODIFIED}
    with pytest.raises(RuntimeError):
        session.on_change(lambda change: None)


def test_closing_leaves_no_thread_behind(root: Path) -> None:
    before = set(threading.enumerate())
    with Workspace(root, watch=True) as ws:
        assert len(set(threading.enumerate()) - before) >= 1
        ws.session("s").call("read", {"file_path": "missing.txt"})
    assert set(threading.enumerate()) - before == set()


def _open_descriptors() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def _target(fd: str) -> str:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return f"fd {fd} (closed since)"


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts descriptors in /proc (Linux)")
def test_opening_and_closing_a_watched_workspace_on_a_busy_machine_leaks_no_descriptor(root: Path) -> None:
    """watchdog's inotify reader, stopped before its thread first read, left its inotify descriptor and
    wake-up pipe open: on a loaded machine a workspace opened and closed at once lost three descriptors
    one cycle in five or so. Nothing here depends on timing: the fix makes the window impossible."""
    spinners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 1)
    ]  # a busy machine: the reader's thread starts late
    try:
        before = _open_descriptors()
        for _ in range(150):
            with Workspace(root, watch=True):
                pass
        after = _open_descriptors()
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()
    leaked = sorted(_target(fd) for fd in after - before)
    assert leaked == []  # on watchdog 7.1 without the fix: ['anon_inode:inotify', 'pipe:[…]', 'pipe:[…]', …]


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts descriptors in /proc (Linux)")
@pytest.mark.parametrize("failing", [1, 2], ids=["the-probe", "a-root"])
def test_a_watch_the_kernel_refuses_leaves_no_thread_or_descriptor(
    root: Path, monkeypatch: pytest.MonkeyPatch, failing: int
) -> None:
    """At the kernel's watch limit (ENOSPC) Workspace(watch=True) raises; its reader's threads and, once
    the reader has read, its descriptors are gone with it (each failed open left 2 threads and 3
    descriptors)."""
    import errno

    from watchdog.observers import inotify_c

    added = inotify_c.InotifyFD.add_callback
    calls = [0]

    def at_the_limit(self: Any, *args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        if calls[0] % 2 == failing % 2:  # 1: the probe watch; 2: the root's watch, after the probe
            raise OSError(errno.ENOSPC, "inotify watch limit reached")
        return added(self, *args, **kwargs)

    monkeypatch.setattr(inotify_c.InotifyFD, "add_callback", at_the_limit)
    threads, before = set(threading.enumerate()), _open_descriptors()
    for _ in range(5):
        with pytest.raises(OSError, match="inotify watch limit"):
            Workspace(root, watch=True)
    assert [t.name for t in set(threading.enumerate()) - threads if t.is_alive()] == []
    if failing == 2:  # the reader had read: stopping it closes what it holds
        assert sorted(_target(fd) for fd in _open_descriptors() - before) == []


def test_changes_reach_an_asyncio_loop(root: Path, watched: Workspace) -> None:
    (root / "a.txt").write_text("one\n")
    session = watched.session("s")
    assert not session.call("read", {"file_path": "a.txt"}).is_error

    async def first_change() -> Change:
        stream = session.watch_changes()
        waiter = asyncio.ensure_future(anext(stream))
        await asyncio.sleep(0)  # let the stream subscribe before the outside write
        await asyncio.to_thread((root / "a.txt").write_text, "two\n")
        change = await asyncio.wait_for(waiter, WAIT_SECONDS)
        await stream.aclose()
        return change

    change = asyncio.run(first_change())
    assert os.path.basename(change.path) == "a.txt" and change.kind == MODIFIED


def test_after_lost_events_every_observed_file_is_rehashed(root: Path) -> None:
    (root / "a.txt").write_text("one\n")  # written before the watcher starts: never reported
    (root / "b.txt").write_text("b\n")
    with Workspace(root, watch=True) as watched:
        _rehashed_after_lost_events(root, watched)


def _rehashed_after_lost_events(root: Path, watched: Workspace) -> None:
    session, other = watched.session("s"), watched.session("t")
    told: list[Change] = []
    watched.session("u").on_change(told.append)
    for each in (session, other, watched.session("u")):
        assert not each.call("read", {"file_path": "a.txt"}).is_error
        assert not each.call("read", {"file_path": "b.txt"}).is_error
    assert watched.watcher is not None
    watched.watcher._observer.stop()  # from here on no event arrives: the change below is truly unreported
    watched.watcher._observer.join(timeout=10)
    (root / "a.txt").write_text("changed while events were lost\n")
    assert session.changed() == []  # nothing reported it
    watched.watcher._queue_overflowed()  # what the kernel's overflow makes watchdog call (a real one: below)
    for each in (session, other):
        assert _kinds(each.changed(), root) == {"a.txt": MODIFIED}
        assert _kinds(each.changed(), root) == {"a.txt": MODIFIED}  # still reported after the full re-hash
    assert _wait_for(lambda: _kinds(told, root) == {"a.txt": MODIFIED})  # subscribers are checked at once


MAX_QUEUED = Path("/proc/sys/fs/inotify/max_queued_events")


def test_a_real_kernel_queue_overflow_is_recovered(root: Path) -> None:
    """With a one-event inotify queue a burst of creations overflows it for real (Linux, root)."""
    try:
        saved = MAX_QUEUED.read_text()
        MAX_QUEUED.write_text("1")  # read when an inotify instance is created: only ours gets it
    except OSError:
        pytest.skip("cannot lower fs.inotify.max_queued_events here")
    try:
        ws = Workspace(root, watch=True)
    finally:
        MAX_QUEUED.write_text(saved)
    logging.disable(logging.CRITICAL)  # the host's logging configuration plays no part in noticing it
    try:
        _overflow_and_recover(root, ws)
    finally:
        logging.disable(logging.NOTSET)


def _overflow_and_recover(root: Path, ws: Workspace) -> None:
    with ws:
        (root / "a.txt").write_text("one\n")
        session = ws.session("s")
        assert not session.call("read", {"file_path": "a.txt"}).is_error
        burst = root / "burst"
        burst.mkdir()
        for n in range(300):
            (burst / str(n)).write_bytes(b"")
        (root / "a.txt").write_text("two\n")
        assert ws.watcher is not None
        assert _wait_for(lambda: ws.watcher is not None and ws.watcher._overflows > 0), "no overflow was signalled"
        assert _wait_for(lambda: _kinds(session.changed(), root) == {"a.txt": MODIFIED})
