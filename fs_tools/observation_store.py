"""A persistent observation store in SQLite, so a resumed session (or a later CLI call) keeps what it
read. It implements ``policy.ObservationStore``; it lives here because policy does no file I/O."""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

from fs_tools.errors import StoreUnavailable
from policy import ABSENT, Observation, Present

log = logging.getLogger("fs_tools.observation_store")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS observations (
    session TEXT NOT NULL,
    key     TEXT NOT NULL,
    version TEXT,            -- NULL means absent
    PRIMARY KEY (session, key)
) WITHOUT ROWID
"""
_COLUMNS = ["session", "key", "version"]


class SqliteStore:
    """Observations persisted in a SQLite file, so a resumed session (or a later CLI call) keeps them.

    Several processes may share one file: it runs in WAL mode and every statement is its own transaction.
    The constructor checks the file (a new or empty file, or an intact SQLite database holding our
    table) and raises a one-line ``ValueError`` naming it otherwise, so a bad file fails the host's
    setup, not a session. A SQLite failure later (a full disk, a lock held past ``busy_timeout``
    seconds) is a ``STORE_UNAVAILABLE`` error of the call that met it, never an internal error.
    """

    def __init__(self, path: str | os.PathLike[str], *, busy_timeout: float = 30.0) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._db = _open(self.path, busy_timeout)

    def get(self, session: str, key: str) -> Observation | None:
        with self._statement() as db:
            row = db.execute(
                "SELECT version FROM observations WHERE session = ? AND key = ?", (session, key)
            ).fetchone()
        if row is None:
            return None
        version: str | None = row[0]
        return ABSENT if version is None else Present(version)

    def put(self, session: str, key: str, observation: Observation) -> None:
        version = observation.version if isinstance(observation, Present) else None
        with self._statement() as db:
            db.execute(
                "INSERT OR REPLACE INTO observations (session, key, version) VALUES (?, ?, ?)",
                (session, key, version),
            )

    def forget(self, session: str, key: str | None = None) -> None:
        with self._statement() as db:
            if key is None:
                db.execute("DELETE FROM observations WHERE session = ?", (session,))
            else:
                db.execute("DELETE FROM observations WHERE session = ? AND key = ?", (session, key))

    def observed(self, session: str) -> dict[str, Observation]:
        with self._statement() as db:
            rows = db.execute("SELECT key, version FROM observations WHERE session = ?", (session,)).fetchall()
        return {key: ABSENT if version is None else Present(version) for key, version in rows}

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @contextlib.contextmanager
    def _statement(self) -> Iterator[sqlite3.Connection]:
        """The connection, for one statement; a SQLite failure becomes ``STORE_UNAVAILABLE``.

        The message is for the model: it names the condition, never the store's path (outside the
        roots, and not the model's to know); the host's log gets the path."""
        with self._lock:
            try:
                yield self._db
            except sqlite3.Error as exc:
                log.error("observation store %s failed: %s", self.path, exc)
                raise StoreUnavailable(
                    f"the session's observation store failed ({exc}) — retry the call in a moment; "
                    "if it keeps failing, tell the user"
                ) from exc


def _open(path: Path, busy_timeout: float) -> sqlite3.Connection:
    """A connection to ``path``, checked: one-line ValueErrors that name the file otherwise."""
    shown = str(path)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise ValueError(f"observation store {shown!r} cannot be opened: {exc.strerror}") from exc
    if mode is not None and not stat.S_ISREG(mode):
        kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
        raise ValueError(f"observation store {shown!r} is {kind}; give the path of a SQLite file")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=busy_timeout)
    except (OSError, sqlite3.Error) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else str(exc)
        raise ValueError(f"observation store {shown!r} cannot be opened: {reason}") from exc
    try:
        _prepare(db, shown)
    except sqlite3.Error as exc:
        db.close()
        raise ValueError(f"observation store {shown!r} is not a usable SQLite database ({exc})") from exc
    except ValueError:
        db.close()
        raise
    return db


def _prepare(db: sqlite3.Connection, shown: str) -> None:
    """WAL mode, then our schema: created in a new (empty) database, checked in an existing one."""
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not tables:
        db.execute(_SCHEMA)
    elif "observations" not in tables:
        raise ValueError(
            f"observation store {shown!r} is a SQLite database of something else (no observations table); "
            "give fs-tools a file of its own"
        )
    columns = [row[1] for row in db.execute("PRAGMA table_info(observations)")]
    if columns != _COLUMNS:
        raise ValueError(
            f"observation store {shown!r} has an observations table with columns {columns}, "
            f"not fs-tools' {_COLUMNS}; give fs-tools a file of its own"
        )
    # every page, cheaply (no index cross-checks): a torn or overwritten file fails here, not mid-session
    problem = " ".join(str(db.execute("PRAGMA quick_check(1)").fetchone()[0]).split())  # may span lines
    if problem != "ok":
        raise ValueError(f"observation store {shown!r} is corrupt ({problem[:200]}); move it aside to start afresh")
    db.execute("BEGIN IMMEDIATE")  # the store must take writes, not only reads
    db.execute("ROLLBACK")
