"""A quick look at a file's raw bytes that rules out a grep match before the file is decoded.

Most files of a tree cannot match a pattern: ripgrep's speed comes from never running the regex over
them. Every match of ``def test_\\w*unicode`` contains ``def test_``, so a file whose bytes lack it is
skipped without decoding. The check must never skip a file that matches (no false negatives):

- Only literals at the top level of the pattern count (a concatenation: each of them is in every
  match); anything under a group, a repeat or an alternation is ignored.
- A literal is looked for as its UTF-8 bytes. Text is decoded with invalid bytes replaced by U+FFFD,
  so a literal free of U+FFFD that occurs in the text occurs in the bytes. Literals with line endings
  are not used (CRLF becomes LF before matching). Where ``re`` (whose parser this uses) reads a
  literal the ``regex`` engine may read syntax: ``c{e<=1}`` is a fuzzy match of ``c``, ``[[:alpha:]]``
  a POSIX class. A pattern with a literal ``{`` at the top or with ``[:`` is not filtered at all, and
  ``}`` and ``]`` never count; nor does a lone surrogate. In verbose mode (``(?x)``) a character counts
  only where the installed ``regex`` engine, asked once per character, reads it as itself: which
  whitespace it skips has changed between its releases (U+00A0 and U+3000 were skipped until 2026.12.2),
  so no copy of its rules is kept here.
- Case-insensitive: the literal must be ASCII, and it is looked for ignoring ASCII case. That is exact
  for a file whose bytes are all ASCII, and for any file when the literal has no letter that folds to a
  non-ASCII one in the ``regex`` engine (``i``: U+0130 İ, U+0131 ı; ``k``: U+212A K; ``s``: U+017F ſ);
  other files are decoded and searched as before.
"""

from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Callable
from typing import Any

import regex

# The parser re.compile itself uses; no public API hands out the parsed tree (grep's validation uses it too).
re_parser: Any = importlib.import_module("re._parser")
_LITERAL = re_parser.LITERAL
# ASCII letters that, ignoring case, also match a non-ASCII character in the regex engine
# (tests/operations/test_prefilter.py enumerates every code point to prove this list complete).
FOLDS_BEYOND_ASCII = frozenset("iIkKsS")
_UNSAFE = frozenset("\r\n{}]\ufffd")

# (raw bytes) -> False when the file certainly has no match
Prefilter = Callable[[bytes], bool]


def required_literals(pattern: str) -> list[str]:
    """The runs of literal characters every match of ``pattern`` contains, longest first; [] when the
    pattern cannot be read that way (see the module's rules)."""
    return _read(pattern)[0]


def _read(pattern: str) -> tuple[list[str], bool]:
    """``required_literals`` of the pattern, and whether it turns case-insensitivity on itself (``(?i)``)."""
    if "[:" in pattern:
        return [], False
    try:
        parsed = re_parser.parse(pattern)
    except (re.error, RecursionError, OverflowError):
        return [], False
    if any(op == _LITERAL and argument == ord("{") for op, argument in parsed):
        return [], False  # 'c{e<=1}' is a fuzzy match of 'c' to the regex engine: neither 'c' nor the braces are sure
    flags = parsed.state.flags
    verbose = bool(flags & re.VERBOSE)
    runs: list[str] = []
    current: list[str] = []
    for op, argument in parsed:
        if op == _LITERAL and _counts(chr(argument), verbose):
            current.append(chr(argument))
            continue
        if current:
            runs.append("".join(current))
            current = []
    if current:
        runs.append("".join(current))
    return sorted(runs, key=len, reverse=True), bool(flags & re.IGNORECASE)


def _counts(char: str, verbose: bool) -> bool:
    """Whether a literal ``re`` reads is one every match holds, as the regex engine reads it too: not a
    line ending, brace, bracket or U+FFFD; not a lone surrogate (no text holds one); and in verbose mode
    only a character the engine reads as itself there (not one it skips as whitespace)."""
    if char in _UNSAFE or "\ud800" <= char <= "\udfff":
        return False
    return not verbose or _verbose_engine_reads_itself(char)


@functools.lru_cache(maxsize=4096)
def _verbose_engine_reads_itself(char: str) -> bool:
    """Whether the installed regex engine, in verbose mode, reads ``char`` written as is as a literal of
    itself: False for what it skips (whitespace, by its own release's rules) and for syntax (then the
    pattern had the character escaped, and dropping it only makes the filter weaker, never wrong)."""
    try:
        return regex.fullmatch(f"(?x)a{char}b", f"a{char}b") is not None
    except regex.error:
        return False


def prefilter(pattern: str, case_insensitive: bool) -> Prefilter | None:
    """A check on raw bytes that is False only for a file with no match of ``pattern``; None when no
    literal of the pattern can be used for one."""
    literals, ignores_case = _read(pattern)
    if not literals:
        return None
    if not (case_insensitive or ignores_case):
        needle = literals[0].encode("utf-8")
        return lambda data: needle in data
    ascii_literals = [text for text in literals if text.isascii()]
    if not ascii_literals:
        return None
    literal = ascii_literals[0]
    lowered = literal.lower().encode("ascii")  # bytes.lower() lowers ASCII letters only: 3x a regex search
    if FOLDS_BEYOND_ASCII.isdisjoint(literal):
        return lambda data: lowered in data.lower()
    return lambda data: not data.isascii() or lowered in data.lower()
