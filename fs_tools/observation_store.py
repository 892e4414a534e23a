"""A persistent observation store in SQLite, so a resumed session (or a later CLI call) keeps what it
read. It implements ``policy.ObservationStore``; it lives here because policy does no file I/O."""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path

from policy import ABSENT, Observation, Present

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

    def observed(self, session: str) -> dict[str, Observation]:
        with self._lock:
            rows = self._db.execute("SELECT key, version FROM observations WHERE session = ?", (session,)).fetchall()
        return {key: ABSENT if version is None else Present(version) for key, version in rows}

    def close(self) -> None:
        with self._lock:
            self._db.close()
