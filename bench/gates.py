"""The observation policy switched off, for measuring what it costs (benchmark only: fs-tools has no
such switch). Off means: no observation is looked up or recorded, every write and edit is allowed, and
the commit re-checks no version — a blind atomic replace. Everything else (confinement, the atomic
write, rendering) stays."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from fs_tools import gating
from fs_tools.provider import versions
from policy import Allow, Observation, Present
from policy.gates import Intent


class NullStore:
    """Remembers nothing."""

    def get(self, session: str, key: str) -> Observation | None:
        return None

    def put(self, session: str, key: str, observation: Observation) -> None:
        pass

    def forget(self, session: str, key: str | None = None) -> None:
        pass

    def observed(self, session: str) -> dict[str, Observation]:
        return {}


_ANY = Present("unchecked")


@contextlib.contextmanager
def policy_off() -> Iterator[None]:
    saved: dict[str, Any] = {
        "decide": gating.decide,
        "current": versions.current,
        "check_expected": versions.check_expected,
    }

    def decide(intent: Intent, observation: Observation | None) -> Allow:
        return Allow(expect=_ANY)

    def current(disk: Any, target: Any, expected: str | None) -> Any:
        return versions.snapshot(disk, target)  # an edit still needs the file's content

    def check_expected(disk: Any, target: Any, now: Any, expected: Any, basis: Any, strict: bool = False) -> Any:
        return basis

    gating.decide = decide  # type: ignore[assignment]
    versions.current = current
    versions.check_expected = check_expected
    try:
        yield
    finally:
        gating.decide = saved["decide"]
        versions.current = saved["current"]
        versions.check_expected = saved["check_expected"]
