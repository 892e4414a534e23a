"""Fault injection for "nothing lost" (SPEC §8 "Writes are atomic"; issue 3).

Every fault is followed by a look at the disk: the target holds exactly its old bytes (or, once a write
has committed, exactly the new ones), keeps its mode and — where nothing committed — its inode, and no
``*.fs-tools.tmp`` is left behind; where the call returns, its result is a typed error with the right code.

Real faults where the kernel can make them (SIGKILL of a writer, a full tmpfs, inode exhaustion,
``RLIMIT_FSIZE``); patched ``os`` calls for the rest (CI runs as root, so chmod cannot make EACCES).
The plain errno matrix on write/fsync/rename/fchmod lives in test_writes.py and is not repeated here.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import json
import os
import random
import re
import select
import shutil
import signal
import stat
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from fs_tools import Session, Workspace
from fs_tools.provider import FileProvider, Primitives, tempfiles
from tests.support.faults import (
    TEMP_GLOB,
    call_guarded,
    cause_errnos,
    code_of,
    mutate,
    needs_fork,
    read_ok,
    temps_under,
)

STAGING_GLOB = ".*.fs-tools.dir"
FILES_OS = "fs_tools.provider.files.os"  # the os module as the provider's commit sees it
TEMPFILES_OS = "fs_tools.provider.tempfiles.os"  # ... and as temp creation sees it
PRIMITIVES = "fs_tools.provider.primitives"

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux-only fault")


# --- helpers --------------------------------------------------------------------------------------------


def mode_of(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def temp_of_fd(fd: int, directory: Path) -> Path | None:
    """The temp file in ``directory`` that ``fd`` has open, if it is one. A directory that does not
    exist yet is being built under a staging name in its nearest existing ancestor: look in there."""
    try:
        st = os.fstat(fd)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    base = directory
    while not base.exists():
        base = base.parent
    candidates = directory.glob(TEMP_GLOB) if base == directory else base.glob(f"{STAGING_GLOB}/**/{TEMP_GLOB}")
    return next((p for p in candidates if os.lstat(p).st_ino == st.st_ino), None)


def is_temp_fd(fd: int, directory: Path) -> bool:
    return temp_of_fd(fd, directory) is not None


def open_fds() -> int | None:
    """How many descriptors this process has open (None where /proc/self/fd is not available)."""
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:
        return None


class Original:
    """A file's bytes, mode and inode before a fault, and the check that they are all still there."""

    def __init__(self, path: Path, data: bytes, mode: int = 0o640) -> None:
        path.write_bytes(data)
        os.chmod(path, mode)
        self.path = path
        self.data = data
        self.mode = mode
        self.inode = os.stat(path).st_ino

    def assert_intact(self) -> None:
        assert self.path.read_bytes() == self.data, "the original file's bytes changed"
        st = os.stat(self.path)
        assert stat.S_IMODE(st.st_mode) == self.mode, "the original file's mode changed"
        assert st.st_ino == self.inode, "the original file was replaced"

    def assert_replaced_by(self, data: bytes) -> None:
        assert self.path.read_bytes() == data, "the committed file does not hold exactly the new bytes"
        assert mode_of(self.path) == self.mode, "the committed file lost the original mode"


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def run_forked(body: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """Run ``body`` in a forked child and return what it returned (sent back as JSON over a pipe)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child, which never returns into pytest
        code = 0
        try:
            os.close(read_end)
            payload = json.dumps({"ok": body()})
        except BaseException:
            payload = json.dumps({"error": traceback.format_exc()})
            code = 1
        try:
            write_all(write_end, payload.encode())
        finally:
            os._exit(code)
    os.close(write_end)
    chunks: list[bytes] = []
    try:
        while chunk := os.read(read_end, 1 << 16):
            chunks.append(chunk)
    finally:
        os.close(read_end)
        _, status = os.waitpid(pid, 0)
    raw = b"".join(chunks)
    assert raw, f"the child sent nothing back (wait status {status:#x})"
    answer: dict[str, Any] = json.loads(raw)
    if "error" in answer:
        pytest.fail(f"the child failed:\n{answer['error']}")
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, f"wait status {status:#x}"
    result: dict[str, Any] = answer["ok"]
    return result


# --- SIGKILL of a writing process -----------------------------------------------------------------------

KILL_ITERATIONS = 200
KILL_SEED = 20240503
KILL_SIZE = 4 << 20
KILL_SPAN = 0.05  # seconds after the child's read within which the kill lands; only picks the moment
CHILD_HANG_GUARD = 120.0  # a child that never reports is a hang, not a timing result
# Every tenth iteration in three, the child stops itself at a known point and is killed there; the others
# are killed at a random moment of a write/edit loop.
PAUSE_AT = {3: "write", 6: "fsync", 9: "rename"}
ORIGINAL_BIG = ("original " + "o" * 54 + "\n").encode() * (KILL_SIZE // 64)
HEADER = re.compile(rb"version (\d{4})\.(\d{4})\n")


def version_text(gen: int, seq: int) -> str:
    """Write number ``seq`` of writer ``gen``: a header, then a body that names the version on every line."""
    tag = f"{gen:04d}.{seq:04d}"
    line = f"{tag} " + "x" * (63 - len(tag) - 1) + "\n"
    return f"version {tag}\n" + line * (KILL_SIZE // 64) + f"end {tag}\n"


def expected_bytes(gen: int, seq: int) -> bytes:
    """Even ``seq``: a whole-file write. Odd: an edit of the previous version's header only."""
    if seq % 2 == 0:
        return version_text(gen, seq).encode()
    return (
        version_text(gen, seq - 1)
        .replace(f"version {gen:04d}.{seq - 1:04d}\n", f"version {gen:04d}.{seq:04d}\n", 1)
        .encode()
    )


def identify(data: bytes) -> tuple[int, int] | None:
    """Which version ``data`` is exactly (None: the original); fails on anything torn, short or mixed."""
    if data == ORIGINAL_BIG:
        return None
    match = HEADER.match(data)
    assert match is not None, f"the target is neither the original nor a written version: {data[:40]!r}…"
    key = (int(match[1]), int(match[2]))
    expected = expected_bytes(*key)
    assert len(data) == len(expected), f"version {key} is {len(data)} bytes instead of {len(expected)}"
    assert data == expected, f"version {key} is torn or mixed"
    return key


def _pause_in_child(point: str, notify: int) -> None:
    """In the child: stop (until killed) at ``point`` of the first write, after telling the parent."""
    real_write, real_fsync, real_rename = os.write, os.fsync, os.rename
    patch = pytest.MonkeyPatch()

    def stop() -> None:
        real_write(notify, b"P")
        while True:
            signal.pause()

    def write(fd: int, data: Any) -> int:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            real_write(fd, data[: len(data) // 2])  # a genuinely partial temp file
            stop()
        return real_write(fd, data)

    def fsync(fd: int) -> None:
        real_fsync(fd)
        if stat.S_ISREG(os.fstat(fd).st_mode):
            stop()

    def rename(*args: Any, **kwargs: Any) -> None:
        real_rename(*args, **kwargs)
        stop()  # published, the directory not yet synced, the directory lock still held

    def exchange(*args: Any) -> bool:  # a replace publishes by swapping names where the kernel can
        swapped = real_exchange(*args)
        stop()  # published, the replaced file not yet removed, the directory lock still held
        return swapped

    real_exchange = Primitives.exchange
    hooks: dict[str, Callable[..., Any]] = {"write": write, "fsync": fsync, "rename": rename}
    patch.setattr(os, point, hooks[point])
    if point == "rename":
        patch.setattr(Primitives, "exchange", exchange)


def _writer_child(root: Path, notify: int, gen: int, pause: str | None) -> None:  # pragma: no cover - child
    """The forked writer: read the target, then write and edit it in a loop until killed."""
    code = 0
    try:
        with Workspace(root) as ws:
            session = ws.session(f"writer-{gen}")
            result = session.call("read", {"file_path": "big.txt", "limit": 1})
            if result.is_error:
                raise AssertionError(result.text)
            if pause is None:
                os.write(notify, b"R")
            else:
                _pause_in_child(pause, notify)
            for seq in range(10_000):
                if seq % 2 == 0:
                    result = session.call("write", {"file_path": "big.txt", "content": version_text(gen, seq)})
                else:
                    old, new = f"version {gen:04d}.{seq - 1:04d}", f"version {gen:04d}.{seq:04d}"
                    result = session.call("edit", {"file_path": "big.txt", "old_string": old, "new_string": new})
                if result.is_error:
                    raise AssertionError(f"{code_of(result)}: {result.text}")
    except BaseException:
        code = 1
        with contextlib.suppress(BaseException):
            write_all(notify, b"E" + traceback.format_exc().encode())
    finally:
        os._exit(code)


def _first_report(read_end: int) -> bytes:
    ready, _, _ = select.select([read_end], [], [], CHILD_HANG_GUARD)
    assert ready, "the writer child never reported (hung, e.g. on a lock a killed writer left held?)"
    return os.read(read_end, 1)


def _drain(read_end: int) -> bytes:
    chunks: list[bytes] = []
    while chunk := os.read(read_end, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


@needs_fork
def test_sigkill_of_a_writer_at_random_moments_never_loses_or_tears_the_file(root: Path) -> None:
    target = root / "big.txt"
    target.write_bytes(ORIGINAL_BIG)
    os.chmod(target, 0o640)
    rng = random.Random(KILL_SEED)
    current: tuple[int, int] | None = None  # the version on disk before this iteration
    inodes: dict[tuple[int, int] | None, int] = {None: os.stat(target).st_ino}
    orphans_seen = 0

    for gen in range(KILL_ITERATIONS):
        pause = PAUSE_AT.get(gen % 10)
        before = target.read_bytes()
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            os.close(read_end)
            _writer_child(root, write_end, gen, pause)
        os.close(write_end)
        try:
            first = _first_report(read_end)
            if first == b"R":
                time.sleep(rng.uniform(0, KILL_SPAN))  # only chooses the kill moment; nothing asserts on it
            elif first == b"P":
                assert pause is not None
                new = version_text(gen, 0).encode()
                temps = temps_under(root)
                if pause == "rename":
                    assert target.read_bytes() == new, "paused after the rename, but the new bytes are not there"
                    # Published by swapping names: until it is removed, the replaced version sits under the
                    # temp name, unlocked (an orphan for the next writer's sweep); by a plain rename, nothing.
                    assert [t.read_bytes() for t in temps] in ([], [before]), f"unexpected temps {temps}"
                else:
                    assert target.read_bytes() == before, "the target changed before publication"
                    # The child's first write swept every orphan of earlier killed writers: only its own remains.
                    assert len(temps) == 1, f"expected exactly the paused writer's temp, found {temps}"
                    assert temps[0].read_bytes() == (new[: len(new) // 2] if pause == "write" else new)
            else:
                pytest.fail(f"writer {gen} failed before the kill: {(first + _drain(read_end)).decode()}")
        finally:
            os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
            rest = _drain(read_end)
            os.close(read_end)
        if rest.startswith(b"E") or not (os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL):
            pytest.fail(f"writer {gen} ended by itself (status {status:#x}): {rest.decode(errors='replace')}")

        version = identify(target.read_bytes())
        assert version == current or (version is not None and version[0] == gen), (
            f"after killing writer {gen} the file is {version}, neither {current} nor one of writer {gen}'s"
        )
        if pause is not None:
            assert version == ((gen, 0) if pause == "rename" else current), f"{pause}-paused writer {gen}: {version}"
        st = os.stat(target)
        assert stat.S_IMODE(st.st_mode) == 0o640, f"the mode changed after killing writer {gen}"
        if version in inodes:
            assert st.st_ino == inodes[version], f"{version} was rewritten in place (inode changed, bytes not)"
        inodes[version] = st.st_ino
        temps = temps_under(root)
        assert len(temps) <= 1, f"orphans of earlier killed writers were not swept: {temps}"
        orphans_seen += len(temps)
        current = version

    assert orphans_seen >= KILL_ITERATIONS // 10, "the paused kills mid-write should each have left an orphan"

    with Workspace(root) as ws:  # a fresh writer: its first write into the directory sweeps the orphans
        session = ws.session("after")
        read_ok(session, "big.txt")
        result = session.call("write", {"file_path": "big.txt", "content": "final\n"})
    assert not result.is_error, result.text
    assert target.read_bytes() == b"final\n"
    assert mode_of(target) == 0o640
    assert temps_under(root) == []
    assert sorted(os.listdir(root)) == ["big.txt"]


# --- real ENOSPC: a small tmpfs ---------------------------------------------------------------------------

SMALL_FS_SIZE = "1m"
SMALL_FS_INODES = 64


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    """A 1 MiB, 64-inode tmpfs (skipped where mounting is not permitted)."""
    if not sys.platform.startswith("linux") or shutil.which("mount") is None or shutil.which("umount") is None:
        pytest.skip("needs Linux mount/umount")
    mountpoint = tmp_path / "small"
    mountpoint.mkdir()
    options = f"size={SMALL_FS_SIZE},nr_inodes={SMALL_FS_INODES}"
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(mountpoint)], capture_output=True, text=True
    )
    if done.returncode != 0 or not os.path.ismount(mountpoint):
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mountpoint
    finally:
        if subprocess.run(["umount", str(mountpoint)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(mountpoint)], capture_output=True)


def free_blocks(path: Path) -> int:
    return os.statvfs(path).f_bfree


@pytest.mark.parametrize("tool", ["write", "edit", "multi_edit"])
def test_a_replacement_larger_than_the_filesystem_is_no_space(small_fs: Path, tool: str) -> None:
    original = Original(small_fs / "f.txt", b"keep me\n" + b"k" * (200 << 10) + b"\nmarker\n")
    with Workspace(small_fs) as ws:
        session = ws.session("s")
        read_ok(session, "f.txt")
        free = free_blocks(small_fs)
        result = mutate(session, tool, "f.txt", "marker", "H" * (2 << 20))

        assert code_of(result) == "FS_NO_SPACE", result.text
        assert errno.ENOSPC in cause_errnos(result)
        original.assert_intact()
        assert temps_under(small_fs) == []
        assert sorted(os.listdir(small_fs)) == ["f.txt"]
        assert free_blocks(small_fs) == free, "the failed temp still holds space (not unlinked, or still open)"

        retry = mutate(session, tool, "f.txt", "marker", "done")  # the observation is still valid
    assert not retry.is_error, retry.text
    original.assert_replaced_by(b"done" if tool == "write" else original.data.replace(b"marker", b"done"))
    assert temps_under(small_fs) == []


def test_a_create_larger_than_the_filesystem_leaves_nothing(small_fs: Path) -> None:
    with Workspace(small_fs) as ws:
        free = free_blocks(small_fs)
        result = ws.session("s").call("write", {"file_path": "new/dir/big.txt", "content": "B" * (2 << 20)})
    assert code_of(result) == "FS_NO_SPACE", result.text
    assert errno.ENOSPC in cause_errnos(result)
    assert os.listdir(small_fs) == [], "a failed create left a file or its new parent directories"
    assert free_blocks(small_fs) == free


def test_a_same_size_replacement_that_needs_room_for_the_temp_is_no_space(small_fs: Path) -> None:
    """The new content is no larger than the old, but the temp must exist beside the original."""
    size = 200 << 10
    original = Original(small_fs / "f.txt", b"o" * size)
    filler = small_fs / "filler.bin"
    filler.write_bytes(b"\0" * (free_blocks(small_fs) * os.statvfs(small_fs).f_frsize - (size // 2)))
    assert os.statvfs(small_fs).f_bavail * os.statvfs(small_fs).f_frsize < size
    with Workspace(small_fs) as ws:
        session = ws.session("s")
        read_ok(session, "f.txt")
        result = session.call("write", {"file_path": "f.txt", "content": "n" * size})
        assert code_of(result) == "FS_NO_SPACE", result.text
        original.assert_intact()
        assert temps_under(small_fs) == []

        filler.unlink()
        retry = session.call("write", {"file_path": "f.txt", "content": "n" * size})
    assert not retry.is_error, retry.text
    original.assert_replaced_by(b"n" * size)
    assert sorted(os.listdir(small_fs)) == ["f.txt"]


def fill_inodes(directory: Path) -> list[Path]:
    """Create empty files until the filesystem has no inode left."""
    made: list[Path] = []
    for i in range(100_000):
        path = directory / f"fill-{i:05d}"
        try:
            path.touch(exist_ok=False)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC, exc
            return made
        made.append(path)
    raise AssertionError("the filesystem never ran out of inodes")


@pytest.mark.parametrize("case", ["replace", "create", "create-in-new-directory"])
def test_inode_exhaustion_is_no_space_and_nothing_is_half_written(small_fs: Path, case: str) -> None:
    original = Original(small_fs / "f.txt", b"line one\nline two\n")
    path = {"replace": "f.txt", "create": "new.txt", "create-in-new-directory": "sub/new.txt"}[case]
    with Workspace(small_fs) as ws:
        session = ws.session("s")
        read_ok(session, "f.txt")
        fillers = fill_inodes(small_fs)
        listing = sorted(os.listdir(small_fs))

        result = session.call("write", {"file_path": path, "content": "brand new\n"})

        assert code_of(result) == "FS_NO_SPACE", result.text
        assert errno.ENOSPC in cause_errnos(result)
        original.assert_intact()
        assert sorted(os.listdir(small_fs)) == listing, "something was created or removed"
        assert temps_under(small_fs) == []

        fillers[-1].unlink()  # one inode back: enough for a temp (replace) or the new file (create)
        if case == "create-in-new-directory":
            fillers[-2].unlink()  # and one for the directory
        retry = session.call("write", {"file_path": path, "content": "brand new\n"})
    assert not retry.is_error, retry.text
    assert (small_fs / path).read_bytes() == b"brand new\n"
    if case == "replace":
        original.assert_replaced_by(b"brand new\n")
    else:
        original.assert_intact()
    assert temps_under(small_fs) == []


# --- EFBIG: RLIMIT_FSIZE in a forked child -----------------------------------------------------------

FSIZE_LIMIT = 64 << 10


def _efbig_body(root: Path, tool: str, path: str, content: str, old: str) -> Callable[[], dict[str, Any]]:
    def body() -> dict[str, Any]:  # pragma: no cover - runs in the child
        import resource

        resource.setrlimit(resource.RLIMIT_FSIZE, (FSIZE_LIMIT, FSIZE_LIMIT))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        writes: list[list[int]] = []  # [requested, returned] or [requested, -errno]
        real_write = os.write

        def recording_write(fd: int, data: Any) -> int:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return real_write(fd, data)
            try:
                done = real_write(fd, data)
            except OSError as exc:
                writes.append([len(data), -(exc.errno or 0)])
                raise
            writes.append([len(data), done])
            return done

        patch = pytest.MonkeyPatch()
        patch.setattr(os, "write", recording_write)
        with Workspace(root) as ws:
            session = ws.session("s")
            if path == "f.txt":
                read_ok(session, path)
            result = mutate(session, tool, path, old, content)
        patch.undo()
        return {"code": code_of(result), "text": result.text, "errnos": cause_errnos(result), "writes": writes}

    return body


@needs_fork
@pytest.mark.skipif(not hasattr(signal, "SIGXFSZ"), reason="needs RLIMIT_FSIZE and SIGXFSZ")
@pytest.mark.parametrize(
    ("tool", "path"), [("write", "f.txt"), ("edit", "f.txt"), ("multi_edit", "f.txt"), ("write", "d/new.txt")]
)
def test_efbig_from_rlimit_fsize_is_no_space_after_a_short_write(root: Path, tool: str, path: str) -> None:
    original = Original(root / "f.txt", b"alpha\nmarker\nomega\n" + b"filler line\n" * 100)
    big = "E" * (4 * FSIZE_LIMIT)

    got = run_forked(_efbig_body(root, tool, path, big, "marker"))

    assert got["code"] == "FS_NO_SPACE", got["text"]
    assert errno.EFBIG in got["errnos"]
    writes = got["writes"]
    assert writes, "nothing was written to a regular file"
    assert writes[0][1] == FSIZE_LIMIT < writes[0][0], f"expected a short first write, got {writes}"
    assert writes[-1][1] == -errno.EFBIG, f"expected EFBIG at the limit, got {writes}"
    original.assert_intact()
    assert temps_under(root) == []
    assert sorted(os.listdir(root)) == ["f.txt"], "a failed create left a file or a directory"


@needs_fork
@pytest.mark.skipif(not hasattr(signal, "SIGXFSZ"), reason="needs RLIMIT_FSIZE and SIGXFSZ")
def test_a_write_under_rlimit_fsize_succeeds(root: Path) -> None:
    """The control for the EFBIG test: the limit alone does not make writes fail."""
    original = Original(root / "f.txt", b"marker\n")
    fits = "F" * (FSIZE_LIMIT // 2)

    got = run_forked(_efbig_body(root, "write", "f.txt", fits, "marker"))

    assert got["code"] is None, got["text"]
    original.assert_replaced_by(fits.encode())
    assert temps_under(root) == []


# --- patched os calls -------------------------------------------------------------------------------------


def _refusing_temp_open(err: int, calls: list[str]) -> Callable[..., int]:
    real_open = os.open

    def fake_open(path: Any, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        if isinstance(path, str) and path.endswith(".fs-tools.tmp") and flags & os.O_CREAT:
            calls.append(path)
            raise OSError(err, os.strerror(err))
        return real_open(path, flags, mode, dir_fd=dir_fd)

    return fake_open


@pytest.mark.parametrize("tool", ["write", "edit"])
def test_eacces_creating_the_temp_is_permission_denied(
    root: Path, session: Session, tool: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = Original(root / "f.txt", b"old line\nsecond\n")
    read_ok(session, "f.txt")
    calls: list[str] = []

    monkeypatch.setattr(f"{TEMPFILES_OS}.open", _refusing_temp_open(errno.EACCES, calls))
    result = mutate(session, tool, "f.txt", "old line", "new line")
    monkeypatch.undo()

    assert calls, "no temp file creation was attempted"
    assert code_of(result) == "FS_PERMISSION_DENIED", result.text
    assert errno.EACCES in cause_errnos(result)
    original.assert_intact()
    assert temps_under(root) == []
    assert sorted(os.listdir(root)) == ["f.txt"]


def test_eacces_creating_the_temp_of_a_new_file_leaves_no_directories(
    root: Path, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    monkeypatch.setattr(f"{TEMPFILES_OS}.open", _refusing_temp_open(errno.EACCES, calls))
    result = session.call("write", {"file_path": "a/b/new.txt", "content": "x\n"})
    monkeypatch.undo()

    assert calls
    assert code_of(result) == "FS_PERMISSION_DENIED", result.text
    assert os.listdir(root) == []


@pytest.mark.parametrize("path", ["f.txt", "a/b/new.txt"])
def test_eio_on_the_temp_fsync_is_io_error(
    root: Path, session: Session, path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = Original(root / "f.txt", b"old line\n")
    if path == "f.txt":
        read_ok(session, path)
    real_fsync = os.fsync
    synced: list[bytes] = []

    def fsync(fd: int) -> None:
        temp = temp_of_fd(fd, (root / path).parent)
        if temp is not None:
            synced.append(temp.read_bytes())
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real_fsync(fd)

    monkeypatch.setattr(f"{FILES_OS}.fsync", fsync)
    result = session.call("write", {"file_path": path, "content": "new content\n"})
    monkeypatch.undo()

    assert synced == [b"new content\n"], "the fault did not hit the fsync of a fully written temp"
    assert code_of(result) == "FS_IO_ERROR", result.text
    assert errno.EIO in cause_errnos(result)
    original.assert_intact()
    assert temps_under(root) == []
    assert sorted(os.listdir(root)) == ["f.txt"]


RENAME_FAULTS = [errno.EXDEV, errno.EBUSY]


@pytest.mark.parametrize("err", RENAME_FAULTS, ids=lambda e: errno.errorcode[e])
@pytest.mark.parametrize("tool", ["write", "edit"])
def test_exdev_or_ebusy_on_rename_is_io_error(
    root: Path, session: Session, tool: str, err: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = Original(root / "f.txt", b"old line\n")
    read_ok(session, "f.txt")
    calls: list[tuple[Any, ...]] = []

    def rename(*args: Any, **kwargs: Any) -> None:
        calls.append(args)
        raise OSError(err, os.strerror(err))

    monkeypatch.setattr(f"{FILES_OS}.rename", rename)
    monkeypatch.setattr(Primitives, "exchange", rename)  # the swap that publishes a replace where it can
    result = mutate(session, tool, "f.txt", "old line", "new line")
    monkeypatch.undo()

    assert calls, "neither the swap nor os.rename was called"
    assert code_of(result) == "FS_IO_ERROR", result.text
    assert err in cause_errnos(result)
    original.assert_intact()
    assert temps_under(root) == []
    assert sorted(os.listdir(root)) == ["f.txt"]


@pytest.mark.parametrize("err", RENAME_FAULTS, ids=lambda e: errno.errorcode[e])
@pytest.mark.parametrize("route", ["renameat2", "link-fallback"])
def test_exdev_or_ebusy_publishing_a_new_file_is_io_error(
    root: Path, session: Session, route: str, err: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    keep = Original(root / "keep.txt", b"keep\n")
    calls: list[str] = []

    def native(*args: Any) -> int:  # renameat2/renameatx_np failing as the C library would
        calls.append("native")
        ctypes.set_errno(err)
        return -1

    def link(*args: Any, **kwargs: Any) -> None:
        calls.append("link")
        raise OSError(err, os.strerror(err))

    primitives = Primitives(Primitives.native().reopen_through_proc, (native, 1, 2) if route == "renameat2" else None)
    if route != "renameat2":
        monkeypatch.setattr(f"{PRIMITIVES}.os.link", link)
    with Workspace(FileProvider([root], primitives=primitives)) as ws:
        result = ws.session("s").call("write", {"file_path": "d/new.txt", "content": "fresh\n"})
    monkeypatch.undo()

    assert calls, "the no-replace publication was never attempted"
    assert code_of(result) == "FS_IO_ERROR", result.text
    assert err in cause_errnos(result)
    keep.assert_intact()
    assert sorted(os.listdir(root)) == ["keep.txt"], "a failed create left its file, temp or directory"


@pytest.mark.parametrize(
    "fault",
    [OSError(errno.ENOLCK, os.strerror(errno.ENOLCK)), KeyboardInterrupt()],
    ids=["ENOLCK", "KeyboardInterrupt"],
)
@pytest.mark.parametrize("case", ["replace", "create"])
def test_a_fault_while_locking_the_new_temp_leaves_no_temp(
    root: Path, session: Session, case: str, fault: BaseException, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The temp exists from the moment O_EXCL created it: a failure before the writer has it in hand (its
    lock refused, e.g. ENOLCK on a filesystem without lock support, or an interrupt) must not leak it."""
    original = Original(root / "f.txt", b"old line\n")
    path = "f.txt" if case == "replace" else "new.txt"
    if case == "replace":
        read_ok(session, path)
    real_flock = fcntl.flock
    fired: list[int] = []
    fds = open_fds()

    def flock(fd: int, operation: int) -> None:
        if operation == fcntl.LOCK_EX and not fired and is_temp_fd(fd, root):
            fired.append(fd)
            raise fault
        real_flock(fd, operation)

    monkeypatch.setattr("fs_tools.provider.tempfiles.fcntl.flock", flock)
    if isinstance(fault, KeyboardInterrupt):
        with pytest.raises(KeyboardInterrupt):
            session.call("write", {"file_path": path, "content": "new line\n"})
    else:
        result = session.call("write", {"file_path": path, "content": "new line\n"})
        assert code_of(result) == "FS_IO_ERROR", result.text
        assert errno.ENOLCK in cause_errnos(result)
    monkeypatch.undo()

    assert fired, "the temp's lock was never taken"
    original.assert_intact()
    assert temps_under(root) == [], "the temp created before the failure was left behind"
    assert sorted(os.listdir(root)) == ["f.txt"]
    assert open_fds() == fds, "the temp's descriptor was leaked"


def test_a_create_published_by_link_is_not_reported_failed_when_removing_the_temp_name_fails(
    root: Path, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without renameat2, a create is published by link(temp, target), then unlink(temp). Once the link
    exists the file is created with exactly the new bytes: a failure to drop the temp's name afterwards
    must not be reported as a failed write (the caller would believe nothing happened, and its retry
    would be refused as "already exists")."""
    real_unlink = os.unlink
    failed: list[str] = []

    def unlink(path: Any, *args: Any, **kwargs: Any) -> None:
        if not failed and isinstance(path, str) and path.endswith(".fs-tools.tmp"):
            failed.append(path)
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real_unlink(path, *args, **kwargs)

    monkeypatch.setattr(f"{PRIMITIVES}.os.unlink", unlink)
    with Workspace(FileProvider([root], primitives=Primitives.portable())) as portable:
        session = portable.session("s")
        result = session.call("write", {"file_path": "new.txt", "content": "fresh\n"})
        monkeypatch.undo()
        assert failed, "the fallback publication never removed the temp name"
        assert (root / "new.txt").read_bytes() == b"fresh\n"
        assert not result.is_error, f"the file was created, but the result says {code_of(result)}: {result.text}"
        edit = session.call("edit", {"file_path": "new.txt", "old_string": "fresh", "new_string": "edited"})
    assert not edit.is_error, edit.text
    with Workspace(root) as ws:  # any leftover name is swept by the next writer into the directory
        assert not ws.session("t").call("write", {"file_path": "other.txt", "content": "x"}).is_error
    assert temps_under(root) == []


# --- KeyboardInterrupt in the middle of a write ---------------------------------------------------------

INTERRUPT_CHUNK = 64 << 10


def _interrupting(point: str, directory: Path, fired: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Raise KeyboardInterrupt at ``point``: after the first chunk of the temp is written, after the temp's
    fsync, or just after publication."""
    if point == "write":
        real_write = os.write

        def write(fd: int, data: Any) -> int:
            if not is_temp_fd(fd, directory):
                return real_write(fd, data)
            if fired:
                raise KeyboardInterrupt
            fired.append("write")
            return real_write(fd, bytes(data[:INTERRUPT_CHUNK]))  # a short write: the loop comes back

        monkeypatch.setattr(f"{FILES_OS}.write", write)
    elif point == "fsync":
        real_fsync = os.fsync

        def fsync(fd: int) -> None:
            real_fsync(fd)
            if not fired and is_temp_fd(fd, directory):
                fired.append("fsync")
                raise KeyboardInterrupt

        monkeypatch.setattr(f"{FILES_OS}.fsync", fsync)
    else:
        real_rename, real_publish = os.rename, Primitives.rename_no_replace

        def rename(*args: Any, **kwargs: Any) -> None:
            real_rename(*args, **kwargs)
            fired.append("rename")
            raise KeyboardInterrupt

        def rename_no_replace(prims: Primitives, dir_fd: int, source: str, target: str) -> None:
            real_publish(prims, dir_fd, source, target)
            if ".fs-tools.dir" in os.readlink(f"/proc/self/fd/{dir_fd}"):
                return  # into staged parent directories: not published until they are
            fired.append("rename_no_replace")
            raise KeyboardInterrupt

        def rename_directory_no_replace(prims: Primitives, dir_fd: int, source: str, target: str) -> bool:
            done = real_publish_directory(prims, dir_fd, source, target)
            fired.append("rename_directory_no_replace")
            assert done
            raise KeyboardInterrupt

        def exchange(prims: Primitives, dir_fd: int, first: str, second: str) -> bool:
            real_exchange(prims, dir_fd, first, second)
            fired.append("exchange")
            raise KeyboardInterrupt

        real_exchange, real_publish_directory = Primitives.exchange, Primitives.rename_directory_no_replace
        monkeypatch.setattr(Primitives, "rename_directory_no_replace", rename_directory_no_replace)
        monkeypatch.setattr(f"{FILES_OS}.rename", rename)
        monkeypatch.setattr(Primitives, "rename_no_replace", rename_no_replace)
        monkeypatch.setattr(Primitives, "exchange", exchange)


@pytest.mark.parametrize("point", ["write", "fsync", "after-publication"])
@pytest.mark.parametrize("tool", ["write", "edit"])
def test_keyboard_interrupt_while_replacing_propagates_and_loses_nothing(
    root: Path, session: Session, tool: str, point: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = Original(root / "f.txt", b"head\nmarker\n" + b"t" * (4 * INTERRUPT_CHUNK) + b"\n")
    read_ok(session, "f.txt")
    new = original.data.replace(b"marker", b"MARKER" * 10)
    fired: list[str] = []

    _interrupting(point, root, fired, monkeypatch)
    with pytest.raises(KeyboardInterrupt):  # the host's interrupt, not the model's error
        mutate(session, tool, "f.txt", "marker", new.decode() if tool == "write" else "MARKER" * 10)
    monkeypatch.undo()

    assert fired, "the interrupt was never raised"
    assert temps_under(root) == []
    assert sorted(os.listdir(root)) == ["f.txt"]
    if point == "after-publication":
        original.assert_replaced_by(new)
        read_ok(session, "f.txt")  # the locks were released: the file can be read and written again
    else:
        original.assert_intact()
    again = session.call("write", {"file_path": "f.txt", "content": "after\n"})
    assert not again.is_error, again.text
    original.assert_replaced_by(b"after\n")


@pytest.mark.parametrize("point", ["write", "fsync", "after-publication"])
def test_keyboard_interrupt_while_creating_propagates_and_loses_nothing(
    root: Path, session: Session, point: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    content = "c" * (4 * INTERRUPT_CHUNK)
    fired: list[str] = []

    _interrupting(point, root / "d", fired, monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        session.call("write", {"file_path": "d/new.txt", "content": content})
    monkeypatch.undo()

    assert fired, "the interrupt was never raised"
    assert temps_under(root) == []
    if point == "after-publication":
        assert (root / "d" / "new.txt").read_bytes() == content.encode()
        assert os.listdir(root / "d") == ["new.txt"]
    else:
        assert os.listdir(root) == [], "an interrupted create left its file, temp or directory"


# --- an external writer between the read and the commit -------------------------------------------------

BEFORE_APPEND = b"alpha\nbeta\ngamma\n"
APPENDED = b"appended by another process\n"


def test_an_append_after_the_read_makes_the_edit_stale_and_survives(root: Path, session: Session) -> None:
    target = root / "f.txt"
    target.write_bytes(BEFORE_APPEND)
    inode = os.stat(target).st_ino
    read_ok(session, "f.txt")
    with open(target, "ab") as other:
        other.write(APPENDED)

    result = session.call("edit", {"file_path": "f.txt", "old_string": "beta", "new_string": "BETA"})

    assert code_of(result) == "FS_STALE_VERSION", result.text
    assert "line 4" in result.text, f"the stale message does not name the changed line: {result.text}"
    assert target.read_bytes() == BEFORE_APPEND + APPENDED
    assert os.stat(target).st_ino == inode
    assert temps_under(root) == []


@pytest.mark.parametrize("tool", ["write", "edit", "multi_edit"])
def test_an_append_while_the_temp_is_written_makes_the_commit_stale_and_survives(
    root: Path, session: Session, tool: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The append lands after every check made before writing the temp: only the re-check under the
    directory lock, just before the rename, can see it."""
    target = root / "f.txt"
    target.write_bytes(BEFORE_APPEND)
    inode = os.stat(target).st_ino
    read_ok(session, "f.txt")
    real_fsync = os.fsync
    fired: list[int] = []

    def fsync(fd: int) -> None:
        real_fsync(fd)
        if not fired and is_temp_fd(fd, root):
            with open(target, "ab") as other:
                other.write(APPENDED)
            fired.append(fd)

    monkeypatch.setattr(f"{FILES_OS}.fsync", fsync)
    result = mutate(session, tool, "f.txt", "beta", "alpha\nBETA\ngamma\n" if tool == "write" else "BETA")
    monkeypatch.undo()

    assert fired, "the append was never staged: no temp was fsynced"
    assert code_of(result) == "FS_STALE_VERSION", result.text
    assert "line 4" in result.text, f"the stale message does not name the changed line: {result.text}"
    assert target.read_bytes() == BEFORE_APPEND + APPENDED, "the external append was lost"
    assert os.stat(target).st_ino == inode
    assert temps_under(root) == []

    read_ok(session, "f.txt")
    retry = session.call("edit", {"file_path": "f.txt", "old_string": "beta", "new_string": "BETA"})
    assert not retry.is_error, retry.text
    assert target.read_bytes() == b"alpha\nBETA\ngamma\n" + APPENDED


# --- temp-name collisions ---------------------------------------------------------------------------------

LIVE_TEMP = ".0123456789abcdef.fs-tools.tmp"


@pytest.fixture
def collider(request: pytest.FixtureRequest, root: Path, tmp_path: Path) -> Iterator[tuple[str, Callable[[], None]]]:
    """An existing entry the patched temp_name() will propose first; yields (name, check-it-is-untouched)."""
    kind: str = request.param
    secret = tmp_path / "outside" / "secret.txt"
    secret_bytes = secret.read_bytes()
    if kind == "user-file":
        name = "notes.txt"
        (root / name).write_bytes(b"the user's notes\n")
        os.chmod(root / name, 0o600)
        inode = os.stat(root / name).st_ino

        def check() -> None:
            assert (root / name).read_bytes() == b"the user's notes\n"
            assert mode_of(root / name) == 0o600 and os.stat(root / name).st_ino == inode

        yield name, check
    elif kind == "symlink-out":
        name = "link.txt"
        os.symlink(secret, root / name)

        def check() -> None:
            assert os.readlink(root / name) == str(secret)
            assert secret.read_bytes() == secret_bytes

        yield name, check
    elif kind == "directory":
        name = "adir"
        (root / name).mkdir()
        (root / name / "inner.txt").write_bytes(b"inner\n")

        def check() -> None:
            assert os.listdir(root / name) == ["inner.txt"]
            assert (root / name / "inner.txt").read_bytes() == b"inner\n"

        yield name, check
    else:
        assert kind == "live-temp"  # another writer's temp, held by its lock: not an orphan
        name = LIVE_TEMP
        fd = os.open(root / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.write(fd, b"another writer's half-written temp")
        fcntl.flock(fd, fcntl.LOCK_EX)

        def check() -> None:
            assert (root / name).read_bytes() == b"another writer's half-written temp"

        try:
            yield name, check
        finally:
            os.close(fd)
            (root / name).unlink(missing_ok=True)


COLLIDERS = ["user-file", "symlink-out", "directory", "live-temp"]


def _proposing(first: list[str], proposed: list[str]) -> Callable[[], str]:
    """temp_name() that proposes each of ``first`` in turn, then fresh names as the real one does."""
    real = tempfiles.temp_name

    def temp_name() -> str:
        name = first[len(proposed)] if len(proposed) < len(first) else real()
        proposed.append(name)
        return name

    return temp_name


@pytest.mark.parametrize("collider", COLLIDERS, indirect=True)
@pytest.mark.parametrize("case", ["replace", "create"])
def test_a_temp_name_collision_draws_a_fresh_name_and_never_touches_the_existing_entry(
    root: Path, session: Session, collider: tuple[str, Callable[[], None]], case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    name, untouched = collider
    path = "f.txt" if case == "replace" else "new.txt"
    if case == "replace":
        original = Original(root / "f.txt", b"old\n")
        read_ok(session, path)
    proposed: list[str] = []

    monkeypatch.setattr(tempfiles, "temp_name", _proposing([name], proposed))
    result = call_guarded(session, "write", {"file_path": path, "content": "new\n"})
    monkeypatch.undo()

    assert not result.is_error, result.text
    assert len(proposed) >= 2 and proposed[0] == name, f"the collision was not staged: {proposed}"
    assert (root / path).read_bytes() == b"new\n"
    if case == "replace":
        original.assert_replaced_by(b"new\n")
    untouched()
    assert [p.name for p in temps_under(root)] == ([LIVE_TEMP] if name == LIVE_TEMP else [])


@pytest.mark.parametrize("collider", ["user-file"], indirect=True)
@pytest.mark.parametrize("case", ["replace", "create"])
def test_a_temp_name_that_always_collides_is_an_io_error_not_a_stale_file(
    root: Path, session: Session, collider: tuple[str, Callable[[], None]], case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every attempt collides: the write fails, but the target is neither stale nor existing — saying so
    would send the model to re-read a file that did not change (or that does not exist)."""
    name, untouched = collider
    path = "f.txt" if case == "replace" else "new.txt"
    original = Original(root / "f.txt", b"old\n")
    if case == "replace":
        read_ok(session, path)
    proposed: list[str] = []

    monkeypatch.setattr(tempfiles, "temp_name", _proposing([name] * 1000, proposed))
    result = session.call("write", {"file_path": path, "content": "new\n"})
    monkeypatch.undo()

    assert len(proposed) > 1, "the name was not retried"
    assert code_of(result) == "FS_IO_ERROR", f"{code_of(result)}: {result.text}"
    original.assert_intact()
    untouched()
    assert not (root / "new.txt").exists()
    assert temps_under(root) == []


# --- orphan sweeping --------------------------------------------------------------------------------------


def test_a_dead_writers_temp_is_removed_by_the_next_write_into_its_directory(root: Path) -> None:
    (root / "sub").mkdir()
    orphan = root / "sub" / ".00112233445566aa.fs-tools.tmp"
    orphan.write_bytes(b"half of a killed writer's content")
    elsewhere = root / ".ffeeddccbbaa9988.fs-tools.tmp"
    elsewhere.write_bytes(b"an orphan in another directory")

    with Workspace(root) as ws:
        result = ws.session("s").call("write", {"file_path": "sub/f.txt", "content": "x\n"})

    assert not result.is_error, result.text
    assert not orphan.exists(), "the orphan was not swept"
    assert sorted(os.listdir(root / "sub")) == ["f.txt"]
    assert (root / "sub" / "f.txt").read_bytes() == b"x\n"

    with Workspace(root) as ws:  # and the other directory's orphan goes with the first write there
        result = ws.session("s").call("write", {"file_path": "g.txt", "content": "y\n"})
    assert not result.is_error, result.text
    assert temps_under(root) == []


@needs_fork
def test_a_temp_left_by_a_killed_process_is_swept(root: Path) -> None:
    """The real thing: a process that took a temp the way the provider does, then died."""

    def body() -> dict[str, Any]:  # pragma: no cover - runs in the child
        fd, name = tempfiles.create_temp(os.open(root, os.O_RDONLY | os.O_DIRECTORY), 0o600)
        os.write(fd, b"partial")
        return {"name": name}  # the child then exits without closing or unlinking: its lock dies with it

    name = run_forked(body)["name"]
    assert (root / name).exists()
    with Workspace(root) as ws:
        result = ws.session("s").call("write", {"file_path": "f.txt", "content": "x\n"})
    assert not result.is_error, result.text
    assert sorted(os.listdir(root)) == ["f.txt"]


def test_a_temp_held_by_a_live_writer_is_not_swept(root: Path) -> None:
    live = root / LIVE_TEMP
    fd = os.open(live, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, b"being written")
        fcntl.flock(fd, fcntl.LOCK_EX)
        with Workspace(root) as ws:
            result = call_guarded(ws.session("s"), "write", {"file_path": "f.txt", "content": "x\n"})
        assert not result.is_error, result.text
        assert live.read_bytes() == b"being written", "a live writer's temp was swept"
        assert os.fstat(fd).st_nlink == 1
    finally:
        os.close(fd)  # the writer dies: its temp is now an orphan

    with Workspace(root) as ws:
        result = ws.session("s").call("write", {"file_path": "g.txt", "content": "y\n"})
    assert not result.is_error, result.text
    assert sorted(os.listdir(root)) == ["f.txt", "g.txt"]


@pytest.mark.parametrize(
    "name",
    [
        "notes.fs-tools.tmp",
        ".0123456789ABCDEF.fs-tools.tmp",
        ".0123.fs-tools.tmp",
        ".0123456789abcdef.fs-tools.tmp.bak",
        "x.0123456789abcdef.fs-tools.tmp",
    ],
)
def test_files_that_only_look_like_temps_are_never_swept(root: Path, name: str) -> None:
    (root / name).write_bytes(b"user data\n")
    with Workspace(root) as ws:
        result = ws.session("s").call("write", {"file_path": "f.txt", "content": "x\n"})
    assert not result.is_error, result.text
    assert (root / name).read_bytes() == b"user data\n"


def test_temp_named_links_and_directories_are_never_swept_or_followed(root: Path, tmp_path: Path) -> None:
    secret = tmp_path / "outside" / "secret.txt"
    secret_bytes = secret.read_bytes()
    os.symlink(secret, root / ".aaaaaaaaaaaaaaaa.fs-tools.tmp")
    (root / ".bbbbbbbbbbbbbbbb.fs-tools.tmp").mkdir()
    with Workspace(root) as ws:
        result = ws.session("s").call("write", {"file_path": "f.txt", "content": "x\n"})
    assert not result.is_error, result.text
    assert secret.read_bytes() == secret_bytes
    assert os.readlink(root / ".aaaaaaaaaaaaaaaa.fs-tools.tmp") == str(secret)
    assert (root / ".bbbbbbbbbbbbbbbb.fs-tools.tmp").is_dir()
