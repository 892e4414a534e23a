"""Races against the sandbox (issue 3), on a real directory: a helper flips the tree in a tight loop while the main
thread repeats a tool call a fixed number of times.

After every call: the result is a success showing in-root content, or one of a few typed errors, and never
carries a secret. At the end: the world outside the root is byte-identical and nothing was created there.
Nothing depends on timing: the iteration counts are fixed, and an unlucky schedule can only make a run less
adversarial, never make a correct product fail.

Each race runs twice: with a helper thread (the interpreter's switch interval is shortened, and the swap
releases the GIL, so swaps land between the main thread's system calls) and with a helper process, which
swaps truly in parallel — a window one system call wide is hit hundreds of times more often that way. The
swaps use ``renameat2(RENAME_EXCHANGE)``, so the raced name always exists: the real file or directory one
moment, a symlink out of the root (or a decoy directory from outside) the next, and a walk is never cut short
by a missing name. Against a deliberately broken resolver (``..`` opened through the kernel, a realpath check
followed by use of the original string, a publication that follows a planted link) each race here fails
within its iteration count.
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from fs_tools import Workspace
from fs_tools.provider import resolve
from fs_tools.result import ToolResult
from tests.support.leaks import spy_opens_of
from tests.support.sandbox import tree

SECRET = "TOP-SECRET"
READS = 2000  # iterations of a race whose call only reads (a read costs well under a millisecond)
WRITES = 600  # iterations of a race whose calls write (each write fsyncs)
JOIN_GUARD_SECONDS = 60.0  # only a guard against a hung helper, never a timing assertion

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2  # linux/fs.h


def _load_renameat2() -> Callable[..., int] | None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        func = libc.renameat2
    except (OSError, AttributeError):
        return None
    func.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    func.restype = ctypes.c_int
    return func  # type: ignore[no-any-return]


_RENAMEAT2 = _load_renameat2()


def exchange(a: Path, b: Path) -> None:
    """Atomically swap two names (files, directories or symlinks, in the same or different directories)."""
    assert _RENAMEAT2 is not None
    if _RENAMEAT2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


@pytest.fixture
def workspace(root: Path) -> Iterator[Workspace]:
    """Every read shows its text: these races read one file again and again, and look at what came back
    (a brief "unchanged" note would hide what a swapped-in link led to)."""
    with Workspace(root, brief_rereads=False) as ws:
        yield ws


@pytest.fixture
def can_exchange(tmp_path: Path) -> None:
    a, b = tmp_path / ".xchg-a", tmp_path / ".xchg-b"
    a.mkdir()
    os.symlink("x", b)
    try:
        if _RENAMEAT2 is None:
            pytest.skip("renameat2 is not available here")
        exchange(a, b)
    except OSError as exc:
        pytest.skip(f"renameat2(RENAME_EXCHANGE) is not supported here: {exc}")
    finally:
        for p in (a, b):
            if p.is_symlink():
                p.unlink()
            else:
                p.rmdir()


@dataclass(frozen=True)
class Swap:
    """Exchange ``a`` and ``b``; if ``relink`` is set and neither is a symlink any more (a commit published
    over the link), first make ``b`` a symlink to ``relink`` again (``b`` is only ever the helper's)."""

    a: Path
    b: Path
    relink: str | None = None


@dataclass(frozen=True)
class Plant:
    """Create the symlink ``link -> target`` and remove it again (only ever its own link: while the link
    holds the name, nothing else can take it)."""

    link: Path
    target: str


Flip = Swap | Plant

# The helper process: the same two operations as ``_step``, in a loop until the stop file appears.
_HELPER = """
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
kind, a, b, extra, stop = sys.argv[1:6]
ea, eb = os.fsencode(a), os.fsencode(b)
count = 0
print("ready", flush=True)
while count % 256 or not os.path.exists(stop):
    if kind == "swap":
        if extra and not os.path.islink(a) and not os.path.islink(b):
            os.unlink(b)
            os.symlink(extra, b)
        libc.renameat2(-100, ea, -100, eb, 2)
    else:
        try:
            os.symlink(b, a)
        except FileExistsError:
            pass
        else:
            os.unlink(a)
    count += 1
print(count, flush=True)
"""


def _step(flip: Flip) -> None:
    if isinstance(flip, Swap):
        if flip.relink is not None and not flip.a.is_symlink() and not flip.b.is_symlink():
            flip.b.unlink()
            os.symlink(flip.relink, flip.b)
        exchange(flip.a, flip.b)
        return
    try:
        os.symlink(flip.target, flip.link)
    except FileExistsError:  # the main thread's file is there: wait until it is removed
        return
    os.unlink(flip.link)


@contextmanager
def racing(helper: str, flip: Flip, stop_file: Path) -> Iterator[list[int]]:
    """Run ``flip`` in a tight loop on a helper thread or process for the duration of the block; yields a
    one-element list that holds the number of flips made once the block has ended."""
    with _racing_thread(flip) if helper == "thread" else _racing_process(flip, stop_file) as count:
        yield count


@contextmanager
def _racing_thread(flip: Flip) -> Iterator[list[int]]:
    stop = threading.Event()
    count = [0]
    errors: list[BaseException] = []

    def run() -> None:
        try:
            while not stop.is_set():
                _step(flip)
                count[0] += 1
        except BaseException as exc:
            errors.append(exc)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    try:
        yield count
    finally:
        stop.set()
        worker.join(JOIN_GUARD_SECONDS)
        sys.setswitchinterval(interval)
    assert not worker.is_alive(), "the helper thread did not stop"
    if errors:
        raise AssertionError("the helper thread failed") from errors[0]


@contextmanager
def _racing_process(flip: Flip, stop_file: Path) -> Iterator[list[int]]:
    if isinstance(flip, Swap):
        argv = ["swap", str(flip.a), str(flip.b), flip.relink or ""]
    else:
        argv = ["plant", str(flip.link), flip.target, ""]
    helper = subprocess.Popen([sys.executable, "-c", _HELPER, *argv, str(stop_file)], stdout=subprocess.PIPE, text=True)
    count = [0]
    try:
        assert helper.stdout is not None
        assert helper.stdout.readline().strip() == "ready", "the helper process did not start"
        yield count
    finally:
        stop_file.touch()
        try:
            out, _ = helper.communicate(timeout=JOIN_GUARD_SECONDS)
        except subprocess.TimeoutExpired:
            helper.kill()
            helper.communicate()
            raise
    assert helper.returncode == 0, "the helper process failed"
    count[0] = int(out.strip())


HELPERS = ["thread", "process"]


def check(result: object, allowed: set[str], in_root_marker: str | None = None) -> ToolResult:
    """A result, never an exception; a success (showing in-root content when ``in_root_marker`` is given) or
    an allowed typed error; never a secret."""
    assert isinstance(result, ToolResult)
    for text in (result.text, str(result.value)):
        assert SECRET not in text, f"the secret leaked: {text!r}"
    if result.error is None:
        if in_root_marker is not None:
            assert in_root_marker in result.text, result.text
        return result
    assert result.error.code in allowed, result.text
    return result


# --- (a) a file swapped for a symlink to the secret while it is read (and edited) ------------------------------

RACE_A_CODES = {"FS_SANDBOX_DENIED", "FS_IO_ERROR"}


@pytest.mark.parametrize("helper", HELPERS)
@pytest.mark.parametrize("tool", ["read", "edit"])
def test_a_file_swapped_for_a_symlink_to_the_secret(
    tool: str, helper: str, root: Path, workspace: Workspace, tmp_path: Path, can_exchange: None
) -> None:
    outside = tmp_path / "outside"
    before = tree(outside)
    target = root / "f.txt"
    target.write_text("TOP in-root\n")
    swap = root / "f.swap"
    os.symlink("../outside/secret.txt", swap)
    # An edit may publish over the link in the moment after its final check (a window no lock can close
    # against a swapper that ignores it); the helper then plants the link again.
    flip = Swap(target, swap, relink="../outside/secret.txt")

    session = workspace.session("race-a")
    with racing(helper, flip, tmp_path / "stop") as flips:
        for _ in range(READS if tool == "read" else WRITES):
            read = check(session.call("read", {"file_path": "f.txt"}), RACE_A_CODES, "in-root")
            if tool == "edit" and not read.is_error:
                old, new = ("TOP", "top") if "TOP in-root" in read.text else ("top", "TOP")
                edit = session.call("edit", {"file_path": "f.txt", "old_string": old, "new_string": new})
                check(edit, RACE_A_CODES | {"FS_STALE_VERSION", "FS_NOT_OBSERVED", "FS_EDIT_NOT_FOUND"}, "in-root")

    assert flips[0] > 0
    assert tree(outside) == before
    assert sorted(os.listdir(root)) == ["f.swap", "f.txt"]
    for name in ("f.swap", "f.txt"):
        if not (root / name).is_symlink():
            assert (root / name).read_text().lower() == "top in-root\n"


# --- (b) a directory swapped for a symlink to outside/ while a file under it is written ------------------------

RACE_B_CODES = {"FS_SANDBOX_DENIED", "FS_IO_ERROR", "FS_STALE_VERSION", "FS_NOT_OBSERVED"}


@pytest.mark.parametrize("helper", HELPERS)
@pytest.mark.parametrize("mode", ["create", "replace"])
def test_a_directory_swapped_for_a_symlink_to_outside_while_writing_under_it(
    mode: str, helper: str, root: Path, workspace: Workspace, tmp_path: Path, can_exchange: None
) -> None:
    outside = tmp_path / "outside"
    (outside / "f.txt").write_text(f"{SECRET} f\n")  # what d/f.txt reaches through the link
    before = tree(outside)
    listing = sorted(os.listdir(outside))
    real = root / "d"
    real.mkdir()
    (real / "f.txt").write_text("in-root d/f\n")
    swap = root / "d.swap"
    os.symlink("../outside", swap)

    created: list[int] = []
    with racing(helper, Swap(real, swap), tmp_path / "stop") as flips:
        for i in range(WRITES):
            if mode == "create":
                session = workspace.session(f"race-b-{i}")
                write = session.call("write", {"file_path": f"d/new_{i}.txt", "content": f"in-root {i}\n"})
                if not check(write, RACE_B_CODES).is_error:
                    created.append(i)
            else:
                session = workspace.session("race-b")
                read = check(session.call("read", {"file_path": "d/f.txt"}), RACE_B_CODES, "in-root")
                if not read.is_error:
                    write = session.call("write", {"file_path": "d/f.txt", "content": f"in-root d/f {i}\n"})
                    check(write, RACE_B_CODES)
            assert sorted(os.listdir(outside)) == listing, "a file was created outside the root"

    assert flips[0] > 0
    assert tree(outside) == before
    if real.is_symlink():
        exchange(real, swap)
    assert os.readlink(swap) == "../outside"
    made = sorted(int(n[4:-4]) for n in os.listdir(real) if n.startswith("new_"))
    assert made == created, "every successful create, and only those, left a file in the real directory"
    for i in made:
        assert (real / f"new_{i}.txt").read_text() == f"in-root {i}\n"
    assert (real / "f.txt").read_text().startswith("in-root d/f")
    assert not list(root.rglob("*.fs-tools.tmp"))


# --- (c) an intermediate directory swapped out of the root while a `..`-bearing path is resolved ---------------

RACE_C_CODES = {"FS_IO_ERROR", "FS_STALE_VERSION"}
SHORT = "a/b/../../x.txt"
BOUNCING = "a/b/../b/../b/../b/../b/../b/../../x.txt"  # many moments where the walk holds b and then climbs


@pytest.mark.parametrize("helper", HELPERS)
@pytest.mark.parametrize("raced", ["inner", "outer"])
@pytest.mark.parametrize("tool", ["read", "write"])
def test_an_intermediate_directory_swapped_outside_while_dotdot_is_resolved(
    raced: str, tool: str, helper: str, root: Path, workspace: Workspace, tmp_path: Path, can_exchange: None
) -> None:
    """``a/b/../../x.txt`` names root/x.txt. The helper swaps ``b`` (or ``a``) with a decoy directory under
    outside/, so while the walk holds the real one, it sits where the kernel's ``..`` would climb to a secret
    x.txt outside; the walk's own ``..`` must still lead to root/x.txt."""
    outside = tmp_path / "outside"
    (outside / "x.txt").write_text(f"{SECRET} x\n")  # b/../.. once b is at outside/park/b
    (outside / "park" / "b").mkdir(parents=True)
    (outside / "park" / "b" / ".decoy").write_text("")
    (outside / "alt" / "a" / "b").mkdir(parents=True)
    (outside / "alt" / "a" / ".decoy").write_text("")
    (outside / "alt" / "x.txt").write_text(f"{SECRET} alt x\n")  # a/b/../.. once a is at outside/alt/a
    (root / "a" / "b").mkdir(parents=True)
    (root / "x.txt").write_text("in-root x\n")
    before = tree(outside)
    here, there = (
        (root / "a" / "b", outside / "park" / "b") if raced == "inner" else (root / "a", outside / "alt" / "a")
    )

    session = workspace.session("race-c")
    with racing(helper, Swap(here, there), tmp_path / "stop") as flips:
        for i in range(READS // 2 if tool == "read" else WRITES // 2):
            for path in (SHORT, BOUNCING):
                read = check(session.call("read", {"file_path": path}), RACE_C_CODES, "in-root")
                if tool == "write" and not read.is_error:
                    write = session.call("write", {"file_path": path, "content": f"in-root x {i}\n"})
                    check(write, RACE_C_CODES)

    assert flips[0] > 0
    if (here / ".decoy").exists():
        exchange(here, there)
    assert tree(outside) == before
    assert (root / "x.txt").read_text().startswith("in-root x")
    assert sorted(os.listdir(root)) == ["a", "x.txt"]
    assert os.listdir(root / "a") == ["b"] and os.listdir(root / "a" / "b") == []


# --- (d) a symlink to outside planted at a new file's name between resolution and creation -----------------------

RACE_D_CODES = {"FS_SANDBOX_DENIED", "FS_IO_ERROR", "FS_NOT_OBSERVED", "FS_STALE_VERSION"}


@pytest.mark.parametrize("helper", HELPERS)
@pytest.mark.parametrize("target", ["relative", "absolute"])
def test_a_symlink_planted_at_a_new_files_name(
    target: str, helper: str, root: Path, workspace: Workspace, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    before = tree(outside)
    planted = outside / "planted.txt"
    link_target = str(planted) if target == "absolute" else "../outside/planted.txt"
    new = root / "new.txt"

    created = 0
    with racing(helper, Plant(new, link_target), tmp_path / "stop") as flips:
        for i in range(WRITES):
            session = workspace.session(f"race-d-{i}")  # unseen: the write is a create
            write = session.call("write", {"file_path": "new.txt", "content": f"in-root {i}\n"})
            check(write, RACE_D_CODES)
            assert not os.path.lexists(planted), "the write followed the planted link out of the root"
            if not write.is_error:
                created += 1
                assert stat.S_ISREG(os.lstat(new).st_mode), "a successful create must leave a regular file"
                assert new.read_text() == f"in-root {i}\n"
                os.unlink(new)

    assert flips[0] > 0
    assert tree(outside) == before
    assert not os.path.lexists(planted)
    assert not list(root.glob("*.fs-tools.tmp"))
    assert sorted(os.listdir(root)) in ([], ["new.txt"])


# --- (e) a device node swapped in for a file while it is read -------------------------------------------------


@pytest.mark.parametrize("helper", HELPERS)
def test_a_device_node_swapped_in_while_a_file_is_read_is_never_opened(
    helper: str, root: Path, workspace: Workspace, tmp_path: Path, can_exchange: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/decisions.md: "Special files are never opened" — the leaf is lstat-ed and only a regular file is
    opened. The same must hold when a device node (here with /dev/null's numbers) is swapped in between the
    lstat and the open: opening a device can have effects of its own (a tape rewinds, a watchdog arms)."""
    target = root / "f.txt"
    target.write_text("in-root\n")
    device = root / "dev"
    try:
        os.mknod(device, stat.S_IFCHR | 0o600, os.makedev(1, 3))
    except OSError as exc:
        pytest.skip(f"mknod is not permitted here: {exc}")
    opened = spy_opens_of(device, monkeypatch)
    session = workspace.session("race-e")
    with racing(helper, Swap(target, device), tmp_path / "stop") as flips:
        for _ in range(READS):
            read = session.call("read", {"file_path": "f.txt"})
            check(read, {"FS_NOT_REGULAR_FILE", "FS_IO_ERROR"}, "in-root")
    monkeypatch.undo()

    assert flips[0] > 0
    assert opened == [], f"the device node was opened {len(opened)} time(s) by {READS} reads"


# --- the narrowest window, made deterministic: a link that changes between lstat and readlink ------------------


@pytest.mark.parametrize("change", ["removed", "replaced-by-a-file"])
@pytest.mark.parametrize("tool", ["read", "write"])
def test_a_link_that_changes_between_lstat_and_readlink_is_a_race_not_a_missing_file(
    change: str, tool: str, root: Path, workspace: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What races (a) and (d) hit now and then, pinned down: the walk saw a symlink, and by the time it reads
    the link the name is gone or a regular file. The call must fail closed as a race (``FS_IO_ERROR``, "retry"),
    as every other raced step of the walk does, or see the name as it is now; never tell a create that the
    file it is creating "does not exist", nor show a bare "Invalid argument"."""
    outside = tmp_path / "outside"
    before = tree(outside)
    link = root / "new.txt"
    os.symlink("../outside/planted.txt", link)
    real_readlink = os.readlink

    def racing_readlink(path: str, *, dir_fd: int | None = None) -> str:
        if path == "new.txt" and os.path.islink(link):
            os.unlink(link)
            if change == "replaced-by-a-file":
                link.write_text("in-root now\n")
        return real_readlink(path, dir_fd=dir_fd)

    monkeypatch.setattr(resolve.os, "readlink", racing_readlink)
    args = {"file_path": "new.txt"} if tool == "read" else {"file_path": "new.txt", "content": "in-root\n"}
    result = workspace.session(f"lstat-readlink-{change}-{tool}").call(tool, args)
    monkeypatch.undo()

    assert SECRET not in result.text
    assert tree(outside) == before
    if result.error is None:  # the walk looked again and found the name as it is now
        assert "in-root" in (result.text if tool == "read" else link.read_text())
        return
    if tool == "read" and change == "removed" and result.error.code == "FS_NOT_FOUND":
        return  # true for a read: the name is gone
    assert result.error.code == "FS_IO_ERROR", result.text
    assert "retry" in result.text, result.text


# --- the exchange helper itself -------------------------------------------------------------------------------


def test_exchange_swaps_a_directory_and_a_symlink(tmp_path: Path, can_exchange: None) -> None:
    (tmp_path / "d").mkdir()
    os.symlink("elsewhere", tmp_path / "l")
    exchange(tmp_path / "d", tmp_path / "l")
    assert os.readlink(tmp_path / "d") == "elsewhere" and (tmp_path / "l").is_dir()
    with pytest.raises(OSError) as info:
        exchange(tmp_path / "missing", tmp_path / "l")
    assert info.value.errno == errno.ENOENT


# --- (e) a move's destination directory, or a delete's, swapped for a symlink to outside mid-operation --------

RACE_E_CODES = {
    "FS_SANDBOX_DENIED",
    "FS_IO_ERROR",
    "FS_STALE_VERSION",
    "FS_NOT_FOUND",
    "FS_NOT_DIRECTORY",
    "FS_NOT_OBSERVED",  # its read was refused (the link was in place), so the session never saw the file
}


@pytest.mark.parametrize("helper", HELPERS)
@pytest.mark.parametrize("tool", ["move", "delete"])
def test_a_directory_swapped_for_a_symlink_to_outside_while_moving_or_deleting_in_it(
    tool: str, helper: str, root: Path, workspace: Workspace, tmp_path: Path, can_exchange: None
) -> None:
    outside = tmp_path / "outside"
    for i in range(WRITES):
        (outside / f"f_{i}.txt").write_text(f"{SECRET} {i}\n")  # what d/f_i.txt reaches through the link
    before = tree(outside)
    real = root / "d"
    real.mkdir()
    for i in range(WRITES):
        (real / f"f_{i}.txt").write_text(f"in-root {i}\n")
        (root / f"src_{i}.txt").write_text(f"moved {i}\n")
    swap = root / "d.swap"
    os.symlink("../outside", swap)
    session = workspace.session("race-e")
    done: list[int] = []
    with racing(helper, Swap(real, swap), tmp_path / "stop") as flips:
        for i in range(WRITES):
            if tool == "move":
                check(session.call("read", {"file_path": f"src_{i}.txt"}), RACE_E_CODES)
                result = session.call("move", {"source": f"src_{i}.txt", "destination": f"d/moved_{i}.txt"})
            else:
                check(session.call("read", {"file_path": f"d/f_{i}.txt"}), RACE_E_CODES)
                result = session.call("delete", {"file_path": f"d/f_{i}.txt"})
            if not check(result, RACE_E_CODES).is_error:
                done.append(i)
    assert flips[0] > 0
    assert tree(outside) == before, "something outside the root was created, changed or removed"
    if real.is_symlink():
        exchange(real, swap)
    if tool == "move":
        landed = sorted(int(n[6:-4]) for n in os.listdir(real) if n.startswith("moved_"))
        assert landed == done, "every successful move, and only those, put its file in the real directory"
        assert all(not (root / f"src_{i}.txt").exists() for i in done)
    else:
        assert all(not (real / f"f_{i}.txt").exists() for i in done)
        assert all((real / f"f_{i}.txt").read_text() == f"in-root {i}\n" for i in range(WRITES) if i not in done)
    assert not list(root.rglob("*.fs-tools.tmp"))


# --- (f) the directory a search, listing or survey walks swapped for a symlink to outside ---------------------

RACE_F_CODES = {"FS_SANDBOX_DENIED", "FS_IO_ERROR", "FS_NOT_FOUND", "FS_NOT_DIRECTORY", "FS_NOT_REGULAR_FILE"}
SURVEYS = {
    "list": {"path": "d", "depth": 3},
    "glob": {"pattern": "**/*.txt", "path": "d"},
    "grep": {"pattern": "TOP|in-root", "path": "d"},
    "stat": {"path": "d/f.txt"},
    "read_many": {"file_paths": ["d/f.txt", "d/sub/g.txt"]},
}


@pytest.mark.parametrize("helper", HELPERS)
@pytest.mark.parametrize("tool", sorted(SURVEYS))
def test_a_directory_swapped_for_a_symlink_to_outside_while_it_is_surveyed(
    tool: str, helper: str, root: Path, workspace: Workspace, tmp_path: Path, can_exchange: None
) -> None:
    outside = tmp_path / "outside"
    (outside / "sub").mkdir(parents=True, exist_ok=True)
    (outside / "f.txt").write_text(f"{SECRET} f\n")
    (outside / "sub" / "g.txt").write_text(f"{SECRET} g\n")
    before = tree(outside)
    real = root / "d"
    (real / "sub").mkdir(parents=True)
    (real / "f.txt").write_text("in-root f\n")
    (real / "sub" / "g.txt").write_text("in-root g\n")
    swap = root / "d.swap"
    os.symlink("../outside", swap)
    session = workspace.session("race-f")
    with racing(helper, Swap(real, swap), tmp_path / "stop") as flips:
        for _ in range(WRITES // 2):
            result = check(session.call(tool, SURVEYS[tool]), RACE_F_CODES)
            if tool == "read_many" and result.value is not None:
                assert all(f["code"] in (None, *RACE_F_CODES) for f in result.value["files"]), result.text
    assert flips[0] > 0
    assert tree(outside) == before
