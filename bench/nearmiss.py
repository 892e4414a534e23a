"""Near misses made from real files, and how well the edit diagnosis names them (issue 33).

A region of a real file (the standard library's Python, the project's Markdown, and the small files in
``bench/nearmiss_sources``: Go and a Makefile indented with tabs, C#, TypeScript, JSON with non-ASCII text,
LaTeX, YAML; two of them with Windows line endings; one file over 1 MB) is copied as ``old_string``
with one known mutation — the mistakes models make when they copy text. Each edit is made through a
session that has read the file, and its message is scored on three questions:

- **kind**: the message names the mutation (the words each one must use are in ``MUTATIONS``);
- **line**: the line the message points at is the region's first line;
- **shown**: the file's real text of the region is in the message's excerpt, ready to copy.

An edit fs-tools makes anyway (an ``old_string`` with other line endings than the file: matched by design)
counts on all three when the file ends up as meant.

    python -m bench.nearmiss               # 60 cases per mutation; a table per mutation
    python -m bench.nearmiss --smoke       # 4 per mutation: checks the command works
    python -m bench.nearmiss -v            # and every message that misses a column

The test suite runs a small seeded set of the same cases (``tests/teaching/test_nearmiss.py``).
"""

from __future__ import annotations

import argparse
import html
import math
import random
import re
import statistics
import sys
import sysconfig
import tempfile
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHIPPED = HERE / "nearmiss_sources"
DOCS = HERE.parent / "docs"
MARKER = "changed_by_the_near_miss_benchmark"
TARGETS = {"kind": 0.95, "line": 0.98}
FLOOR = 0.90  # no mutation's kind rate under this

# --- the files -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Source:
    name: str  # the file's name in the workspace: its suffix says the language
    text: str  # as on disk (CRLF kept)
    comment: str  # how a line comment starts ("" where the language has none)


_STDLIB = ["textwrap.py", "argparse.py", "json/decoder.py", "email/_header_value_parser.py", "ast.py", "string.py"]
_BIG = ["typing.py", "inspect.py", "argparse.py", "tarfile.py", "subprocess.py", "pathlib.py", "dataclasses.py"]
_COMMENTS = {".py": "#", ".go": "//", ".cs": "//", ".ts": "//", ".tex": "%", ".yaml": "#", ".md": "", ".json": ""}


def sources(big: bool = True, *, shipped_only: bool = False) -> list[Source]:
    """Every file the cases are made from, in a fixed order; ``shipped_only``: the files in
    ``bench/nearmiss_sources`` alone (the same on every Python, as the test suite needs)."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    out: list[Source] = []
    for name in [] if shipped_only else _STDLIB:
        path = stdlib / name
        if path.exists():
            out.append(Source(name.replace("/", "_"), path.read_text(encoding="utf-8"), "#"))
    for path in sorted(SHIPPED.iterdir()):
        text = path.read_text(encoding="utf-8")
        comment = "#" if path.name == "Makefile" else _COMMENTS.get(path.suffix, "")
        out.append(Source(path.name, text, comment))
        if path.suffix in (".cs", ".yaml"):  # the same files as a Windows editor saves them
            out.append(Source(f"{path.stem}-crlf{path.suffix}", text.replace("\n", "\r\n"), comment))
    if shipped_only:
        return out
    for name in ("index.md", "concepts.md", "security.md"):
        if (DOCS / name).exists():
            out.append(Source(name, (DOCS / name).read_text(encoding="utf-8"), ""))
    if big:
        parts, size = [], 0
        for name in _BIG:
            path = stdlib / name
            if path.exists() and size < (1 << 20) + (200 << 10):
                text = path.read_text(encoding="utf-8")
                parts.append(text)
                size += len(text.encode())
        if size > 1 << 20:
            out.append(Source("big_module.py", "\n\n".join(parts), "#"))
    return out


# --- the mutations ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    mutation: str
    source: str
    old: str  # the old_string sent
    new: str  # the new_string sent
    line: int  # the line the message must point at
    intended: str  # the file's text the message must show
    expect: str  # the words that name the mutation (a regular expression)


# A mutation takes the region's lines (LF, no line endings) and a random source and returns old_string's
# text, or None where it does not apply to this region. Some return (old, new, intended) themselves.
Mutate = Callable[[list[str], random.Random, Source], "str | tuple[str, str, str] | None"]


@dataclass(frozen=True)
class Mutation:
    name: str
    expect: str
    mutate: Mutate
    lines: tuple[int, int] = (1, 5)  # how many lines the region has, at least and at most
    where: Callable[[Source], bool] = field(default=lambda source: True)


def _lead(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _unit(lines: list[str]) -> str:
    """One level of the region's indentation: a tab, or the spaces its indents are multiples of."""
    if any(_lead(line).startswith("\t") for line in lines):
        return "\t"
    widths = [len(_lead(line)) for line in lines if line.strip() and _lead(line)]
    return " " * max(2, math.gcd(*widths)) if widths else "    "


def _indent_deeper(lines: list[str], rng: random.Random, source: Source) -> str | None:
    unit = _unit(lines)
    return "\n".join(unit + line if line.strip() else line for line in lines)


def _indent_shallower(lines: list[str], rng: random.Random, source: Source) -> str | None:
    unit = _unit(lines)
    filled = [line for line in lines if line.strip()]
    if not all(line.startswith(unit) for line in filled):
        return None
    return "\n".join(line[len(unit) :] if line.strip() else line for line in lines)


def _tabs_to_spaces(lines: list[str], rng: random.Random, source: Source) -> str | None:
    if not any(_lead(line).count("\t") for line in lines):
        return None
    return "\n".join(_lead(line).replace("\t", "    ") + line.lstrip(" \t") for line in lines)


def _spaces_to_tabs(lines: list[str], rng: random.Random, source: Source) -> str | None:
    leads = [_lead(line) for line in lines if line.strip()]
    if "\t" in "".join(leads) or not any(len(lead) >= 4 for lead in leads):
        return None
    return "\n".join(_lead(line).replace("    ", "\t") + line.lstrip(" \t") for line in lines)


def _trailing_added(lines: list[str], rng: random.Random, source: Source) -> str | None:
    filled = [i for i, line in enumerate(lines) if line.strip() and line == line.rstrip()]
    if not filled:
        return None
    i = rng.choice(filled)
    return "\n".join(line + rng.choice(("  ", " ", "\t")) if n == i else line for n, line in enumerate(lines))


def _trailing_removed(lines: list[str], rng: random.Random, source: Source) -> str | None:
    trailing = [i for i, line in enumerate(lines[:-1]) if line.strip() and line != line.rstrip()]
    if not trailing:
        return None
    i = rng.choice(trailing)
    return "\n".join(line.rstrip() if n == i else line for n, line in enumerate(lines))


def _other_endings(lines: list[str], rng: random.Random, source: Source) -> str | None:
    """CRLF where the file has LF, and LF where it has CRLF."""
    if len(lines) < 2:
        return None
    return "\n".join(lines) if "\r\n" in source.text else "\r\n".join(lines)


def _rewrapped(lines: list[str], rng: random.Random, source: Source) -> str | None:
    long = [i for i, line in enumerate(lines) if len(line.strip()) >= 50 and " " in line.strip()[20:-10]]
    if not long:
        return None
    i = rng.choice(long)
    line = lines[i]
    lead = _lead(line)
    spaces = [p for p, c in enumerate(line) if c == " " and len(lead) + 20 < p < len(line) - 10]
    if not spaces:
        return None
    cut = rng.choice(spaces)
    wrapped = [line[:cut].rstrip(), lead + "    " + line[cut + 1 :].lstrip()]
    return "\n".join(lines[:i] + wrapped + lines[i + 1 :])


def _joined(lines: list[str], rng: random.Random, source: Source) -> str | None:
    pairs = [i for i in range(len(lines) - 1) if lines[i].strip() and lines[i + 1].strip()]
    if not pairs:
        return None
    i = rng.choice(pairs)
    return "\n".join([*lines[:i], lines[i].rstrip() + " " + lines[i + 1].strip(), *lines[i + 2 :]])


def _blank_added(lines: list[str], rng: random.Random, source: Source) -> str | None:
    pairs = [i for i in range(len(lines) - 1) if lines[i].strip() and lines[i + 1].strip()]
    if not pairs:
        return None
    i = rng.choice(pairs)
    return "\n".join([*lines[: i + 1], "", *lines[i + 1 :]])


def _blank_removed(lines: list[str], rng: random.Random, source: Source) -> str | None:
    blanks = [i for i in range(1, len(lines) - 1) if not lines[i].strip()]
    if not blanks:
        return None
    i = rng.choice(blanks)
    return "\n".join(lines[:i] + lines[i + 1 :])


def _replacing(before: str, after: str) -> Mutate:
    """Every ``before`` in the region written as ``after`` (an escape once too often or too few)."""

    def mutate(lines: list[str], rng: random.Random, source: Source) -> str | None:
        block = "\n".join(lines)
        if before not in block:
            return None
        if before == "\n" and "\\n" in block:  # both forms in one old_string: which one is meant is unclear
            return None
        return block.replace(before, after)

    return mutate


def _html_entities(lines: list[str], rng: random.Random, source: Source) -> str | None:
    block = "\n".join(lines)
    if not any(c in block for c in '&<>"'):
        return None
    return html.escape(block, quote=True).replace("&#x27;", "'")


_CURLY = {'"': ("\u201c", "\u201d"), "'": ("\u2018", "\u2019")}


def _curly_quotes(lines: list[str], rng: random.Random, source: Source) -> str | None:
    block = "\n".join(lines)
    if '"' not in block and "'" not in block:
        return None
    out, seen = [], {'"': 0, "'": 0}
    for char in block:
        if char in _CURLY:
            out.append(_CURLY[char][seen[char] % 2])
            seen[char] += 1
        else:
            out.append(char)
    return "".join(out)


def _straight_quotes(lines: list[str], rng: random.Random, source: Source) -> str | None:
    block = "\n".join(lines)
    table = str.maketrans({"\u201c": '"', "\u201d": '"', "\u201e": '"', "\u2018": "'", "\u2019": "'"})
    straight = block.translate(table)
    return straight if straight != block else None


def _escaped_vs_curly(lines: list[str], rng: random.Random, source: Source) -> str | None:
    """A JSON string's escaped quotes (\\"word\\") written as curly ones."""
    block = "\n".join(lines)
    found = re.search(r'\\"([^"\\]+)\\"', block)
    if not found:
        return None
    return block[: found.start()] + "\u201c" + found.group(1) + "\u201d" + block[found.end() :]


def _inserted(char: str, *, replace: str = "", inside_word: bool = False) -> Mutate:
    """``char`` put in one place of the region: instead of a ``replace`` character, or inside a word."""

    def mutate(lines: list[str], rng: random.Random, source: Source) -> str | None:
        block = "\n".join(lines)
        if replace:
            places = [p for p, c in enumerate(block) if c == replace and block[p - 1 : p] not in (" ", "\n", "")]
            if not places:
                return None
            p = rng.choice(places)
            return block[:p] + char + block[p + 1 :]
        if inside_word:
            places = [m.start() + 2 for m in re.finditer(r"[A-Za-z]{4,}", block)]
        else:
            places = [p for p in range(1, len(block)) if block[p - 1] == "\n" and block[p : p + 1].strip()]
        if not places:
            return None
        p = rng.choice(places)
        return block[:p] + char + block[p:]

    return mutate


def _plain_for(chars: str, plain: str) -> Mutate:
    """One of the file's ``chars`` (an unusual space or hyphen) written as the ``plain`` one."""

    def mutate(lines: list[str], rng: random.Random, source: Source) -> str | None:
        block = "\n".join(lines)
        places = [p for p, c in enumerate(block) if c in chars]
        if not places:
            return None
        p = rng.choice(places)
        return block[:p] + plain + block[p + 1 :]

    return mutate


_IDENTIFIER = re.compile(r"\b[A-Za-z][a-z]{4,}[A-Za-z]*\b")


def _misspelled(lines: list[str], rng: random.Random, source: Source) -> tuple[str, str, str] | None:
    """One word with two neighbouring letters swapped (``imgcdc`` for ``imgccd``); expects both named."""
    block = "\n".join(lines)
    words = [m for m in _IDENTIFIER.finditer(block) if len(set(m.group(0)[1:-1])) > 1]
    if not words:
        return None
    found = rng.choice(words)
    word = found.group(0)
    spots = [k for k in range(1, len(word) - 2) if word[k] != word[k + 1]]
    k = rng.choice(spots)
    wrong = word[:k] + word[k + 1] + word[k] + word[k + 2 :]
    return block[: found.start()] + wrong + block[found.end() :], wrong, word


_FORMATS = ["{n:>6}\t", "{n:>6}→", "{n}: ", "L{n}: ", "{n:>5}| ", "{n:>4} | "]


def _line_prefix(lines: list[str], rng: random.Random, source: Source) -> str | None:
    form, first = rng.choice(_FORMATS), rng.randint(1, 3000)
    return "\n".join(form.format(n=n) + line for n, line in enumerate(lines, first))


def _placeholder(lines: list[str], rng: random.Random, source: Source) -> str | None:
    if len(lines) < 4 or not source.comment:
        return None
    inner = lines[1:-1]
    lead = _lead(next(line for line in inner if line.strip()) if any(x.strip() for x in inner) else lines[0])
    said = rng.choice(("... existing code ...", "... rest unchanged ...", "...", "(unchanged lines omitted)"))
    return "\n".join([lines[0], f"{lead}{source.comment} {said}", lines[-1]])


def _applied_lines(lines: list[str], rng: random.Random, source: Source) -> tuple[str, str, str] | None:
    """The region is new_string: the edit was made already (old_string has the words it replaced)."""
    block = "\n".join(lines)
    words = list(_IDENTIFIER.finditer(block))
    if not words:
        return None
    found = rng.choice(words)
    old = block[: found.start()] + found.group(0) + "_before" + block[found.end() :]
    return old, block, block


def _applied_in_line(lines: list[str], rng: random.Random, source: Source) -> tuple[str, str, str] | None:
    """A part of one line is new_string: a change within a line, made already."""
    line = rng.choice(lines)
    words = list(re.finditer(r"[A-Za-z_][\w.]*(?:\([^()\n]*\))?", line))
    if len(words) < 3:
        return None
    a = rng.randrange(len(words) - 2)
    part = line[words[a].start() : words[a + 2].end()]
    if len(part) < 12 or source.text.replace("\r\n", "\n").count(part) != 1:
        return None
    last = words[a + 2].group(0)
    old = part[: len(part) - len(last)] + "old_" + last
    return old, part, part


def _same(lines: list[str], rng: random.Random, source: Source) -> tuple[str, str, str] | None:
    """old_string equal to new_string, and the text is in the file."""
    block = "\n".join(lines)
    return block, block, block


_CLOSER = re.compile(r"^\s*[\])}]+[;,)]*\s*$")


def _bracket_ladder(lines: list[str], rng: random.Random, source: Source) -> str | None:
    """The closing lines at the end of the region one fewer (a level of the ladder left out) or one more."""
    ladder = 0
    while ladder < len(lines) and _CLOSER.match(lines[len(lines) - 1 - ladder]):
        ladder += 1
    if ladder < 2 or ladder == len(lines):
        return None
    first = len(lines) - ladder
    if rng.random() < 0.5:  # the innermost closer left out
        return "\n".join(lines[:first] + lines[first + 1 :])
    deeper = _lead(lines[first]) + _unit(lines) + lines[first].strip()  # one more level, inside the first
    return "\n".join([*lines[:first], deeper, *lines[first:]])


_TABS = lambda source: any(line.startswith("\t") for line in source.text.splitlines())  # noqa: E731
_NO_TABS = lambda source: not _TABS(source)  # noqa: E731
_BACKSLASH = "backslash"

MUTATIONS: list[Mutation] = [
    Mutation("indentation deeper", r"indent", _indent_deeper),
    Mutation("indentation shallower", r"indent", _indent_shallower),
    Mutation("tabs as spaces", r"tabs vs spaces|mixes tabs and spaces", _tabs_to_spaces, where=_TABS),
    Mutation("spaces as tabs", r"tabs vs spaces|mixes tabs and spaces", _spaces_to_tabs, where=_NO_TABS),
    Mutation("trailing whitespace added", r"ends with", _trailing_added),
    Mutation("trailing whitespace removed", r"ends with", _trailing_removed, (2, 5)),
    Mutation("other line endings", r"line endings|carriage return", _other_endings, (2, 5)),
    Mutation("line re-wrapped", r"wrapped|joined|split", _rewrapped),
    Mutation("two lines joined", r"wrapped|joined|split", _joined, (2, 5)),
    Mutation("blank line added", r"blank line", _blank_added, (2, 5)),
    Mutation("blank line removed", r"blank line", _blank_removed, (3, 6)),
    Mutation("\\n for a line break", _BACKSLASH, _replacing("\n", "\\n"), (2, 5)),
    Mutation("\\t for a tab", _BACKSLASH, _replacing("\t", "\\t")),
    Mutation('\\" for a quote', _BACKSLASH, _replacing('"', '\\"')),
    Mutation("\\\\ for a backslash", _BACKSLASH, _replacing("\\", "\\\\")),
    Mutation("a line break for \\n", _BACKSLASH, _replacing("\\n", "\n")),
    Mutation("a tab for \\t", _BACKSLASH, _replacing("\\t", "\t")),
    Mutation('a quote for \\"', _BACKSLASH, _replacing('\\"', '"')),
    Mutation("a backslash for \\\\", _BACKSLASH, _replacing("\\\\", "\\")),
    Mutation("HTML entities", r"HTML entit", _html_entities),
    Mutation("curly quotes for straight", r"curly quote", _curly_quotes),
    Mutation("straight quotes for curly", r"curly quote", _straight_quotes),
    Mutation("curly quotes for JSON-escaped", r"curly quote", _escaped_vs_curly),
    Mutation("no-break space", r"U\+00A0", _inserted("\u00a0", replace=" ")),
    Mutation("narrow no-break space", r"U\+202F", _inserted("\u202f", replace=" ")),
    Mutation("zero-width space", r"U\+200B", _inserted("\u200b", inside_word=True)),
    Mutation("non-breaking hyphen", r"U\+2011", _inserted("\u2011", replace="-")),
    Mutation("private-use character", r"U\+E000", _inserted("\ue000", inside_word=True)),
    Mutation("BOM in the middle", r"U\+FEFF", _inserted("\ufeff")),
    Mutation("plain space for the file's unusual one", r"U\+00A0|U\+202F", _plain_for("\u00a0\u202f", " ")),
    Mutation("hyphen for the file's unusual one", r"U\+2011", _plain_for("\u2011", "-")),
    Mutation("one word misspelled", "", _misspelled),
    Mutation("line-number prefixes", r"line-number prefix", _line_prefix),
    Mutation("lines left out for a placeholder", r"placeholder|left out", _placeholder, (4, 8)),
    Mutation("edit applied already (lines)", r"already in the file", _applied_lines),
    Mutation("edit applied already (in a line)", r"already in the file", _applied_in_line, (1, 1)),
    Mutation("old_string equal to new_string", r"already in the file|same as", _same),
    Mutation("closing-bracket ladder one level off", r"closing", _bracket_ladder, (3, 8)),
]


def _regions(text: str, rng: random.Random, lines: tuple[int, int]) -> Iterator[tuple[int, list[str]]]:
    """Random regions (first line, 1-based; their lines) of a usable shape: no blank first or last line,
    no line over 150 characters, a word in it, and its text found once in the file even with whitespace
    ignored (else an old_string with other whitespace would be as close to two places)."""
    all_lines = text.split("\n")
    loose = "\n" + "\n".join(_loose(line) for line in all_lines) + "\n"
    for _ in range(400):
        count = rng.randint(*lines)
        start = rng.randrange(max(1, len(all_lines) - count))
        region = all_lines[start : start + count]
        if len(region) < lines[0] or not region[0].strip() or not region[-1].strip():
            continue
        if any(len(line) > 150 for line in region) or not re.search(r"[A-Za-z]{3}", "\n".join(region)):
            continue
        if len("".join(region).strip()) < 12 or text.count("\n".join(region)) != 1:
            continue
        if loose.count("\n" + "\n".join(_loose(line) for line in region) + "\n") != 1:
            continue
        yield start + 1, region


def _loose(line: str) -> str:
    return " ".join(line.split())


def cases(per_mutation: int, seed: int = 33, big: bool = True, *, shipped_only: bool = False) -> list[Case]:
    """``per_mutation`` cases of each mutation, spread over the files it applies to (seeded)."""
    files = sources(big, shipped_only=shipped_only)
    out: list[Case] = []
    for mutation in MUTATIONS:
        rng = random.Random(f"{seed}:{mutation.name}")
        usable = [source for source in files if mutation.where(source)]
        made = 0
        exhausted: set[str] = set()
        while made < per_mutation and len(exhausted) < len(usable):
            source = usable[made % len(usable)] if not exhausted else rng.choice(usable)
            case = _case(mutation, source, rng)
            if case is None:
                exhausted.add(source.name)
                continue
            out.append(case)
            made += 1
    return out


def _case(mutation: Mutation, source: Source, rng: random.Random) -> Case | None:
    text = source.text.replace("\r\n", "\n")
    for line, region in _regions(text, rng, mutation.lines):
        made = mutation.mutate(region, rng, source)
        if made is None:
            continue
        block = "\n".join(region)
        expect = mutation.expect
        if isinstance(made, tuple):
            old, new, intended = made
            if mutation.name == "one word misspelled":  # (old_string, the wrong word, the file's word)
                expect = rf"(?s)(?=.*\b{re.escape(new)}\b)(?=.*\b{re.escape(intended)}\b)"
                new, intended = old + "\n" + MARKER, block
            elif intended != block:  # a part of a line: it starts on the region's line
                line = line + block[: block.index(intended)].count("\n")
        else:
            old, new, intended = made, made + "\n" + MARKER, block
        if old == intended and mutation.name != "old_string equal to new_string":
            continue
        endings = mutation.name == "other line endings"  # the same text but for its line endings, by design
        if (old in source.text if endings else old.replace("\r\n", "\n") in text) and old != new:
            continue  # the mutation made other text of the file: not a miss
        return Case(mutation.name, source.name, old, new, line, intended, expect)
    return None


# --- scoring ---------------------------------------------------------------------------------------------


@dataclass
class Score:
    case: Case
    kind: bool
    line: bool
    shown: bool
    applied: bool  # fs-tools made the edit, as meant
    message: str


_ROW = re.compile(r"^ *(\d+)\t(.*)$", re.MULTILINE)
_MARK = re.compile(r"⟨U\+([0-9A-F]{4,6})⟩")
_POINTED = re.compile(r"(?:closest text is at|already in the file at|is at) line (\d+)")


def _shown(message: str) -> str:
    rows = [text for _, text in _ROW.findall(message)]
    return _MARK.sub(lambda m: chr(int(m.group(1), 16)), "\n".join(rows))


def score(all_cases: list[Case]) -> list[Score]:
    """Every case's edit made through a session that read the file; a file an edit changed is put back."""
    from fs_tools import Workspace

    by_source: dict[str, list[Case]] = defaultdict(list)
    for case in all_cases:
        by_source[case.source].append(case)
    texts = {source.name: source.text for source in sources(any(c.source == "big_module.py" for c in all_cases))}
    texts.update((source.name, source.text) for source in sources(False, shipped_only=True))
    out: dict[int, Score] = {}
    with tempfile.TemporaryDirectory(prefix="fs-tools-nearmiss-") as tmp, Workspace(tmp) as workspace:
        for name, group in by_source.items():
            path = Path(tmp) / name
            original = texts[name].encode("utf-8")
            path.write_bytes(original)
            session = workspace.session(f"nearmiss-{name}")
            assert not session.call("read", {"file_path": name, "limit": 1}).is_error
            for case in group:
                result = session.call("edit", {"file_path": name, "old_string": case.old, "new_string": case.new})
                message = result.text
                if result.is_error:
                    pointed = _POINTED.search(message)
                    shown = case.intended.strip("\n") in _shown(message).replace("\r", "")
                    out[id(case)] = Score(
                        case,
                        kind=bool(case.expect) and bool(re.search(case.expect, message)),
                        line=pointed is not None and int(pointed.group(1)) == case.line,
                        shown=shown,
                        applied=False,
                        message=message,
                    )
                    continue
                meant = texts[name].replace("\r\n", "\n").replace(case.intended, case.new.replace("\r\n", "\n"), 1)
                applied = path.read_text(encoding="utf-8").replace("\r\n", "\n") == meant
                ok = applied and case.mutation == "other line endings"
                out[id(case)] = Score(case, ok, ok, ok, applied, message)
                path.write_bytes(original)
                assert not session.call("read", {"file_path": name, "limit": 1}).is_error
    return [out[id(case)] for case in all_cases]


def rates(scores: list[Score]) -> dict[str, dict[str, float]]:
    """kind, line and shown rates per mutation, and over all (``"all"``)."""
    groups: dict[str, list[Score]] = defaultdict(list)
    for s in scores:
        groups[s.case.mutation].append(s)
    groups["all"] = scores
    return {
        name: {
            "cases": len(group),
            "kind": sum(s.kind for s in group) / len(group),
            "line": sum(s.line for s in group) / len(group),
            "shown": sum(s.shown for s in group) / len(group),
            "chars": statistics.median(len(s.message) for s in group),
        }
        for name, group in groups.items()
    }


def table(scores: list[Score]) -> str:
    rows = ["| mutation | cases | kind named | right line | text shown | median chars |", "|---|---|---|---|---|---|"]
    for name, r in rates(scores).items():
        label = "**all**" if name == "all" else name.replace("|", "\\|")
        rows.append(
            f"| {label} | {r['cases']:.0f} | {r['kind']:.0%} | {r['line']:.0%} | {r['shown']:.0%} | {r['chars']:.0f} |"
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.nearmiss", description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true", help="4 cases per mutation")
    parser.add_argument("--cases", type=int, default=60, help="cases per mutation")
    parser.add_argument("--seed", type=int, default=33)
    parser.add_argument("-v", action="store_true", help="print every message that misses a column")
    parser.add_argument("--shipped", action="store_true", help="only the files in bench/nearmiss_sources")
    args = parser.parse_args(argv)
    scores = score(cases(4 if args.smoke else args.cases, args.seed, shipped_only=args.shipped))
    print(table(scores))
    if args.v:
        for s in scores:
            if not (s.kind and s.line and s.shown):
                c = s.case
                print(f"\n## {c.mutation} in {c.source} at line {c.line}: kind={s.kind} line={s.line} shown={s.shown}")
                print(f"old_string: {c.old!r}\n{s.message}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
