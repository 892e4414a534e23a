"""``copy`` (SPEC §21): a file within the roots, byte for byte with its mode less the set-id bits; an existing
destination only with ``overwrite`` and a read of it at its current version; the copy observed by the
session and recorded in history. Its escapes are in tests/safety/test_escape_table.py, its hostile paths in
tests/safety/test_fuzz_paths.py."""

from __future__ import annotations

import itertools
import os
import random
import signal
import stat
import threading
import time
from pathlib import Path

import pytest

from fs_tools import Session, Workspace
from fs_tools.testing import assert_error, assert_ok
from tests.support.faults import needs_fork

BINARY = bytes(range(256)) * 3


def test_a_copy_is_its_source_byte_for_byte_with_the_mode_less_set_id_bits(root: Path, session: Session) -> None:
    source = root / "tool.bin"
    source.write_bytes(BINARY)
    os.chmod(source, 0o4755)
    result = assert_ok(session.call("copy", {"source": "tool.bin", "destination": "deep/er/copy.bin"}))
    copied = root / "deep" / "er" / "copy.bin"
    assert copied.read_bytes() == BINARY and source.read_bytes() == BINARY
    assert stat.S_IMODE(copied.stat().st_mode) == 0o755  # the set-user-ID bit is not copied
    assert result.value["bytes_copied"] == len(BINARY) and result.value["replaced"] is False
    assert result.text == "Copied 'tool.bin' to 'deep/er/copy.bin': 768 bytes."
    assert sorted(os.listdir(root)) == ["deep", "tool.bin"]  # no temp file left beside either


def test_the_copy_is_observed_and_in_history(root: Path, workspace: Workspace) -> None:
    (root / "a.txt").write_text("one\ntwo\n")
    session = workspace.session("s")
    mark = session.checkpoint()
    assert_ok(session.call("copy", {"source": "a.txt", "destination": "b.txt"}))
    # no read of the copy is needed to edit it: the session knows the version it made
    assert_ok(session.call("edit", {"file_path": "b.txt", "old_string": "two", "new_string": "2"}))
    assert [entry.tool for entry in session.history() if entry.tool] == ["copy", "edit"]
    report = session.rewind(mark)
    assert not report.is_error, report
    assert not (root / "b.txt").exists() and (root / "a.txt").read_text() == "one\ntwo\n"


def test_an_existing_destination_needs_a_read_of_it_and_overwrite(root: Path, session: Session) -> None:
    (root / "a.txt").write_text("new\n")
    (root / "b.txt").write_text("old\n")
    overwrite = {"source": "a.txt", "destination": "b.txt", "overwrite": True}
    unseen = assert_error(session.call("copy", overwrite), "FS_NOT_OBSERVED")
    assert unseen.text == "'b.txt' already exists and this session has not read it — read the file, then retry"
    assert_ok(session.call("read", {"file_path": "b.txt"}))
    kept = assert_error(session.call("copy", {"source": "a.txt", "destination": "b.txt"}), "FS_ALREADY_EXISTS")
    assert "pass overwrite=true" in kept.text
    (root / "b.txt").write_text("changed\n")
    assert_error(
        session.call("copy", {"source": "a.txt", "destination": "b.txt", "overwrite": True}), "FS_STALE_VERSION"
    )
    assert (root / "b.txt").read_text() == "changed\n"
    assert_ok(session.call("read", {"file_path": "b.txt"}))
    replaced = assert_ok(session.call("copy", overwrite))
    assert replaced.value["replaced"] is True and (root / "b.txt").read_text() == "new\n"
    assert replaced.text.endswith(", replacing the file that was there.")


def test_a_replaced_file_takes_the_source_s_mode(root: Path, session: Session) -> None:
    (root / "run.sh").write_text("echo hi\n")
    os.chmod(root / "run.sh", 0o755)
    (root / "old.sh").write_text("echo old\n")
    os.chmod(root / "old.sh", 0o600)
    assert_ok(session.call("read", {"file_path": "old.sh"}))
    assert_ok(session.call("copy", {"source": "run.sh", "destination": "old.sh", "overwrite": True}))
    assert stat.S_IMODE((root / "old.sh").stat().st_mode) == 0o755


def test_a_directory_is_neither_copied_nor_replaced(root: Path, session: Session) -> None:
    (root / "dir").mkdir()
    (root / "a.txt").write_text("a\n")
    source = assert_error(session.call("copy", {"source": "dir", "destination": "d2"}), "FS_NOT_REGULAR_FILE")
    assert "'dir' is a directory" in source.text
    onto = assert_error(session.call("copy", {"source": "a.txt", "destination": "dir"}), "FS_NOT_REGULAR_FILE")
    assert "give the full new path as destination (e.g. 'dir/name')" in onto.text
    assert sorted(os.listdir(root)) == ["a.txt", "dir"] and os.listdir(root / "dir") == []


def test_a_copy_onto_its_own_file_is_refused(root: Path, session: Session) -> None:
    (root / "a.txt").write_text("a\n")
    os.link(root / "a.txt", root / "hard.txt")
    for destination in ("./a.txt", "hard.txt"):
        assert_ok(session.call("read", {"file_path": destination}))
        args = {"source": "a.txt", "destination": destination, "overwrite": True}
        refused = assert_error(session.call("copy", args), "FS_IO_ERROR")
        assert "are the same file — nothing to copy; give a destination that is another path" in refused.text
    assert os.stat(root / "a.txt").st_nlink == 2 and (root / "a.txt").read_text() == "a\n"
    same = assert_error(session.call("copy", {"source": "a.txt", "destination": "a.txt"}), "INVALID_ARGS")
    assert "/destination: must differ from source" in same.text


def test_a_missing_source_suggests_the_closest_and_a_large_one_is_refused(root: Path) -> None:
    (root / "notes.txt").write_text("n\n")
    (root / "big.bin").write_bytes(b"\0" * 2048)
    with Workspace(root, max_file_bytes=1024) as workspace:
        session = workspace.session("s")
        missing = assert_error(session.call("copy", {"source": "note.txt", "destination": "x"}), "FS_NOT_FOUND")
        assert "did you mean 'notes.txt'?" in missing.text
        large = assert_error(session.call("copy", {"source": "big.bin", "destination": "x"}), "FS_TOO_LARGE")
        assert large.text == (
            "'big.bin' is over 1,024 bytes, the host's limit for a file fs-tools writes — ask the user to copy it, "
            "or copy a smaller file"
        )
    with Workspace(root, max_file_bytes=1000, max_read_bytes=1500) as workspace:  # past what is read at all
        large = workspace.session("s").call("copy", {"source": "big.bin", "destination": "x"})
        assert assert_error(large, "FS_TOO_LARGE").text.startswith("'big.bin' is over 1,000 bytes, the host's limit")
        assert large.text.endswith("— ask the user to copy it, or copy a smaller file")
    assert sorted(os.listdir(root)) == ["big.bin", "notes.txt"]


def test_protected_and_read_only_destinations_are_refused(root: Path) -> None:
    (root / "a.txt").write_text("a\n")
    with Workspace(root, protected=[".env"]) as workspace:
        result = workspace.session("s").call("copy", {"source": "a.txt", "destination": ".env"})
        assert_error(result, "FS_SANDBOX_DENIED")
    with Workspace(root, read_only=True) as workspace:
        assert "copy" not in workspace.tools
        assert_error(workspace.session("s").call("copy", {"source": "a.txt", "destination": "b"}), "FS_SANDBOX_DENIED")
    assert sorted(os.listdir(root)) == ["a.txt"]


@pytest.mark.parametrize("round_", range(10))
def test_two_sessions_copying_to_one_new_path_at_once_never_clobber(root: Path, round_: int) -> None:
    (root / "one.txt").write_bytes(b"1" * 100_000)
    (root / "two.txt").write_bytes(b"2" * 100_000)
    results = {}
    start = threading.Barrier(2)
    with Workspace(root) as workspace:

        def copy(source: str) -> None:
            session = workspace.session(source)
            start.wait()
            results[source] = session.call("copy", {"source": source, "destination": "out.txt"})

        threads = [threading.Thread(target=copy, args=(name,)) for name in ("one.txt", "two.txt")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    won = [name for name, result in results.items() if not result.is_error]
    assert len(won) == 1, {name: result.text for name, result in results.items()}
    lost = next(result for name, result in results.items() if name not in won)
    assert lost.error is not None and lost.error.code == "FS_NOT_OBSERVED", lost.text
    assert (root / "out.txt").read_bytes() == (root / won[0]).read_bytes()
    assert sorted(os.listdir(root)) == ["one.txt", "out.txt", "two.txt"]


@needs_fork
def test_a_copy_killed_at_any_moment_leaves_the_old_or_the_new_file_whole(root: Path) -> None:
    """A process copying over one destination again and again, killed at random moments: the destination
    always holds one source whole, the sources are untouched, and the next copy sweeps what was left."""
    one, two = bytes(range(256)) * 4096, bytes(reversed(range(256))) * 4096  # 1 MiB each, every byte differs
    (root / "one.bin").write_bytes(one)
    (root / "two.bin").write_bytes(two)
    rng = random.Random(34)
    for _ in range(25):
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child copies until it is killed
            try:
                with Workspace(root) as workspace:
                    session = workspace.session("copier")
                    for n in itertools.count():
                        session.call("read", {"file_path": "out.bin"})  # binary: refused, but observed
                        source = "one.bin" if n % 2 else "two.bin"
                        session.call("copy", {"source": source, "destination": "out.bin", "overwrite": True})
            finally:
                os._exit(0)
        time.sleep(rng.uniform(0.0, 0.15))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        assert (root / "one.bin").read_bytes() == one and (root / "two.bin").read_bytes() == two
        if (root / "out.bin").exists():
            assert (root / "out.bin").read_bytes() in (one, two)
    with Workspace(root) as workspace:
        session = workspace.session("after")
        session.call("read", {"file_path": "out.bin"})
        assert_ok(session.call("copy", {"source": "one.bin", "destination": "out.bin", "overwrite": True}))
    assert sorted(os.listdir(root)) == ["one.bin", "out.bin", "two.bin"]  # no temp a killed copy left
