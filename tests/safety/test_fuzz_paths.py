"""Fuzzing the sandbox with hostile path strings (issue 3).

Paths are built from ``..``, ``.``, ``/``, ``\\``, ``~``, ``%2e``, NUL, lone surrogates, fullwidth punctuation
(``．``, ``／``), absolute prefixes and the names of links in a fixed tree whose links point out of the root (to
the outside file, the outside directory, ``/proc/self/root``, a descriptor of the outside directory, dangling
targets outside, a sibling whose name extends the root's) and inside it, plus the real in-root files. For read,
write (content "FUZZ"), edit and multi_edit the invariant is "inside the root, or a typed error":

- the call returns a ``ToolResult`` and never raises; a failure carries a known code that is not a bug code;
- a failure changes nothing at all; a success changes exactly one file, which ``os.path.realpath`` places under
  the root, and reads show only in-root content;
- the outside tree stays identical, and so do the listings of the directories above it (in ``/``, ``/root``,
  ``/tmp`` and the working directory: the entries that bear a name the fuzzer uses);
- no text carries a secret, and none carries an absolute path of the test tree or ``/proc/self`` unless the
  model sent it.

The number of examples per tool comes from ``FS_TOOLS_FUZZ_EXAMPLES`` (300 by default, what CI runs). A longer
run::

    FS_TOOLS_FUZZ_EXAMPLES=20000 pytest tests/safety/test_fuzz_paths.py

Hypothesis and function-scoped fixtures do not mix, so each test function builds its tree once in a temporary
directory and undoes the in-root changes of a successful call before the next example.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from fs_tools import Workspace
from fs_tools.errors import error_codes
from fs_tools.result import ToolResult
from tests.support.leaks import assert_no_leak

EXAMPLES = int(os.environ.get("FS_TOOLS_FUZZ_EXAMPLES", "300"))
FUZZ_SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
SECRET = "TOP-SECRET"
BUG_CODES = {"INTERNAL_ERROR", "INVALID_TOOL_OUTPUT"}
TOOLS = ("read", "write", "edit", "multi_edit", "copy-from", "copy-to")
COPIED = "f.txt"  # copy-to's source: the hostile path is its destination
COPY_OF = "fuzz-copy.txt"  # copy-from's destination: the hostile path is its source

Entry = tuple[Any, ...]

IN_ROOT_FILES = {
    "f.txt": "MARK in-root f\n",
    "sub/f.txt": "MARK in-root sub/f\n",
    "sub/g.txt": "MARK in-root g\n",
    "sub/deeper/f.txt": "MARK in-root deeper/f\n",
    "sub/deeper/h.txt": "MARK in-root h\n",
    "~": "MARK in-root tilde\n",
    "%2e%2e": "MARK in-root percent\n",
}
OUTSIDE_FILES = {
    "outside/secret.txt": f"MARK {SECRET}\n",
    "outside/f.txt": f"MARK {SECRET} f\n",
    "outside/sub/g.txt": f"MARK {SECRET} g\n",
    "root_evil/f.txt": f"MARK {SECRET} evil\n",
    "root_evil/secret.txt": f"MARK {SECRET} evil secret\n",
    "root_evil/sub/g.txt": f"MARK {SECRET} evil g\n",
}


def _links(base: Path, outside_fd: int) -> dict[str, str]:
    root = base / "root"
    return {
        # inside the root
        "in_file": "f.txt",
        "in_dir": "sub",
        "in_abs": f"{root}/sub/g.txt",
        "in_up": "sub/..",
        "loop": ".",
        "dangling_in": "new_in.txt",
        "sub/back": "..",
        # out of the root
        "self": "self",
        "out_file": "../outside/secret.txt",
        "out_file_abs": f"{base}/outside/secret.txt",
        "out_dir": "../outside",
        "out_dir_abs": f"{base}/outside",
        "up": "..",
        "proc_root": "/proc/self/root",
        "proc_fd": f"/proc/self/fd/{outside_fd}",
        "dangling_out": "../outside/nothing.txt",
        "dangling_out_abs": f"{base}/outside/newdir/nothing.txt",
        "dangling_out_dir": "../outside/newdir",
        "sub/out_chain": "../out_dir",
        "evil": "../root_evil",
        "evil_abs": f"{base}/root_evil/f.txt",
    }


LINK_NAMES = [name.split("/")[-1] for name in _links(Path("/x"), 0)]


def tree(base: Path) -> dict[str, Entry]:
    """Everything under ``base`` (not following symlinks): kind, mode, and bytes or link target."""
    out: dict[str, Entry] = {}
    for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            st_ = os.lstat(full)
            rel = os.path.relpath(full, base)
            if stat.S_ISLNK(st_.st_mode):
                out[rel] = ("link", os.readlink(full))
            elif stat.S_ISREG(st_.st_mode):
                out[rel] = ("file", stat.S_IMODE(st_.st_mode), Path(full).read_bytes())
            else:
                out[rel] = ("dir" if stat.S_ISDIR(st_.st_mode) else "special", stat.S_IMODE(st_.st_mode))
    return out


def _is_in_root(rel: str) -> bool:
    return rel.startswith("root/")


@dataclass
class FixedTree:
    """The test tree: ``<container>/d1/d2/d3/w`` holds ``root``, ``outside`` and ``root_evil``."""

    container: Path
    base: Path
    root: Path
    outside_fd: int
    pristine: dict[str, Entry] = field(default_factory=dict)
    above: dict[str, list[str]] = field(default_factory=dict)

    def outside_state(self) -> dict[str, Entry]:
        return {k: v for k, v in tree(self.base).items() if not _is_in_root(k) and k != "root"}

    def listings_above(self) -> dict[str, list[str]]:
        """What a call that escaped upwards would change: the full listings of the private directories above
        the test tree, and the entries of the shared ones (``/``, ``/root``, ``/tmp``, the working directory) that
        bear a name the fuzzer uses."""
        private = [self.base.parent, self.base.parent.parent, self.base.parent.parent.parent, self.container]
        out = {str(d): sorted(os.listdir(d)) for d in private}
        for shared in ("/", "/root", tempfile.gettempdir(), os.getcwd()):
            with contextlib.suppress(OSError):
                out[shared] = sorted(n for n in os.listdir(shared) if n in FUZZ_NAMES)
        return out

    def reset(self, before: dict[str, Entry], after: dict[str, Entry]) -> None:
        """Put the test tree back as it was ``before`` a call: a success's in-root change is undone, and so is
        anything a (failing) call changed elsewhere in the tree, so that hypothesis can shrink a failure."""
        for rel in sorted(set(after) - set(before), key=lambda r: r.count("/"), reverse=True):
            path = self.base / rel
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
        for rel in sorted(set(before), key=lambda r: r.count("/")):
            if before[rel] == after.get(rel):
                continue
            path = self.base / rel
            kind = before[rel][0]
            assert os.path.realpath(path.parent).startswith(str(self.base)), rel
            if kind == "file":
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path)
                elif path.is_symlink():
                    path.unlink()
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
                try:
                    os.write(fd, before[rel][2])
                finally:
                    os.close(fd)
                os.chmod(path, before[rel][1], follow_symlinks=False)
            elif kind == "link":
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
                os.symlink(before[rel][1], path)
            elif kind == "dir":
                path.mkdir(exist_ok=True)
                os.chmod(path, before[rel][1])


@contextlib.contextmanager
def fixed_tree() -> Iterator[FixedTree]:
    container = Path(os.path.realpath(tempfile.mkdtemp(prefix="fs-tools-fuzz-")))
    base = container / "d1" / "d2" / "d3" / "w"
    root = base / "root"
    for rel, text in IN_ROOT_FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    for rel, text in OUTSIDE_FILES.items():
        (base / rel).parent.mkdir(parents=True, exist_ok=True)
        (base / rel).write_text(text)
    outside_fd = os.open(base / "outside", os.O_RDONLY | os.O_DIRECTORY)
    for name, target in _links(base, outside_fd).items():
        os.symlink(target, root / name)
    fixed = FixedTree(container=container, base=base, root=root, outside_fd=outside_fd)
    fixed.pristine = tree(base)
    fixed.above = fixed.listings_above()
    try:
        yield fixed
    finally:
        os.close(outside_fd)
        shutil.rmtree(container)


# --- strategies ----------------------------------------------------------------------------------------------

# The generator walks a model of the fixed tree, so that many drawn paths really reach files, links and
# directories (in the root, or through a link out of it); literal oddities, odd separators and invalid components
# are mixed in. "etc", "passwd" and the like are deliberately absent, so that even a broken sandbox could not be
# steered into a system file through /proc/self/root.

# Where a directory step leads in the model: root, sub, deeper, or out (of the root, or nowhere).
STEPS: dict[str, dict[str, str]] = {
    "root": {
        **{"sub": "sub", "in_dir": "sub", "loop": "root", "in_up": "root", ".": "root", "~": "root"},
        **{"..": "out", "up": "out", "out_dir": "out", "out_dir_abs": "out", "proc_fd": "out", "proc_root": "out"},
        **{"evil": "out", "dangling_out_dir": "out", "self": "out", "root": "out", "outside": "out"},
    },
    "sub": {"deeper": "deeper", "back": "root", "..": "root", ".": "sub", "out_chain": "out", "sub": "sub"},
    "deeper": {"..": "sub", ".": "deeper", "deeper": "deeper"},
    "out": {"sub": "out", "outside": "out", "root": "out", "..": "out", "root_evil": "out", "newdir": "out"},
}
LEAVES: dict[str, list[str]] = {
    "root": [
        *["f.txt", "in_file", "in_abs", "~", "%2e%2e", "dangling_in", "new.txt", "loop", "in_up", "secret.txt"],
        *["out_file", "out_file_abs", "dangling_out", "dangling_out_abs", "evil_abs", "self", "up", "proc_root"],
    ],
    "sub": ["f.txt", "g.txt", "new.txt", "back", "out_chain", "secret.txt"],
    "deeper": ["f.txt", "h.txt", "new.txt", "g.txt"],
    "out": ["secret.txt", "f.txt", "g.txt", "new.txt", "nothing.txt"],
}
IN_ROOT_LEAVES = {"f.txt", "g.txt", "h.txt", "in_file", "in_abs", "new.txt", "dangling_in"}
# Steps and leaves that stay inside the root are drawn three times as often as the others.
WEIGHTED_STEPS = {
    state: [n for n, to in steps.items() for _ in range(3 if to != "out" else 1)] for state, steps in STEPS.items()
}
WEIGHTED_LEAVES = {
    state: [n for n in names for _ in range(3 if state != "out" and n in IN_ROOT_LEAVES else 1)]
    for state, names in LEAVES.items()
}
# Spellings that must be taken literally (or refused): never folded, decoded or expanded into a real step.
LITERALS = [
    *["...", "~root", "$HOME", "%2e", "%2e%2e%2f", "%2E%2e", "%2f", "%c0%ae%c0%ae", "..%2f", "\\", "..\\.."],
    *["\\..", "sub\\..\\..", "\uff0e", "\uff0e\uff0e", "\uff0f", "\uff0e\uff0e\uff0f", "\u2024\u2024", ". .", ".. "],
    *["C:", "C:\\x", "\u202e", " ", "\t", "\n"],
]
INVALID = ["\x00", "\ud800", "\udcff", "a\x00b", "\udc80..", "n" * 256]
ODD_CHARS = st.sampled_from(["ab", *".\\~%2e\uff0e\uff0f ", "\u202e"])
odd = st.sampled_from(LITERALS) | st.lists(ODD_CHARS, min_size=1, max_size=4).map("".join)
separator = st.sampled_from(["/"] * 8 + ["//", "/./", "\\", "\uff0f"])
rarely = st.sampled_from([False] * 6 + [True])


@st.composite
def hostile_paths(draw: st.DrawFn, fixed: FixedTree) -> str:
    """A walk through a model of the fixed tree (directory steps, then a leaf) under a relative or absolute
    prefix, with literal oddities, odd separators and the occasional invalid component mixed in."""
    prefix, state = draw(
        st.sampled_from(
            [
                *([("", "root")] * 6),
                ("./", "root"),
                (f"{fixed.root}/", "root"),
                (f"{fixed.root}/sub/../", "root"),
                (f"{fixed.root}/sub/", "sub"),
                ("/", "out"),
                ("~/", "root"),
                (f"{fixed.root}/../", "out"),
                (f"{fixed.base}/", "out"),
                (f"{fixed.base}/outside/", "out"),
                (f"{fixed.root}_evil/", "out"),
                (f"{fixed.root}'/", "out"),
                (f"/proc/self/root{fixed.root}/", "root"),
                (f"/proc/self/fd/{fixed.outside_fd}/", "out"),
            ]
        )
    )
    parts: list[str] = []
    for _ in range(draw(st.integers(0, 5))):
        if draw(rarely):
            parts.append(draw(odd))
            continue
        name = draw(st.sampled_from(WEIGHTED_STEPS[state]))
        parts.append(name)
        state = STEPS[state][name]
    parts.append(draw(odd) if draw(rarely) else draw(st.sampled_from(WEIGHTED_LEAVES[state])))
    if draw(st.sampled_from([False] * 9 + [True])):
        parts.insert(draw(st.integers(0, len(parts))), draw(st.sampled_from(INVALID)))
    path = parts[0]
    for part in parts[1:]:
        path += (draw(separator) if draw(rarely) else "/") + part
    suffix = draw(st.sampled_from([*([""] * 16), "/.", "/..", ".txt", " ", "/", "\x00"]))
    return prefix + path + suffix


# --- the invariant --------------------------------------------------------------------------------------------


def tool_args(tool: str, path: str) -> dict[str, Any]:
    if tool == "copy-from":
        return {"source": path, "destination": COPY_OF}
    if tool == "copy-to":
        return {"source": COPIED, "destination": path, "overwrite": True}
    if tool == "read":
        return {"file_path": path}
    if tool == "write":
        return {"file_path": path, "content": "FUZZ"}
    if tool == "edit":
        return {"file_path": path, "old_string": "MARK", "new_string": "FUZZ"}
    return {"file_path": path, "edits": [{"old_string": "MARK", "new_string": "FUZZ"}]}


def assert_structured(result: object) -> ToolResult:
    assert isinstance(result, ToolResult), result
    json.dumps(result.to_dict())
    if result.error is None:
        return result
    codes = error_codes()
    assert result.error.code in codes, result.error
    assert result.error.code not in BUG_CODES, (result.error, result.exception and result.exception.__cause__)
    assert result.value is None
    return result


def assert_clean(result: ToolResult, sent: str, fixed: FixedTree) -> None:
    """No secret in any text; no absolute path of the test tree, nor ``/proc/self``, unless inside the echo
    of what the model sent."""
    assert_no_leak(result, sent, [str(fixed.container), "/proc/self"])


def assert_inside_or_typed_error(
    tool: str, path: str, result: ToolResult, before: dict[str, Entry], after: dict[str, Entry], fixed: FixedTree
) -> None:
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    if result.is_error:
        assert changed == [], f"{tool} {path!r} failed ({result.text}) but changed {changed}"
        return
    if tool == "read":
        assert changed == [], f"read {path!r} changed {changed}"
        assert "in-root" in result.text, result.text
        return
    files = [k for k in changed if k in after and after[k][0] == "file"]
    assert len(files) == 1, f"{tool} {path!r} succeeded but changed {changed}"
    rel = files[0]
    assert _is_in_root(rel), f"{tool} {path!r} changed {rel}, outside the root"
    assert os.path.realpath(fixed.base / rel).startswith(str(fixed.root) + "/"), rel
    for other in changed:  # besides the file, only directories created to hold it
        assert other == rel or (after.get(other, ("",))[0] == "dir" and _is_in_root(other) and other not in before)
    if tool == "write":
        assert after[rel][2] == b"FUZZ"
    elif tool == "copy-from":  # whatever the source resolved to, its bytes are an in-root file's
        assert rel == f"root/{COPY_OF}" and after[rel][2] in {text.encode() for text in IN_ROOT_FILES.values()}, rel
    elif tool == "copy-to":
        assert after[rel][2] == IN_ROOT_FILES[COPIED].encode()
    else:
        assert before[rel][2].replace(b"MARK", b"FUZZ") == after[rel][2]


FUZZ_NAMES = {
    *(n for steps in STEPS.values() for n in steps),
    *(n for names in LEAVES.values() for n in names),
    *LITERALS,
    *LINK_NAMES,
}


def run_fuzz(tool: str) -> None:
    with fixed_tree() as fixed, Workspace(fixed.root) as ws:
        counter = itertools.count()
        pristine_outside = fixed.outside_state()

        @FUZZ_SETTINGS
        @given(data=st.data())
        def check(data: st.DataObject) -> None:
            path = data.draw(hostile_paths(fixed), label="file_path")
            session = ws.session(f"fuzz-{next(counter)}")
            if tool != "read" and data.draw(st.sampled_from([True, True, False]), label="read first"):
                primed = assert_structured(session.call("read", {"file_path": path}))
                assert_clean(primed, path, fixed)
            before = tree(fixed.base)
            result = assert_structured(session.call(tool.partition("-")[0], tool_args(tool, path)))
            after = tree(fixed.base)
            event(result.error.code if result.error is not None else "success")
            try:
                assert_clean(result, path, fixed)
                assert_inside_or_typed_error(tool, path, result, before, after, fixed)
                assert {k: v for k, v in after.items() if not _is_in_root(k) and k != "root"} == pristine_outside
                assert fixed.listings_above() == fixed.above
            finally:
                fixed.reset(before, after)

        check()
        assert fixed.outside_state() == pristine_outside
        assert tree(fixed.base) == fixed.pristine


@pytest.mark.parametrize("tool", TOOLS)
def test_hostile_paths_resolve_inside_the_root_or_fail_typed(tool: str) -> None:
    run_fuzz(tool)
