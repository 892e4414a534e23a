"""The policy alone: a no-I/O decision table, one row per intent (SPEC §6), and the configuration gates."""

from __future__ import annotations

import pytest

from fs_tools.boundary import REMEDIES, remediate, remedy_for
from fs_tools.errors import FsError, HarnessError, StaleVersion
from policy import ABSENT, Allow, Deny, Intent, Present, ProtectedPaths, Refusal, decide, decide_mutation_allowed

SEEN = Present("v1")

# (intent, observation) -> decision: the whole table, so a new intent is one new row here too
TABLE = [
    (Intent.WRITE, None, Allow(expect=ABSENT, seen=False)),
    (Intent.WRITE, ABSENT, Allow(expect=ABSENT)),
    (Intent.WRITE, SEEN, Allow(expect=SEEN)),
    (Intent.EDIT, None, Deny(Refusal.UNSEEN)),
    (Intent.EDIT, ABSENT, Deny(Refusal.ABSENT)),
    (Intent.EDIT, SEEN, Allow(expect=SEEN)),
    *(
        row
        for intent in (Intent.DELETE, Intent.MOVE, Intent.REPLACE)
        for row in (
            (intent, None, Deny(Refusal.UNSEEN)),
            (intent, ABSENT, Deny(Refusal.ABSENT)),
            (intent, SEEN, Allow(expect=SEEN)),
        )
    ),
]


@pytest.mark.parametrize(("intent", "observation", "expected"), TABLE)
def test_the_observation_table(intent: Intent, observation: object, expected: object) -> None:
    assert decide(intent, observation) == expected  # type: ignore[arg-type]


def test_every_intent_has_a_row() -> None:
    assert {row[0] for row in TABLE} == set(Intent)


def test_configuration_gates_name_their_rule() -> None:
    protected = ProtectedPaths([".env", "secrets/**"])
    assert decide_mutation_allowed(read_only=True, protected=protected, relative_path="a.py") == Deny(Refusal.READ_ONLY)
    assert decide_mutation_allowed(read_only=False, protected=protected, relative_path=".env") == Deny(
        Refusal.PROTECTED
    )
    assert decide_mutation_allowed(read_only=False, protected=protected, relative_path="secrets/k") == Deny(
        Refusal.PROTECTED
    )
    assert decide_mutation_allowed(read_only=False, protected=protected, relative_path="src/a.py") is None


def test_a_subclass_without_a_remedy_of_its_own_takes_its_parents() -> None:
    class ReplacedUnderUs(StaleVersion):
        """A host's own refinement of the stale condition."""

    assert ReplacedUnderUs not in REMEDIES
    assert remedy_for(ReplacedUnderUs) is REMEDIES[StaleVersion]
    error = ReplacedUnderUs("'a.txt' has changed since this session last read it", details={"found": "modified"})
    shown = remediate(error)
    assert shown.message.endswith("— re-read the file, then retry") and shown.__cause__ is error
    assert isinstance(shown, ReplacedUnderUs) and shown.code == "FS_STALE_VERSION"


def test_every_error_class_has_a_remedy_to_show() -> None:
    def classes(cls: type[HarnessError]) -> list[type[HarnessError]]:
        return [cls, *(c for sub in cls.__subclasses__() for c in classes(sub))]

    for cls in classes(HarnessError):
        assert remedy_for(cls).summary, cls
    assert remedy_for(FsError) is REMEDIES[HarnessError]


def test_a_condition_is_pickled_and_copied_with_its_facts_and_keeps_its_code_and_name() -> None:
    import copy
    import pickle

    from fs_tools.errors import IntoItself, MissingPath, OffsetPastEnd

    for error in (
        MissingPath("'a.txt' does not exist"),  # no details: the shared empty mapping
        IntoItself("'d' cannot be moved into itself"),
        OffsetPastEnd("offset 9 is past the end of 'a.txt', which has 2 line(s)", offset=9, total_lines=2),
    ):
        for again in (pickle.loads(pickle.dumps(error)), copy.deepcopy(error), copy.copy(error)):
            assert type(again) is type(error) and again.message == error.message
            assert dict(again.details) == dict(error.details) and again.info == error.info
    assert OffsetPastEnd("x", offset=9, total_lines=2).info.name == "NotFound"
    assert pickle.loads(pickle.dumps(OffsetPastEnd("x", offset=9, total_lines=2))).total_lines == 2


def test_a_stale_conditions_facts_are_fields_kept_in_details_for_hosts_through_pickling_and_rewording() -> None:
    import pickle

    from fs_tools.errors import AmbiguousEdit, StaleVersion, Writer

    stale = StaleVersion("'a.txt' has changed since this session last read it", found="modified", lines=(3, 4))
    stale.learn(now=[(3, "x = 1")], whitespace_only=True, writer=Writer("s2", "edit"))
    assert dict(stale.details) == {
        "found": "modified",
        "lines": (3, 4),
        "now": [(3, "x = 1")],
        "whitespace_only": True,
        "writer": {"session": "s2", "tool": "edit"},
    }
    again = pickle.loads(pickle.dumps(stale))
    assert (again.found, again.lines, again.now) == ("modified", (3, 4), ((3, "x = 1"),))
    assert again.writer == Writer("s2", "edit")
    shown = remediate(stale)
    assert isinstance(shown, StaleVersion) and shown.lines == (3, 4) and shown.whitespace_only
    assert "lines 3–4 changed, only whitespace, by session 's2' (its edit)" in shown.message
    elsewhere = stale.elsewhere("'a.ipynb' has changed since this session last read it")
    assert elsewhere.lines is None and elsewhere.now == () and "lines" not in elsewhere.details
    assert elsewhere.writer == Writer("s2", "edit") and elsewhere.details["found"] == "modified"

    ambiguous = AmbiguousEdit("'x' occurs 3 times in 'a.txt'", count=3, lines=[2, 9], likely=9, read=(5, 12))
    assert "; the one at line 9 is in the lines this session last read (5–12)" in remediate(ambiguous).message
    assert dict(ambiguous.details) == {"count": 3, "lines": [2, 9], "context": [], "likely": 9, "read": [5, 12]}


def test_a_hosts_own_conditions_made_the_old_way_still_teach() -> None:
    """Facts became keywords; a host that builds the conditions with ``details`` alone (as before) still
    gets each one's remedy, naming no facts it did not give."""
    from fs_tools.errors import AmbiguousEdit, NotEmpty

    ambiguous = remediate(AmbiguousEdit("'x' occurs 2 times in 'a.txt'", details={"pointer": "/old_string"}))
    assert ambiguous.message.startswith("'x' occurs 2 times in 'a.txt' — add a neighbouring line")
    assert "at lines" not in ambiguous.message
    assert NotEmpty("'d' is not empty", details={"why": "host"}).details == {"why": "host"}
