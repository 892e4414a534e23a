"""Issue 12, items 1 and 8: nothing an edit sends can make the host build more than a few times the size
limit in memory, or hold a file's lock while it explains a failed match; and the explanation is the
same every time.

- An edit's result size is computed from its match count, in bytes as written (CRLF and BOM included),
  before any text is built: FS_TOO_LARGE names the edit, the size it would reach and the limit, at the
  first edit of a multi_edit whose running size passes the limit.
- multi_edit takes at most 100 edits.
- The near-miss diagnosis of FS_EDIT_NOT_FOUND runs after the lock is released, on the immutable text,
  with a fixed budget of work instead of a clock.
"""

from __future__ import annotations

import bisect
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fs_tools import Session, Workspace
from fs_tools.errors import AmbiguousEdit, EditNotFound, TooLarge
from fs_tools.matching import diagnosis
from fs_tools.matching import replace as matching
from fs_tools.provider.content import dominant_newline
from fs_tools.rendering.lines import snippet, split_lines
from fs_tools.testing import assert_error, assert_ok
from fs_tools.tools import edit

BOM = b"\xef\xbb\xbf"


@pytest.fixture
def small(root: Path) -> Iterator[Workspace]:
    """A workspace whose files may hold at most 1 KiB."""
    with Workspace(root, max_file_bytes=1 << 10) as ws:
        yield ws


def _observed(root: Path, session: Session, name: str, data: bytes) -> Path:
    path = root / name
    path.write_bytes(data)
    assert_ok(session.call("read", {"file_path": name}))
    return path


def _entries(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir())


# --- item 1: the size limit holds at every edit, before the text is built ---------------------------


def test_doubling_edits_stop_at_the_edit_that_passes_the_limit(root: Path, small: Workspace) -> None:
    session = small.session("s")
    path = _observed(root, session, "f.txt", b"a")
    doubling = [{"old_string": "a", "new_string": "aa", "replace_all": True}] * 20
    never_reached = [{"old_string": "not in the file", "new_string": "x"}]

    result = session.call("multi_edit", {"file_path": "f.txt", "edits": doubling + never_reached})

    message = assert_error(result, "FS_TOO_LARGE").text
    # after /edits/9 the file holds 1,024 bytes (the limit); /edits/10 would make it 2,048
    assert "/edits/10" in message and "2,048 bytes" in message and "1,024-byte limit" in message, message
    assert "/edits/20" not in message
    assert path.read_bytes() == b"a"
    assert _entries(root) == ["f.txt"]


def test_replace_all_growth_is_refused_from_the_match_count(root: Path) -> None:
    with Workspace(root, max_file_bytes=1 << 16) as ws:
        session = ws.session("s")
        path = _observed(root, session, "f.txt", b"a" * (1 << 15))
        args = {"file_path": "f.txt", "old_string": "a", "new_string": "b" * 2000, "replace_all": True}

        message = assert_error(session.call("edit", args), "FS_TOO_LARGE").text

    # 32,768 matches, each 1 byte becoming 2,000: the size is known before anything is joined
    assert "the edit would make 'f.txt' 65,536,000 bytes (32,768 replacement(s))" in message, message
    assert "65,536-byte limit" in message and "nothing was written" in message
    assert path.read_bytes() == b"a" * (1 << 15)
    assert _entries(root) == ["f.txt"]


def test_an_edit_over_the_limit_is_refused_even_when_a_later_one_shrinks_the_file(root: Path, small: Workspace) -> None:
    """The limit bounds every text the call builds, not only the last (decisions: running size)."""
    session = small.session("s")
    path = _observed(root, session, "f.txt", b"x" * 1000)
    edits = [
        {"old_string": "x" * 1000, "new_string": "y" * 2000},
        {"old_string": "y" * 2000, "new_string": "z"},
    ]

    message = assert_error(session.call("multi_edit", {"file_path": "f.txt", "edits": edits}), "FS_TOO_LARGE").text

    assert "edit /edits/0 would make 'f.txt' 2,000 bytes" in message, message
    assert path.read_bytes() == b"x" * 1000


LAYOUTS = [
    # (file bytes, old_string, new_string, replace_all, the bytes the edit leaves)
    pytest.param(
        BOM + b"a = 1\r\nb = 2\r\n",
        "a = 1\n",
        "a = 1\nz = 0\n",
        False,
        BOM + b"a = 1\r\nz = 0\r\nb = 2\r\n",
        id="bom-crlf",
    ),
    pytest.param(
        b"k\r\nv\r\nk\r\nv\r\n", "k\nv", "key\nvalue", True, b"key\r\nvalue\r\nkey\r\nvalue\r\n", id="crlf-replace-all"
    ),
    pytest.param(
        b"k\r\nv\nk\nv\r\nk\r\nv\r\n",
        "k\nv",
        "key\nvalue",
        True,
        b"key\r\nvalue\nkey\r\nvalue\r\nkey\r\nvalue\r\n",
        id="mixed-replace-all",
    ),
    pytest.param(BOM + "é\n".encode() * 3, "é", "ÿÿ", True, BOM + "ÿÿ\n".encode() * 3, id="bom-multibyte"),
]


@pytest.mark.parametrize(("data", "old", "new", "replace_all", "expected"), LAYOUTS)
def test_the_limit_counts_the_bytes_as_written(
    root: Path, data: bytes, old: str, new: str, replace_all: bool, expected: bytes
) -> None:
    args = {"file_path": "f.txt", "old_string": old, "new_string": new, "replace_all": replace_all}
    with Workspace(root, max_file_bytes=len(expected)) as ws:  # exactly enough: allowed
        session = ws.session("s")
        path = _observed(root, session, "f.txt", data)
        assert_ok(session.call("edit", args))
        assert path.read_bytes() == expected
    with Workspace(root, max_file_bytes=len(expected) - 1) as ws:  # one byte short: refused, nothing built
        session = ws.session("s")
        path = _observed(root, session, "f.txt", data)
        message = assert_error(session.call("edit", args), "FS_TOO_LARGE").text
        assert f"the edit would make 'f.txt' {len(expected):,} bytes" in message, message
        assert f"{len(expected) - 1:,}-byte limit" in message
        assert path.read_bytes() == data


def test_multi_edit_takes_at_most_100_edits(root: Path, session: Session) -> None:
    path = _observed(root, session, "f.txt", b"".join(b"line %d\n" % i for i in range(200)))
    edits = [{"old_string": f"line {i}\n", "new_string": f"LINE {i}\n"} for i in range(101)]

    result = session.call("multi_edit", {"file_path": "f.txt", "edits": edits})

    message = assert_error(result, "INVALID_ARGS").text
    assert "/edits: expected at most 100 item(s), got 101" in message and "several multi_edit calls" in message
    assert path.read_bytes() == b"".join(b"line %d\n" % i for i in range(200))
    assert_ok(session.call("multi_edit", {"file_path": "f.txt", "edits": edits[:100]}))
    assert path.read_bytes().startswith(b"LINE 0\nLINE 1\n")


def _reference(text: str, newline: str, old: str, new: str) -> tuple[str, list[int], int]:
    """The replacement as first specified (and first built): find every match in the CRLF-as-LF view,
    map each back through a list of every CRLF, splice. Returns the text, the match lines, the offset
    of the first match."""
    view = text.replace("\r\n", "\n")
    crlfs = [m.start() - i for i, m in enumerate(re.finditer("\r\n", text))]

    def original(position: int) -> int:
        return position + bisect.bisect_left(crlfs, position)

    needle = old.replace("\r\n", "\n")
    insert = new.replace("\r\n", "\n")
    if newline == "\r\n":
        insert = insert.replace("\n", "\r\n")
    positions: list[int] = []
    start = view.find(needle)
    while start >= 0:
        positions.append(start)
        start = view.find(needle, start + len(needle))
    pieces, cursor = [], 0
    for start in positions:
        pieces += [text[cursor : original(start)], insert]
        cursor = original(start + len(needle))
    pieces.append(text[cursor:])
    lines = [view.count("\n", 0, p) + 1 for p in positions]
    return "".join(pieces), lines, original(positions[0]) if positions else -1


_LINE = st.text(alphabet="ab é\r", max_size=5)


@settings(max_examples=400, deadline=None)
@given(
    lines=st.lists(st.tuples(_LINE, st.sampled_from(["\n", "\r\n"])), min_size=1, max_size=12),
    new=st.text(alphabet="ab\n\r é", max_size=6),
    data=st.data(),
)
def test_replacement_agrees_with_the_reference_splice_and_its_size_with_the_bytes(
    lines: list[tuple[str, str]], new: str, data: st.DataObject
) -> None:
    text = "".join(line + ending for line, ending in lines)
    view = text.replace("\r\n", "\n")
    start = data.draw(st.integers(0, len(view) - 1))
    old = data.draw(
        st.one_of(st.just(view[start : start + data.draw(st.integers(1, 6))]), st.text("ab\n\r", min_size=1))
    )
    newline = dominant_newline(text)
    expected, lines_at, position = _reference(text, newline, old, new)
    size = len(text.encode())

    def call(replace_all: bool, limit: int) -> tuple[str, matching.Replacement]:
        return matching.replace(
            text, newline, old, new, replace_all=replace_all, pointer="/edits/3", display="f", size=size, limit=limit
        )

    if not lines_at:
        with pytest.raises(EditNotFound):
            call(True, 1 << 30)
        return
    if len(lines_at) > 1:
        with pytest.raises(AmbiguousEdit) as ambiguous:
            call(False, 1 << 30)
        assert ambiguous.value.details["lines"] == lines_at
    result, done = call(True, 1 << 30)
    assert result == expected
    assert (done.count, done.first_line, done.position) == (len(lines_at), lines_at[0], position)
    assert done.size == len(expected.encode())
    assert call(True, done.size)[0] == expected  # exactly at the limit: allowed
    with pytest.raises(TooLarge) as refused:
        call(True, done.size - 1)
    assert refused.value.details["size"] == done.size and refused.value.details["pointer"] == "/edits/3"


@pytest.mark.parametrize("old", ["k\nv", "k\nk", "\n", "v\nk\nv"])
def test_mixed_line_endings_without_a_spare_character_still_splice_exactly(old: str) -> None:
    """A file that uses every control character the fast path could borrow takes the slow path: the
    same result, the same size."""
    spare = "".join(chr(c) for c in (*range(1, 9), 11, 12, *range(14, 32)))
    text = spare + "k\r\nv\nk\nv\r\nk\r\nk\nv\r\n" * 3
    expected, lines, _ = _reference(text, "\r\n", old, "x\ny")
    result, done = matching.replace(
        text, "\r\n", old, "x\ny", replace_all=True, pointer="", display="f", size=len(text), limit=1 << 20
    )
    assert result == expected and done.count == len(lines) and done.size == len(expected.encode())


@settings(max_examples=300, deadline=None)
@given(
    lines=st.lists(st.text(alphabet="ab\r ", max_size=4), max_size=20),
    final=st.booleans(),
    first=st.integers(1, 24),
)
def test_the_multi_edit_excerpt_is_the_snippet_of_all_lines(lines: list[str], final: bool, first: int) -> None:
    """The excerpt locates its lines in the final text instead of splitting all of it; it must show
    exactly what the split did, also when a later edit removed the first line touched."""
    text = "\n".join(lines) + ("\n" if final and lines else "")
    landed = [matching.Replacement(1, first, first, 0, 0), matching.Replacement(1, first + 1, first + 1, 0, 0)]
    assert edit._excerpt(text, landed, first, first) == snippet(split_lines(text), first, first)


# --- item 8: the diagnosis holds no lock and does not depend on the clock ----------------------------

SOURCE = "".join(f"    total_{n} = compute_total(items_{n}, weight={n % 7})\n" for n in range(20_000))


def test_the_near_miss_diagnosis_runs_after_the_lock_is_released(
    root: Path, workspace: Workspace, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _observed(root, session, "f.txt", SOURCE.encode())
    real = diagnosis.diagnose
    other_got_the_lock = threading.Event()
    seen: list[bool] = []

    def another_session() -> None:
        workspace.provider.current_version("f.txt", other_got_the_lock.set)  # takes the file's lock

    def diagnose(haystack: str, needle: str, new: str = "") -> dict[str, Any]:
        other = threading.Thread(target=another_session)
        other.start()
        seen.append(other_got_the_lock.wait(timeout=10))  # only a lock held by this call could stop it
        other.join(timeout=30)
        return real(haystack, needle, new)

    monkeypatch.setattr(diagnosis, "diagnose", diagnose)
    old = "    total_15000 = compute_totl(items_15000, weight=6)"

    message = assert_error(
        session.call("edit", {"file_path": "f.txt", "old_string": old, "new_string": "x"}), "FS_EDIT_NOT_FOUND"
    ).text

    assert seen == [True]
    assert re.search(r"\bline 15001\b", message) and "compute_total(items_15000" in message, message
    assert path.read_bytes() == SOURCE.encode()


def test_the_same_failing_edit_gets_the_same_diagnosis_on_any_machine(
    root: Path, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Repeated, and with a clock that races ahead as on a loaded machine: one answer."""
    path = _observed(root, session, "f.txt", SOURCE.encode())
    args = {
        "file_path": "f.txt",
        "old_string": "    total_12345 = compute_totl(items_1234, weight=4)",
        "new_string": "x",
    }
    answers = [assert_error(session.call("edit", args), "FS_EDIT_NOT_FOUND").text for _ in range(3)]
    real = diagnosis.diagnose
    real_clock = time.monotonic
    ticks = iter(range(10**9))

    def racing() -> float:
        return real_clock() + 3600.0 * next(ticks)  # every look at the clock finds an hour gone

    def diagnose_on_a_loaded_machine(haystack: str, needle: str, new: str = "") -> dict[str, Any]:
        with monkeypatch.context() as clock:
            clock.setattr(time, "monotonic", racing)
            return real(haystack, needle, new)

    monkeypatch.setattr(diagnosis, "diagnose", diagnose_on_a_loaded_machine)
    answers.append(assert_error(session.call("edit", args), "FS_EDIT_NOT_FOUND").text)

    assert len(set(answers)) == 1, answers
    assert re.search(r"\bline 12346\b", answers[0]) and "similar" in answers[0], answers[0]
    assert path.read_bytes() == SOURCE.encode()


def test_a_multi_edit_miss_is_diagnosed_against_the_text_the_earlier_edits_made(root: Path, session: Session) -> None:
    path = _observed(root, session, "f.txt", b"alpha = 1\nbeta = 2\n")
    edits = [
        {"old_string": "beta = 2", "new_string": "gamma_value = 2"},
        {"old_string": "gamma_valeu = 2", "new_string": "x"},
    ]

    message = assert_error(session.call("multi_edit", {"file_path": "f.txt", "edits": edits}), "FS_EDIT_NOT_FOUND").text

    assert "/edits/1/old_string was not found" in message and "gamma_value = 2" in message, message
    assert "no edit was applied" in message
    assert path.read_bytes() == b"alpha = 1\nbeta = 2\n"


def test_a_diagnosis_cut_by_its_budget_never_claims_the_whole_file(root: Path, session: Session) -> None:
    """Past the line budget only lines sharing the text's rarer words are compared: when the typo is in
    that very word the true place is not found, and the message must not call its pick the most similar
    text *in the file* (the model would retry on the wrong line)."""
    text = "".join(f"    total_{i} = compute(alpha, beta, {i % 7})\n" for i in range(60_000))
    _observed(root, session, "gen.py", text.encode())
    result = session.call(
        "edit", {"file_path": "gen.py", "old_string": "    totl_5555x = compte(alpa, bta, 5)", "new_string": "x"}
    )
    assert_error(result, "FS_EDIT_NOT_FOUND")
    assert "most similar text in the file" not in result.text
    assert re.search(r"in lines 1–[\d,]+ \(past them only lines sharing its rarer parts were compared\)", result.text)


def test_a_typo_in_an_identifier_is_found_by_its_other_part_past_any_budget(root: Path, session: Session) -> None:
    """A word of old_string found once in the file (a part of a misspelt identifier) places the region,
    however far down the file: no budget cuts it short."""
    text = "".join(f"    total_{i} = compute(alpha, beta, {i % 7})\n" for i in range(60_000))
    _observed(root, session, "gen.py", text.encode())
    result = session.call(
        "edit", {"file_path": "gen.py", "old_string": "    totl_55555 = compute(alpha, beta, 3)", "new_string": "x"}
    )
    message = assert_error(result, "FS_EDIT_NOT_FOUND").text
    assert re.search(r"\bline 55556\b", message) and "total_55555 = compute(alpha, beta, 3)" in message, message
    assert "in the file" not in message
