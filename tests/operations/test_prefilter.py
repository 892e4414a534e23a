"""grep's look at raw bytes before decoding (fs_tools/patterns/prefilter.py) never skips a file that
matches: the literals it takes are in every match, and its case folding is the regex engine's."""

from __future__ import annotations

import sys
import time
import unicodedata
from pathlib import Path

import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from fs_tools import Workspace
from fs_tools.patterns.prefilter import FOLDS_BEYOND_ASCII, prefilter, required_literals
from fs_tools.tools.grep import GrepQuery, _FileSearch, _matcher, _plain_literal

_NON_ASCII = "".join(chr(c) for c in range(0x80, sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF)


def test_the_ascii_letters_that_fold_beyond_ascii_are_exactly_those_listed() -> None:
    folding = {
        letter
        for letter in map(chr, range(128))
        if regex.search(regex.escape(letter), _NON_ASCII, regex.IGNORECASE) is not None
    }
    assert folding == set(FOLDS_BEYOND_ASCII)


def test_required_literals_are_the_top_level_runs_longest_first() -> None:
    assert required_literals(r"def test_\w*unicode") == ["def test_", "unicode"]
    assert required_literals("plain") == ["plain"]
    assert required_literals("a|b") == []  # an alternation: no literal is in every match
    assert required_literals("(abc)+x") == ["x"]
    assert required_literals("ab?c") == ["a", "c"]  # b is optional
    assert required_literals("[[:alpha:]]x") == []  # POSIX class syntax to the regex engine
    assert required_literals("abc{e<=1}") == []  # a fuzzy match of 'c' to the regex engine
    assert required_literals("(abc{e<=1})x") == ["x"]
    assert required_literals("a{2}b") == ["b"]  # a counted repeat is not a literal run
    assert required_literals("line\r\nend") == ["line", "end"]
    assert required_literals("(") == []


def test_no_prefilter_where_no_literal_helps() -> None:
    assert prefilter(r"\w+", False) is None
    assert prefilter("é+", True) is None  # case-insensitive needs an ASCII literal


# Texts built from what makes the look at bytes risky: case partners beyond ASCII, CRLF, invalid UTF-8.
_PIECES = ["k", "K", "\u212a", "s", "S", "\u017f", "i", "I", "\u0130", "\u0131", "\r\n", "\n", "ab", "é", "x", " "]
_PATTERN_PIECES = ["k", "s", "i", "ab", "x", "é", "K", r"\w", ".", "$", "^", " ", "(?i)", "a|b", "[ks]", "\\n"]
_PATTERN_PIECES += ["{e<=1}"]


@settings(max_examples=400, deadline=None)
@given(
    pieces=st.lists(st.sampled_from(_PIECES), max_size=12),
    junk=st.sampled_from([b"", b"\xff", b"\xe2\x82", b"\xc3"]),
    pattern_pieces=st.lists(st.sampled_from(_PATTERN_PIECES), min_size=1, max_size=4),
    case_insensitive=st.booleans(),
)
def test_a_file_the_prefilter_skips_has_no_match(
    pieces: list[str], junk: bytes, pattern_pieces: list[str], case_insensitive: bool
) -> None:
    pattern = "".join(pattern_pieces)
    if pattern.count("(?i)") and not pattern.startswith("(?i)"):
        pattern = pattern.replace("(?i)", "")
    try:
        check = prefilter(pattern, case_insensitive)
        matches = _matcher(pattern, case_insensitive)
    except Exception:
        return  # not a pattern validation accepts
    data = "".join(pieces).encode("utf-8") + junk
    if check is None or check(data):
        return
    text = data.replace(b"\r\n", b"\n").decode("utf-8", "replace")
    assert next(matches(text, 10.0), None) is None, (pattern, data)


def test_grep_finds_case_partners_beyond_ascii(tmp_path: Path) -> None:
    (tmp_path / "units.txt").write_text("temperature in \u212aelvin\n", encoding="utf-8")
    (tmp_path / "plain.txt").write_text("nothing here\n")
    with Workspace(tmp_path) as ws:
        result = ws.session("s").call("grep", {"pattern": "kelvin", "case_insensitive": True})
    assert not result.is_error
    assert result.value["matches"] == 1
    assert "units.txt:1:" in result.text


def test_grep_skips_files_without_the_literal_yet_counts_them(tmp_path: Path) -> None:
    for n in range(5):
        (tmp_path / f"f{n}.py").write_text("def other():\n    pass\n")
    (tmp_path / "hit.py").write_text("x = 1\r\ndef test_unicode_names():\r\n    pass\r\n")
    with Workspace(tmp_path) as ws:
        result = ws.session("s").call("grep", {"pattern": r"def test_\w*names\(\):$"})
    assert result.value["files_searched"] == 6
    assert result.value["matches"] == 1
    assert "hit.py:2: def test_unicode_names():" in result.text


_LITERAL_PIECES = ["ab", "a", "b", " ", "é", "\u212a", "\r\n", "\n", "\r", "-", "#"]


@settings(max_examples=300, deadline=None)
@given(
    pieces=st.lists(st.sampled_from(_LITERAL_PIECES), max_size=16),
    junk=st.lists(st.sampled_from([b"", b"\xff", b"\xe2\x82", b"\xc3", b"\xe2"]), max_size=3),
    literal=st.sampled_from(["ab", "a", "b a", "é", "a-b", "#", "\u212a"]),
    rows=st.integers(min_value=1, max_value=4),
)
def test_a_plain_pattern_found_in_the_bytes_gives_the_regex_rows(
    pieces: list[str], junk: list[bytes], literal: str, rows: int
) -> None:
    """The raw-bytes path for a plain-text pattern shows exactly the rows the regex path shows."""
    data = b"".join(piece.encode("utf-8") + extra for piece, extra in zip(pieces, [*junk, *[b""] * 16], strict=False))
    query = GrepQuery(literal, max_rows=rows)
    assert _plain_literal(query) == literal.encode("utf-8")
    common = {
        "matcher": _matcher(literal, False),
        "deadline": time.monotonic() + 60,
        "clock": time.monotonic,
        "max_bytes": 1 << 20,
    }
    by_bytes = _FileSearch(query, prefilter=None, literal=literal.encode("utf-8"), **common)  # type: ignore[arg-type]
    by_regex = _FileSearch(query, prefilter=None, literal=None, **common)  # type: ignore[arg-type]
    assert by_bytes("f.txt", (data, len(data))) == by_regex("f.txt", (data, len(data)))


# Characters some regex release or Unicode property might treat as space in verbose mode: every
# whitespace, format, separator and control character (U+200E/U+200F are Pattern_White_Space, not isspace).
_SPACE_LIKE = [
    char
    for char in (chr(code) for code in range(sys.maxunicode + 1) if not 0xD800 <= code <= 0xDFFF)
    if char.isspace() or unicodedata.category(char) in {"Cf", "Cc", "Zs", "Zl", "Zp"}
]


def test_verbose_literals_are_what_the_installed_engine_reads_as_text() -> None:
    """Which characters the regex engine skips in verbose mode changes between its releases; the
    prefilter asks the engine. For each space-like character, the literals taken from '(?x)a<char>b' are
    all in what the engine itself matches there, and a character the engine keeps is kept."""
    assert regex.fullmatch("(?x)a b", "ab") is not None  # the probe below is meaningful: ' ' is skipped
    for char in _SPACE_LIKE:
        pattern = f"(?x)a{char}b"
        try:
            match = regex.search(pattern, f"a{char}b ab", regex.MULTILINE)
        except regex.error:
            continue  # not a pattern grep's validation accepts
        assert match is not None, repr(char)
        assert all(literal in match.group() for literal in required_literals(pattern)), repr(char)
        if match.group() == f"a{char}b" and char not in "\r\n":
            assert required_literals(pattern) == [f"a{char}b"], repr(char)  # kept where the engine keeps it


def test_grep_with_verbose_spacing_or_a_surrogate_escape_answers_as_the_engine_does(tmp_path: Path) -> None:
    text = "x = deftest_value\nABCD\ndef\u00a0test_ def\u3000test_ ab\x1fcd def\u200etest_\n"
    (tmp_path / "f.py").write_text(text)
    patterns = ["(?x) def\u00a0test_", "(?x) def\u3000test_", "(?ix)ab\x1fcd", "(?x)def\u200etest_", "(?x)def test_"]
    with Workspace(tmp_path) as ws:
        session = ws.session("s")
        for pattern in patterns:
            expected = sum(1 for line in text.splitlines() if regex.search(pattern, line))
            result = session.call("grep", {"pattern": pattern})
            assert not result.is_error and result.value["matches"] == expected, (pattern, result.text)
        assert session.call("grep", {"pattern": "(?x)def test_"}).value["matches"] == 1  # the space is skipped
        result = session.call("grep", {"pattern": r"test_\udc80"})  # a surrogate escape: valid, matches nothing
        assert not result.is_error and result.value["matches"] == 0, result.text
