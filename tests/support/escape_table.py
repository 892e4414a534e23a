"""The escape table (after Go's root_test.go): every way out of a root, each with a control case, and
every operation that takes a path; tests/safety/test_escape_table.py runs it against the tools,
tests/safety/test_escape_table_hooks.py against what the hooks call."""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fs_tools import Session
from fs_tools.result import ToolResult

SECRET = "TOP-SECRET"


SECRET_BYTES = b"TOP-SECRET\n"


SECRET_MODE = 0o640


PLAIN_BYTES = b"plain SECRET\n"  # edits replace "SECRET": they would hit the outside secret too


MOVER_BYTES = b"mover\n"


TEMP_NAME = re.compile(r"\.[0-9a-f]{16}\.fs-tools\.(tmp|dir)")


RESERVED_FILE = ".0123456789abcdef.fs-tools.tmp"


RESERVED_DIR = ".fedcba9876543210.fs-tools.dir"


HANG_GUARD_SECONDS = 10.0  # only a guard against a hang (a FIFO opened), never a timing assertion


def tree(base: Path, *, skip: str | None = None) -> dict[str, tuple[Any, ...]]:
    """Everything under ``base``, not following symlinks: kind, mode, inode, and bytes or link target."""
    out: dict[str, tuple[Any, ...]] = {}
    for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
        rel_dir = os.path.relpath(dirpath, base)
        if skip is not None and rel_dir == ".":
            dirnames[:] = [d for d in dirnames if d != skip]
            filenames = [f for f in filenames if f != skip]
        for name in sorted(dirnames + filenames):
            full = os.path.join(dirpath, name)
            rel = os.path.normpath(os.path.join(rel_dir, name))
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(full))
            elif stat.S_ISREG(st.st_mode):
                out[rel] = ("file", stat.S_IMODE(st.st_mode), st.st_ino, Path(full).read_bytes())
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", stat.S_IMODE(st.st_mode), st.st_ino)
            else:
                out[rel] = ("special", st.st_mode, st.st_ino)
    return out


def temp_names(root: Path) -> set[str]:
    found = set()
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in dirnames + filenames:
            if TEMP_NAME.fullmatch(name):
                found.add(os.path.relpath(os.path.join(dirpath, name), root))
    return found


@dataclass
class Env:
    tmp: Path
    root: Path
    outside: Path
    secret: Path

    @property
    def secret_identity(self) -> tuple[bytes, int, int]:
        st = os.lstat(self.secret)
        return self.secret.read_bytes(), st.st_ino, stat.S_IMODE(st.st_mode)


def build(tmp_path: Path) -> Env:
    root = tmp_path / "root"
    outside = tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    secret = outside / "secret.txt"
    secret.write_bytes(SECRET_BYTES)
    secret.chmod(SECRET_MODE)
    (root / "plain.txt").write_bytes(PLAIN_BYTES)
    (root / "mover.txt").write_bytes(MOVER_BYTES)
    (root / "sub").mkdir()
    (root / "sub" / "inner.txt").write_bytes(b"inner SECRET\n")
    return Env(tmp_path, root, outside, secret)


PathOf = Callable[[Env], str]


@dataclass(frozen=True)
class Attempt:
    id: str
    file: PathOf  # a path naming a file (read, write, edit, stat, delete, both ends of move, ...)
    dir: PathOf  # a path naming a directory (list, glob, grep)
    new: PathOf  # a path that would be created (write-new, move-new, create_directory)
    setup: Callable[[Env], None] = lambda env: None
    links: tuple[str, ...] = ()  # in-root symlinks the setup made (listed as links, never followed)
    leaf: str | None = None  # the in-root name a successful call acts on
    secret_readable: bool = False  # the hard link: reading shows the secret's bytes (HARDLINK_NOTE)
    planted_temps: frozenset[str] = frozenset()


def const(path: str) -> PathOf:
    return lambda env: path


def _symlink(name: str, target: Callable[[Env], str]) -> Callable[[Env], None]:
    return lambda env: os.symlink(target(env), env.root / name)


def _chain(env: Env) -> None:
    os.symlink("chain2", env.root / "chain1")
    os.symlink("../outside/secret.txt", env.root / "chain2")  # relative: climbs out from the root


def _hardlink(env: Env) -> None:
    os.link(env.secret, env.root / "hard.txt")


def _fifo(env: Env) -> None:
    os.mkfifo(env.root / "pipe")


def _reserved(env: Env) -> None:
    # an orphaned temp of a killed writer (its partial bytes are nobody's content)
    (env.root / RESERVED_FILE).write_bytes(b"reserved SECRET\n")


ATTEMPTS = [
    Attempt("control", const("plain.txt"), const("sub"), const("made/new.txt"), leaf="plain.txt"),
    Attempt("dotdot", const("../outside/secret.txt"), const("../outside"), const("../outside/made/new.txt")),
    Attempt(
        "absolute",
        lambda env: str(env.secret),
        lambda env: str(env.outside),
        lambda env: str(env.outside / "made" / "new.txt"),
    ),
    Attempt(
        "link-to-file",
        const("link"),
        const("link"),
        const("link"),
        setup=_symlink("link", lambda env: str(env.secret)),
        links=("link",),
        leaf="link",
    ),
    Attempt(
        "link-dir-as-parent",
        const("dlink/secret.txt"),
        const("dlink"),
        const("dlink/made/new.txt"),
        setup=_symlink("dlink", lambda env: str(env.outside)),
        links=("dlink",),
    ),
    Attempt(
        "dangling-link",
        const("dangling"),
        const("dangling"),
        const("dangling"),
        setup=_symlink("dangling", lambda env: str(env.outside / "missing.txt")),
        links=("dangling",),
        leaf="dangling",
    ),
    Attempt(
        "link-chain",
        const("chain1"),
        const("chain1"),
        const("chain1"),
        setup=_chain,
        links=("chain1", "chain2"),
        leaf="chain1",
    ),
    Attempt(
        "subdir-dotdot",
        const("sub/../../outside/secret.txt"),
        const("sub/../../outside"),
        const("sub/../../outside/made/new.txt"),
    ),
    Attempt(
        "hardlink",
        const("hard.txt"),
        const("hard.txt"),
        const("hard.txt"),
        setup=_hardlink,
        leaf="hard.txt",
        secret_readable=True,
    ),
    Attempt("fifo", const("pipe"), const("pipe"), const("pipe"), setup=_fifo, leaf="pipe"),
    Attempt(
        "reserved-name",
        const(RESERVED_FILE),
        const(RESERVED_FILE),
        const(f"{RESERVED_DIR}/made/new.txt"),  # a staging directory's name, as a parent to create
        setup=_reserved,
        planted_temps=frozenset({RESERVED_FILE}),
    ),
    Attempt("root", const("."), const("."), const(".")),
    Attempt("root-absolute", lambda env: str(env.root), lambda env: str(env.root), lambda env: str(env.root)),
]


@dataclass(frozen=True)
class Paths:
    file: str
    dir: str
    new: str


MUTATING_TOOLS = {"write", "edit", "multi_edit", "move", "copy", "delete", "create_directory", "notebook_edit"}


@dataclass(frozen=True)
class Operation:
    id: str
    tool: str
    escaping: str | None  # which of the attempt's paths the call sends (FILE, DIR, NEW); None: the root
    args: Callable[[Paths], dict[str, Any]]
    prime: Callable[[Paths], tuple[str, ...]] = lambda p: ()  # files to read first (read-before-write)

    @property
    def mutating(self) -> bool:
        return self.tool in MUTATING_TOOLS


def _edit_args(p: Paths) -> dict[str, Any]:
    return {"file_path": p.file, "old_string": "SECRET", "new_string": "PWNED"}


FILE, DIR, NEW = "file", "dir", "new"

OPERATIONS = [
    Operation("read", "read", FILE, lambda p: {"file_path": p.file}),
    Operation("write", "write", FILE, lambda p: {"file_path": p.file, "content": "PWNED\n"}, lambda p: (p.file,)),
    Operation("write-new", "write", NEW, lambda p: {"file_path": p.new, "content": "PWNED\n"}),
    Operation("edit", "edit", FILE, _edit_args, lambda p: (p.file,)),
    Operation(
        "multi_edit",
        "multi_edit",
        FILE,
        lambda p: {"file_path": p.file, "edits": [{"old_string": "SECRET", "new_string": "PWNED"}]},
        lambda p: (p.file,),
    ),
    Operation("list", "list", DIR, lambda p: {"path": p.dir, "depth": 5, "include_hidden": True}),
    Operation("glob", "glob", DIR, lambda p: {"pattern": "**/*", "path": p.dir}),
    Operation("glob-pattern", "glob", FILE, lambda p: {"pattern": p.file}),  # the escape as the pattern itself
    Operation("grep", "grep", DIR, lambda p: {"pattern": "SECRET", "path": p.dir, "include_ignored": True}),
    Operation("grep-glob", "grep", FILE, lambda p: {"pattern": "SECRET", "glob": p.file}),  # ... as the filter
    Operation("read_many", "read_many", FILE, lambda p: {"file_paths": [p.file]}),
    Operation("stat", "stat", FILE, lambda p: {"path": p.file}),
    Operation(
        "move-source", "move", FILE, lambda p: {"source": p.file, "destination": "moved.txt"}, lambda p: (p.file,)
    ),
    Operation(
        "move-destination",
        "move",
        FILE,
        lambda p: {"source": "mover.txt", "destination": p.file, "overwrite": True},
        lambda p: ("mover.txt", p.file),
    ),
    Operation(
        "move-new", "move", NEW, lambda p: {"source": "mover.txt", "destination": p.new}, lambda p: ("mover.txt",)
    ),
    Operation("copy-source", "copy", FILE, lambda p: {"source": p.file, "destination": "copied.txt"}),
    Operation(
        "copy-destination",
        "copy",
        FILE,
        lambda p: {"source": "mover.txt", "destination": p.file, "overwrite": True},
        lambda p: (p.file,),
    ),
    Operation("copy-new", "copy", NEW, lambda p: {"source": "mover.txt", "destination": p.new}),
    Operation("delete", "delete", FILE, lambda p: {"file_path": p.file}, lambda p: (p.file,)),
    Operation("create_directory", "create_directory", NEW, lambda p: {"path": p.new}),
    Operation(
        "notebook_edit",
        "notebook_edit",
        FILE,
        lambda p: {"notebook_path": p.file, "cell": 0, "new_source": "PWNED"},
        lambda p: (p.file,),
    ),
    # the attempt's setup lies in the tree the discovery tools walk: shown, never followed
    Operation("list-root", "list", None, lambda p: {"path": ".", "depth": 5, "include_hidden": True}),
    Operation("glob-root", "glob", None, lambda p: {"pattern": "**/*"}),
    Operation("grep-root", "grep", None, lambda p: {"pattern": "SECRET", "include_ignored": True}),
]


BY_OP = {op.id: op for op in OPERATIONS}


DENIED = "FS_SANDBOX_DENIED"


NOT_REGULAR = "FS_NOT_REGULAR_FILE"


NOT_DIRECTORY = "FS_NOT_DIRECTORY"


OK = None  # success


Check = Callable[[Env, ToolResult], None]


@dataclass(frozen=True)
class Outcome:
    code: str | None  # the error code; for read_many the inline code of its one file; None: success
    check: Check | None = None  # facts a success must show (on the disk and in the result)
    bug: str | None = None  # the library disagrees with SPEC: xfail(strict=True) with this reason


def _bytes(name: str, expected: bytes) -> Check:
    def check(env: Env, result: ToolResult) -> None:
        assert (env.root / name).read_bytes() == expected

    return check


def _gone(name: str, *, moved_to: str | None = None, content: bytes | None = None) -> Check:
    def check(env: Env, result: ToolResult) -> None:
        assert not os.path.lexists(env.root / name)
        if moved_to is not None:
            assert (env.root / moved_to).read_bytes() == content

    return check


def _in_text(*needles: str) -> Check:
    def check(env: Env, result: ToolResult) -> None:
        for needle in needles:
            assert needle in result.text, (needle, result.text)

    return check


def _matches(count: int, *needles: str) -> Check:
    def check(env: Env, result: ToolResult) -> None:
        assert result.value["matches"] == count, result.text
        _in_text(*needles)(env, result)

    return check


def _kind(kind: str) -> Check:
    def check(env: Env, result: ToolResult) -> None:
        assert result.value["kind"] == kind, result.value

    return check


def _read_one(total_lines: int, line: str) -> Check:
    def check(env: Env, result: ToolResult) -> None:
        entry = result.value["files"][0]
        assert entry["read"]["total_lines"] == total_lines
        assert line in result.text

    return check


def _new_inode(name: str, expected: bytes) -> Check:
    """The hard link's in-root name now holds a new inode; the outside one is checked by every test."""

    def check(env: Env, result: ToolResult) -> None:
        assert (env.root / name).read_bytes() == expected
        assert os.lstat(env.root / name).st_ino != os.lstat(env.secret).st_ino

    return check


def _directory_exists(created: bool) -> Check:
    def check(env: Env, result: ToolResult) -> None:
        assert result.value["created"] is created, result.text
        assert (env.root / result.value["path"]).is_dir()

    return check


def _root_listing(env: Env, result: ToolResult) -> None:
    assert "plain.txt" in result.text and "sub/" in result.text, result.text


# Defaults: every path op on every escaping attempt is FS_SANDBOX_DENIED; a glob pattern or grep filter
# is only matched against in-root paths, so an escape there matches nothing (a success with 0 matches).
EXPECTED: dict[tuple[str, str], Outcome] = {
    # --- control: a plain file (or directory, or new name) inside the root: everything succeeds
    ("read", "control"): Outcome(OK, _in_text("1\tplain SECRET")),
    ("write", "control"): Outcome(OK, _bytes("plain.txt", b"PWNED\n")),
    ("write-new", "control"): Outcome(OK, _bytes("made/new.txt", b"PWNED\n")),
    ("edit", "control"): Outcome(OK, _bytes("plain.txt", b"plain PWNED\n")),
    ("multi_edit", "control"): Outcome(OK, _bytes("plain.txt", b"plain PWNED\n")),
    ("list", "control"): Outcome(OK, _in_text("inner.txt  (13 bytes)")),
    ("glob", "control"): Outcome(OK, _matches(1, "sub/inner.txt")),
    ("glob-pattern", "control"): Outcome(OK, _matches(1, "plain.txt")),
    ("grep", "control"): Outcome(OK, _matches(1, "sub/inner.txt:1: inner SECRET")),
    ("grep-glob", "control"): Outcome(OK, _matches(1, "plain.txt:1: plain SECRET")),
    ("read_many", "control"): Outcome(OK, _read_one(1, "1\tplain SECRET")),
    ("stat", "control"): Outcome(OK, _kind("file")),
    ("move-source", "control"): Outcome(OK, _gone("plain.txt", moved_to="moved.txt", content=PLAIN_BYTES)),
    ("move-destination", "control"): Outcome(OK, _gone("mover.txt", moved_to="plain.txt", content=MOVER_BYTES)),
    ("move-new", "control"): Outcome(OK, _gone("mover.txt", moved_to="made/new.txt", content=MOVER_BYTES)),
    ("copy-source", "control"): Outcome(OK, _bytes("copied.txt", PLAIN_BYTES)),
    ("copy-destination", "control"): Outcome(OK, _bytes("plain.txt", MOVER_BYTES)),
    ("copy-new", "control"): Outcome(OK, _bytes("made/new.txt", MOVER_BYTES)),
    ("delete", "control"): Outcome(OK, _gone("plain.txt")),
    ("create_directory", "control"): Outcome(OK, _directory_exists(True)),
    # reached the file through every gate, and found text that is not a notebook: nothing written
    ("notebook_edit", "control"): Outcome("FS_NOT_TEXT"),
    # --- hard link: an ordinary in-root file by name (the HARDLINK_NOTE comment)
    ("read", "hardlink"): Outcome(OK, _in_text("1\tTOP-SECRET")),
    ("write", "hardlink"): Outcome(OK, _new_inode("hard.txt", b"PWNED\n")),
    ("write-new", "hardlink"): Outcome("FS_NOT_OBSERVED"),  # an existing file the session has not read
    ("edit", "hardlink"): Outcome(OK, _new_inode("hard.txt", b"TOP-PWNED\n")),
    ("multi_edit", "hardlink"): Outcome(OK, _new_inode("hard.txt", b"TOP-PWNED\n")),
    ("list", "hardlink"): Outcome(NOT_DIRECTORY),
    ("glob", "hardlink"): Outcome(NOT_DIRECTORY),
    ("glob-pattern", "hardlink"): Outcome(OK, _matches(1, "hard.txt")),
    ("grep", "hardlink"): Outcome(OK, _matches(1, "hard.txt:1: TOP-SECRET")),  # grep takes a file as well
    ("grep-glob", "hardlink"): Outcome(OK, _matches(1, "hard.txt:1: TOP-SECRET")),
    ("read_many", "hardlink"): Outcome(OK, _read_one(1, "1\tTOP-SECRET")),
    ("stat", "hardlink"): Outcome(OK, _kind("file")),
    ("move-source", "hardlink"): Outcome(OK, _gone("hard.txt", moved_to="moved.txt", content=SECRET_BYTES)),
    ("move-destination", "hardlink"): Outcome(OK, _new_inode("hard.txt", MOVER_BYTES)),
    ("move-new", "hardlink"): Outcome("FS_NOT_OBSERVED"),  # onto an existing file the session has not read
    ("copy-source", "hardlink"): Outcome(OK, _bytes("copied.txt", SECRET_BYTES)),  # an in-root file by name
    ("copy-destination", "hardlink"): Outcome(OK, _new_inode("hard.txt", MOVER_BYTES)),
    ("copy-new", "hardlink"): Outcome("FS_NOT_OBSERVED"),  # onto an existing file the session has not read
    ("delete", "hardlink"): Outcome(OK, _gone("hard.txt")),
    ("create_directory", "hardlink"): Outcome(NOT_DIRECTORY),  # an existing non-directory (§13)
    ("notebook_edit", "hardlink"): Outcome("FS_NOT_TEXT"),  # the secret's text is no notebook: left as it is
    # --- FIFO: refused without being opened (no hang); a directory-taking op says it is not a directory
    ("read", "fifo"): Outcome(NOT_REGULAR),
    ("write", "fifo"): Outcome(NOT_REGULAR),
    ("write-new", "fifo"): Outcome(NOT_REGULAR),
    ("edit", "fifo"): Outcome(NOT_REGULAR),
    ("multi_edit", "fifo"): Outcome(NOT_REGULAR),
    ("list", "fifo"): Outcome(NOT_DIRECTORY),
    ("glob", "fifo"): Outcome(NOT_DIRECTORY),
    ("glob-pattern", "fifo"): Outcome(OK, _matches(0)),  # glob lists regular files only
    ("grep", "fifo"): Outcome(NOT_REGULAR),  # named as grep's path: refused, not skipped
    ("grep-glob", "fifo"): Outcome(OK, _matches(0)),  # met during the walk: skipped
    ("read_many", "fifo"): Outcome(NOT_REGULAR),
    # stat describes the entry from lstat, never opening it: a success is right here
    ("stat", "fifo"): Outcome(OK, _kind("special file")),
    ("move-source", "fifo"): Outcome(NOT_REGULAR),
    ("move-destination", "fifo"): Outcome(NOT_REGULAR),  # a move never replaces a non-regular file
    ("move-new", "fifo"): Outcome(NOT_REGULAR),
    ("copy-source", "fifo"): Outcome(NOT_REGULAR),  # never opened
    ("copy-destination", "fifo"): Outcome(NOT_REGULAR),  # a copy never replaces a non-regular file
    ("copy-new", "fifo"): Outcome(NOT_REGULAR),
    ("delete", "fifo"): Outcome(NOT_REGULAR),
    ("create_directory", "fifo"): Outcome(NOT_DIRECTORY),
    ("notebook_edit", "fifo"): Outcome(NOT_REGULAR),
    # --- the root itself: never moved or deleted; a directory where a file is wanted
    **{
        (op, root_id): outcome
        for root_id in ("root", "root-absolute")
        for op, outcome in {
            "read": Outcome(NOT_REGULAR),
            "write": Outcome(NOT_REGULAR),
            "write-new": Outcome(NOT_REGULAR),
            "edit": Outcome(NOT_REGULAR),
            "multi_edit": Outcome(NOT_REGULAR),
            "list": Outcome(OK, _root_listing),
            "glob": Outcome(OK, _matches(3, "plain.txt", "sub/inner.txt")),
            "glob-pattern": Outcome(OK, _matches(0)),
            "grep": Outcome(OK, _matches(2, "plain.txt:1: plain SECRET")),
            "grep-glob": Outcome(OK, _matches(0)),
            "read_many": Outcome(NOT_REGULAR),
            "stat": Outcome(OK, _kind("directory")),
            "move-source": Outcome(DENIED),  # SPEC §13: the root itself is never moved
            # SPEC §13: a move onto an existing directory is refused with FS_NOT_REGULAR_FILE
            "move-destination": Outcome(NOT_REGULAR),
            "move-new": Outcome(NOT_REGULAR),
            "copy-source": Outcome(NOT_REGULAR),  # a directory is not copied
            "copy-destination": Outcome(NOT_REGULAR),  # nor replaced
            "copy-new": Outcome(NOT_REGULAR),
            "delete": Outcome(DENIED),  # SPEC §13: the root itself is never deleted
            "create_directory": Outcome(OK, _directory_exists(False)),  # an existing directory: success
            "notebook_edit": Outcome(NOT_REGULAR),
        }.items()
    },
}


def expected(op: Operation, attempt: Attempt) -> Outcome:
    if (op.id, attempt.id) in EXPECTED:
        return EXPECTED[op.id, attempt.id]
    if op.id in ("glob-pattern", "grep-glob"):
        return Outcome(OK, _matches(0))
    if op.id.endswith("-root"):
        return Outcome(OK, _root_walk_check(op.id, attempt))
    return Outcome(DENIED)


def _root_walk_check(op_id: str, attempt: Attempt) -> Check:
    """list/glob/grep of the whole root with the attempt in it: links shown as links, never followed;
    FIFOs never opened; temps never shown; the secret's bytes only through the hard link."""

    def check(env: Env, result: ToolResult) -> None:
        text = result.text
        rows = text.splitlines()
        if op_id == "list-root":
            for link in attempt.links:
                assert f"{link}@  (symlink, not followed)" in rows, text
            assert "secret.txt" not in text and "missing.txt" not in text, text  # no link was entered
            assert "plain.txt  (13 bytes)" in rows
            if attempt.id == "fifo":
                assert "pipe  (special file)" in rows
            if attempt.id == "hardlink":
                assert "hard.txt  (11 bytes)" in rows
        elif op_id == "glob-root":
            shown = set(rows)
            want = {"mover.txt", "plain.txt", "sub/inner.txt"} | ({"hard.txt"} if attempt.id == "hardlink" else set())
            assert shown == want, text  # links, the FIFO and temps are not files of the walk
        else:
            want = {"plain.txt:1: plain SECRET", "sub/inner.txt:1: inner SECRET"}
            if attempt.id == "hardlink":
                want.add("hard.txt:1: TOP-SECRET")
            assert set(rows) == want, text  # nothing through a link, nothing of a temp ("reserved SECRET")
        for link in attempt.links:
            if op_id != "list-root":
                assert link not in text, text

    return check


def call_guarded(session: Session, tool: str, args: dict[str, Any], root: Path) -> ToolResult:
    """One call in a thread, so that a hang (a FIFO opened) fails the test instead of freezing the suite."""
    results: list[ToolResult] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            results.append(session.call(tool, args))
        except BaseException as exc:  # a call must never raise: report it instead of losing it
            errors.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(HANG_GUARD_SECONDS)
    if worker.is_alive():
        _unblock_fifos(root)
        worker.join(HANG_GUARD_SECONDS)
        pytest.fail(f"{tool} {args!r} did not return: it hangs")
    if errors:
        raise AssertionError(f"{tool} {args!r} raised instead of returning a result") from errors[0]
    return results[0]


def _unblock_fifos(root: Path) -> None:
    """Release a call stuck opening a FIFO, so the thread (and the workspace's close) can end."""
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            path = os.path.join(dirpath, name)
            if not stat.S_ISFIFO(os.lstat(path).st_mode):
                continue
            for flags in (os.O_WRONLY | os.O_NONBLOCK, os.O_RDONLY | os.O_NONBLOCK):
                with contextlib.suppress(OSError):
                    os.close(os.open(path, flags))


def sent_strings(args: Any) -> list[str]:
    if isinstance(args, str):
        return [args]
    if isinstance(args, dict):
        return [s for value in args.values() for s in sent_strings(value)]
    if isinstance(args, list):
        return [s for value in args for s in sent_strings(value)]
    return []


def assert_no_leak(env: Env, result: ToolResult, args: dict[str, Any], *, secret_allowed: bool) -> None:
    """No secret bytes; no outside path other than inside a string the caller sent itself."""
    forbidden = {str(env.outside), os.path.realpath(env.outside), "../outside"}
    texts = [result.text, json.dumps(result.to_dict()), json.dumps(result.value), str(result.value)]
    sent = sorted(sent_strings(args), key=len, reverse=True)
    for text in texts:
        if not secret_allowed:
            assert SECRET not in text, text
        for string in sent:
            text = text.replace(string, "<sent>")
        for path in forbidden:
            assert path not in text, f"{path!r} leaked in {text!r}"
