"""Pure decisions: given what a session observed and what it intends, allow (with the precondition the
commit must re-check) or deny (with the rule that refuses). No I/O, and no words for a model: the
caller turns a refusal into its own error.

The observation table (SPEC §6), one row per intent:

    intent   unseen                                  absent                       present(v)
    write    create only if absent (else unread)     create only if absent        replace only if still v
    edit     refused: unseen                         refused: absent              only if still v
    delete   refused: unseen                         refused: absent              only if still v
    move     refused: unseen                         refused: absent              only if still v
    replace  refused: unseen                         refused: absent              only if still v

``move`` is the source of a move, ``replace`` an existing file a move would put another one over.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass

import pathspec

from policy.observations import ABSENT, Absent, Observation, Present


class Intent(enum.Enum):
    """What the session wants to do to a file."""

    WRITE = "write"
    EDIT = "edit"
    DELETE = "delete"
    MOVE = "move"
    REPLACE = "replace"


class Refusal(enum.Enum):
    """Why a gate refuses, before the file is touched."""

    UNSEEN = "unseen"  # the session has never observed the file
    ABSENT = "absent"  # the session observed that there was no file
    READ_ONLY = "read_only"  # the workspace changes nothing
    PROTECTED = "protected"  # the path matches a protected pattern


@dataclass(frozen=True, slots=True)
class Allow:
    """Go ahead, provided the file is still as ``expect`` says at commit. ``seen`` is False when the
    session never observed the file: a file found there at commit is one it has not read."""

    expect: Observation
    seen: bool = True


@dataclass(frozen=True, slots=True)
class Deny:
    """Refused before touching the file, by ``refusal``."""

    refusal: Refusal


Decision = Allow | Deny

_CREATE_ONLY = Allow(expect=ABSENT, seen=False)
# Per intent: the decision for an unseen file and for one observed absent; a file observed present at a
# version is allowed against that version, whatever the intent.
_TABLE: dict[Intent, tuple[Decision, Decision]] = {
    Intent.WRITE: (_CREATE_ONLY, Allow(expect=ABSENT)),
    Intent.EDIT: (Deny(Refusal.UNSEEN), Deny(Refusal.ABSENT)),
    Intent.DELETE: (Deny(Refusal.UNSEEN), Deny(Refusal.ABSENT)),
    Intent.MOVE: (Deny(Refusal.UNSEEN), Deny(Refusal.ABSENT)),
    Intent.REPLACE: (Deny(Refusal.UNSEEN), Deny(Refusal.ABSENT)),
}


def decide(intent: Intent, observation: Observation | None) -> Decision:
    """The observation gate: the decision table above, nothing more."""
    unseen, absent = _TABLE[intent]
    if observation is None:
        return unseen
    if isinstance(observation, Absent):
        return absent
    assert isinstance(observation, Present)
    return Allow(expect=observation)


class ProtectedPaths:
    """Gitignore-style patterns (relative to a root) that no write or edit may touch."""

    def __init__(self, patterns: Iterable[str]) -> None:
        self.patterns = tuple(patterns)
        self._spec = pathspec.GitIgnoreSpec.from_lines(self.patterns)

    def matches(self, relative_path: str) -> bool:
        return bool(self.patterns) and self._spec.match_file(relative_path)


def decide_mutation_allowed(*, read_only: bool, protected: ProtectedPaths, relative_path: str) -> Deny | None:
    """The configuration gates that apply before any observation is consulted."""
    if read_only:
        return Deny(Refusal.READ_ONLY)
    if protected.matches(relative_path):
        return Deny(Refusal.PROTECTED)
    return None
