"""Adversarial cases beyond the escape table of ``test_sandbox.py`` (issue 3), run through the public tools on a
real directory.

Every case asserts the result code, that nothing outside the root changed (bytes, modes, inodes, link targets and
listings, via ``test_sandbox.world``), and that no result text carries the secret or an absolute path of the test
tree that the model did not send itself. Calls that may legitimately change the root are checked against the
world *outside* the root only, and then on the exact in-root effect.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fs_tools import Session, Workspace
from fs_tools.result import ToolResult
from tests.support.leaks import assert_no_leak, spy_opens_of
from tests.support.sandbox import (
    MUTATING,
    SECRET,
    TOOLS,
    call_guarded,
    code_of,
    outside_world,
    tool_args,
    tree,
    world,
)

# Codes a path that is too long or too deep may get: the validator, the depth limit or the walk answers first.
DEEP_CODES = {"FS_SANDBOX_DENIED", "FS_IO_ERROR", "INVALID_ARGS"}


def assert_clean(result: ToolResult, sent: str, tmp_path: Path) -> None:
    """No secret in any text of the result, and no absolute path of the test tree except inside the path the
    model sent (echoed whole, shortened to its two ends, or quoted with escapes)."""
    assert_no_leak(result, sent, {str(tmp_path), os.path.realpath(tmp_path)})


def _siblings(tmp_path: Path) -> None:
    """Siblings of the root whose names extend it (CVE-2025-53110), each holding a secret file."""
    for suffix in ("'", " ", "_evil", ".bak", "-2"):
        sibling = tmp_path / f"root{suffix}"
        sibling.mkdir()
        (sibling / "f.txt").write_text(f"{SECRET} in root{suffix}\n")
    (tmp_path / "root.txt").write_text(f"{SECRET} sibling file\n")


def _refused(
    session: Session, tool: str, path: str, tmp_path: Path, codes: set[str], *, prime: bool = True
) -> ToolResult:
    """Run ``tool`` on ``path`` (after a read in the same session, so a broken sandbox would also pass the
    observation gate) and assert it is refused with one of ``codes`` and changes nothing anywhere."""
    before = world(tmp_path)
    if prime and tool != "read":
        primed = call_guarded(session, "read", {"file_path": path})
        assert code_of(primed) in codes, primed.text
        assert_clean(primed, path, tmp_path)
    result = call_guarded(session, tool, tool_args(tool, path))
    assert code_of(result) in codes, result.text
    assert result.value is None
    assert_clean(result, path, tmp_path)
    assert world(tmp_path) == before
    return result


# --- sibling-prefix names as absolute paths -------------------------------------------------------------------

SIBLING_PATHS: dict[str, Callable[[Path], str]] = {
    "quote-file": lambda root: f"{root}'/f.txt",
    "quote-dir": lambda root: f"{root}'",
    "quote-new-file": lambda root: f"{root}'/new.txt",
    "space-file": lambda root: f"{root} /f.txt",
    "space-dir": lambda root: f"{root} ",
    "space-new-file": lambda root: f"{root} /new.txt",
    "space-new-dir": lambda root: f"{root} /newdir/new.txt",
    "evil-file": lambda root: f"{root}_evil/f.txt",
    "bak-file": lambda root: f"{root}.bak/f.txt",
    "dash-file": lambda root: f"{root}-2/f.txt",
    "sibling-file-named-like-root": lambda root: f"{root}.txt",
    "missing-sibling": lambda root: f"{root}_missing/new.txt",
    "dot-after-prefix": lambda root: f"{root}'/./f.txt",
    "prefix-then-dotdot-into-root": lambda root: f"{root}'/../root/f.txt",
}


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("case", list(SIBLING_PATHS), ids=list(SIBLING_PATHS))
def test_a_sibling_whose_name_extends_the_root_is_outside(
    case: str, tool: str, root: Path, workspace: Workspace, tmp_path: Path
) -> None:
    _siblings(tmp_path)
    (root / "f.txt").write_text("in root\n")
    path = SIBLING_PATHS[case](root)
    session = workspace.session(f"sibling-{case}-{tool}")
    _refused(session, tool, path, tmp_path, {"FS_SANDBOX_DENIED"})
    assert not (tmp_path / "root_missing").exists()
    assert (root / "f.txt").read_bytes() == b"in root\n"


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("target", ["abs-quote", "abs-space", "rel-quote", "rel-space", "rel-dir-space"])
def test_a_symlink_into_a_sibling_whose_name_extends_the_root_is_refused(
    target: str, tool: str, root: Path, workspace: Workspace, tmp_path: Path
) -> None:
    _siblings(tmp_path)
    link_target, path = {
        "abs-quote": (f"{root}'/f.txt", "ln"),
        "abs-space": (f"{root} /f.txt", "ln"),
        "rel-quote": ("../root'/f.txt", "ln"),
        "rel-space": ("../root /f.txt", "ln"),
        "rel-dir-space": ("../root ", "ln/f.txt"),
    }[target]
    os.symlink(link_target, root / "ln")
    session = workspace.session(f"sibling-link-{target}-{tool}")
    _refused(session, tool, path, tmp_path, {"FS_SANDBOX_DENIED"})
    assert os.readlink(root / "ln") == link_target


# --- long runs of `..`, deep trees, empty and over-long paths ------------------------------------------------


def _deep_paths(root: Path) -> dict[str, str]:
    return {
        "brief-1000-down-1001-up": "a/" * 1000 + "../" * 1001,
        "1000-down-1001-up-then-secret": "a/" * 1000 + "../" * 1001 + "outside/secret.txt",
        "600-missing-down-601-up": "a/" * 600 + "../" * 601 + "escape.txt",
        "300-existing-down-301-up": "d/" * 300 + "../" * 301 + "outside/secret.txt",
        "100-existing-down-101-up": "d/" * 100 + "../" * 101 + "outside/secret.txt",
        "100-existing-down-101-up-new": "d/" * 100 + "../" * 101 + "outside/new.txt",
        "absolute-100-down-101-up": f"{root}/" + "d/" * 100 + "../" * 101 + "outside/secret.txt",
        "up-and-down-zigzag": "d/../" * 300 + "../outside/secret.txt",
    }


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("case", list(_deep_paths(Path("/r"))))
def test_long_runs_of_dotdot_never_escape(
    case: str, tool: str, root: Path, workspace: Workspace, tmp_path: Path
) -> None:
    os.makedirs(root / "/".join(["d"] * 300))
    path = _deep_paths(root)[case]
    session = workspace.session(f"deep-{case}-{tool}")
    _refused(session, tool, path, tmp_path, DEEP_CODES)
    assert not (tmp_path / "escape.txt").exists()
    assert not (tmp_path.parent / "escape.txt").exists()


INVALID_PATHS: dict[str, Callable[[Path], str]] = {
    "empty": lambda root: "",
    "overlong-utf8-dots-then-slash": lambda root: "%c0%ae%c0%ae/",
    "5000-bytes-relative": lambda root: "p" * 5000,
    "5000-bytes-in-components": lambda root: ("c" * 99 + "/") * 50,
    "5000-bytes-absolute-in-root": lambda root: f"{root}/" + "q/" * 2500,
    "5000-bytes-absolute-file": lambda root: f"{root}/" + ("x" * 200 + "/") * 24 + "f.txt",
    "4097-bytes": lambda root: "r/" * 2046 + "abcde",
    "5000-bytes-of-two-byte-chars": lambda root: "é" * 2500,  # 2,500 characters, 5,000 bytes
    "2100-three-byte-chars": lambda root: "\u20ac" * 1366,  # 1,366 characters, 4,098 bytes
    "256-byte-name": lambda root: "n" * 256,
    "256-byte-name-of-two-byte-chars": lambda root: "é" * 128,  # 128 characters, 256 bytes
    "256-byte-name-four-byte-chars": lambda root: "\U0001f600" * 64,  # 64 characters, 256 bytes
    "256-byte-dir-name": lambda root: "d" * 256 + "/f.txt",
    "256-byte-name-absolute": lambda root: f"{root}/" + "m" * 256,
    "256-byte-name-after-dotdot": lambda root: "sub/../" + "o" * 256,
}


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("case", list(INVALID_PATHS), ids=list(INVALID_PATHS))
def test_empty_over_long_and_over_long_names_are_invalid_args(
    case: str, tool: str, root: Path, session: Session, tmp_path: Path
) -> None:
    (root / "sub").mkdir()
    path = INVALID_PATHS[case](root)
    before = world(tmp_path)
    result = session.call(tool, tool_args(tool, path))
    assert code_of(result) == "INVALID_ARGS", result.text
    assert result.text.startswith("invalid arguments: /file_path: "), result.text
    assert len(result.text) < 1000, "the message should name the problem, not echo a 5,000-byte path"
    assert_clean(result, path, tmp_path)
    assert world(tmp_path) == before


def test_a_255_byte_name_of_multibyte_characters_is_accepted(root: Path, session: Session) -> None:
    name = "é" * 127 + "x"  # 255 bytes
    result = session.call("write", {"file_path": name, "content": "ok\n"})
    assert not result.is_error, result.text
    assert (root / name).read_bytes() == b"ok\n"
    assert os.listdir(root) == [name]


# --- literal handling of encodings, fullwidth punctuation, backslashes and drive letters -----------------------

LITERAL_PATHS = [
    "%c0%ae%c0%ae/outside/secret.txt",
    "%c0%ae%c0%ae/%c0%ae%c0%ae/secret.txt",
    "%c0%ae%c0%ae%c0%af%c0%ae%c0%ae%c0%afescape.txt",
    "%252e%252e/x.txt",
    "%u002e%u002e/x.txt",
    "\uff0e\uff0e\uff0f",  # ．．／: one name, not "../"
    "\uff0e\uff0e\uff0foutside\uff0fsecret.txt",  # ．．／outside／secret.txt: one name
    "\uff0e\uff0e/outside/secret.txt",  # fullwidth dots, real slashes: a directory named ．．
    "\uff0e/\uff0e\uff0e/x.txt",
    "..\u2215..\u2215escape.txt",  # DIVISION SLASH
    "..\u2044escape.txt",  # FRACTION SLASH
    "\u2024\u2024/x.txt",  # ONE DOT LEADER
    "..\\..\\outside",
    "..\\..\\outside\\secret.txt",
    "sub\\..\\..\\escape.txt",
    "C:\\Windows",
    "C:\\Windows\\System32\\drivers\\etc\\hosts",
    "C:/x",
    "C:x",
    "\\\\?\\C:\\x.txt",
    "\\\\server\\share\\x.txt",
    "\\\\.\\pipe\\x",
    "~/x.txt",
    "~root/x.txt",
    "$HOME/x.txt",
    "${PWD}/x.txt",
    "`id`.txt",
    "$(id).txt",
    "x.txt::$DATA",
    "NUL.txt",
    "con",
    "x.txt. ",
    " ../x.txt",
    "... /x.txt",
    "...",
    "..../x.txt",
]


@pytest.mark.parametrize("path", LITERAL_PATHS)
def test_encodings_lookalikes_and_windows_syntax_are_literal_names_inside_the_root(
    path: str, root: Path, workspace: Workspace, tmp_path: Path
) -> None:
    (root / "sub").mkdir()
    outside = outside_world(tmp_path)
    session = workspace.session("literal")
    home = Path(os.path.expanduser("~"))
    home_before = sorted(os.listdir(home)) if home.is_dir() else None
    literal = root.joinpath(*[p for p in path.split("/") if p not in ("", ".")])

    missing = session.call("read", {"file_path": path})
    assert code_of(missing) == "FS_NOT_FOUND", missing.text
    assert_clean(missing, path, tmp_path)

    written = session.call("write", {"file_path": path, "content": "literal\n"})
    assert not written.is_error, written.text
    assert literal.read_bytes() == b"literal\n"
    assert os.path.realpath(literal).startswith(str(root) + "/")
    read = session.call("read", {"file_path": path})
    assert not read.is_error, read.text
    assert "literal" in read.text
    edited = session.call("edit", {"file_path": path, "old_string": "literal", "new_string": "still literal"})
    assert not edited.is_error, edited.text
    assert literal.read_bytes() == b"still literal\n"

    parts = literal.relative_to(root).parts
    expected = sorted({"sub", *("/".join(parts[: i + 1]) for i in range(len(parts)))})
    created = sorted(os.path.relpath(os.path.join(d, n), root) for d, ds, fs in os.walk(root) for n in ds + fs)
    assert created == expected, "the write created something other than the literal path"
    for result in (written, read, edited):
        assert_clean(result, path, tmp_path)
    assert outside_world(tmp_path) == outside
    assert not (tmp_path / "escape.txt").exists() and not (tmp_path / "x.txt").exists()
    if home_before is not None:
        assert sorted(os.listdir(home)) == home_before


# --- magic links into /proc -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Magic:
    id: str
    target: Callable[[Path, Path, int, int], str]  # (root, tmp, fd of outside/, fd of secret) -> link target
    path: Callable[[Path, Path], str]  # (root, tmp) -> the file_path the model sends
    # writes are only tried where the path ends in the test's own tmp tree, never in a system file
    writable: bool = True


def _tmp_rel(tmp: Path) -> str:
    return str(tmp).lstrip("/")


SECRET_FD = "{secret_fd}"  # replaced by the descriptor number once it is open

MAGIC = [
    Magic("self-root-etc-passwd", lambda r, t, d, s: "/proc/self/root", lambda r, t: "ml/etc/passwd", writable=False),
    Magic(
        "self-root-secret", lambda r, t, d, s: "/proc/self/root", lambda r, t: f"ml/{_tmp_rel(t)}/outside/secret.txt"
    ),
    Magic("self-root-new", lambda r, t, d, s: "/proc/self/root", lambda r, t: f"ml/{_tmp_rel(t)}/outside/new.txt"),
    Magic("self-root-itself", lambda r, t, d, s: "/proc/self/root", lambda r, t: "ml"),
    Magic(
        "self-root-deep-target",
        lambda r, t, d, s: f"/proc/self/root{t}/outside/secret.txt",
        lambda r, t: "ml",
    ),
    Magic("self-cwd", lambda r, t, d, s: "/proc/self/cwd", lambda r, t: "ml/pyproject.toml", writable=False),
    Magic("self-cwd-new", lambda r, t, d, s: "/proc/self/cwd", lambda r, t: "ml/fs-tools-attack-new.txt"),
    Magic("self-fd-secret-file", lambda r, t, d, s: f"/proc/self/fd/{s}", lambda r, t: "ml"),
    Magic("self-fd-outside-dir", lambda r, t, d, s: f"/proc/self/fd/{d}", lambda r, t: "ml/secret.txt"),
    Magic("self-fd-outside-dir-new", lambda r, t, d, s: f"/proc/self/fd/{d}", lambda r, t: "ml/new.txt"),
    Magic(
        "pid-root", lambda r, t, d, s: f"/proc/{os.getpid()}/root", lambda r, t: f"ml/{_tmp_rel(t)}/outside/secret.txt"
    ),
    Magic(
        "thread-self-root",
        lambda r, t, d, s: "/proc/thread-self/root",
        lambda r, t: f"ml/{_tmp_rel(t)}/outside/new.txt",
    ),
    Magic("dev-fd-secret", lambda r, t, d, s: f"/dev/fd/{s}", lambda r, t: "ml"),
    Magic("dev-fd-dir", lambda r, t, d, s: f"/dev/fd/{d}", lambda r, t: "ml/new.txt"),
    Magic("dev-stdin", lambda r, t, d, s: "/dev/stdin", lambda r, t: "ml", writable=False),
    Magic(
        "relative-climb-to-proc",
        lambda r, t, d, s: "../" * 40 + "proc/self/root",
        lambda r, t: f"ml/{_tmp_rel(t)}/outside/secret.txt",
    ),
    Magic(
        "in-root-dir-link-then-proc",
        lambda r, t, d, s: "sub/../../" + "../" * 40 + "proc/self/fd",
        lambda r, t: f"ml/{SECRET_FD}",
    ),
]


@pytest.fixture
def outside_fds(tmp_path: Path) -> Iterator[tuple[int, int]]:
    dir_fd = os.open(tmp_path / "outside", os.O_RDONLY | os.O_DIRECTORY)
    secret_fd = os.open(tmp_path / "outside" / "secret.txt", os.O_RDONLY)
    try:
        yield dir_fd, secret_fd
    finally:
        os.close(dir_fd)
        os.close(secret_fd)


# Mutations are never aimed at a system file, even to show that they are refused.
MAGIC_CALLS = [pytest.param(m, t, id=f"{m.id}-{t}") for m in MAGIC for t in TOOLS if t == "read" or m.writable]


@pytest.mark.parametrize(("case", "tool"), MAGIC_CALLS)
def test_magic_links_into_proc_are_refused(
    case: Magic, tool: str, root: Path, workspace: Workspace, tmp_path: Path, outside_fds: tuple[int, int]
) -> None:
    dir_fd, secret_fd = outside_fds
    (root / "sub").mkdir()
    target = case.target(root, tmp_path, dir_fd, secret_fd)
    os.symlink(target, root / "ml")
    path = case.path(root, tmp_path).replace(SECRET_FD, str(secret_fd))
    session = workspace.session(f"magic-{case.id}-{tool}")

    result = _refused(session, tool, path, tmp_path, {"FS_SANDBOX_DENIED"})

    assert "/proc" not in result.text and "/dev/fd" not in result.text, "the link's target was shown"
    assert os.readlink(root / "ml") == target
    assert not os.path.lexists("fs-tools-attack-new.txt")  # /proc/self/cwd is the test's working directory


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize(
    "spelling",
    ["proc-self-root-secret", "proc-self-cwd", "proc-self-fd-dir", "dev-fd-dir", "proc-self-root-into-root"],
)
def test_absolute_magic_paths_sent_by_the_model_are_refused(
    spelling: str, tool: str, root: Path, workspace: Workspace, tmp_path: Path, outside_fds: tuple[int, int]
) -> None:
    dir_fd, _ = outside_fds
    (root / "f.txt").write_text(f"{SECRET}-looking but in root\n")
    path = {
        "proc-self-root-secret": f"/proc/self/root{tmp_path}/outside/secret.txt",
        "proc-self-cwd": "/proc/self/cwd/fs-tools-attack-new.txt",
        "proc-self-fd-dir": f"/proc/self/fd/{dir_fd}/secret.txt",
        "dev-fd-dir": f"/dev/fd/{dir_fd}/new.txt",
        # lands in the root, but only through a magic link: refused like every absolute path outside the roots
        "proc-self-root-into-root": f"/proc/self/root{root}/f.txt",
    }[spelling]
    session = workspace.session(f"magic-abs-{spelling}-{tool}")
    _refused(session, tool, path, tmp_path, {"FS_SANDBOX_DENIED"})


# --- loops ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("path", ["loop/loop/loop/f.txt", "loop/./loop/sub/../f.txt", "sub/back/loop/f.txt"])
def test_a_link_to_its_own_directory_is_followed_inside_the_root(
    path: str, tool: str, root: Path, session: Session, tmp_path: Path
) -> None:
    (root / "sub").mkdir()
    os.symlink(".", root / "loop")
    os.symlink("..", root / "sub" / "back")
    target = root / "f.txt"
    target.write_text("hello TOP\nend\n")
    outside = outside_world(tmp_path)

    read = session.call("read", {"file_path": path})
    assert not read.is_error, read.text
    assert "hello" in read.text
    args, expected = {
        "read": ({"file_path": path}, b"hello TOP\nend\n"),
        "write": ({"file_path": path, "content": "replaced\n"}, b"replaced\n"),
        "edit": ({"file_path": path, "old_string": "end", "new_string": "fin"}, b"hello TOP\nfin\n"),
        "multi_edit": ({"file_path": path, "edits": [{"old_string": "hello", "new_string": "bye"}]}, b"bye TOP\nend\n"),
    }[tool]
    result = call_guarded(session, tool, args)

    assert not result.is_error, result.text
    assert target.read_bytes() == expected
    assert os.readlink(root / "loop") == "." and os.readlink(root / "sub" / "back") == ".."
    assert sorted(os.listdir(root)) == ["f.txt", "loop", "sub"]
    assert sorted(os.listdir(root / "sub")) == ["back"]
    assert_clean(result, path, tmp_path)
    assert outside_world(tmp_path) == outside


@pytest.mark.parametrize("tool", TOOLS)
def test_too_many_hops_through_a_directory_loop_is_an_io_error(
    tool: str, root: Path, workspace: Workspace, tmp_path: Path
) -> None:
    os.symlink(".", root / "loop")
    (root / "f.txt").write_text("x\n")
    path = "loop/" * 100 + "f.txt"
    _refused(workspace.session(f"hops-{tool}"), tool, path, tmp_path, {"FS_IO_ERROR"})


SELF_LOOPS: dict[str, Callable[[Path], dict[str, str]]] = {
    "dot-slash-self": lambda root: {"a": "./a"},
    "self-through-dotdot": lambda root: {"sub/a": "../sub/a"},
    "absolute-self": lambda root: {"a": f"{root}/a"},
    "through-a-dir-link": lambda root: {"a": "d/a", "d": "."},
    "mutual-through-components": lambda root: {"a": "b/x", "b": "a/y"},
    "long-ring": lambda root: {f"r{i}": f"r{(i + 1) % 50}" for i in range(50)},
}


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("case", list(SELF_LOOPS))
@pytest.mark.parametrize("suffix", ["", "/new.txt"])
def test_self_referencing_links_are_an_io_error(
    case: str, suffix: str, tool: str, root: Path, workspace: Workspace, tmp_path: Path
) -> None:
    (root / "sub").mkdir()
    links = SELF_LOOPS[case](root)
    for name, target in links.items():
        os.symlink(target, root / name)
    first = next(iter(links))
    _refused(workspace.session(f"self-{case}-{tool}"), tool, first + suffix, tmp_path, {"FS_IO_ERROR"})


# --- in-root aliases that the escape table does not cover ------------------------------------------------------

ALIASES = ["via-configured-symlinked-root", "relative-with-dotdot", "through-dir-link", "climb-out-and-back"]


@pytest.mark.parametrize("tool", MUTATING)
@pytest.mark.parametrize("kind", ALIASES)
def test_an_in_root_alias_is_edited_through_and_kept(kind: str, tool: str, root: Path, tmp_path: Path) -> None:
    (root / "sub").mkdir()
    real = root / "sub" / "real.txt"
    real.write_text("line TOP\nend\n")
    configured = root
    if kind == "via-configured-symlinked-root":
        os.symlink("root", tmp_path / "rootlink")
        configured = tmp_path / "rootlink"
        link, target = root / "alias", f"{configured}/sub/real.txt"
    elif kind == "relative-with-dotdot":
        link, target = root / "alias", "sub/../sub/./real.txt"
    elif kind == "through-dir-link":
        os.symlink("sub", root / "dl")
        link, target = root / "alias", "dl/real.txt"
    else:
        link, target = root / "sub" / "alias", "../../root/sub/real.txt"
    os.symlink(target, link)
    link_ino = os.lstat(link).st_ino
    real_mode = stat.S_IMODE(os.stat(real).st_mode)
    path = os.path.relpath(link, root)
    outside = outside_world(tmp_path)

    with Workspace(configured) as ws:
        session = ws.session("alias")
        read = session.call("read", {"file_path": path})
        assert not read.is_error, read.text
        args: dict[str, Any] = {
            "write": {"file_path": path, "content": "replaced\n"},
            "edit": {"file_path": path, "old_string": "TOP", "new_string": "BOTTOM"},
            "multi_edit": {"file_path": path, "edits": [{"old_string": "end", "new_string": "fin"}]},
        }[tool]
        result = session.call(tool, args)

    assert not result.is_error, result.text
    expected = {"write": b"replaced\n", "edit": b"line BOTTOM\nend\n", "multi_edit": b"line TOP\nfin\n"}[tool]
    assert real.read_bytes() == expected
    assert stat.S_IMODE(os.stat(real).st_mode) == real_mode
    assert os.path.islink(link) and os.readlink(link) == target
    assert os.lstat(link).st_ino == link_ino
    assert not list(root.rglob("*.fs-tools.tmp"))
    assert_clean(result, path, tmp_path)
    outside_now = outside_world(tmp_path)
    assert outside_now == outside


# --- device nodes ---------------------------------------------------------------------------------------------


@pytest.fixture
def device(root: Path) -> Path:
    path = root / "null"
    try:
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 3))
    except (PermissionError, OSError) as exc:
        pytest.skip(f"mknod is not permitted here: {exc}")
    return path


@pytest.mark.parametrize("via", ["direct", "in-root-link", "absolute"])
@pytest.mark.parametrize("tool", TOOLS)
def test_a_device_node_is_refused_without_being_opened(
    via: str, tool: str, device: Path, root: Path, workspace: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = {"direct": "null", "in-root-link": "null_alias", "absolute": str(device)}[via]
    if via == "in-root-link":
        os.symlink("null", root / "null_alias")
    node = os.lstat(device)
    before = world(tmp_path)
    opened = spy_opens_of(device, monkeypatch)
    session = workspace.session(f"device-{via}-{tool}")
    if tool != "read":
        primed = session.call("read", {"file_path": path})
        assert code_of(primed) == "FS_NOT_REGULAR_FILE", primed.text
    result = call_guarded(session, tool, tool_args(tool, path))
    monkeypatch.undo()

    assert code_of(result) == "FS_NOT_REGULAR_FILE", result.text
    assert "device" in result.text
    assert opened == [], f"the device node was opened: {opened}"
    st = os.lstat(device)
    assert stat.S_ISCHR(st.st_mode) and (st.st_ino, st.st_rdev) == (node.st_ino, node.st_rdev)
    assert_clean(result, path, tmp_path)
    assert world(tmp_path) == before


# --- content edit must refuse --------------------------------------------------------------------------------

NOT_TEXT = {
    "latin-1": "café crème à la carte\n".encode("latin-1"),
    "cp1252-quotes": b"\x93quoted\x94 text\n",
    "latin-1-late": b"ascii line\n" * 50 + "naïve\n".encode("latin-1"),
    "png-header": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01",
    "utf-16-no-bom": "text\n".encode("utf-16-le"),
    "utf-16-bom-cut": "text\n".encode("utf-16")[:-1],
    "utf-32-bom-nul": "te\0xt\n".encode("utf-32"),
    "nul-at-end": b"plain text\n\x00",
    "overlong-dot": b"a\xc0\xae\xc0\xaeb\n",
    "lone-continuation": b"text \x80 here\n",
    "truncated-multibyte-at-eof": b"ends with \xe2\x82",
    "cesu-surrogate": b"\xed\xa0\x80\n",
    "random-binary": bytes(range(256)) * 4,
}


@pytest.mark.parametrize("tool", ["edit", "multi_edit"])
@pytest.mark.parametrize("name", list(NOT_TEXT))
def test_edit_of_non_utf8_or_binary_content_is_not_text_and_leaves_the_file_identical(
    name: str, tool: str, root: Path, session: Session, tmp_path: Path
) -> None:
    data = NOT_TEXT[name]
    target = root / "blob"
    target.write_bytes(data)
    os.chmod(target, 0o640)
    st = os.stat(target)
    before = world(tmp_path)

    read = session.call("read", {"file_path": "blob"})
    assert code_of(read) == "FS_NOT_TEXT", read.text
    args: dict[str, Any] = (
        {"file_path": "blob", "old_string": "text", "new_string": "TEXT"}
        if tool == "edit"
        else {"file_path": "blob", "edits": [{"old_string": "text", "new_string": "TEXT"}]}
    )
    result = session.call(tool, args)

    assert code_of(result) == "FS_NOT_TEXT", result.text
    assert target.read_bytes() == data
    after = os.stat(target)
    assert (after.st_ino, after.st_mode, after.st_mtime_ns) == (st.st_ino, st.st_mode, st.st_mtime_ns)
    assert world(tmp_path) == before
    assert not list(root.rglob("*.fs-tools.tmp"))
    assert_clean(result, "blob", tmp_path)


def test_the_outside_tree_helper_sees_a_change(tmp_path: Path, root: Path) -> None:
    """The disk checks these tests rely on would notice an outside change of any kind."""
    before = world(tmp_path)
    (tmp_path / "outside" / "secret.txt").write_text("TOP-SECRET\n")  # same bytes, rewritten: not a change
    assert world(tmp_path) == before
    for change in (
        lambda: (tmp_path / "outside" / "secret.txt").write_text("PWNED\n"),
        lambda: (tmp_path / "outside" / "new.txt").write_text(""),
        lambda: (tmp_path.parent / f"{tmp_path.name}-escape.txt").write_text(""),
    ):
        change()
        assert world(tmp_path) != before
        before = world(tmp_path)
    os.unlink(tmp_path.parent / f"{tmp_path.name}-escape.txt")
    assert tree(tmp_path / "outside")["secret.txt"][0] == "file"
