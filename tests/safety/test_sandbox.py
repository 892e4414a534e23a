"""Confinement of every tool to the workspace root, on a real directory (SPEC §8).

The core is a table of escape attempts (in the manner of Go's ``os.Root`` tests) run against every tool.
After each call we assert the code, that nothing anywhere under ``tmp_path`` (the root, its sibling
``outside`` with the secret, the ``root_evil`` look-alike) nor ``/etc/passwd`` changed, and that no
result text carries the secret or an absolute path the model did not send itself.
"""

from __future__ import annotations

import json
import os
import socket
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from fs_tools import Session, Workspace
from fs_tools.result import ToolResult
from tests.support.sandbox import MUTATING, SECRET, TOOLS, call_guarded, code_of, outside_world, tool_args, world

# --- helpers --------------------------------------------------------------------------------------------


def texts_of(result: ToolResult) -> list[str]:
    return [result.text, str(result.to_dict()), json.dumps(result.to_dict()), str(result.value)]


def assert_no_leak(result: ToolResult, sent: str, tmp_path: Path) -> None:
    """No secret, and no absolute path of the test tree unless it is the exact string the model sent."""
    forbidden = {str(tmp_path), os.path.realpath(tmp_path), str(tmp_path / "outside")}
    for text in texts_of(result):
        assert SECRET not in text, text
        scrubbed = text.replace(sent, "<sent>")
        for path in forbidden:
            assert path not in scrubbed, f"{path!r} leaked in {text!r}"


# --- the escape table -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Escape:
    id: str
    path: Callable[[Path, Path], str]  # (root, tmp_path) -> the file_path the model sends
    setup: Callable[[Path, Path], None] = lambda root, tmp: None
    code: str = "FS_SANDBOX_DENIED"
    # read first in the same session, so a broken sandbox would also let the write/edit gates pass;
    # never for system files, where a broken sandbox must not turn the test into damage
    prime: bool = True


def _dirs(*names: str) -> Callable[[Path, Path], None]:
    def make(root: Path, tmp: Path) -> None:
        for name in names:
            (root / name).mkdir(parents=True, exist_ok=True)

    return make


def _links(**links: str | Callable[[Path, Path], str]) -> Callable[[Path, Path], None]:
    """Create symlinks ``name -> target`` in the root (``__`` in a name stands for ``/``)."""

    def make(root: Path, tmp: Path) -> None:
        for name, target in links.items():
            link = root / name.replace("__", "/")
            link.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(target(root, tmp) if callable(target) else target, link)

    return make


def _steps(*steps: Callable[[Path, Path], None]) -> Callable[[Path, Path], None]:
    def make(root: Path, tmp: Path) -> None:
        for step in steps:
            step(root, tmp)

    return make


def _rel(path: str) -> Callable[[Path, Path], str]:
    return lambda root, tmp: path


def _secret_abs(root: Path, tmp: Path) -> str:
    return str(tmp / "outside" / "secret.txt")


def _outside_new_abs(root: Path, tmp: Path) -> str:
    return str(tmp / "outside" / "new.txt")


def _outside_abs(root: Path, tmp: Path) -> str:
    return str(tmp / "outside")


def _evil_abs(root: Path, tmp: Path) -> str:
    return str(tmp / "root_evil" / "f.txt")


def _evil_new_abs(root: Path, tmp: Path) -> str:
    return str(tmp / "root_evil" / "new.txt")


def _root_prefixed_escape(root: Path, tmp: Path) -> str:
    return f"{root}/../outside/secret.txt"


ESCAPES = [
    # lexical `..` at several depths, over existing and missing directories
    Escape("dotdot-1", _rel("../outside/secret.txt")),
    Escape("dotdot-new-file", _rel("../outside/new.txt")),
    Escape("dotdot-to-tmp", _rel("../escape.txt")),
    Escape("dotdot-2-levels-up", _rel("../../escape.txt")),
    Escape("dot-then-dotdot", _rel("./../outside/secret.txt")),
    Escape("dir-dotdot-2", _rel("a/../../outside/secret.txt"), setup=_dirs("a")),
    Escape("missing-dir-dotdot-2", _rel("nope/../../outside/secret.txt")),
    Escape("missing-dir-dotdot-new", _rel("nope/../../outside/new.txt")),
    Escape("dir-dotdot-3", _rel("a/b/../../../x"), setup=_dirs("a/b")),
    Escape("missing-dir-dotdot-3", _rel("a/b/../../../x")),
    Escape("dir-dotdot-3-secret", _rel("a/b/../../../outside/secret.txt"), setup=_dirs("a/b")),
    Escape("half-missing-dotdot-3", _rel("a/b/../../../outside/new.txt"), setup=_dirs("a")),
    # absolute paths outside the root
    Escape("abs-etc-passwd", _rel("/etc/passwd"), prime=False),
    Escape("abs-secret", _secret_abs),
    Escape("abs-outside-new-file", _outside_new_abs),
    Escape("abs-outside-dir", _outside_abs),
    Escape("abs-root-prefixed-escape", _root_prefixed_escape),
    # a sibling whose name extends the root's (CVE-2025-53110 style prefix confusion)
    Escape("abs-root-evil", _evil_abs),
    Escape("abs-root-evil-new-file", _evil_new_abs),
    # symlinks to the outside file, relative and absolute
    Escape("link-file-abs", _rel("ln"), setup=_links(ln=_secret_abs)),
    Escape("link-file-rel", _rel("ln"), setup=_links(ln="../outside/secret.txt")),
    Escape("link-file-in-subdir", _rel("sub/ln"), setup=_links(sub__ln="../../outside/secret.txt")),
    Escape("link-root-evil", _rel("ln"), setup=_links(ln=_evil_abs)),
    Escape("link-root-prefixed-escape", _rel("ln"), setup=_links(ln=_root_prefixed_escape)),
    # symlinks to the outside directory: reading through it, creating a file under it
    Escape("link-dir-abs-read", _rel("dl/secret.txt"), setup=_links(dl=_outside_abs)),
    Escape("link-dir-abs-new", _rel("dl/new.txt"), setup=_links(dl=_outside_abs)),
    Escape("link-dir-rel-read", _rel("dl/secret.txt"), setup=_links(dl="../outside")),
    Escape("link-dir-rel-new", _rel("dl/new.txt"), setup=_links(dl="../outside")),
    Escape("link-dir-rel-deep-new", _rel("dl/deeper/new.txt"), setup=_links(dl="../outside")),
    Escape("link-dir-itself", _rel("dl"), setup=_links(dl="../outside")),
    # dangling links that point outside
    Escape("dangling-rel", _rel("dang"), setup=_links(dang="../outside/new.txt")),
    Escape("dangling-abs", _rel("dang"), setup=_links(dang=_outside_new_abs)),
    Escape("dangling-abs-missing-dir", _rel("dang"), setup=_links(dang=lambda r, t: str(t / "newdir" / "f.txt"))),
    # dangling links used as a parent directory: nothing may be created outside
    Escape("link-dir-dangling-rel-new", _rel("dl/f.txt"), setup=_links(dl="../newdir")),
    Escape("link-dir-dangling-abs-new", _rel("dl/f.txt"), setup=_links(dl=lambda r, t: str(t / "newdir"))),
    # `..` after an in-root link is taken from the link's target
    Escape(
        "link-then-dotdot",
        _rel("deep/../../../outside/secret.txt"),
        setup=_steps(_dirs("a/b"), _links(deep="a/b")),
    ),
    # a chain of in-root links whose last hop escapes
    Escape(
        "link-chain-escapes",
        _rel("c1"),
        setup=_links(c1="c2", c2="sub/c3", sub__c3="../../outside/secret.txt"),
    ),
    Escape("link-chain-dir-escapes", _rel("c1/secret.txt"), setup=_links(c1="c2", c2="../outside")),
    # link -> ../ (the root's parent)
    Escape("link-up-read", _rel("up/outside/secret.txt"), setup=_links(up="../")),
    Escape("link-up-new", _rel("up/outside/new.txt"), setup=_links(up="../")),
    Escape("link-up-sibling", _rel("up/escape.txt"), setup=_links(up="..")),
    Escape("link-up-itself", _rel("up"), setup=_links(up="../")),
    # loops: an error, not a hang and not a crash
    Escape("loop-self", _rel("loop"), setup=_links(loop="loop"), code="FS_IO_ERROR"),
    Escape("loop-pair", _rel("la"), setup=_links(la="lb", lb="la"), code="FS_IO_ERROR"),
    Escape("loop-as-dir", _rel("loop/x.txt"), setup=_links(loop="loop"), code="FS_IO_ERROR"),
]


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("case", ESCAPES, ids=[c.id for c in ESCAPES])
def test_escape_attempt_is_refused_and_changes_nothing(
    case: Escape, tool: str, root: Path, workspace: Workspace, tmp_path: Path
) -> None:
    (tmp_path / "root_evil").mkdir()
    (tmp_path / "root_evil" / "f.txt").write_text(f"{SECRET} evil\n")
    case.setup(root, tmp_path)
    path = case.path(root, tmp_path)
    before = world(tmp_path)
    session = workspace.session(f"escape-{case.id}-{tool}")

    if case.prime and tool != "read":
        primed = call_guarded(session, "read", {"file_path": path})
        assert code_of(primed) == case.code, primed.text
        assert_no_leak(primed, path, tmp_path)
    result = call_guarded(session, tool, tool_args(tool, path))

    assert code_of(result) == case.code, result.text
    assert result.value is None
    assert_no_leak(result, path, tmp_path)
    assert world(tmp_path) == before
    assert not (tmp_path.parent / "escape.txt").exists()


# --- absolute paths inside the root --------------------------------------------------------------------


def test_absolute_paths_inside_the_root_work_for_every_tool(root: Path, session: Session, tmp_path: Path) -> None:
    outside = outside_world(tmp_path)
    (root / "sub").mkdir()
    target = root / "sub" / "in.txt"
    target.write_text("alpha\nbeta\n")
    path = str(target)

    read = session.call("read", {"file_path": path})
    assert not read.is_error, read.text
    assert "alpha" in read.text
    edit = session.call("edit", {"file_path": path, "old_string": "alpha", "new_string": "gamma"})
    assert not edit.is_error, edit.text
    multi = session.call("multi_edit", {"file_path": path, "edits": [{"old_string": "beta", "new_string": "delta"}]})
    assert not multi.is_error, multi.text
    assert target.read_bytes() == b"gamma\ndelta\n"
    write = session.call("write", {"file_path": path, "content": "omega\n"})
    assert not write.is_error, write.text
    assert target.read_bytes() == b"omega\n"

    created = session.call("write", {"file_path": f"{root}/sub/../made.txt", "content": "new\n"})
    assert not created.is_error, created.text
    assert (root / "made.txt").read_bytes() == b"new\n"
    for result, sent in ((read, path), (edit, path), (multi, path), (write, path)):
        assert_no_leak(result, sent, tmp_path)
    assert outside_world(tmp_path) == outside


def test_the_root_given_as_an_absolute_path_is_a_directory(root: Path, session: Session, tmp_path: Path) -> None:
    (root / "sub").mkdir()
    for path in (str(root), f"{root}/.", f"{root}/sub/.."):
        result = session.call("read", {"file_path": path})
        assert code_of(result) == "FS_NOT_REGULAR_FILE", result.text
        assert_no_leak(result, path, tmp_path)


# --- in-root symlinks are followed ---------------------------------------------------------------------

IN_ROOT_ALIASES = ["relative", "absolute", "through-subdir-up", "chain", "dir-alias"]


def _make_alias(root: Path, kind: str) -> tuple[str, Path]:
    """Create an in-root alias of ``real.txt``; returns the path to send and the link created."""
    if kind == "relative":
        os.symlink("real.txt", root / "alias")
        return "alias", root / "alias"
    if kind == "absolute":
        os.symlink(str(root / "real.txt"), root / "alias")
        return "alias", root / "alias"
    if kind == "through-subdir-up":
        (root / "sub").mkdir()
        os.symlink("..", root / "sub" / "up")
        return "sub/up/real.txt", root / "sub" / "up"
    if kind == "chain":
        os.symlink("real.txt", root / "a2")
        os.symlink("a2", root / "a1")
        return "a1", root / "a1"
    assert kind == "dir-alias"
    os.symlink(".", root / "dalias")
    return "dalias/real.txt", root / "dalias"


@pytest.mark.parametrize("kind", IN_ROOT_ALIASES)
@pytest.mark.parametrize("tool", MUTATING)
def test_in_root_symlink_is_followed_and_kept(
    kind: str, tool: str, root: Path, session: Session, tmp_path: Path
) -> None:
    real = root / "real.txt"
    real.write_text("line TOP\nend\n")
    path, link = _make_alias(root, kind)
    link_target = os.readlink(link)
    outside = outside_world(tmp_path)

    read = session.call("read", {"file_path": path})
    assert not read.is_error, read.text
    assert "line TOP" in read.text
    if tool == "write":
        result = session.call("write", {"file_path": path, "content": "replaced\n"})
        expected = b"replaced\n"
    elif tool == "edit":
        result = session.call("edit", {"file_path": path, "old_string": "TOP", "new_string": "BOTTOM"})
        expected = b"line BOTTOM\nend\n"
    else:
        result = session.call(
            "multi_edit",
            {
                "file_path": path,
                "edits": [{"old_string": "TOP", "new_string": "X"}, {"old_string": "end", "new_string": "fin"}],
            },
        )
        expected = b"line X\nfin\n"

    assert not result.is_error, result.text
    assert real.read_bytes() == expected
    assert stat.S_ISREG(os.lstat(real).st_mode)
    assert os.path.islink(link), "the link was replaced by a regular file"
    assert os.readlink(link) == link_target
    assert_no_leak(result, path, tmp_path)
    assert outside_world(tmp_path) == outside
    assert not list(root.rglob("*.fs-tools.tmp"))


def test_dangling_in_root_link_creates_its_target_and_stays_a_link(root: Path, session: Session) -> None:
    os.symlink("made.txt", root / "future")
    result = session.call("write", {"file_path": "future", "content": "hello\n"})
    assert not result.is_error, result.text
    assert (root / "made.txt").read_bytes() == b"hello\n"
    assert os.path.islink(root / "future")
    assert os.readlink(root / "future") == "made.txt"


def test_read_through_alias_authorises_a_write_to_the_real_name(root: Path, session: Session) -> None:
    (root / "real.txt").write_text("v1\n")
    os.symlink("real.txt", root / "alias")
    assert not session.call("read", {"file_path": "alias"}).is_error
    result = session.call("write", {"file_path": "real.txt", "content": "v2\n"})
    assert not result.is_error, result.text
    assert (root / "real.txt").read_bytes() == b"v2\n"


# --- special files -------------------------------------------------------------------------------------


def _fifo_unblocker(fifo: Path) -> Callable[[], None]:
    def unblock() -> None:  # release a reader stuck in open() so the daemon thread can end
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            return
        os.close(fd)

    return unblock


@pytest.mark.parametrize("via", ["direct", "in-root-link"])
@pytest.mark.parametrize("tool", TOOLS)
def test_fifo_is_refused_without_hanging(via: str, tool: str, root: Path, session: Session, tmp_path: Path) -> None:
    fifo = root / "pipe"
    os.mkfifo(fifo)
    path = "pipe"
    if via == "in-root-link":
        os.symlink("pipe", root / "pipe_alias")
        path = "pipe_alias"
    before = world(tmp_path)

    result = call_guarded(session, tool, tool_args(tool, path), on_hang=_fifo_unblocker(fifo))

    assert code_of(result) == "FS_NOT_REGULAR_FILE", result.text
    assert "FIFO" in result.text
    assert repr(path) in result.text
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert world(tmp_path) == before


def test_unix_socket_is_refused(root: Path, session: Session, tmp_path: Path) -> None:
    path = root / "sock"
    if len(os.fsencode(path)) >= 100:
        pytest.skip("tmp path too long for a Unix socket address")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(str(path))
        for tool in TOOLS:
            result = call_guarded(session, tool, tool_args(tool, "sock"))
            assert code_of(result) == "FS_NOT_REGULAR_FILE", (tool, result.text)
            assert "socket" in result.text
    finally:
        server.close()


@pytest.mark.parametrize("path", ["d", "d/.", "d/sub/..", ".", "dlink", "dlink/."])
@pytest.mark.parametrize("tool", TOOLS)
def test_directory_as_file_path_is_not_a_regular_file(
    path: str, tool: str, root: Path, workspace: Workspace, tmp_path: Path
) -> None:
    (root / "d" / "sub").mkdir(parents=True)
    (root / "d" / "keep.txt").write_text("keep\n")
    os.symlink("d", root / "dlink")
    before = world(tmp_path)
    session = workspace.session(f"dir-{tool}")

    result = call_guarded(session, tool, tool_args(tool, path))

    assert code_of(result) == "FS_NOT_REGULAR_FILE", result.text
    assert "directory" in result.text
    if "list" in workspace.tools:
        assert "list" in result.text
    assert world(tmp_path) == before


# A path ending in "/" can never name a file: the product rejects it at validation (INVALID_ARGS at
# /file_path, fs_tools/arguments.py), so nothing is resolved, created or changed.
TRAILING_SLASH = ["f.txt/", "d/", "./", "dlink/", "newdir/", "a/b/", "/abs/"]


@pytest.mark.parametrize("path", TRAILING_SLASH)
@pytest.mark.parametrize("tool", TOOLS)
def test_a_path_ending_in_a_slash_is_refused_and_changes_nothing(
    path: str, tool: str, root: Path, session: Session, tmp_path: Path
) -> None:
    (root / "f.txt").write_text(f"{SECRET}\n")
    (root / "d").mkdir()
    os.symlink("d", root / "dlink")
    assert not session.call("read", {"file_path": "f.txt"}).is_error
    sent = f"{root}/" if path == "/abs/" else path
    before = world(tmp_path)

    result = session.call(tool, tool_args(tool, sent))

    assert code_of(result) == "INVALID_ARGS", result.text
    assert result.text.startswith("invalid arguments: /file_path: "), result.text
    assert_no_leak(result, sent, tmp_path)
    assert world(tmp_path) == before, "a refused call changed the disk"


# --- hostile strings in file_path ----------------------------------------------------------------------

BAD_PATHS = {
    "nul-middle": "a\0b.txt",
    "nul-only": "\0",
    "nul-after-escape": "../outside/secret.txt\0",
    "nul-truncating-suffix": "f.txt\0.png",
    "lone-high-surrogate": "a\ud800.txt",
    "lone-low-surrogate": "\udcff",
    "surrogate-in-dir": "dir\udc80/f.txt",
    "too-long-path": "a/" * 2100 + "f.txt",
    "too-long-name": "n" * 256,
}


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("bad", list(BAD_PATHS.values()), ids=list(BAD_PATHS))
def test_hostile_file_path_is_invalid_args(bad: str, tool: str, root: Path, session: Session, tmp_path: Path) -> None:
    (root / "f.txt").write_text(f"{SECRET}\n")
    before = world(tmp_path)

    result = session.call(tool, tool_args(tool, bad))

    assert code_of(result) == "INVALID_ARGS", result.text
    assert result.text.startswith("invalid arguments: /file_path: "), result.text
    result.text.encode("utf-8")  # the message must itself be sendable: no lone surrogate echoed
    json.dumps(result.to_dict(), ensure_ascii=False).encode("utf-8")
    assert SECRET not in result.text
    assert world(tmp_path) == before


@pytest.mark.parametrize("escaped", ["a\\ud800.txt", "\\udfff", "x\\u0000y"])
def test_hostile_file_path_in_json_arguments_is_invalid_args(
    escaped: str, root: Path, session: Session, tmp_path: Path
) -> None:
    before = world(tmp_path)
    result = session.call("write", '{"file_path": "' + escaped + '", "content": "x"}')
    assert code_of(result) == "INVALID_ARGS", result.text
    assert result.text.startswith("invalid arguments: /file_path: "), result.text
    result.text.encode("utf-8")
    assert world(tmp_path) == before


LITERAL_NAMES = [
    "~",
    "~root",
    "$HOME",
    "${HOME}",
    "%HOME%",
    "%2e%2e%2f",
    "%2e%2e%2foutside%2fsecret.txt",
    "..%2f..%2foutside%2fsecret.txt",
    "%2E%2E",
    "..\\outside\\secret.txt",
    "\u2025",  # TWO DOT LEADER: not folded into ".."
    "\uff0e\uff0e",  # FULLWIDTH FULL STOPs: not folded into ".."
]


@pytest.mark.parametrize("name", LITERAL_NAMES)
def test_special_looking_names_are_taken_literally(name: str, root: Path, session: Session, tmp_path: Path) -> None:
    home = Path(os.path.expanduser("~"))
    home_before = sorted(os.listdir(home)) if home.is_dir() else None
    outside = outside_world(tmp_path)
    for path in (name, f"{name}/f.txt"):
        missing = session.call("read", {"file_path": path})
        assert code_of(missing) == "FS_NOT_FOUND", missing.text
        assert_no_leak(missing, path, tmp_path)

    nested = f"{name}/f.txt"
    written = session.call("write", {"file_path": nested, "content": "literal\n"})
    assert not written.is_error, written.text
    assert os.listdir(root) == [name]
    assert (root / name / "f.txt").read_bytes() == b"literal\n"
    edited = session.call("edit", {"file_path": nested, "old_string": "literal", "new_string": "still literal"})
    assert not edited.is_error, edited.text
    assert (root / name / "f.txt").read_bytes() == b"still literal\n"

    assert outside_world(tmp_path) == outside
    if home_before is not None:
        assert sorted(os.listdir(home)) == home_before


def test_tilde_file_is_created_in_the_root_not_in_home(root: Path, session: Session, tmp_path: Path) -> None:
    name = f"~/fs-tools-literal-{tmp_path.name}.txt"
    result = session.call("write", {"file_path": name, "content": "here\n"})
    assert not result.is_error, result.text
    assert (root / "~" / f"fs-tools-literal-{tmp_path.name}.txt").read_bytes() == b"here\n"
    assert not os.path.exists(os.path.expanduser(name))


# --- a hard link to an outside inode -------------------------------------------------------------------


@pytest.mark.parametrize("tool", MUTATING)
def test_writing_a_hard_link_to_an_outside_file_leaves_the_outside_inode_intact(
    tool: str, root: Path, session: Session, tmp_path: Path
) -> None:
    secret = tmp_path / "outside" / "secret.txt"
    os.link(secret, root / "hl.txt")
    secret_ino = secret.stat().st_ino
    assert not session.call("read", {"file_path": "hl.txt"}).is_error

    result = session.call(tool, tool_args(tool, "hl.txt"))

    assert not result.is_error, result.text
    assert secret.read_bytes() == b"TOP-SECRET\n"
    assert secret.stat().st_ino == secret_ino
    assert os.stat(root / "hl.txt").st_ino != secret_ino, "the shared inode was written in place"
    assert b"PWNED" in (root / "hl.txt").read_bytes()
    assert sorted(os.listdir(tmp_path / "outside")) == ["secret.txt"]
