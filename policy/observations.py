"""The observation ledger: what version of each file a session has seen.

State per (session, file) is *unseen* (no entry), *absent* (a read found no file) or *present(version)*,
where a version is the hex ``xxh3_128`` digest of the file's bytes. Stores hold the ledger; a key is
whatever canonical file identity the caller chooses (fs-tools uses the resolved absolute path).
"""

from __future__ import annotations

import os
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
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


class MemoryStore:
    """Observations in a dict; lost with the process. Thread-safe."""

    def __init__(self) -> None:
        self._sessions: dict[str, dict[str, Observation]] = {}
        self._lock = threading.Lock()

    def get(self, session: str, key: str) -> Observation | None:
        with self._lock:
            return self._sessions.get(session, {}).get(key)

    def put(self, session: str, key: str, observation: Observation) -> None:
        with self._lock:
            self._sessions.setdefault(session, {})[key] = observation

    def forget(self, session: str, key: str | None = None) -> None:
        with self._lock:
            if key is None:
                self._sessions.pop(session, None)
            else:
                self._sessions.get(session, {}).pop(key, None)


_SCHEMA = """
CREATE TABLE IF NOT EXISTS observations (
    session TEXT NOT NULL,
    key     TEXT NOT NULL,
    version TEXT,            -- NULL means absent
    PRIMARY KEY (session, key)
) WITHOUT ROWID
"""


class SqliteStore:
    """Observations persisted in a SQLite file, so a resumed session (or a later CLI call) keeps them.

    Several processes may share one file: it runs in WAL mode and every statement is its own transaction.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(_SCHEMA)

    def get(self, session: str, key: str) -> Observation | None:
        with self._lock:
            row = self._db.execute(
                "SELECT version FROM observations WHERE session = ? AND key = ?", (session, key)
            ).fetchone()
        if row is None:
            return None
        version: str | None = row[0]
        return ABSENT if version is None else Present(version)

    def put(self, session: str, key: str, observation: Observation) -> None:
        version = observation.version if isinstance(observation, Present) else None
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO observations (session, key, version) VALUES (?, ?, ?)",
                (session, key, version),
            )

    def forget(self, session: str, key: str | None = None) -> None:
        with self._lock:
            if key is None:
                self._db.execute("DELETE FROM observations WHERE session = ?", (session,))
            else:
                self._db.execute("DELETE FROM observations WHERE session = ? AND key = ?", (session, key))

    def close(self) -> None:
        with self._lock:
            self._db.close()
