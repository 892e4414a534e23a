"""The edit diagnosis scored on the corpus of real agent mistakes (tests/diagnosis_corpus): the targets of
issue 15 hold, the corpus is what it claims, and docs/diagnostics.md shows the scorer's own table."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "diagnosis_corpus"))
import scorer

DOCS = Path(__file__).resolve().parents[2] / "docs" / "diagnostics.md"
HELD_OUT = scorer.HERE / "held_out.jsonl"


def _cases(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def scores() -> list[scorer.Score]:
    return scorer.score()


@pytest.mark.parametrize("path", [scorer.CASES, HELD_OUT], ids=["corpus", "held-out"])
def test_every_case_is_a_real_miss_of_its_class(path: Path) -> None:
    if not path.exists():
        pytest.skip(f"{path.name} is not there")
    cases = _cases(path)
    assert len({case["id"] for case in cases}) == len(cases), "ids are unique"
    for case in cases:
        file, old, intended = str(case["file"]), str(case["old_string"]), str(case["intended"])
        assert case["class"] in scorer.KIND_WORDS, case["id"]
        if case["class"] == "ambiguous":
            assert file.count(old) >= 2, case["id"]
        else:
            assert old not in file, case["id"]
            assert file.count("\n", 0, file.index(intended)) + 1 == case["line"], case["id"]
        assert intended in file, case["id"]


def test_every_class_has_enough_cases() -> None:
    counts = Counter(str(case["class"]) for case in _cases(scorer.CASES))
    assert set(counts) == set(scorer.KIND_WORDS)
    assert min(counts.values()) >= 8, counts


def test_the_diagnosis_meets_its_targets_on_the_corpus(scores: list[scorer.Score]) -> None:
    totals = scorer.totals(scores)
    assert totals["code"] == 1.0, [s.case for s in scores if not s.code]
    for measure, target in scorer.TARGETS.items():
        assert totals[measure] >= target, (measure, [s.case for s in scores if not getattr(s, measure)])
    assert totals["median_chars"] <= scorer.MEDIAN_CHARS


def test_every_answer_is_the_same_on_a_second_run(scores: list[scorer.Score]) -> None:
    again = scorer.score()
    assert [s.message for s in again] == [s.message for s in scores]


def test_the_docs_show_the_scorers_table(scores: list[scorer.Score]) -> None:
    text = DOCS.read_text(encoding="utf-8")
    assert scorer.table(scores) in text, "regenerate with: python tests/diagnosis_corpus/scorer.py --docs"
    if HELD_OUT.exists():
        held = scorer.score(_cases(HELD_OUT))  # type: ignore[arg-type]
        assert scorer.table(held) in text, "regenerate with: python tests/diagnosis_corpus/scorer.py --docs"


def test_the_docs_example_is_what_a_session_answers(scores: list[scorer.Score]) -> None:
    message = next(s.message for s in scores if s.case == "tabs-go-config-1")
    assert f"```text\n{message}\n```" in DOCS.read_text(encoding="utf-8")
