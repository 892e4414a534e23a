"""Locating ``apply_patch``'s hunks (issue 31): a hunk is tried only where its rarest line is, in an index
of the file's lines made once per way of comparing them, and every try is counted against a bound that
grows with the file and the patch — the inputs that took 40–50 s holding the GIL now take a few passes
over the file, and the count, not a clock, is what the tests assert."""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fs_tools import ToolResult, Workspace
from fs_tools.errors import EditNotFound
from fs_tools.line_diff import CHECK_EVERY, Work
from fs_tools.line_index import TooCommon
from fs_tools.testing import assert_error, assert_ok
from fs_tools.tools import apply_patch


class _CountingToken:
    """A cancel token that is never set and counts the times the line searches ask it (once per
    ``CHECK_EVERY`` units of their work): a search that does not count its work never asks."""

    def __init__(self) -> None:
        self.polls = 0

    def is_set(self) -> bool:
        frame = sys._getframe(1)
        while frame is not None:
            if frame.f_globals.get("__name__") in ("fs_tools.line_diff", "fs_tools.line_index"):
                self.polls += 1
                return False
            frame = frame.f_back  # type: ignore[assignment]
        return False


def _bound(lines: int, patch_lines: int) -> int:
    """The most polls a search within its budget can make."""
    return (apply_patch.WORK_PER_LINE * (lines + patch_lines) + apply_patch.WORK_FLOOR) // CHECK_EVERY + 2


def _patching(root: Path) -> Workspace:
    return Workspace(root, tools=["read", "apply_patch"], check_syntax=False)


def _read_then_patch(root: Path, name: str, patch: str) -> tuple[ToolResult, _CountingToken]:
    """``name`` read, then ``patch`` applied with a token that counts the searches' polls."""
    with _patching(root) as ws:
        session = ws.session("s")
        assert_ok(session.call("read", {"file_path": name}))
        token = _CountingToken()
        return session.call("apply_patch", {"patch": patch}, cancel=token), token


def test_a_long_hunk_that_does_not_match_a_file_of_one_repeated_line(tmp_path: Path) -> None:
    """160,000 copies of one line and a 1,000-line hunk, all of it but its removed line matching
    everywhere: every line was a candidate, compared 1,000 lines deep (~40-50 s; 17 s here before)."""
    (tmp_path / "f.txt").write_text("same line\n" * 160_000)
    hunk = " same line\n" * 999 + "-not in the file\n+x\n"
    patch = f"*** Begin Patch\n*** Update File: f.txt\n@@\n{hunk}*** End Patch\n"
    result, token = _read_then_patch(tmp_path, "f.txt", patch)
    assert_error(result, "FS_EDIT_NOT_FOUND")
    assert "hunk 1 of 'f.txt' (patch line 3) does not match 'f.txt'" in result.text
    assert 1 <= token.polls <= _bound(160_000, 1_001)  # the index is made once: ~8 polls, not thousands
    assert (tmp_path / "f.txt").read_text() == "same line\n" * 160_000


def test_many_hunks_that_match_but_for_trailing_spaces(tmp_path: Path) -> None:
    """2,000 hunks on 20,000 lines that each carry trailing spaces the hunk does not: each hunk's forgiving
    pass cut every line of the file again (80,000 lines and 8,000 hunks took 223 s on two shared cores)."""
    lines = [f"line {i}   \n" for i in range(20_000)]
    (tmp_path / "f.txt").write_text("".join(lines))
    hunks = "".join(f"@@\n line {i}\n-line {i + 1}\n+LINE {i + 1}\n" for i in range(0, 20_000, 10))
    patch = f"*** Begin Patch\n*** Update File: f.txt\n{hunks}*** End Patch\n"
    result, token = _read_then_patch(tmp_path, "f.txt", patch)
    assert_ok(result)
    assert 1 <= token.polls <= _bound(20_000, 3 * 2_000)
    expected = [f"LINE {i}\n" if i % 10 == 1 else line for i, line in enumerate(lines)]  # context keeps its spaces
    assert (tmp_path / "f.txt").read_text() == "".join(expected)


def test_a_unified_diff_of_a_large_file_applies_by_its_line_numbers(tmp_path: Path) -> None:
    """A git diff with 1,000 hunks whose lines all repeat (each `x = 0` twice in a row): the numbers pick
    each place, found from the index near the number."""
    lines = [f"x = {i // 2}\n" for i in range(100_000)]
    (tmp_path / "f.py").write_text("".join(lines))
    hunks = "".join(
        f"@@ -{i + 1},2 +{i + 1},2 @@\n-x = {i // 2}\n+y = {i // 2}\n x = {i // 2}\n" for i in range(0, 100_000, 100)
    )
    result, token = _read_then_patch(tmp_path, "f.py", f"--- a/f.py\n+++ b/f.py\n{hunks}")
    assert_ok(result)
    assert token.polls <= _bound(100_000, 3_000)
    expected = [f"y = {i // 2}\n" if i % 100 == 0 else line for i, line in enumerate(lines)]
    assert (tmp_path / "f.py").read_text() == "".join(expected)


def test_a_hunk_of_only_common_lines_past_the_bound_is_refused_naming_the_line(tmp_path: Path) -> None:
    """One hunk of 101 lines, each at half the file's places, matching nowhere exactly (the file's copies
    alternate with and without a trailing space): its exact pass tries it at all of them, each try the
    whole hunk long, until the bound for the file is spent by this hunk alone — then a teaching
    FS_EDIT_NOT_FOUND naming its rarest line, nothing written."""
    text = "a\na \n" * 20_000
    (tmp_path / "f.txt").write_text(text)
    hunk = " a\n" * 50 + "-a\n+b\n" + " a\n" * 50
    patch = f"*** Begin Patch\n*** Update File: f.txt\n@@\n{hunk}*** End Patch\n"
    result, token = _read_then_patch(tmp_path, "f.txt", patch)
    assert_error(result, "FS_EDIT_NOT_FOUND")
    bound = apply_patch.WORK_PER_LINE * (40_000 + 102) + apply_patch.WORK_FLOOR
    assert "hunk 1 of 'f.txt'" in result.text
    assert "every line of it is common in the file (even its rarest, 'a', is at 20,000 places)" in result.text
    assert f"the bound of {bound:,} comparisons" in result.text and "occurs once in the file" in result.text
    assert "/patch: hunk " in result.text and "nothing was written" in result.text
    assert isinstance(result.exception, EditNotFound)
    assert result.exception.details["places"] == 20_000 and result.exception.details["bound"] == bound
    chain = [result.exception]
    while chain[-1].__cause__ is not None:
        chain.append(chain[-1].__cause__)
    cause = chain[-1]  # the search's own condition, under the error the model reads
    assert isinstance(cause, TooCommon) and cause.line == "a" and cause.places == 20_000
    assert token.polls <= _bound(40_000, 102)
    assert (tmp_path / "f.txt").read_text() == text


def test_many_hunks_each_tried_at_many_places_stop_at_the_bound_for_the_whole_patch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """38 hunks of 40 lines, each one's rarest line at 255 places whose ends match (a decoy block per place),
    each hunk well within the bound, all of them together well past it: the count is looked at after
    every charge, so the patch is refused at the hunk where the bound ran out — said as the patch's, not
    as that hunk's lines being too common — and the counter ends at most one comparison below zero (it
    used to check only when one search reached 256 tries: 398 such hunks of 400 lines spent 3 times the
    bound and applied)."""
    monkeypatch.setattr(apply_patch, "WORK_PER_LINE", 16)  # the bound made small, so the test is quick
    monkeypatch.setattr(apply_patch, "WORK_FLOOR", 0)
    made: list[Work] = []

    class Kept(Work):  # the counter apply_patch makes, kept to be read: it only goes down, so it ends lowest
        def __init__(self, budget: int, check: Callable[[], None] | None) -> None:
            super().__init__(budget, check)
            made.append(self)

    monkeypatch.setattr(apply_patch, "Work", Kept)
    size, count = 40, 38
    blocks, hunks = [], []
    for i in range(count):
        block = ["S"] + ["m"] * i + [f"R{i}"] + ["m"] * (size - 3 - i) + ["E"]
        blocks += block
        ops = [" " + x for x in block[: i + 1]] + [f"-R{i}", f"+X{i}"] + [" " + x for x in block[i + 2 :]]
        hunks += ["@@", *ops]
    decoy = ["S"] + [f"R{i}" for i in range(size - 2)] + ["E"]
    lines = blocks + decoy * 254
    text = "".join(f"{line}\n" for line in lines)
    (tmp_path / "f.txt").write_text(text)
    patch = "*** Begin Patch\n*** Update File: f.txt\n" + "\n".join(hunks) + "\n*** End Patch\n"
    with _patching(tmp_path) as ws:
        session = ws.session("s")
        assert_ok(session.call("read", {"file_path": "f.txt"}))
        result = session.call("apply_patch", {"patch": patch})
    assert_error(result, "FS_EDIT_NOT_FOUND")
    bound = 16 * (len(lines) + count * (size + 1))
    (work,) = made
    assert -size <= work.left < 0  # past the bound by at most the one comparison that did not fit
    assert isinstance(result.exception, EditNotFound)
    details = result.exception.details
    assert details["bound"] == bound and details["places"] == 255 and details["spent_before"] > bound // 2
    number = int(result.text.split("hunk ", 1)[1].split(" ", 1)[0])
    assert 2 <= number < count
    assert f"passed the bound of {bound:,} comparisons for this file at this hunk" in result.text
    assert f"the {number - 1} before it spent {details['spent_before']:,}" in result.text
    assert f"rarest line, 'R{number - 1}', is at 255 places" in result.text
    assert f"apply hunks 1-{number - 1} as one patch and the rest as another" in result.text
    assert "every line of it is common" not in result.text
    assert (tmp_path / "f.txt").read_text() == text


@pytest.mark.parametrize("ending", [b"\r", b"x\r"])
def test_a_file_ending_in_a_lone_carriage_return_keeps_it(tmp_path: Path, ending: bytes) -> None:
    (tmp_path / "f.txt").write_bytes(b"one\ntwo\n" + ending)
    with _patching(tmp_path) as ws:
        session = ws.session("s")
        assert_ok(session.call("read", {"file_path": "f.txt"}))
        patch = "*** Begin Patch\n*** Update File: f.txt\n@@\n-one\n+ONE\n two\n*** End Patch\n"
        assert_ok(session.call("apply_patch", {"patch": patch}))
    assert (tmp_path / "f.txt").read_bytes() == b"ONE\ntwo\n" + ending


_UPDATE = "*** Begin Patch\n*** Update File: f.txt\n@@\n{}*** End Patch\n"


@pytest.mark.parametrize(
    ("before", "ops", "after"),
    [
        (b"{\r\n}\r", " }\n+x\n", b"{\r\n}\r\nx"),  # lines added after it: the last line gets the file's ending
        (b"b\na\r", " a\n+x\n", b"b\na\nx"),  # ... in an LF file, "\n": no CRLF appears
        (b"one\ntwo\r", " one\n-two\n+TWO\n", b"one\nTWO"),  # the last line replaced: the CR goes with it
        (b"one\ntwo\r", "-one\n+ONE\n two\n", b"ONE\ntwo\r"),  # the last line a context line: kept
        (b"x\t\nx\t\r", "-x\t\n+y\n", "FS_AMBIGUOUS_EDIT"),  # the last line is "x\t" for matching
        (b"c\n\r", "-c\n-\n", "FS_EDIT_NOT_FOUND"),  # a CR after the last line break is no blank line
    ],
)
def test_a_lone_carriage_return_ending_the_file_is_matched_and_written_as_before_unless_left_alone(
    tmp_path: Path, before: bytes, ops: str, after: bytes | str
) -> None:
    """A lone CR at the very end of a file (what is left of a cut CRLF) is neither a line ending nor text:
    hunks match the last line without it (as they always did), and it stays after that line when a hunk
    leaves the line be; when a hunk changes the last line or adds lines after it, the result is what it
    always was (the CR dropped, no "\\r\\r\\n" and no CRLF in an LF file)."""
    (tmp_path / "f.txt").write_bytes(before)
    with _patching(tmp_path) as ws:
        session = ws.session("s")
        assert_ok(session.call("read", {"file_path": "f.txt"}))
        result = session.call("apply_patch", {"patch": _UPDATE.format(ops)})
    if isinstance(after, str):
        assert_error(result, after)
        assert "hunk 1 of 'f.txt'" in result.text
        assert (tmp_path / "f.txt").read_bytes() == before
    else:
        assert_ok(result)
        assert (tmp_path / "f.txt").read_bytes() == after


@settings(max_examples=60, deadline=None)
@given(
    lines=st.lists(st.sampled_from(["a", "b", "", "  a", "a  "]), min_size=1, max_size=30),
    data=st.data(),
)
def test_a_numbered_hunk_among_repeated_lines_lands_where_its_numbers_say(
    lines: list[str], data: st.DataObject
) -> None:
    """Any stretch of a file of few distinct lines, changed by a unified hunk that numbers it: the change
    lands there (exact matches nearest the number win over others and over the forgiving ones)."""
    start = data.draw(st.integers(0, len(lines) - 1))
    size = data.draw(st.integers(1, len(lines) - start))
    changed = data.draw(st.integers(start, start + size - 1))
    ops = "".join(
        f"-{t}\n+{t}!\n" if at == changed else f" {t}\n" for at, t in enumerate(lines[start : start + size], start)
    )
    patch = f"--- a/f.txt\n+++ b/f.txt\n@@ -{start + 1},{size} +{start + 1},{size} @@\n{ops}"
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "f.txt").write_text("".join(f"{t}\n" for t in lines))
        with _patching(root) as ws:
            session = ws.session("s")
            assert_ok(session.call("read", {"file_path": "f.txt"}))
            assert_ok(session.call("apply_patch", {"patch": patch}))
        expected = [f"{t}!" if at == changed else t for at, t in enumerate(lines)]
        assert (root / "f.txt").read_text() == "".join(f"{t}\n" for t in expected)
