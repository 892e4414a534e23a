"""Issue 12, the provider's half: nothing a model sends can hang the host on a lock or a growing file, no
writer's work is lost to coarse timestamps, a reused inode or a save by rename, a closed workspace stays
closed, and temps and parent directories are handled as the security model promises.

Every test runs on a real temporary directory (a real coarse-timestamp ext4 image where the point is the
timestamps) and asserts on the result and on the disk.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import stat
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from fs_tools import Workspace
from fs_tools.provider import files, tempfiles, versions
from fs_tools.result import ToolResult
from fs_tools.testing import ConcurrentWriter, assert_error, assert_ok
from fs_tools.watcher import WATCHDOG_NEEDED, watchdog_version
from tests.support.faults import HANG_GUARD, call_guarded, code_of, needs_fork, read_ok, temps_under

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux-only")


# --- helpers --------------------------------------------------------------------------------------------


@contextlib.contextmanager
def flocked_by_another_process(directory: Path) -> Iterator[subprocess.Popen[bytes]]:
    """``flock -x directory sleep``: another process holds the directory's lock until the block ends."""
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY); "
            "fcntl.flock(fd, fcntl.LOCK_EX); print('locked', flush=True); sys.stdin.read()",
            str(directory),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"locked\n"
        yield holder
    finally:
        holder.kill()
        holder.wait()


def in_thread(call: Callable[[], Any]) -> tuple[threading.Thread, list[Any]]:
    box: list[Any] = []
    worker = threading.Thread(target=lambda: box.append(call()), daemon=True)
    worker.start()
    return worker, box


# --- item 5: lock waits are bounded and cancellable ---------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("write", {"file_path": "f.txt", "content": "mine\n"}),
        ("write", {"file_path": "new.txt", "content": "new\n"}),
        ("edit", {"file_path": "f.txt", "old_string": "old", "new_string": "new"}),
    ],
)
def test_a_directory_locked_by_another_process_is_busy_not_a_hang(root: Path, tool: str, args: dict[str, Any]) -> None:
    (root / "f.txt").write_text("old\n")
    with Workspace(root, lock_timeout=0.2) as ws:
        session = ws.session("s")
        read_ok(session, "f.txt")
        with flocked_by_another_process(root):
            result = call_guarded(session, tool, args)
        assert_error(result, "FS_BUSY")
        assert repr(args["file_path"]) in result.text and "retry" in result.text
        assert (root / "f.txt").read_text() == "old\n"
        assert not (root / "new.txt").exists()
        assert temps_under(root) == []
        assert_ok(session.call(tool, args))  # once the other process lets go, the same call goes through


def test_a_cancelled_call_waiting_for_a_lock_ends_without_writing(root: Path) -> None:
    (root / "f.txt").write_text("old\n")
    with Workspace(root, lock_timeout=HANG_GUARD * 4) as ws:
        session = ws.session("s")
        read_ok(session, "f.txt")
        cancel = threading.Event()
        with flocked_by_another_process(root):
            args = {"file_path": "f.txt", "content": "x"}
            worker, box = in_thread(lambda: session.call("write", args, cancel=cancel))
            worker.join(0.2)  # not a timing assertion: the call is still waiting either way
            assert worker.is_alive(), "the write did not wait for the lock at all"
            cancel.set()
            worker.join(HANG_GUARD)
            assert not worker.is_alive(), "a cancelled call stayed blocked on the lock"
        assert_error(box[0], "TOOL_ABORTED")
        assert (root / "f.txt").read_text() == "old\n"
        assert temps_under(root) == []


def test_a_file_lock_held_in_this_process_is_busy_for_readers_and_writers(root: Path) -> None:
    (root / "f.txt").write_text("old\n")
    with Workspace(root, lock_timeout=0.1) as ws:
        session = ws.session("s")

        def calls_while_locked() -> tuple[ToolResult, ToolResult]:
            read = call_guarded(session, "read", {"file_path": "f.txt"})
            return read, call_guarded(session, "write", {"file_path": "f.txt", "content": "x"})

        (read, write), _ = ws.provider.current_version("f.txt", calls_while_locked)
        assert_error(read, "FS_BUSY")
        assert_error(write, "FS_BUSY")
        assert (root / "f.txt").read_text() == "old\n"
        assert_ok(session.call("read", {"file_path": "f.txt"}))


def test_lock_timeout_must_be_positive(root: Path) -> None:
    with pytest.raises(ValueError, match="lock_timeout"):
        Workspace(root, lock_timeout=0)


# --- item 6: a file that never stops growing ------------------------------------------------------------


def test_a_read_stops_at_the_size_the_file_had_when_it_began(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every chunk read makes the file longer (as an appending process would): the read must end anyway,
    say that the file kept changing, and record nothing."""
    target = root / "grows.txt"
    target.write_text("line\n" * 1000)
    real_read = os.read
    grown: list[int] = []

    def read(fd: int, n: int) -> bytes:
        data = real_read(fd, n)
        if data and len(grown) < 10_000:
            with open(target, "a") as other:
                other.write("more\n" * 200)
            grown.append(len(data))
        return data

    monkeypatch.setattr(files.os, "read", read)
    with Workspace(root) as ws:
        session = ws.session("s")
        result = call_guarded(session, "read", {"file_path": "grows.txt", "limit": 3})
        monkeypatch.undo()
        assert len(grown) < 10_000, "the read followed the file as it grew"
        assert_ok(result)
        assert "changed while it was being read" in result.text
        assert result.value is not None and result.value["version"] is None
        edit = session.call("edit", {"file_path": "grows.txt", "old_string": "line", "new_string": "x"})
        assert_error(edit, "FS_NOT_OBSERVED")  # the torn view was not recorded


@linux_only
def test_a_file_grown_sparsely_by_another_process_does_not_hold_the_read_or_the_lock(root: Path) -> None:
    target = root / "sparse.log"
    target.write_bytes(b"start\n")
    grower = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import os, sys; fd = os.open(sys.argv[1], os.O_WRONLY); size = 1 << 30\n"
            "os.ftruncate(fd, size); print('growing', flush=True)\n"
            "while True:\n    size += 1 << 28; os.ftruncate(fd, size)",
            str(target),
        ],
        stdout=subprocess.PIPE,
    )
    try:
        assert grower.stdout is not None and grower.stdout.readline() == b"growing\n"
        with Workspace(root, max_read_bytes=64 << 20) as ws:
            session = ws.session("s")
            result = call_guarded(session, "read", {"file_path": "sparse.log"})
            other = call_guarded(ws.session("t"), "write", {"file_path": "other.txt", "content": "x"})
    finally:
        grower.kill()
        grower.wait()
        target.unlink()
    assert code_of(result) in ("FS_TOO_LARGE", "FS_NOT_TEXT"), result.text
    if code_of(result) == "FS_TOO_LARGE":
        assert "limit for reading" in result.text
    assert_ok(other)


# --- item 9: coarse timestamps and reused inodes -----------------------------------------------------------


@pytest.fixture
def coarse_fs(tmp_path: Path) -> Iterator[Path]:
    """An ext4 image with 128-byte inodes (timestamps in whole seconds), loop-mounted; skipped where
    mounting is not permitted."""
    needed = ("mount", "umount", "mkfs.ext4")
    if not sys.platform.startswith("linux") or any(shutil.which(tool) is None for tool in needed):
        pytest.skip("needs Linux mount, umount and mkfs.ext4")
    image, mountpoint = tmp_path / "coarse.img", tmp_path / "coarse"
    mountpoint.mkdir()
    with open(image, "wb") as fh:
        fh.truncate(32 << 20)
    made = subprocess.run(["mkfs.ext4", "-q", "-F", "-I", "128", str(image)], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"mkfs.ext4 -I 128 failed: {made.stderr.strip()}")
    done = subprocess.run(["mount", "-o", "loop", str(image), str(mountpoint)], capture_output=True, text=True)
    if done.returncode != 0 or not os.path.ismount(mountpoint):
        pytest.skip(f"cannot loop-mount an ext4 image here: {done.stderr.strip()}")
    try:
        root = mountpoint / "root"
        root.mkdir()
        yield root
    finally:
        if subprocess.run(["umount", str(mountpoint)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(mountpoint)], capture_output=True)


def _stat_key(path: Path) -> tuple[int, int, int, int, int]:
    st = os.stat(path)
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def test_the_filesystem_really_has_whole_second_timestamps(coarse_fs: Path) -> None:
    (coarse_fs / "f").write_text("x")
    assert os.stat(coarse_fs / "f").st_ctime_ns % 1_000_000_000 == 0


def _outside_change_in_one_tick(
    root: Path, change: Callable[[Path], None], tool: str, args: dict[str, Any], tries: int
) -> Any:
    """Read f.txt ("aaaa"), let ``change`` act between the commit's first check and its last, and call
    ``tool``; the result once the change left the stat tuple exactly as the session saw it (it must
    land within one timestamp tick, so it is retried), None if it never did."""
    target = root / "f.txt"
    for _ in range(tries):
        target.write_text("aaaa\n")
        with Workspace(root) as ws:
            writer = ConcurrentWriter(ws)
            session = ws.session("s")
            read_ok(session, "f.txt")
            seen = _stat_key(target)
            landed: list[bool] = []

            def changed(path: Path, landed: list[bool] = landed, seen: tuple[int, ...] = seen) -> None:
                change(path)
                landed.append(_stat_key(path) == seen)

            writer.before_commit("f.txt", changed)
            result = session.call(tool, args)
            writer.close()
        if landed == [True]:
            return result
    return None


def test_a_same_size_rewrite_within_one_timestamp_tick_is_never_overwritten(coarse_fs: Path) -> None:
    """The outside rewrite keeps the inode, the size and (within one second) every timestamp: only the
    bytes tell. The last check must hash them."""

    def rewrite(path: Path) -> None:
        with open(path, "r+b") as fh:
            fh.write(b"bbbb\n")

    args = {"file_path": "f.txt", "old_string": "aaaa", "new_string": "mine"}
    result = _outside_change_in_one_tick(coarse_fs, rewrite, "edit", args, tries=20)
    if result is None:
        pytest.skip("could not land a rewrite within one timestamp tick in 20 tries")
    assert_error(result, "FS_STALE_VERSION")
    assert (coarse_fs / "f.txt").read_text() == "bbbb\n", "the outside rewrite was overwritten"


def test_two_outside_saves_that_restore_the_stat_tuple_are_never_overwritten(coarse_fs: Path) -> None:
    """Two same-size saves by rename within one second: ext4 hands the freed inode number to the next
    file at once, so the tuple (dev, ino, size, mtime, ctime) comes back exactly as the session saw it."""

    def save_twice(path: Path) -> None:
        for content in (b"bbbb\n", b"cccc\n"):
            temp = path.with_name("save.tmp")
            temp.write_bytes(content)
            os.rename(temp, path)

    args = {"file_path": "f.txt", "content": "mine\n"}
    result = _outside_change_in_one_tick(coarse_fs, save_twice, "write", args, tries=40)
    if result is None:
        pytest.skip("the inode number was not reused within one second in 40 tries")
    assert_error(result, "FS_STALE_VERSION")
    assert (coarse_fs / "f.txt").read_text() == "cccc\n", "the outside saves were overwritten"


# --- item 10: a save by rename between the last check and the publication -------------------------------


def _save_by_rename_after_the_last_check(monkeypatch: pytest.MonkeyPatch, target: Path, content: bytes) -> list[str]:
    """Right after the check under the directory lock (the last moment anything is checked), another
    program saves ``target`` the way editors do: a new file renamed over it."""
    real = versions.check_expected
    fired: list[str] = []
    calls: list[int] = []

    def check(*args: Any) -> Any:
        checked = real(*args)
        calls.append(1)
        if len(calls) == 2 and not fired:  # the commit's second check is the one under the directory lock
            temp = target.with_name(".editor-save")
            temp.write_bytes(content)
            os.rename(temp, target)
            fired.append("saved")
        return checked

    monkeypatch.setattr(versions, "check_expected", check)
    return fired


@linux_only
@pytest.mark.parametrize("tool", ["write", "edit", "multi_edit"])
def test_an_editor_save_by_rename_just_before_publication_is_kept(
    root: Path, tool: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = root / "f.txt"
    target.write_text("one\ntwo\n")
    if not _can_swap(root):
        pytest.skip("this filesystem cannot swap two names atomically: the window stays open (documented)")
    with Workspace(root) as ws:
        session = ws.session("s")
        read_ok(session, "f.txt")
        fired = _save_by_rename_after_the_last_check(monkeypatch, target, b"the editor's save\n")
        args: dict[str, Any] = {
            "write": {"file_path": "f.txt", "content": "mine\n"},
            "edit": {"file_path": "f.txt", "old_string": "one", "new_string": "1"},
            "multi_edit": {"file_path": "f.txt", "edits": [{"old_string": "one", "new_string": "1"}]},
        }[tool]
        result = session.call(tool, args)
        monkeypatch.undo()
        assert fired == ["saved"]
        assert_error(result, "FS_STALE_VERSION")
        assert target.read_bytes() == b"the editor's save\n", "the save by rename was overwritten"
        assert sorted(os.listdir(root)) == ["f.txt"], "a temp or the withdrawn change was left behind"
        read_ok(session, "f.txt")  # what the error says to do; then the change goes through
        assert_ok(session.call("write", {"file_path": "f.txt", "content": "mine\n"}))
    assert target.read_bytes() == b"mine\n"


def test_a_replace_gives_a_new_inode_and_leaves_nothing_else(root: Path) -> None:
    target = root / "f.txt"
    target.write_text("one\n")
    before = os.stat(target).st_ino
    with Workspace(root) as ws:
        session = ws.session("s")
        read_ok(session, "f.txt")
        assert_ok(session.call("write", {"file_path": "f.txt", "content": "two\n"}))
    assert os.stat(target).st_ino != before
    assert target.read_text() == "two\n"
    assert sorted(os.listdir(root)) == ["f.txt"]


def _can_swap(directory: Path) -> bool:
    """Whether the kernel and this filesystem swap two names atomically (renameat2 RENAME_EXCHANGE)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if not hasattr(libc, "renameat2"):
        return False
    a, b = directory / ".swap-a", directory / ".swap-b"
    a.write_text("a")
    b.write_text("b")
    try:
        return libc.renameat2(-100, bytes(a), -100, bytes(b), 2) == 0  # AT_FDCWD, RENAME_EXCHANGE
    finally:
        a.unlink()
        b.unlink()


# --- item 11: a closed workspace ---------------------------------------------------------------------------


def test_calls_after_close_are_refused_and_never_reach_a_reused_descriptor(root: Path, tmp_path: Path) -> None:
    (root / "f.txt").write_text("inside\n")
    ws = Workspace(root)
    session = ws.session("s")
    read_ok(session, "f.txt")
    ws.close()
    outside = tmp_path / "outside"
    (outside / "f.txt").write_text("OUTSIDE\n")
    reused = [os.open(outside, os.O_RDONLY | os.O_DIRECTORY) for _ in range(8)]  # likely the old numbers
    try:
        for tool, args in [
            ("read", {"file_path": "f.txt"}),
            ("write", {"file_path": "f.txt", "content": "planted\n"}),
            ("write", {"file_path": "planted.txt", "content": "planted\n"}),
            ("list", {}),
            ("grep", {"pattern": "OUTSIDE"}),
        ]:
            result = session.call(tool, args)
            assert_error(result, "TOOL_ABORTED_BEFORE_DISPATCH")
            assert "closed" in result.text
            assert "OUTSIDE" not in result.text
    finally:
        for fd in reused:
            os.close(fd)
    assert (outside / "f.txt").read_text() == "OUTSIDE\n"
    assert sorted(os.listdir(outside)) == ["f.txt", "secret.txt"]
    assert (root / "f.txt").read_text() == "inside\n"
    with pytest.raises(RuntimeError, match="closed"):
        session.changed()
    ws.close()  # idempotent


def test_close_while_calls_are_in_flight_fails_them_cleanly(root: Path) -> None:
    for i in range(20):
        (root / f"f{i}.txt").write_text("x\n" * 2000)
    ws = Workspace(root)
    progress = threading.Semaphore(0)
    results: list[Any] = []

    def hammer(n: int) -> None:
        session = ws.session(f"s{n}")
        for i in range(2000):
            results.append(session.call("read", {"file_path": f"f{(n + i) % 20}.txt"}))
            results.append(session.call("write", {"file_path": f"new-{n}-{i}.txt", "content": "y\n"}))
            progress.release()
            if results[-1].is_error and code_of(results[-1]) == "TOOL_ABORTED_BEFORE_DISPATCH":
                return

    workers = [threading.Thread(target=hammer, args=(n,), daemon=True) for n in range(4)]
    for worker in workers:
        worker.start()
    for _ in range(100):  # close in the middle of the traffic
        assert progress.acquire(timeout=HANG_GUARD)
    ws.close()
    for worker in workers:
        worker.join(HANG_GUARD)
        assert not worker.is_alive()
    codes = {code_of(r) for r in results}
    assert codes <= {None, "TOOL_ABORTED_BEFORE_DISPATCH", "TOOL_ABORTED"}, codes
    assert "TOOL_ABORTED_BEFORE_DISPATCH" in codes
    assert temps_under(root) == []


# --- item 12: temps are swept reliably and cheaply ---------------------------------------------------------


def _orphan(directory: Path, content: bytes = b"partial") -> Path:
    """A temp exactly as a writer killed mid-write leaves it: the provider's name, no lock held."""
    dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fd, name = tempfiles.create_temp(dir_fd, 0o600)
    finally:
        os.close(dir_fd)
    os.write(fd, content)
    os.close(fd)
    return directory / name


def test_an_orphan_left_later_in_a_long_lived_workspace_is_swept(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with Workspace(root) as ws:
        session = ws.session("s")
        assert_ok(session.call("write", {"file_path": "a.txt", "content": "1"}))  # the first sweep
        orphan = _orphan(root)  # a writer killed later, after that sweep
        assert_ok(session.call("write", {"file_path": "b.txt", "content": "2"}))
        assert orphan.exists()  # within the interval the directory is not listed on every write
        monkeypatch.setattr(ws.provider.disk.sweeper, "interval", 0.0)
        assert_ok(session.call("write", {"file_path": "c.txt", "content": "3"}))
        assert not orphan.exists(), "an orphan left after the first sweep survived a later write"
    assert sorted(os.listdir(root)) == ["a.txt", "b.txt", "c.txt"]


def test_a_large_directory_is_swept_a_batch_per_write(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    big = root / "big"
    big.mkdir()
    for i in range(2000):
        (big / f"f{i:04d}").touch()
    orphans = [_orphan(big) for _ in range(3)]
    looked: list[int] = []
    real_step = tempfiles._DirectoryScan.step

    def step(self: tempfiles._DirectoryScan, budget: int, keep: str | None = None) -> tuple[int, bool]:
        looked.append(budget)
        return real_step(self, budget, keep)

    monkeypatch.setattr(tempfiles._DirectoryScan, "step", step)
    with Workspace(root) as ws:
        session = ws.session("s")
        batch = ws.provider.disk.sweeper.batch
        assert_ok(session.call("write", {"file_path": "big/first.txt", "content": "x"}))
        assert looked == [batch], "the first write looked at more than one batch of entries"
        for i in range(2004 // batch + 1):
            assert_ok(session.call("write", {"file_path": f"big/new{i}.txt", "content": "x"}))
        assert not any(orphan.exists() for orphan in orphans)
    assert temps_under(root) == []


def test_a_temp_of_a_killed_writer_is_never_listed_or_searched_and_is_swept(root: Path) -> None:
    name = _orphan(root, b"partial secret-looking bytes").name  # a killed process's lock died with it
    with Workspace(root) as ws:
        session = ws.session("s")
        for tool, args in [("glob", {"pattern": "**/*"}), ("list", {}), ("grep", {"pattern": "secret-looking"})]:
            result = assert_ok(session.call(tool, args))
            assert name not in result.text and "partial" not in result.text, f"{tool} shows a temp"
        assert_ok(session.call("write", {"file_path": "f.txt", "content": "x\n"}))
    assert sorted(os.listdir(root)) == ["f.txt"]


# --- item 13: parents of a new file are durable ---------------------------------------------------------


def test_directories_created_for_a_new_file_are_synced(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_fsync = os.fsync
    synced: list[tuple[int, int]] = []

    def fsync(fd: int) -> None:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            synced.append((st.st_dev, st.st_ino))
        real_fsync(fd)

    monkeypatch.setattr(files.os, "fsync", fsync)
    with Workspace(root) as ws:
        assert_ok(ws.session("s").call("write", {"file_path": "a/b/c/f.txt", "content": "x\n"}))
    monkeypatch.undo()
    for directory in (root, root / "a", root / "a" / "b", root / "a" / "b" / "c"):
        st = os.stat(directory)
        assert (st.st_dev, st.st_ino) in synced, f"{directory} was not fsynced after its new entry"


# --- item 15: set-user-ID and set-group-ID bits ---------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "after"),
    [(0o6755, 0o755), (0o4755, 0o755), (0o2755, 0o755), (0o2644, 0o2644), (0o1755, 0o1755), (0o644, 0o644)],
    ids=["suid+sgid", "suid", "sgid", "sgid-without-group-exec", "sticky", "plain"],
)
@pytest.mark.parametrize("tool", ["write", "edit"])
def test_new_content_clears_set_id_bits_as_the_kernel_would(root: Path, tool: str, before: int, after: int) -> None:
    target = root / "tool.sh"
    target.write_text("echo one\n")
    os.chmod(target, before)
    with Workspace(root) as ws:
        session = ws.session("s")
        read_ok(session, "tool.sh")
        args = (
            {"file_path": "tool.sh", "content": "echo two\n"}
            if tool == "write"
            else {"file_path": "tool.sh", "old_string": "one", "new_string": "two"}
        )
        assert_ok(session.call(tool, args))
    assert target.read_text() == "echo two\n"
    assert stat.S_IMODE(os.stat(target).st_mode) == after


# --- item 12: a create killed at any moment leaves no empty directories ------------------------------------


def _creator_child(root: Path, notify: int, gen: int) -> None:  # pragma: no cover - runs in the child
    code = 0
    try:
        with Workspace(root) as ws:
            session = ws.session(f"creator-{gen}")
            os.write(notify, b"R")
            for seq in range(100_000):
                path = f"g{gen}/s{seq}/deep/er/f.txt"
                result = session.call("write", {"file_path": path, "content": "x" * 5000})
                if result.is_error:
                    raise AssertionError(result.text)
    except BaseException:
        code = 1
    finally:
        os._exit(code)


def _empty_directories(base: Path) -> list[Path]:
    return [Path(d) for d, subdirs, names in os.walk(base) if not subdirs and not names and Path(d) != base]


@needs_fork
def test_creates_killed_at_random_moments_leave_no_empty_directory_chains(root: Path) -> None:
    import random
    import select
    import signal

    rng = random.Random(12)
    for gen in range(12):
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            os.close(read_end)
            _creator_child(root, write_end, gen)
        os.close(write_end)
        try:
            ready, _, _ = select.select([read_end], [], [], HANG_GUARD)
            assert ready and os.read(read_end, 1) == b"R"
            threading.Event().wait(rng.uniform(0.01, 0.08))  # only picks the kill moment; nothing asserts on it
        finally:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(read_end)
        visible = [p for p in _empty_directories(root) if not any(part.endswith(".fs-tools.dir") for part in p.parts)]
        assert visible == [], f"a killed create left empty directories: {visible[:5]}"
    for path in root.rglob("f.txt"):
        assert path.read_text() == "x" * 5000, f"{path} is torn"
    with Workspace(root) as ws:  # the next write into each directory sweeps the killed creators' staging
        session = ws.session("s")
        for directory in [root, *root.glob("g*")]:
            name = str(directory.relative_to(root) / "last.txt")
            assert_ok(session.call("write", {"file_path": name, "content": "x"}))
    assert not list(root.rglob(".*.fs-tools.dir")), "an orphaned staging directory survived a later write"
    assert temps_under(root) == []


def test_racing_creators_of_sibling_files_in_a_new_directory_both_succeed(root: Path) -> None:
    with Workspace(root) as ws:
        barrier = threading.Barrier(4)

        def create(n: int, round_: int) -> Any:
            barrier.wait(HANG_GUARD)
            session = ws.session(f"s{round_}-{n}")  # new each round: earlier rounds' files were removed
            return session.call("write", {"file_path": f"new/dir/f{n}.txt", "content": f"{n}\n"})

        for round_ in range(20):
            with contextlib.suppress(FileNotFoundError):
                shutil.rmtree(root / "new")
            threads = [in_thread(lambda n=n, r=round_: create(n, r)) for n in range(4)]
            for worker, _ in threads:
                worker.join(HANG_GUARD)
            for n, (_, box) in enumerate(threads):
                assert_ok(box[0])
                assert (root / "new" / "dir" / f"f{n}.txt").read_text() == f"{n}\n", f"round {round_}"
            assert sorted(os.listdir(root / "new" / "dir")) == [f"f{n}.txt" for n in range(4)]
    assert not list(root.rglob(".*.fs-tools.*"))


@pytest.mark.parametrize(
    "path",
    [".0123456789abcdef.fs-tools.tmp", "sub/.0123456789abcdef.fs-tools.dir/f.txt", "a/.0123456789abcdef.fs-tools.tmp"],
)
@pytest.mark.parametrize("tool", ["read", "write"])
def test_temp_names_are_reserved(root: Path, tool: str, path: str) -> None:
    (root / "sub" / ".0123456789abcdef.fs-tools.dir").mkdir(parents=True)
    (root / ".0123456789abcdef.fs-tools.tmp").write_text("partial bytes of a live write\n")
    with Workspace(root) as ws:
        args = {"file_path": path} if tool == "read" else {"file_path": path, "content": "x"}
        result = ws.session("s").call(tool, args)
    assert_error(result, "FS_SANDBOX_DENIED")
    assert "reserved" in result.text and "use another file name" in result.text
    assert "partial bytes" not in result.text
    assert (root / ".0123456789abcdef.fs-tools.tmp").read_text() == "partial bytes of a live write\n"
    assert not (root / "a").exists()


# --- host errors leak nothing; huge integers are INVALID_ARGS ------------------------------------------


def _open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


@linux_only
def test_a_bad_option_leaks_no_descriptor(root: Path, tmp_path: Path) -> None:
    (tmp_path / "garbage.sqlite").write_bytes(b"not a database" * 100)
    before = _open_descriptors()
    for _ in range(20):
        with pytest.raises(ValueError):
            Workspace([root, tmp_path / "missing"])
        with pytest.raises(ValueError):
            Workspace(tmp_path / "missing", store=tmp_path / "state.sqlite")
        with pytest.raises(ValueError):
            Workspace(root, store=tmp_path / "garbage.sqlite")
    assert _open_descriptors() <= before


@pytest.mark.parametrize(
    "args",
    [
        {"file_path": "f.txt", "offset": 10**5000},
        {"file_path": "f.txt", "offset": -(10**5000)},
        {"file_path": "f.txt", "limit": 2**63},
        '{"file_path": "f.txt", "offset": ' + "9" * 5000 + "}",
    ],
    ids=["huge", "huge-negative", "past-int64", "json-5000-digits"],
)
def test_huge_integers_are_invalid_arguments_never_internal_errors(root: Path, args: Any) -> None:
    (root / "f.txt").write_text("one\n")
    with Workspace(root) as ws:
        result = ws.session("s").call("read", args)
    assert_error(result, "INVALID_ARGS")
    assert "digits" in result.text and len(result.text) < 300


def test_a_store_that_fails_after_the_commit_says_the_file_was_written(root: Path) -> None:
    from fs_tools.errors import StoreUnavailable
    from policy import MemoryStore

    class FailingPuts(MemoryStore):
        failing = False

        def put(self, session: str, key: str, observation: Any) -> None:
            if self.failing:
                raise StoreUnavailable("the session's observation store failed (disk I/O error)")
            super().put(session, key, observation)

    (root / "f.txt").write_text("one\n")
    store = FailingPuts()
    with Workspace(root, store=store) as ws:
        session = ws.session("s")
        read_ok(session, "f.txt")
        store.failing = True
        result = session.call("edit", {"file_path": "f.txt", "old_string": "one", "new_string": "two"})
        assert_error(result, "STORE_UNAVAILABLE")
        assert "was written" in result.text and "read it" in result.text
        assert (root / "f.txt").read_text() == "two\n"
        store.failing = False
        again = session.call("edit", {"file_path": "f.txt", "old_string": "two", "new_string": "three"})
        assert code_of(again) in ("FS_STALE_VERSION", "FS_NOT_OBSERVED"), again.text  # fails closed
        assert (root / "f.txt").read_text() == "two\n"


# --- review findings: the swap's displaced file, interrupted checks, raced retries, closing -----------------


def test_another_writers_sweep_never_takes_the_file_a_swap_displaced(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Right after the swap the replaced file sits, unlocked, under our temp name: a second workspace
    writing into the directory then must not sweep it (it waits for the directory lock instead)."""
    from fs_tools.provider import Primitives

    target = root / "f.txt"
    target.write_text("one\n")
    if not _can_swap(root):
        pytest.skip("no atomic swap of names on this filesystem")
    real_exchange = Primitives.exchange
    other: list[Any] = []

    with Workspace(root) as ws, Workspace(root, lock_timeout=0.1) as second:

        def exchange(prims: Primitives, dir_fd: int, first: str, name: str) -> bool:
            swapped = real_exchange(prims, dir_fd, first, name)
            if not other:
                other.append(second.session("t").call("write", {"file_path": "sibling.txt", "content": "x\n"}))
            return swapped

        session = ws.session("s")
        read_ok(session, "f.txt")
        monkeypatch.setattr(Primitives, "exchange", exchange)
        result = session.call("write", {"file_path": "f.txt", "content": "mine\n"})
        monkeypatch.undo()
    assert_ok(result)
    assert_error(other[0], "FS_BUSY")
    assert target.read_text() == "mine\n"
    assert sorted(os.listdir(root)) == ["f.txt"]


def test_an_interrupt_while_the_displaced_file_is_checked_keeps_the_editors_save(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = root / "f.txt"
    target.write_text("one\n")
    if not _can_swap(root):
        pytest.skip("no atomic swap of names on this filesystem")
    with Workspace(root) as ws:
        session = ws.session("s")
        read_ok(session, "f.txt")
        _save_by_rename_after_the_last_check(monkeypatch, target, b"the editor's save\n")

        def interrupted(*args: Any) -> bool:
            raise KeyboardInterrupt

        monkeypatch.setattr(versions, "is_version", interrupted)
        with pytest.raises(KeyboardInterrupt):
            session.call("write", {"file_path": "f.txt", "content": "mine\n"})
        monkeypatch.undo()
    assert target.read_bytes() == b"the editor's save\n"
    assert sorted(os.listdir(root)) == ["f.txt"]


def test_a_symlink_that_appears_while_a_create_is_staged_cannot_lead_past_the_protected_rules(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fs_tools.provider import Primitives

    if not Primitives.native().can_stage():
        pytest.skip("parent directories are not staged here")
    (root / "secret").mkdir()
    real = Primitives.rename_directory_no_replace

    def rename(prims: Primitives, dir_fd: int, source: str, target: str) -> bool:
        if not (root / "new").exists():
            os.symlink("secret", root / "new")  # appears just before the staging is published
        return real(prims, dir_fd, source, target)

    monkeypatch.setattr(Primitives, "rename_directory_no_replace", rename)
    with Workspace(root, protected=["secret/**"]) as ws:
        result = ws.session("s").call("write", {"file_path": "new/f.txt", "content": "planted\n"})
    monkeypatch.undo()
    assert result.is_error and code_of(result) in ("FS_IO_ERROR", "FS_SANDBOX_DENIED"), result.text
    assert list((root / "secret").iterdir()) == []
    assert not list(root.glob(".*.fs-tools.*"))


@pytest.mark.skipif(
    watchdog_version() < WATCHDOG_NEEDED, reason="watchdog < 7.1 installed: Workspace(watch=True) is refused"
)
def test_closing_from_a_watcher_callback_closes_the_workspace(root: Path) -> None:
    (root / "f.txt").write_text("one\n")
    ws = Workspace(root, watch=True)
    session = ws.session("s")
    read_ok(session, "f.txt")
    closed = threading.Event()
    errors: list[BaseException] = []

    def on_change(change: Any) -> None:
        try:
            ws.close()
        except BaseException as exc:  # pragma: no cover - the failure being tested for
            errors.append(exc)
        closed.set()

    session.on_change(on_change)
    (root / "f.txt").write_text("two\n")
    assert closed.wait(HANG_GUARD), "the watcher never reported the change"
    assert errors == []
    assert_error(session.call("read", {"file_path": "f.txt"}), "TOOL_ABORTED_BEFORE_DISPATCH")
    root_fd = ws.provider.disk.resolver.roots[0].fd
    for _ in range(200):  # the teardown finishes on its own thread once the callback has returned
        try:
            os.fstat(root_fd)
        except OSError:
            break
        threading.Event().wait(0.05)
    else:
        pytest.fail("the root descriptor was never closed")
    ws.close()


def test_an_orphaned_staging_tree_of_any_depth_is_swept_by_a_create_beside_it(root: Path) -> None:
    (root / "src").mkdir()
    orphan = root / "src" / ".00112233445566aa.fs-tools.dir"
    deep = orphan.joinpath(*["d"] * 100)
    deep.mkdir(parents=True)
    (deep / "f.txt").write_text("a killed create's file\n")
    with Workspace(root) as ws:
        assert_ok(ws.session("s").call("write", {"file_path": "src/other/f.txt", "content": "x\n"}))
    assert not orphan.exists(), "the orphaned staging survived a create into the same directory"
    assert sorted(os.listdir(root / "src")) == ["other"]


def test_reserved_names_are_reserved_in_any_letter_case(root: Path) -> None:
    with Workspace(root) as ws:
        result = ws.session("s").call("write", {"file_path": ".0123456789ABCDEF.FS-TOOLS.TMP", "content": "x"})
    assert_error(result, "FS_SANDBOX_DENIED")


@linux_only
def test_sweeping_never_moves_the_root_descriptors_offset(root: Path) -> None:
    for i in range(3000):
        (root / f"e{i:04d}").touch()
    with Workspace(root) as ws:
        assert_ok(ws.session("s").call("write", {"file_path": "new.txt", "content": "x"}))
        assert len(os.listdir(ws.provider.disk.resolver.roots[0].fd)) == 3001


def test_the_read_limit_is_named_as_such_and_never_below_the_whole_file_limit(root: Path) -> None:
    with pytest.raises(ValueError, match="max_read_bytes"):
        Workspace(root, max_file_bytes=100, max_read_bytes=50)
    (root / "big.log").write_text("x" * 200)
    with Workspace(root, max_file_bytes=100, max_read_bytes=100) as ws:  # equal limits: still the read's
        result = ws.session("s").call("read", {"file_path": "big.log"})
    assert_error(result, "FS_TOO_LARGE")
    assert "200 bytes, over the 100-byte limit for reading" in result.text and "grep" in result.text
