"""History kept in the SQLite file of the observation store (``SqliteStore.history``): it outlives the
process, so a later ``fs-tools call`` (or a new Workspace on the same file) diffs and rewinds what an
earlier one did. Several processes may append at once: each append is one immediate transaction."""

from __future__ import annotations

import contextlib
import functools
import json
import sqlite3
import time
from collections.abc import Callable, Iterator, Mapping, Sequence

from fs_tools.history.model import (
    DEFAULT_HISTORY_BYTES,
    Entry,
    Step,
    damaged,
    decode_steps,
    encode_steps,
    entry_size,
    load_entry,
    load_json,
    stored_count,
    versions_of,
)

SCHEMA = """
CREATE TABLE IF NOT EXISTS history (
    seq     INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused: marks name positions in this order
    session TEXT NOT NULL,
    at      REAL NOT NULL,
    tool    TEXT,            -- NULL for a mark
    call    TEXT,
    label   TEXT,
    steps   TEXT NOT NULL,   -- JSON: what the change did to each path
    size    INTEGER NOT NULL -- what the entry costs the budget, less the bytes it names
);
CREATE INDEX IF NOT EXISTS history_by_session ON history (session, seq);
CREATE TABLE IF NOT EXISTS history_blobs (
    version TEXT PRIMARY KEY,
    data    BLOB NOT NULL,
    refs    INTEGER NOT NULL  -- the kept entries naming it: dropped with the last of them
);
CREATE TABLE IF NOT EXISTS history_trimmed (
    session TEXT PRIMARY KEY,
    through INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS history_total (
    id    INTEGER PRIMARY KEY CHECK (id = 0),
    bytes INTEGER NOT NULL
);
INSERT OR IGNORE INTO history_total (id, bytes) VALUES (0, 0);
CREATE TABLE IF NOT EXISTS history_store (
    id       INTEGER PRIMARY KEY CHECK (id = 0),
    identity TEXT NOT NULL  -- made with the file: marks carry it, so another file's marks are refused
);
INSERT OR IGNORE INTO history_store (id, identity) VALUES (0, lower(hex(randomblob(8))));
"""

Statement = Callable[[], contextlib.AbstractContextManager[sqlite3.Connection]]


class SqliteHistory:
    """The history tables of one store file. ``statement`` is the store's: one statement (or
    transaction) at a time on its connection, a SQLite failure raised as ``STORE_UNAVAILABLE``.
    ``keep_bytes`` is False for a store file others can read: entries are kept, file contents are not
    (a rewind then says the earlier contents were not kept)."""

    def __init__(
        self,
        statement: Statement,
        encode: Callable[[str], str | bytes],
        *,
        max_bytes: int = DEFAULT_HISTORY_BYTES,
        keep_bytes: bool = True,
    ) -> None:
        self.max_bytes = max_bytes
        self._statement = statement
        self._encode = encode  # a session key as the store keeps it (a lone surrogate: as bytes)
        self._keep_bytes = keep_bytes

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._statement() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    def append(
        self,
        session: str,
        *,
        tool: str | None,
        call: str | None,
        label: str | None,
        steps: Sequence[Step],
        blobs: Mapping[str, bytes],
    ) -> int:
        size = entry_size(steps, label)
        encoded = json.dumps(encode_steps(steps))
        with self._transaction() as db:
            cursor = db.execute(
                "INSERT INTO history (session, at, tool, call, label, steps, size) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (self._encode(session), time.time(), tool, call, label, encoded, size),
            )
            seq = cursor.lastrowid
            assert seq is not None
            added = size
            for version in sorted(versions_of(steps)):
                if db.execute("UPDATE history_blobs SET refs = refs + 1 WHERE version = ?", (version,)).rowcount:
                    continue
                data = blobs.get(version)
                if self._keep_bytes and data is not None and len(data) <= self.max_bytes:
                    db.execute("INSERT INTO history_blobs (version, data, refs) VALUES (?, ?, 1)", (version, data))
                    added += len(data)
            total = db.execute("SELECT bytes FROM history_total").fetchone()[0] + added
            self._trim(db, total)
            return seq

    def _trim(self, db: sqlite3.Connection, total: int) -> None:
        """Drop the oldest entries (of any session) until the kept ones fit, with the bytes no kept entry
        names; each session's newest dropped seq is kept, so a rewind knows history no longer reaches."""
        while total > self.max_bytes:
            row = db.execute("SELECT seq, session, steps, size FROM history ORDER BY seq LIMIT 1").fetchone()
            if row is None:
                break
            seq, session, steps, size = row
            db.execute("DELETE FROM history WHERE seq = ?", (seq,))
            total -= size if isinstance(size, int) else 0
            for version in _versions(steps):
                db.execute("UPDATE history_blobs SET refs = refs - 1 WHERE version = ?", (version,))
                found = db.execute(
                    "SELECT length(data) FROM history_blobs WHERE version = ? AND refs <= 0", (version,)
                ).fetchone()
                if found is not None:
                    db.execute("DELETE FROM history_blobs WHERE version = ?", (version,))
                    total -= found[0]
            db.execute(
                "INSERT INTO history_trimmed (session, through) VALUES (?, ?) "
                "ON CONFLICT (session) DO UPDATE SET through = max(through, excluded.through)",
                (session, seq),
            )
        db.execute("UPDATE history_total SET bytes = ?", (total,))

    def entries(self, session: str, after: int = 0) -> list[Entry]:
        with self._statement() as db:
            rows = db.execute(
                "SELECT seq, at, tool, call, label, steps FROM history WHERE session = ? AND seq > ? ORDER BY seq",
                (self._encode(session), after),
            ).fetchall()
        entries = []
        for seq, at, tool, call, label, steps in rows:
            try:
                entries.append(load_entry(seq, session, at, tool, call, label, load_json(steps)))
            except ValueError as exc:  # a row damaged outside fs-tools
                raise damaged(seq, exc) from exc
        return entries

    def recent(self, after: int, limit: int) -> list[Entry]:
        with self._statement() as db:
            rows = db.execute(
                "SELECT seq, session, at, tool, call, label, steps FROM history WHERE seq > ? "
                "ORDER BY seq DESC LIMIT ?",
                (after, max(0, limit)),
            ).fetchall()
        entries = []
        for seq, session, at, tool, call, label, steps in reversed(rows):
            who = session.decode("utf-8", "surrogatepass") if isinstance(session, bytes) else str(session)
            try:
                entries.append(load_entry(seq, who, at, tool, call, label, load_json(steps)))
            except ValueError as exc:  # a row damaged outside fs-tools
                raise damaged(seq, exc) from exc
        return entries

    def blob(self, version: str) -> bytes | None:
        with self._statement() as db:
            row = db.execute("SELECT data FROM history_blobs WHERE version = ?", (version,)).fetchone()
        if row is None or not isinstance(row[0], bytes):
            return None
        from fs_tools.provider import version_of

        return row[0] if version_of(row[0]) == version else None  # never bytes that are not that version

    def trimmed_through(self, session: str) -> int:
        with self._statement() as db:
            row = db.execute(
                "SELECT through FROM history_trimmed WHERE session = ?", (self._encode(session),)
            ).fetchone()
        return 0 if row is None else stored_count(row[0], "record of trimmed entries")

    def latest(self) -> int:
        with self._statement() as db:
            row = db.execute("SELECT seq FROM sqlite_sequence WHERE name = 'history'").fetchone()
        return 0 if row is None else stored_count(row[0], "sequence")

    @functools.cached_property
    def identity(self) -> str:
        with self._statement() as db:
            return str(db.execute("SELECT identity FROM history_store").fetchone()[0])

    @property
    def kept_bytes(self) -> int:
        with self._statement() as db:
            return int(db.execute("SELECT bytes FROM history_total").fetchone()[0])


def _versions(steps: object) -> set[str]:
    """The versions a stored entry names; none for a row damaged outside fs-tools (it is dropped all the
    same, and the bytes only it named stay until the store is made afresh)."""
    try:
        return versions_of(decode_steps(load_json(steps)))
    except ValueError:
        return set()
