"""The line diff behind ``diff``, ``edit(dry_run=True)`` and the region-staleness check (issue 31): always
a correct diff (applying it to the old lines gives the new ones, duplicates or not, within any budget),
difflib's own output for ordinary edits, and work bounded by the input's size — counted, never timed —
on the inputs that made difflib quadratic, through each of the three tools."""

from __future__ import annotations

import difflib
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fs_tools import Workspace, line_diff
from fs_tools.errors import Aborted
from fs_tools.testing import assert_ok
from fs_tools.tools import checkpoints

SETTINGS = settings(max_examples=300, deadline=None)
# Few distinct lines, so most of them repeat: the inputs with no unique line to anchor on.
lines_of = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "\n", "}\n", "x = 1\n"]), max_size=40)


def _applied(a: Sequence[str], b: Sequence[str], codes: list[line_diff.Opcode]) -> list[str]:
    """``a`` with the opcodes made; each must start where the previous ended and an equal block be equal."""
    out: list[str] = []
    i = j = 0
    for tag, i1, i2, j1, j2 in codes:
        assert (i1, j1) == (i, j), codes
        assert tag in ("equal", "replace", "delete", "insert")
        if tag == "equal":
            assert i2 - i1 == j2 - j1 > 0 and list(a[i1:i2]) == list(b[j1:j2])
            out += a[i1:i2]
        else:
            assert (i2 > i1 or j2 > j1) and (tag != "delete" or j1 == j2) and (tag != "insert" or i1 == i2)
            out += b[j1:j2]
        i, j = i2, j2
    assert (i, j) == (len(a), len(b))
    return out


def _patched(a: Sequence[str], diff: Sequence[str]) -> list[str]:
    """``a`` with a unified diff applied by its hunk headers' numbers (each line checked against ``a``)."""
    out: list[str] = []
    at = 0
    lines = list(diff)
    if not lines:
        return list(a)
    assert lines[0].startswith("--- ") and lines[1].startswith("+++ ")
    for line in lines[2:]:
        header = re.fullmatch(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@\n", line)
        if header is not None:
            start = int(header.group(1)) - (0 if header.group(2) == "0" else 1)
            out += a[at:start]
            at = start
            continue
        sign, text = line[0], line[1:]
        if sign in " -":
            assert a[at] == text
            at += 1
        if sign in " +":
            out.append(text)
    return out + list(a[at:])


@SETTINGS
@given(a=lines_of, b=lines_of, budget=st.none() | st.integers(0, 200))
def test_applying_the_opcodes_to_the_old_lines_gives_the_new_lines(
    a: list[str], b: list[str], budget: int | None
) -> None:
    assert _applied(a, b, line_diff.opcodes(a, b, budget=budget)) == b  # budget 0: every gap a replacement


@SETTINGS
@given(a=lines_of, b=lines_of)
def test_applying_the_unified_diff_to_the_old_lines_gives_the_new_lines(a: list[str], b: list[str]) -> None:
    diff = list(line_diff.unified_diff(a, b, "a/f", "b/f"))
    assert _patched(a, diff) == b
    assert (diff == []) == (a == b)


@SETTINGS
@given(
    size=st.integers(1, 60),
    where=st.integers(0, 60),
    removed=st.integers(0, 5),
    added=st.lists(st.sampled_from(["new\n", "more\n", "    return x\n"]), max_size=5),
)
def test_an_ordinary_edit_diffs_as_difflib_does(size: int, where: int, removed: int, added: list[str]) -> None:
    """One stretch replaced in a file of distinct lines: the same hunks as difflib's, line for line. (Where
    lines repeat, two diffs can be as short and differ in which copy they keep: both are right.)"""
    a = [f"line {n}\n" for n in range(size)]
    where = min(where, size)
    b = a[:where] + added + a[where + removed :]
    assert list(line_diff.unified_diff(a, b, "a/f", "b/f")) == list(difflib.unified_diff(a, b, "a/f", "b/f"))


def test_an_edit_of_code_reads_as_difflib_shows_it() -> None:
    a = [f"def f{n}(x):\n    y = x + {n}\n\n    return y\n\n\n" for n in range(30)]
    a = "".join(a).splitlines(keepends=True)
    b = [*a[:40], "    z = y * 2\n", "    return z\n", *a[43:100], *a[106:]]
    ours = "".join(line_diff.unified_diff(a, b, "a/f.py", "b/f.py"))
    assert ours == "".join(difflib.unified_diff(a, b, "a/f.py", "b/f.py"))
    assert ours.count("@@ -") == 2


def _swapped(lines: list[str]) -> list[str]:
    out = lines[:]
    for at in range(0, len(out) - 1, 2):
        out[at], out[at + 1] = out[at + 1], out[at]
    return out


HOSTILE = {
    "neighbours swapped": lambda n: ([f"line {i}\n" for i in range(n)], _swapped([f"line {i}\n" for i in range(n)])),
    "no line once": lambda n: (
        [("a\n", "b\n", "c\n")[i * i % 3] for i in range(n)],
        [("a\n", "b\n", "c\n")[(i * 7 + i // 3) % 3] for i in range(n)],
    ),
    "reversed": lambda n: ([f"{i}\n" for i in range(n)], [f"{i}\n" for i in reversed(range(n))]),
}


@pytest.mark.parametrize("shape", sorted(HOSTILE))
def test_the_work_on_hostile_inputs_is_counted_and_bounded_by_their_size(shape: str) -> None:
    a, b = HOSTILE[shape](24_000)  # difflib: over a minute for the swapped neighbours
    checks: list[int] = []
    codes = line_diff.opcodes(a, b, check=lambda: checks.append(1))
    assert _applied(a, b, codes) == b
    # ``check`` runs once per CHECK_EVERY units spent: the units stay within the budget (plus one gap's last
    # step, at most one pass over both sides)
    spent = len(checks) * line_diff.CHECK_EVERY
    assert len(checks) >= 1 and spent <= line_diff.budget_of(a, b) + len(a) + len(b) + line_diff.CHECK_EVERY


class _CancelledInTheDiff:
    """A cancel token that is set only when asked from inside the line diff: a tool that diffs without
    counting its work never sees it set; ``polls`` counts the diff's questions."""

    def __init__(self, fire: bool) -> None:
        self.fire = fire
        self.polls = 0

    def is_set(self) -> bool:
        frame = sys._getframe(1)
        while frame is not None:
            if frame.f_globals.get("__name__") == "fs_tools.line_diff":
                self.polls += 1
                return self.fire
            frame = frame.f_back  # type: ignore[assignment]
        return False


def _hostile_file(root: Path, lines: int = 8_000) -> tuple[str, str]:
    """A file, and its text with every two neighbouring lines swapped (difflib took 4.5–7.7 s at this size
    on the machine of issue 31, and 14 s with the two cores shared)."""
    before = "".join(f"value_{i} = {i}\n" for i in range(lines))
    after = "".join(_swapped(before.splitlines(keepends=True)))
    (root / "f.py").write_text(HEAD + before)
    return HEAD + before, HEAD + after


HEAD = "# head\n\n\n"  # lines no one changes: the region edits change the first


def test_edit_dry_run_of_a_hostile_change_is_a_correct_diff_and_cancellable(tmp_path: Path) -> None:
    before, after = _hostile_file(tmp_path)
    edit = {"file_path": "f.py", "old_string": before[len(HEAD) :], "new_string": after[len(HEAD) :]}
    with Workspace(tmp_path, tools=["read", "edit", "apply_patch"]) as ws:
        session = ws.session("s")
        assert_ok(session.call("read", {"file_path": "f.py"}))
        token = _CancelledInTheDiff(fire=False)
        result = assert_ok(session.call("edit", {**edit, "dry_run": True}, cancel=token))
        assert 1 <= token.polls <= line_diff.budget_of(before, after) // line_diff.CHECK_EVERY + 2
        assert (tmp_path / "f.py").read_text() == before  # a dry run writes nothing
        assert result.value is not None
        assert_ok(session.call("apply_patch", {"patch": result.value["diff"]}))  # the diff is the change
        assert (tmp_path / "f.py").read_text() == after
        (tmp_path / "f.py").write_text(before)
        assert_ok(session.call("read", {"file_path": "f.py"}))
        cancelled = session.call("edit", {**edit, "dry_run": True}, cancel=_CancelledInTheDiff(fire=True))
    assert cancelled.error is not None and cancelled.error.code == "TOOL_ABORTED", cancelled.text
    assert isinstance(cancelled.exception, Exception) and isinstance(cancelled.exception.__cause__, Aborted)
    assert "edit was cancelled" in cancelled.text
    assert (tmp_path / "f.py").read_text() == before


def test_a_region_check_of_a_hostile_change_is_cancellable_under_the_lock(tmp_path: Path) -> None:
    before, after = _hostile_file(tmp_path)
    with Workspace(tmp_path, stale="region") as ws:
        session = ws.session("s")
        assert_ok(session.call("read", {"file_path": "f.py"}))
        (tmp_path / "f.py").write_text(after)  # someone else swaps every pair of lines but the head
        edit = {"file_path": "f.py", "old_string": "# head\n", "new_string": "# HEAD\n"}
        cancelled = session.call("edit", edit, cancel=_CancelledInTheDiff(fire=True))
        assert cancelled.error is not None and cancelled.error.code == "TOOL_ABORTED", cancelled.text
        assert (tmp_path / "f.py").read_text() == after  # nothing written
        token = _CancelledInTheDiff(fire=False)
        done = assert_ok(session.call("edit", edit, cancel=token))
    assert 1 <= token.polls <= 2 * (line_diff.budget_of(before, after) // line_diff.CHECK_EVERY + 2)  # two diffs
    assert (tmp_path / "f.py").read_text() == "# HEAD" + after[len("# head") :]
    assert done.value is not None and done.value["changed_lines"][0][0] == 4  # the swapped lines, not the head


def test_the_history_diff_of_a_hostile_change_counts_its_work_and_applies(tmp_path: Path) -> None:
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    before, after = _hostile_file(tmp_path / "one")
    (tmp_path / "two" / "f.py").write_text(before)
    with Workspace(tmp_path / "one") as ws:
        session = ws.session("s")
        assert_ok(session.call("read", {"file_path": "f.py"}))
        mark = session.checkpoint()
        assert_ok(session.call("write", {"file_path": "f.py", "content": after}))
        token = _CancelledInTheDiff(fire=False)
        diff = checkpoints.diff(ws._context(session.key, "diff", token), mark)
        assert diff == session.diff(mark)
    assert 1 <= token.polls <= line_diff.budget_of(before, after) // line_diff.CHECK_EVERY + 2
    with Workspace(tmp_path / "two", tools=["read", "apply_patch"]) as other:
        applying = other.session("s")
        assert_ok(applying.call("read", {"file_path": "f.py"}))
        assert_ok(applying.call("apply_patch", {"patch": diff}))
    assert (tmp_path / "two" / "f.py").read_text() == after


def test_a_check_that_raises_stops_the_diff_at_its_first_call() -> None:
    a, b = HOSTILE["neighbours swapped"](24_000)
    calls: list[int] = []

    def check() -> None:
        calls.append(1)
        raise Aborted("the diff was cancelled")

    with pytest.raises(Aborted, match="the diff was cancelled"):
        line_diff.opcodes(a, b, check=check)
    assert calls == [1]


def test_a_region_multi_edit_diffs_once_and_moves_the_spans_past_each_edit(tmp_path: Path) -> None:
    """100 edits of a 45,000-line file in region mode, each adding a line: one diff under the lock, not
    one per edit (11 s on two shared cores before), and the lines that changed outside are numbered as
    the file is after the edits — as a fresh diff numbers them."""
    lines = [f"value_{i} = {i}\n" for i in range(45_000)]
    (tmp_path / "f.py").write_text("".join(lines))
    with Workspace(tmp_path, stale="region", check_syntax=False) as ws:
        session = ws.session("s")
        assert_ok(session.call("read", {"file_path": "f.py", "limit": 1}))
        outside = lines[:]
        outside[10] = "value_10 = 'other'\n"
        outside.insert(30_001, "inserted = 1\n")  # after value_30000, line 30,001
        (tmp_path / "f.py").write_text("".join(outside))
        numbers = range(100, 45_000, 450)
        edits = [{"old_string": f"value_{i} = {i}\n", "new_string": f"value_{i} = -{i}\n# note\n"} for i in numbers]
        token = _CancelledInTheDiff(fire=False)
        result = assert_ok(session.call("multi_edit", {"file_path": "f.py", "edits": edits}, cancel=token))
    before_insert = sum(1 for i in numbers if i < 30_000)
    assert result.value is not None
    assert result.value["changed_lines"] == [[11, 11], [30_002 + before_insert, 30_002 + before_insert]]
    final = (tmp_path / "f.py").read_text().splitlines(keepends=True)
    assert final[30_001 + before_insert] == "inserted = 1\n" and final[10] == "value_10 = 'other'\n"
    one_diff = line_diff.budget_of(lines, outside) // line_diff.CHECK_EVERY + 2
    assert 1 <= token.polls <= one_diff


@pytest.mark.skipif(shutil.which("patch") is None, reason="needs GNU patch")
@pytest.mark.parametrize("odd", ["\x0c", "\x0b", "\x1c", "\x85", "\u2028", "\r"])
def test_the_dry_run_diff_of_a_file_with_a_line_break_patch_does_not_count_applies(tmp_path: Path, odd: str) -> None:
    """A form feed, a vertical tab, \\x1c, NEL, U+2028 or a lone CR ends a line for ``str.splitlines`` but
    not for ``patch``: the dry run's diff split there put "\\ No newline at end of file" inside a hunk and
    ``patch -p1`` rejected it. Split on "\\n" alone (as the history diff does), it applies, with ``patch``
    and with apply_patch, and gives the bytes the edit writes."""
    before = ("x\n" * 5 + f"a{odd}b\nc\nd\n").encode()
    for name in ("dry", "copy", "applied"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "f.txt").write_bytes(before)
    edit = {"file_path": "f.txt", "old_string": "c\n", "new_string": "C\n"}
    with Workspace(tmp_path / "dry", tools=["read", "edit", "apply_patch"], check_syntax=False) as ws:
        session = ws.session("s")
        assert_ok(session.call("read", {"file_path": "f.txt"}))
        diff = assert_ok(session.call("edit", {**edit, "dry_run": True})).value["diff"]
        assert "No newline at end of file" not in diff
        assert_ok(session.call("edit", edit))
    after = (tmp_path / "dry" / "f.txt").read_bytes()
    assert after == before.replace(b"c\n", b"C\n")
    done = subprocess.run(["patch", "-p1", "-s"], input=diff.encode(), cwd=tmp_path / "copy", capture_output=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "copy" / "f.txt").read_bytes() == after
    with Workspace(tmp_path / "applied", tools=["read", "apply_patch"], check_syntax=False) as ws:
        session = ws.session("s")
        assert_ok(session.call("read", {"file_path": "f.txt"}))
        assert_ok(session.call("apply_patch", {"patch": diff}))
    assert (tmp_path / "applied" / "f.txt").read_bytes() == after
