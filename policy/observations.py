"""The observation ledger: what version of each file a session has seen.

State per (session, file) is *unseen* (no entry), *absent* (a read found no file) or *present(version)*,
where a version is the hex ``xxh3_128`` digest of the file's bytes. Stores hold the ledger; a key is
whatever canonical file identity the caller chooses (fs-tools uses the resolved absolute path). This
package keeps the in-memory store; a persistent one (fs-tools' SQLite store) implements the same protocol
where file I/O is allowed.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class Absent:
    """The session looked and found no file."""


@dataclass(frozen=True, slots=True)
class Present:
    """The session saw the file at ``version``."""

    version: str


ABSENT = Absent()
Observation = Absent | Present


class ObservationStore(Protocol):
    """Where a workspace keeps its sessions' observations."""

    def get(self, session: str, key: str) -> Observation | None:
        """The session's observation of ``key``, or None when unseen."""
        ...

    def put(self, session: str, key: str, observation: Observation) -> None:
        """Record the session's latest observation of ``key``."""
        ...

    def forget(self, session: str, key: str | None = None) -> None:
        """Drop one observation, or all of the session's when ``key`` is None."""
        ...

    def observed(self, session: str) -> dict[str, Observation]:
        """Every observation the session holds, by key."""
        ...


class MemoryStore:
    """Observations in a dict; lost with the process. Thread-safe.

    A present file is kept as its version string alone (a ``Present`` is made again on the way out):
    one object fewer per observation, ~48 bytes of a ~300-byte entry at 100,000 observations."""

    def __init__(self) -> None:
        self._sessions: dict[str, dict[str, str | Absent]] = {}
        self._lock = threading.Lock()

    def get(self, session: str, key: str) -> Observation | None:
        with self._lock:
            kept = self._sessions.get(session, {}).get(key)
        return Present(kept) if isinstance(kept, str) else kept

    def put(self, session: str, key: str, observation: Observation) -> None:
        kept = observation.version if isinstance(observation, Present) else observation
        with self._lock:
            self._sessions.setdefault(session, {})[key] = kept

    def forget(self, session: str, key: str | None = None) -> None:
        with self._lock:
            if key is None:
                self._sessions.pop(session, None)
            else:
                self._sessions.get(session, {}).pop(key, None)

    def observed(self, session: str) -> dict[str, Observation]:
        with self._lock:
            kept = dict(self._sessions.get(session, {}))
        return {key: Present(value) if isinstance(value, str) else value for key, value in kept.items()}
