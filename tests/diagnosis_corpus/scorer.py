"""Scores the edit diagnosis against the corpus of real agent mistakes (``cases.jsonl``).

Each case is run as a model would meet it: the file is written, read through a session, and the edit the
agent sent is made; the answer is scored on four questions, per class of mistake:

- **code**: the right error code (``FS_EDIT_NOT_FOUND``; ``FS_AMBIGUOUS_EDIT`` for ambiguous edits);
- **line**: the line the message points at first is the line the agent meant;
- **kind**: the message names the kind of difference (the words each class must use are below);
- **fix**: what the agent must copy is in the message — the intended text in the excerpt's lines (read's
  prefixes dropped, ``⟨U+XXXX⟩`` marks read back as the characters they show), or for an ambiguous edit
  the neighbouring line that makes ``old_string`` unique, or for an applied edit the text already there.

    python tests/diagnosis_corpus/scorer.py               # the table, as docs/diagnostics.md shows it
    python tests/diagnosis_corpus/scorer.py --held-out    # the same for the held-out cases
    python tests/diagnosis_corpus/scorer.py -v            # and every message that misses a column
    python tests/diagnosis_corpus/scorer.py --docs        # both tables into docs/diagnostics.md
"""

from __future__ import annotations

import json
import re
import statistics
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CASES = HERE / "cases.jsonl"
ROW = re.compile(r"^ *(\d+)\t(.*)$", re.MULTILINE)
MARK = re.compile(r"⟨U\+([0-9A-F]{4,6})⟩")
KIND_WORDS: dict[str, str] = {
    "tabs_vs_spaces": r"tabs vs spaces|mixes tabs and spaces",
    "mixed_indentation": r"mixes tabs and spaces|tabs vs spaces",
    "indentation": r"indent",
    "trailing_whitespace": r"ends with",
    "invisible_character": r"invisible U\+[0-9A-F]{4}|U\+[0-9A-F]{4} [A-Z]",
    "lookalike_character": r"U\+[0-9A-F]{4} [A-Z]",
    "line_endings": r"line endings|carriage return",
    "over_escaped": r"backslash|HTML entit",
    "blank_lines": r"blank line",
    "line_number_prefix": r"line-number prefix",
    "partial": r"is not in the file|placeholder for lines left out",
    "already_applied": r"already in the file",
    "similar": r"most similar|differs from the file's line",
    "ambiguous": r"occurs \d+ times",
}
TARGETS = {"line": 0.97, "kind": 0.90, "fix": 0.85}
MEDIAN_CHARS = 350


@dataclass
class Score:
    case: str
    cls: str
    code: bool
    line: bool
    kind: bool
    fix: bool
    chars: int
    message: str


def load() -> list[dict[str, Any]]:
    return [json.loads(line) for line in CASES.read_text(encoding="utf-8").splitlines() if line.strip()]


def score_case(case: dict[str, Any]) -> Score:
    from fs_tools import Workspace

    with tempfile.TemporaryDirectory(prefix="fs-tools-corpus-") as tmp, Workspace(tmp) as workspace:
        name = "file" + _suffix(case)
        (Path(tmp) / name).write_bytes(case["file"].encode("utf-8"))
        session = workspace.session("corpus")
        read = session.call("read", {"file_path": name})
        assert not read.is_error, read.text
        result = session.call(
            "edit", {"file_path": name, "old_string": case["old_string"], "new_string": case["new_string"]}
        )
    message = result.text
    ambiguous = case["class"] == "ambiguous"
    code = result.error is not None and result.error.code == ("FS_AMBIGUOUS_EDIT" if ambiguous else "FS_EDIT_NOT_FOUND")
    return Score(
        case=case["id"],
        cls=case["class"],
        code=code,
        line=_line_named(message, ambiguous) == case["line"] or (ambiguous and _lists(message, case["line"])),
        kind=bool(re.search(KIND_WORDS[case["class"]], message)),
        fix=_fix_visible(message, case),
        chars=len(message),
        message=message,
    )


def _suffix(case: dict[str, Any]) -> str:
    found = re.search(r"\.(py|js|ts|tsx|go|rs|java|c|cpp|h|sh|yaml|yml|toml|json|md|rb|php|css|html)\b", case["id"])
    return found.group(0) if found else ".txt"


def _line_named(message: str, ambiguous: bool) -> int | None:
    if ambiguous:
        found = re.search(r"at lines (\d+)", message)
    else:
        found = re.search(r"(?:closest text is at|already in the file at) line (\d+)", message)
    return int(found.group(1)) if found else None


def _lists(message: str, line: int) -> bool:
    found = re.search(r"at lines ([\d, ]+(?: and \d+ more)?)", message)
    return bool(found) and str(line) in re.findall(r"\d+", found.group(1).split(" and ")[0])


def _shown(message: str) -> str:
    """The excerpt's lines as the file has them: read's prefixes dropped, marks read back."""
    rows = [text for _, text in ROW.findall(message)]
    return MARK.sub(lambda m: chr(int(m.group(1), 16)), "\n".join(rows))


def _fix_visible(message: str, case: dict[str, Any]) -> bool:
    shown = _shown(message)
    intended = case["intended"].replace("\r\n", "\n")
    if case["class"] == "line_endings":
        intended = intended.replace("\r", "\n")
        shown = shown.replace("\r", "\n")
    return intended.strip("\n") in shown


def score(cases: list[dict[str, Any]] | None = None) -> list[Score]:
    return [score_case(case) for case in (cases if cases is not None else load())]


def table(scores: list[Score]) -> str:
    by_class: dict[str, list[Score]] = defaultdict(list)
    for s in scores:
        by_class[s.cls].append(s)
    rows = ["| class | cases | right code | right line | kind named | fix in the message | median chars |"]
    rows.append("|---|---|---|---|---|---|---|")
    for cls in sorted(by_class):
        group = by_class[cls]
        rows.append(_row(cls, group))
    rows.append(_row("**all**", scores))
    return "\n".join(rows)


def _row(label: str, group: list[Score]) -> str:
    def share(attr: str) -> str:
        return f"{sum(getattr(s, attr) for s in group) / len(group):.0%}"

    median = int(statistics.median(s.chars for s in group))
    return (
        f"| {label} | {len(group)} | {share('code')} | {share('line')} | {share('kind')} | {share('fix')} | {median} |"
    )


def totals(scores: list[Score]) -> dict[str, float]:
    n = len(scores)
    return {
        "code": sum(s.code for s in scores) / n,
        "line": sum(s.line for s in scores) / n,
        "kind": sum(s.kind for s in scores) / n,
        "fix": sum(s.fix for s in scores) / n,
        "median_chars": statistics.median(s.chars for s in scores),
    }


DOCS = HERE.parent.parent / "docs" / "diagnostics.md"


def write_docs() -> None:
    """Put the scorer's tables for the corpus and the held-out set into docs/diagnostics.md."""
    text = DOCS.read_text(encoding="utf-8")
    for name, source in (("corpus", CASES), ("held-out", HERE / "held_out.jsonl")):
        if not source.exists():
            continue
        cases = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
        start, end = f"<!-- {name} table -->\n", f"<!-- /{name} table -->"
        before, rest = text.split(start, 1)
        _, after = rest.split(end, 1)
        text = before + start + table(score(cases)) + "\n" + end + after
    DOCS.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    if "--docs" in sys.argv:
        sys.path.insert(0, str(HERE.parent.parent))
        write_docs()
        sys.exit(0)
    sys.path.insert(0, str(HERE.parent.parent))
    source = HERE / ("held_out.jsonl" if "--held-out" in sys.argv else "cases.jsonl")
    results = score([json.loads(line) for line in source.read_text(encoding="utf-8").splitlines() if line.strip()])
    print(table(results))
    if "-v" in sys.argv:
        for s in results:
            if not (s.code and s.line and s.kind and s.fix):
                print(f"\n## {s.case} ({s.cls}) code={s.code} line={s.line} kind={s.kind} fix={s.fix}\n{s.message}")
