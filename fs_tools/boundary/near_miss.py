"""The words of the near-miss diagnosis: ``FS_EDIT_NOT_FOUND`` and ``FS_AMBIGUOUS_EDIT`` details, as the
model reads them (the boundary's part; the facts come from ``matching/diagnosis.py``).

Short: the place, the difference, the fix, then the file's lines. Invisible and look-alike characters
in those lines are shown as ``⟨U+00A0⟩``, so a no-break space never looks like the space the model sent.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from fs_tools.terms import term


def _copy() -> str:
    return f"copy {term('old_string')} from these lines, then retry"


_ESCAPES = {
    "\\n": "a backslash and an n (\\n, two characters) where the file breaks the line: use real line breaks",
    "\\t": "a backslash and a t (\\t, two characters) where the file has a tab: use a real tab",
    '\\"': 'a backslash before each quote (\\") where the file has the quote alone: drop the backslashes',
    "\\'": "a backslash before each quote (\\') where the file has the quote alone: drop the backslashes",
    "\\`": "a backslash before each backtick (\\`) where the file has the backtick alone: drop the backslashes",
    "\\\\": "doubled backslashes (\\\\) where the file has single ones (\\): write each backslash once",
    "html_entity": "HTML entities (such as &lt; or &amp;) where the file has the characters themselves",
    "backslashes": (
        "a backslash before characters the file has without one (such as \\` or \\$): drop those backslashes"
    ),
}
_UNDER_ESCAPES = {
    "\\n": "a line break where the file has \\n (a backslash and an n, two characters): write \\n there",
    "\\t": "a tab where the file has \\t (a backslash and a t, two characters): write \\t there",
    '\\"': 'a quote alone where the file has a backslash before it (\\"): write the backslash too',
    "\\\\": "a single backslash (\\) where the file has two (\\\\): write each backslash as the file does",
}
_PREFIX_RULE = {
    "number_tab": "the number and the one tab after it",
    "number_arrow": "the number and the → after it",
    "padded_pipe": "the number and the '| ' after it",
    "number_pipe": "the number and the ' | ' after it",
    "l_number": "the 'L', the number and the ': ' after it",
    "number_colon": "the number and the ': ' after it",
    "number_colon_bare": "the number and the ':' after it",
}


def not_found_message(head: str, details: Mapping[str, Any]) -> str:
    kind = details.get("kind")
    candidate = [(int(n), str(text)) for n, text in details.get("candidate") or []]
    line = details.get("line")
    if not kind or not candidate:
        searched_to = details.get("searched_to")
        where = (
            f"in lines 1–{searched_to:,} (past them only lines sharing its rarer parts were compared)"
            if isinstance(searched_to, int)
            else "in the file"
        )
        return (
            f"{head}, and nothing similar was found {where} — read the file again and copy {term('old_string')} "
            "exactly from it"
        )
    named = frozenset(str(d.get("char", "")) for d in details.get("differences") or [] if d.get("char"))
    shown = excerpt(candidate, named)
    if kind == "already_applied":
        loosely = " (but for whitespace)" if details.get("loosely") else ""
        loosely = " (within the line)" if details.get("within_line") else loosely
        return (
            f"{head}, but {term('new_string')} is already in the file at line {line}{loosely} — the edit looks applied "
            f"already; nothing was changed now. Check it there before editing again:\n{shown}"
        )
    if kind == "placeholder":
        first, last = (int(n) for n in details.get("stands_for") or (0, 0))
        lines = f"line {first}" if first == last else f"lines {first}–{last}"
        return (
            f"{head}. The closest text is at line {line}: {term('old_string')}'s line {details.get('old_line')} "
            f"({str(details.get('placeholder'))[:80]!r}) is a placeholder for lines left out, where the file has "
            f"{lines}; the text before and after it matches. An edit replaces exactly the text it is given: put "
            f"those lines in {term('old_string')} instead of the placeholder, or edit only the lines around it:"
            f"\n{shown}"
        )
    sentences: list[str] = []
    if details.get("prefix_format"):
        rule = _PREFIX_RULE.get(str(details["prefix_format"]), "the number and its separator")
        sentences.append(
            f"{term('old_string')} has read's line-number prefixes ({details['prefix']!r}): remove {rule} from "
            "each line, keep the rest, indentation included"
        )
    if kind == "over_escaped":
        sentences.append(
            f"{term('old_string')} has {_ESCAPES.get(str(details.get('escape')), 'escapes the file does not have')}"
        )
    elif kind == "under_escaped":
        said = _UNDER_ESCAPES.get(str(details.get("escape")), "fewer backslashes than the file")
        sentences.append(f"{term('old_string')} has {said}")
    elif kind == "cr_in_old_string":
        sentences.append(
            f"it differs only in line endings: write line breaks in {term('old_string')} as \\n, with no \\r"
        )
    elif kind == "cr_in_file":
        sentences.append(
            "it differs only in line endings: this file breaks lines with a bare \\r (carriage return), "
            f"so write them as \\r in {term('old_string')}"
        )
    sentences.extend(_reshaped(details))
    sentences.extend(_differences(details))
    if kind == "partial" or details.get("missing_lines") or details.get("extra_lines"):
        sentences.extend(_partial(details))
    elif details.get("near"):  # one line most like old_string's, and what tells them apart
        sentences.extend(_near(n) for n in details["near"] if n.get("what"))
    if kind == "similar" or details.get("also") == "similar":
        searched_to = details.get("searched_to")
        where = (
            f" in lines 1–{searched_to:,} (past them only lines sharing its rarer parts were compared)"
            if isinstance(searched_to, int)
            else ""
        )
        sentences.append(f"it is the most similar text{where}")
    said = "; ".join(sentences) if sentences else "it differs"
    return f"{head}. The closest text is at line {line}: {said}:\n{shown}\n— {_copy()}"


def _differences(details: Mapping[str, Any]) -> list[str]:
    out = []
    for d in details.get("differences") or []:
        sentence = _difference(d)
        if not sentence:
            continue
        others = [int(n) for n in d.get("lines") or [] if n != d.get("line")]
        if others:
            sentence += f" (also {'line' if len(others) == 1 else 'lines'} {_numbers(others)})"
        out.append(sentence)
    return out


def _numbers(lines: Sequence[int]) -> str:
    """1, 2, 3, 7 as '1–3, 7'."""
    runs: list[list[int]] = []
    for n in sorted(lines):
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return ", ".join(str(a) if a == b else f"{a}–{b}" for a, b in runs)


def _difference(d: Mapping[str, Any]) -> str:
    kind, line = d.get("kind"), d.get("line")
    if kind == "trailing_whitespace":
        file_has, old_has = str(d.get("file_has", "")), str(d.get("old_has", ""))
        if file_has and not old_has:
            return f"line {line} ends with {_blanks(file_has)} in the file, which {term('old_string')}'s line lacks"
        if old_has and not file_has:
            return (
                f"{term('old_string')}'s line {d.get('old_line')} ends with {_blanks(old_has)}, which line {line} lacks"
            )
        return f"line {line} ends with {_blanks(file_has)} in the file, {_blanks(old_has)} in {term('old_string')}"
    if kind in ("tabs_vs_spaces", "indentation"):
        what = "tabs vs spaces" if kind == "tabs_vs_spaces" else "indentation"
        return (
            f"{what}: line {line} is indented with {_blanks(str(d.get('file_has', '')))} in the file, "
            f"{_blanks(str(d.get('old_has', '')))} in {term('old_string')}"
        )
    if kind == "mixed_indentation":
        where = (
            "the file mixes tabs and spaces"
            if d.get("side") == "file"
            else f"{term('old_string')} mixes tabs and spaces"
        )
        return (
            f"{where}: copy each line's own indentation (line {line}: {_blanks(str(d.get('file_has', '')))} "
            f"in the file, {_blanks(str(d.get('old_has', '')))} in {term('old_string')})"
        )
    if kind == "whitespace":
        return (
            f"whitespace inside line {line} differs: at column {d.get('column')} the file has "
            f"{_blanks(str(d.get('file_has', '')))}, {term('old_string')} {_blanks(str(d.get('old_has', '')))}"
        )
    if kind in ("invisible_character", "lookalike_character"):
        char = str(d.get("char", ""))
        named = f"{d.get('code_point')} {d.get('name')}{_family(char)}"
        instead = str(d.get("instead_of", ""))
        escaped = "\\u" + f"{ord(char):04x}" if char else ""
        at = f"line {line}, column {d.get('column')}"
        hidden = "a private-use" if char and unicodedata.category(char) == "Co" else "an invisible"
        if d.get("side") == "file":
            if not instead:
                return f"{at}: the file has {hidden} {named}, which {term('old_string')} lacks ({escaped} in JSON)"
            return f"{at}: the file has {named} where {term('old_string')} has {instead!r} ({escaped} in JSON)"
        if not instead:
            return f"{at}: {term('old_string')} has {hidden} {named} the file lacks; remove it"
        return f"{at}: {term('old_string')} has {named} where the file has {instead!r}; use {instead!r}"
    if kind == "blank_lines":
        gap, theirs = int(d.get("file_has", 0)), int(d.get("old_has", 0))
        after = int(d.get("line", 1)) - 1
        return f"after line {after} the file has {_count(gap, 'blank line')}, {term('old_string')} {theirs}"
    if kind == "cr_in_file":
        return f"line {line} ends with a carriage return (\\r) in the file"
    return ""


def _family(char: str) -> str:
    """What kind of look-alike ``char`` is, in words a model searches its memory by."""
    if not char:
        return ""
    category = unicodedata.category(char)
    if category in ("Pi", "Pf") or char in "\u201a\u201e\u2032\u2033\u00b4":
        return " (a curly quote)"
    if category == "Pd" or char == "\u2212":
        return " (a dash, not a hyphen-minus)"
    if category == "Zs":
        return " (a space that is not the plain space)"
    if char == "\u2026":
        return " (an ellipsis character)"
    return ""


def _partial(details: Mapping[str, Any]) -> list[str]:
    runs = details.get("matched_lines") or []
    matched = ""
    if runs:
        mine = ", ".join(str(a) if a == b else f"{a}–{b}" for a, b, _ in runs[:4])
        theirs = ", ".join(str(at) if a == b else f"{at}–{at + b - a}" for a, b, at in runs[:4])
        one = len(runs) == 1 and runs[0][0] == runs[0][1]
        matched = (
            f"{term('old_string')}'s line {mine} matches line {theirs}"
            if one
            else f"{term('old_string')}'s lines {mine} match lines {theirs}"
        )
    missing = [int(n) for n in details.get("missing_lines") or []]
    near = {int(n["old_line"]): n for n in details.get("near") or []}
    out = [matched] if matched else []
    described = []
    for n in missing[:4]:
        if n in near:
            described.append(_near(near[n]))
        else:
            described.append(f"its line {n} is not in the file")
    if len(missing) > 4:
        described.append(f"and {len(missing) - 4} more lines are not")
    out.extend(described)
    extra = [int(n) for n in details.get("extra_lines") or []]
    if extra:
        out.append(f"the file has other lines among them ({'line' if len(extra) == 1 else 'lines'} {_numbers(extra)})")
    return out


def _near(near: Mapping[str, Any]) -> str:
    """Line n of old_string against the file's line most like it, and what tells them apart."""
    said = f"its line {near['old_line']} differs from the file's line {near['line']}"
    what = near.get("what") or {}
    kind = what.get("kind")
    if kind == "word":
        return f"{said}: it has {what['old_has']!r} where the file has {what['file_has']!r}"
    if kind == "escape":
        escape = str(what.get("escape"))
        plain = {"\\n": "a line break", "\\t": "a tab"}.get(escape, repr(escape[1:]))
        if what.get("side") == "file":
            return f"{said}: the file has {escape} (with a backslash) where {term('old_string')} has {plain}"
        return f"{said}: {term('old_string')} has {escape} (with a backslash) where the file has {plain}"
    if kind == "character":
        char = str(what.get("char", ""))
        named = f"{what.get('code_point')} {what.get('name')}{_family(char)}"
        instead = str(what.get("instead_of", ""))
        if what.get("side") == "file":
            other = f"where {term('old_string')} has {instead!r}" if instead else f"which {term('old_string')} lacks"
            return f"{said}: the file has {named} {other}"
        other = f"where the file has {instead!r}" if instead else "which the file lacks; remove it"
        return f"{said}: it has {named} {other}"
    return said


def _reshaped(details: Mapping[str, Any]) -> list[str]:
    """Lines of old_string broken otherwise than the file's, and a ladder of closing lines of another length."""
    out = []
    for fact in details.get("reshaped") or []:
        mine = [int(n) for n in fact.get("old_lines") or []]
        kind = fact.get("kind")
        if kind == "joined":
            first, last = (int(n) for n in fact.get("lines") or (0, 0))
            out.append(
                f"{term('old_string')}'s line {mine[0]} has the file's lines {first}–{last} joined in one line: "
                "keep them on separate lines, as the file has them"
            )
        elif kind == "wrapped":
            out.append(
                f"{term('old_string')}'s lines {mine[0]}–{mine[-1]} are the file's line {fact.get('line')} wrapped "
                "(split in more lines): write it on one line, as the file has it"
            )
        elif kind == "split_at_escape":
            out.append(
                f"{term('old_string')}'s lines {mine[0]}–{mine[-1]} are the file's line {fact.get('line')}, split "
                "at a real line break where the file has \\n (a backslash and an n, two characters): write \\n "
                "there, on one line"
            )
    ladder = details.get("ladder")
    if ladder:
        first, last = (int(n) for n in ladder.get("lines") or (0, 0))
        has, wants = int(ladder.get("old_has", 0)), int(ladder.get("file_has", 0))
        one = "one level is missing" if has < wants else "it has one level too many" if has == wants + 1 else ""
        shifted = ladder.get("shifted")
        if shifted:
            columns = shifted.get("columns")
            how = f"{_count(int(columns), 'column')} " if columns else ""
            deeper = "deeper" if shifted.get("deeper") else "shallower"
            out.append(
                f"{term('old_string')}'s closing lines from its line {ladder.get('old_line')} are each indented "
                f"{how}{deeper} than the file's (lines {first}–{last}): the ladder is a level off — copy the "
                "closing lines as the file has them"
            )
            return out
        out.append(
            f"{term('old_string')} ends with {_count(has, 'closing line')} from its line {ladder.get('old_line')}, "
            f"where the file has {wants} (lines {first}–{last}){': ' + one if one else ''} — copy the closing "
            "lines as the file has them"
        )
    return out


def _blanks(text: str) -> str:
    if not text:
        return "no whitespace"
    tabs, spaces = text.count("\t"), text.count(" ")
    parts = []
    if tabs:
        parts.append(_count(tabs, "tab"))
    if spaces:
        parts.append(_count(spaces, "space"))
    other = len(text) - tabs - spaces
    if other:
        parts.append(_count(other, "other blank"))
    return " and ".join(parts)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def visible(text: str, also: frozenset[str] = frozenset()) -> str:
    """``text`` with invisible characters (other spaces than the space, zero-width and format
    characters) and those in ``also`` (the look-alikes a difference names) shown as ``⟨U+XXXX⟩``."""
    if text.isascii():
        return text
    return "".join(f"⟨U+{ord(c):04X}⟩" if _invisible(c) or c in also else c for c in text)


def _invisible(char: str) -> bool:
    return not char.isascii() and unicodedata.category(char) in ("Zs", "Cf", "Zl", "Zp")


_EXCERPT_CHARS = 1_800  # shown characters of an excerpt, marks included


def excerpt(candidate: Sequence[tuple[int, str]], also: frozenset[str] = frozenset()) -> str:
    """The lines as read numbers them, marks included, within ``_EXCERPT_CHARS`` (a line that would pass
    it is cut, and no line follows it)."""
    rows: list[str] = []
    size = 0
    for n, text in candidate:
        shown = visible(text, also)
        room = _EXCERPT_CHARS - size
        if rows and room <= 40:
            break
        if len(shown) > room:
            shown = shown[: max(room, 40)] + "…"
        rows.append(f"{n:>6}\t{shown}")
        size += len(shown)
    return "\n".join(rows)


def ambiguity_excerpt(context: Sequence[Sequence[Any]]) -> str:
    """Each match's first line with a neighbour (what can make old_string unique), in file order;
    lines shared by two matches shown once, a gap marked with '...'."""
    rows = sorted({(int(n), str(text)) for match in context for n, text in match})
    if not rows:
        return ""
    out: list[str] = []
    size = 0
    for index, (n, text) in enumerate(rows):
        if index and n > rows[index - 1][0] + 1:
            out.append("   ...")
        shown = visible(text)[:200]
        size += len(shown)
        if size > _EXCERPT_CHARS:
            break
        out.append(f"{n:>6}\t{shown}")
    return ":\n" + "\n".join(out) + "\n"
