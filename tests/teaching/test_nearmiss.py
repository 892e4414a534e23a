"""The edit diagnosis on near misses made from real files (issue 33; ``bench/nearmiss.py`` makes them and
runs the larger set): a region of a file copied as ``old_string`` with one known mutation, each edit made
through a session that read the file. The set here is small, seeded and made from the files the project
ships (``bench/nearmiss_sources``), so it is the same on every Python."""

from __future__ import annotations

import pytest

from bench import nearmiss

PER_MUTATION = 8


@pytest.fixture(scope="module")
def scores() -> list[nearmiss.Score]:
    return nearmiss.score(nearmiss.cases(PER_MUTATION, shipped_only=True))


def test_every_mutation_is_in_the_set(scores: list[nearmiss.Score]) -> None:
    made = {s.case.mutation for s in scores}
    assert made == {m.name for m in nearmiss.MUTATIONS}
    for mutation in nearmiss.MUTATIONS:
        assert sum(s.case.mutation == mutation.name for s in scores) >= 3, mutation.name


def test_every_case_is_a_miss_of_a_region_that_is_in_the_file(scores: list[nearmiss.Score]) -> None:
    """What is scored is what the generator claims: the region's text is in the file at its line, and
    old_string is not (but for line endings, the one mutation fs-tools applies by design)."""
    texts = {source.name: source.text.replace("\r\n", "\n") for source in nearmiss.sources(False, shipped_only=True)}
    for s in scores:
        case, text = s.case, texts[s.case.source]
        at = text.index(case.intended)
        assert text.count("\n", 0, at) + 1 == case.line, case
        if case.mutation == "old_string equal to new_string":
            assert case.old == case.new
        elif case.mutation != "other line endings":
            assert case.old.replace("\r\n", "\n") not in text, case


def test_the_diagnosis_names_each_mutation_at_its_line_with_the_files_text(scores: list[nearmiss.Score]) -> None:
    rates = nearmiss.rates(scores)
    missed = {
        measure: [(s.case.mutation, s.case.source, s.case.line) for s in scores if not getattr(s, measure)]
        for measure in ("kind", "line", "shown")
    }
    assert rates["all"]["kind"] >= nearmiss.TARGETS["kind"], missed["kind"]
    assert rates["all"]["line"] >= nearmiss.TARGETS["line"], missed["line"]
    assert rates["all"]["shown"] >= nearmiss.TARGETS["line"], missed["shown"]
    low = {name: r["kind"] for name, r in rates.items() if r["kind"] < nearmiss.FLOOR}
    assert not low, low


def test_a_message_names_the_misspelled_word_and_the_files(scores: list[nearmiss.Score]) -> None:
    """The word the model got wrong and the file's word, both in the message (``imgcdc`` / ``imgccd``)."""
    spelled = [s for s in scores if s.case.mutation == "one word misspelled"]
    assert spelled
    assert sum(s.kind for s in spelled) >= len(spelled) - 1, [s.message for s in spelled if not s.kind]


def test_the_same_cases_get_the_same_messages() -> None:
    one = nearmiss.score(nearmiss.cases(2, seed=5, shipped_only=True))
    two = nearmiss.score(nearmiss.cases(2, seed=5, shipped_only=True))
    assert [s.message for s in one] == [s.message for s in two]
