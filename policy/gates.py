"""Pure decisions: given what a session observed and what it intends, allow (with the precondition the
commit must re-check) or deny (with a stable code). No I/O.

The observation table (SPEC §6):

    state        write                                   edit
    unseen       create only if absent (else NOT_OBSERVED)   NOT_OBSERVED
    absent       create only if absent (else STALE)          NOT_FOUND
    present(v)   replace only if still v (else STALE)        edit only if still v (else STALE)
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass

import pathspec

from policy.observations import ABSENT, Absent, Observation, Present

NOT_OBSERVED = "FS_NOT_OBSERVED"
STALE_VERSION = "FS_STALE_VERSION"
NOT_FOUND = "FS_NOT_FOUND"
SANDBOX_DENIED = "FS_SANDBOX_DENIED"


class Intent(enum.Enum):
    """What the session wants to do to a file."""

    WRITE = "write"
    EDIT = "edit"


@dataclass(frozen=True, slots=True)
class Allow:
    """Go ahead, provided the file is still as ``expect`` says at commit; otherwise fail with
    ``on_mismatch``."""

    expect: Observation
    on_mismatch: str


@dataclass(frozen=True, slots=True)
class Deny:
    """Refused before touching the file. ``reason`` names the rule (``unseen``, ``absent``, ...)."""

    code: str
    reason: str


Decision = Allow | Deny


def decide(intent: Intent, observation: Observation | None) -> Decision:
    """The observation gate: the decision table above, nothing more."""
    if observation is None:
        if intent is Intent.WRITE:
            return Allow(expect=ABSENT, on_mismatch=NOT_OBSERVED)
        return Deny(code=NOT_OBSERVED, reason="unseen")
    if isinstance(observation, Absent):
        if intent is Intent.WRITE:
            return Allow(expect=ABSENT, on_mismatch=STALE_VERSION)
        return Deny(code=NOT_FOUND, reason="absent")
    assert isinstance(observation, Present)
    return Allow(expect=observation, on_mismatch=STALE_VERSION)


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
        return Deny(code=SANDBOX_DENIED, reason="read_only")
    if protected.matches(relative_path):
        return Deny(code=SANDBOX_DENIED, reason="protected")
    return None
