"""Omission placeholders (SPEC §15): a comment that stands for code the model left out — ``# ... rest of
code unchanged``, ``// ... existing code ...``, ``/* ... */``, ``<!-- ... -->`` — written over existing
code would delete that code. Such a line in new text is refused unless the text it replaces had it.

Only whole comment lines count, and only an ellipsis alone or an ellipsis or phrase that says code was
left out: an ellipsis in code (``...`` as a Python statement, ``[...args]``, ``Tuple[int, ...]``), in a
string, or in an ordinary comment (``# wait...``, ``// TODO: more cases...``) is never a placeholder.
"""

from __future__ import annotations

import re

from fs_tools.errors import OmissionPlaceholder

_COMMENT = re.compile(
    r"^\s*(?:\{/\*|\{#|@\*|/\*+|<!--|#+|//+|--|;+|%+|\*)\s?(?P<inner>.*?)\s*(?:\*+/\}?|-->|#\}|\*@)?\s*$"
)
_ELLIPSIS = r"(?:\.{3,}|…)"
_ONLY_ELLIPSIS = re.compile(rf"^{_ELLIPSIS}$")
_WORDS = (
    r"rest|remaining|existing|unchanged|same|previous|omitted|elided|skipped|snip|other (?:code|methods|functions|"
    r"fields|cases|imports|tests|styles|routes)|(?:your|original|old) code|code|implementation|as before|keep"
)
# An ellipsis at either end of the comment (or set off by spaces) with a word that says code is left out.
_ELLIPSIS_WITH_WORD = re.compile(
    rf"(?:^{_ELLIPSIS}\s*.*\b(?:{_WORDS})\b|\b(?:{_WORDS})\b.*\s*{_ELLIPSIS}$|\s{_ELLIPSIS}\s.*\b(?:{_WORDS})\b)",
    re.IGNORECASE,
)
# Without an ellipsis, the whole comment must be such a phrase (a comment that merely mentions "the
# existing code" or "same as before" in a sentence is prose): "rest of the code unchanged", "existing
# code here", "code omitted for brevity", "the rest stays the same", "snip", ...
_THING = (
    r"(?:code|file|function|class|method|methods|implementation|module|component|body|logic|styles|page|"
    r"content|tests|imports|cases|fields|file contents|lines)"
)
_PHRASE = re.compile(
    rf"^[\[(]?(?:(?:the )?rest(?: of (?:the |this |your )?{_THING})?(?: (?:is|remains|stays|left))?"
    r"(?: (?:unchanged|the same|as (?:is|before)|omitted|here))?"
    rf"|existing {_THING}(?: (?:here|unchanged|remains|stays|goes here|omitted))?"
    rf"|{_THING} (?:unchanged|omitted|elided|remains the same|stays the same)(?: for brevity| here)?"
    r"|(?:omitted|elided|snipped)(?: for brevity)?|snip"
    rf"|unchanged(?: {_THING})?(?: (?:omitted|elided|left out))?|same as (?:before|above|original|the original)"
    rf"|(?:previous|original) {_THING}(?: here| unchanged| remains)?"
    rf"|keep (?:the )?(?:rest|existing)(?: {_THING})?(?: as is)?)[\])]?[.:]?$",
    re.IGNORECASE,
)
_MAYBE_WORDS = ("rest", "existing", "unchanged", "omitted", "elided", "snip", "same as", "previous", "original", "keep")
_MAX_LINE = 200  # a longer comment line is prose, not a placeholder


def is_placeholder(line: str) -> bool:
    """Whether ``line`` is an omission placeholder comment."""
    if len(line) > _MAX_LINE:
        return False
    found = _COMMENT.match(line)
    if found is None:
        return False
    inner = found.group("inner").strip().strip("*").strip()
    if not inner:
        return False
    if _ONLY_ELLIPSIS.match(inner):
        return True
    if re.search(_ELLIPSIS, inner):
        return bool(_ELLIPSIS_WITH_WORD.search(inner))
    return bool(_PHRASE.match(inner))


def refuse_placeholders(new: str, old: str, pointer: str, *, first_line: int = 1) -> None:
    """``OmissionPlaceholder`` naming the first placeholder line of ``new`` that ``old`` lacks (``new``'s
    first line numbered ``first_line``: a part of the content, the rest being lines ``old`` has)."""
    found = new_placeholders(new, old, first_line=first_line)
    if not found:
        return
    line, text = found[0]
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    raise OmissionPlaceholder(
        f"{pointer} line {line} is an omission placeholder ({text!r}){more}: it would replace the code it "
        "stands for, deleting that code; nothing was written",
        details={"pointer": pointer, "line": line, "text": text, "count": len(found)},
    )


# A line that starts (after blanks) as a comment can: only those are looked at, found in one C-level scan,
# so a 5 MB write of code is not a Python step per line (440 ms before, a few now).
_COMMENT_LINE = re.compile(r"^[^\S\n]*(?:\{/\*|\{#|@\*|/\*|<!--|#|//|--|;|%|\*)[^\n]*", re.MULTILINE)


def _placeholder_lines(text: str, first_line: int = 1) -> list[tuple[int, str]]:
    """(line number, the line) for each placeholder comment line of ``text``, its first line numbered
    ``first_line``."""
    found: list[tuple[int, str]] = []
    number, counted = first_line, 0
    for match in _COMMENT_LINE.finditer(text):
        line = match.group(0)
        if is_placeholder(line):
            number += text.count("\n", counted, match.start())
            counted = match.start()
            found.append((number, line))
    return found


def new_placeholders(new: str, old: str, *, first_line: int = 1) -> list[tuple[int, str]]:
    """(line of ``new``, the line) for each placeholder in ``new`` that ``old`` does not have, ``new``'s
    first line numbered ``first_line``."""
    if "..." not in new and "…" not in new:  # then only a phrase can be one: one of its words must be there
        lowered = new.lower()
        if not any(word in lowered for word in _MAYBE_WORDS):
            return []  # the common case, in C-level substring searches (a regex over 5 MB took 0.4 s)
    found = _placeholder_lines(new, first_line)
    if not found:
        return []
    had = {line.strip() for _, line in _placeholder_lines(old)}
    return [(number, line.strip()) for number, line in found if line.strip() not in had]
