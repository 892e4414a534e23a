"""A persistent observation store in SQLite, so a resumed session (or a later CLI call) keeps what it
read. It implements ``policy.ObservationStore``; it lives here because policy does no file I/O.

``sqlite3`` is imported when a store is opened, not with this module (``Workspace`` imports it)."""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from fs_tools.errors import StoreUnavailable
from fs_tools.history.model import DEFAULT_HISTORY_BYTES
from fs_tools.provider import VersionCache
from fs_tools.stores.registry import SessionRegistry
from policy import ABSENT, Observation, Present

if TYPE_CHECKING:
    import sqlite3

log = logging.getLogger("fs_tools.stores.sqlite")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS observations (
    session TEXT NOT NULL,
    key     TEXT NOT NULL,
    version TEXT,            -- NULL means absent
    PRIMARY KEY (session, key)
) WITHOUT ROWID
"""
_COLUMNS = ["session", "key", "version"]
_CONTENTS_SCHEMA = """
CREATE TABLE IF NOT EXISTS contents (
    version TEXT PRIMARY KEY,
    data    BLOB NOT NULL,
    size    INTEGER NOT NULL,
    stored  INTEGER NOT NULL  -- the latest put's turn: the lowest go first when over budget
);
CREATE INDEX IF NOT EXISTS contents_by_turn ON contents (stored)
"""
_CONTENT_COLUMNS = ["version", "data", "size", "stored"]
DEFAULT_CONTENT_BYTES = 16 << 20


class SqliteStore:
    """Observations persisted in a SQLite file, so a resumed session (or a later CLI call) keeps them.

    Several processes may share one file: it runs in WAL mode and every statement is its own transaction.
    The constructor checks the file (a new or empty file, or an intact SQLite database holding our
    table) and raises a one-line ``ValueError`` naming it otherwise, so a bad file fails the host's
    setup, not a session. A SQLite failure later (a full disk, a lock held past ``busy_timeout``
    seconds) is a ``STORE_UNAVAILABLE`` error of the call that met it, never an internal error.

    ``contents`` keeps recently read file contents (at most ``max_content_bytes``, oldest dropped first),
    so a stale error in a later process can still say which lines changed; ``history`` keeps the
    sessions' changes and the contents they replaced (SPEC §16; at most ``max_history_bytes``). A new
    store file is created readable by its owner only; contents are kept only in a file nobody else can
    read.
    """

    shared = False  # brief re-reads stay on: a process remembers only the reads it served, at their versions
    mcp_sessions: SessionRegistry | None = None  # a session stays with the process that opened it

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        busy_timeout: float = 30.0,
        max_content_bytes: int = DEFAULT_CONTENT_BYTES,
        max_history_bytes: int = DEFAULT_HISTORY_BYTES,
    ) -> None:
        from fs_tools.stores.sqlite_history import SqliteHistory

        self.path = Path(path)
        self._lock = threading.Lock()
        self._db, private = _open(self.path, busy_timeout)
        self.contents = SqliteContents(
            self._db, self._lock, self.path, max_content_bytes if private else 0, busy_ms=round(busy_timeout * 1000)
        )
        self.history = SqliteHistory(self._statement, _text, max_bytes=max_history_bytes, keep_bytes=private)

    def get(self, session: str, key: str) -> Observation | None:
        with self._statement() as db:
            row = db.execute(
                "SELECT version FROM observations WHERE session = ? AND key = ?", (_text(session), _text(key))
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
                (_text(session), _text(key), version),
            )

    def forget(self, session: str, key: str | None = None) -> None:
        with self._statement() as db:
            if key is None:
                db.execute("DELETE FROM observations WHERE session = ?", (_text(session),))
            else:
                db.execute("DELETE FROM observations WHERE session = ? AND key = ?", (_text(session), _text(key)))

    def observed(self, session: str) -> dict[str, Observation]:
        with self._statement() as db:
            rows = db.execute("SELECT key, version FROM observations WHERE session = ?", (_text(session),)).fetchall()
        return {_from_text(key): ABSENT if version is None else Present(version) for key, version in rows}

    def bind(self, roots: Sequence[str]) -> None:
        pass  # keys are canonical paths already

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @contextlib.contextmanager
    def _statement(self) -> Iterator[sqlite3.Connection]:
        """The connection, for one statement; a SQLite failure becomes ``STORE_UNAVAILABLE``.

        The message is for the model: it names the condition, never the store's path (outside the
        roots, and not the model's to know); the host's log gets the path."""
        import sqlite3

        with self._lock:
            try:
                yield self._db
            except sqlite3.Error as exc:
                log.error("observation store %s failed: %s", self.path, exc)
                raise StoreUnavailable(
                    f"the session's observation store failed ({exc}) — retry the call in a moment; "
                    "if it keeps failing, tell the user"
                ) from exc


def _text(value: str) -> str | bytes:
    """``value`` as SQLite can keep it. A path from a non-UTF-8 name (Python's surrogate escapes) or a
    session key with a lone surrogate cannot be UTF-8 text: it is kept as the bytes that give it back
    exactly, a BLOB, which only the same value matches."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return value.encode("utf-8", "surrogatepass")
    return value


def _from_text(value: str | bytes) -> str:
    return value.decode("utf-8", "surrogatepass") if isinstance(value, bytes) else value


class SqliteContents(VersionCache):
    """The provider's cache of recently seen contents, written through to the store's ``contents`` table
    (at most ``max_stored`` bytes, the least recently put dropped first; 0 keeps them in memory only),
    so a later process finds what an earlier one read.

    A hint, like the in-memory cache: a SQLite failure here is logged and the content forgotten, never
    an error of the call."""

    # How long a content statement waits for another process's write lock. The provider keeps contents
    # while it commits, under the file's lock another session may be waiting for: a hint is not worth
    # holding that lock for the store's whole busy timeout, so a busy store just keeps nothing.
    HINT_BUSY_MS = 100

    def __init__(
        self, db: sqlite3.Connection, lock: threading.Lock, path: Path, max_stored: int, *, busy_ms: int = 30_000
    ) -> None:
        super().__init__()
        self.max_stored = max_stored
        self._busy_ms = busy_ms  # the store's own, put back after each content statement
        self._db = db
        self._db_lock = lock  # the store's: one statement at a time on its connection
        self._path = path

    def put(self, version: str, data: bytes) -> None:
        known = super().get(version) is not None  # put by this process already, so stored already
        super().put(version, data)
        if known or len(data) > min(self.max_item, self.max_stored):
            return
        with self._quietly() as db:
            db.execute(
                "INSERT INTO contents (version, data, size, stored) "
                "VALUES (?, ?, ?, (SELECT coalesce(max(stored), 0) + 1 FROM contents)) "
                "ON CONFLICT (version) DO UPDATE SET stored = excluded.stored",
                (version, data, len(data)),
            )
            db.execute(  # newest first: every row past the budget goes
                "DELETE FROM contents WHERE version IN (SELECT version FROM "
                "(SELECT version, sum(size) OVER (ORDER BY stored DESC) AS kept FROM contents) WHERE kept > ?)",
                (self.max_stored,),
            )

    def get(self, version: str) -> bytes | None:
        data = super().get(version)
        if data is not None or self.max_stored == 0:
            return data
        with self._quietly() as db:
            row = db.execute("SELECT data FROM contents WHERE version = ?", (version,)).fetchone()
            if row is None:
                return None
            from fs_tools.provider import version_of

            if isinstance(row[0], bytes) and version_of(row[0]) == version:
                return row[0]
            # not what was stored (another program wrote the row, or the disk did): forget it
            db.execute("DELETE FROM contents WHERE version = ?", (version,))
            return None
        return None  # the store failed: logged

    @contextlib.contextmanager
    def _quietly(self) -> Iterator[sqlite3.Connection]:
        import sqlite3

        with self._db_lock:
            try:
                self._db.execute(f"PRAGMA busy_timeout = {min(self.HINT_BUSY_MS, self._busy_ms)}")
                try:
                    yield self._db
                finally:
                    self._db.execute(f"PRAGMA busy_timeout = {self._busy_ms}")
            except sqlite3.Error as exc:
                log.warning("observation store %s: recently read contents not kept or found (%s)", self._path, exc)


def _private(path: Path) -> bool:
    """Whether the store may hold contents of the files sessions read: a regular file this user owns that
    nobody else can read (a store made by an older version, with the umask's mode, keeps none)."""
    info = os.stat(path, follow_symlinks=False)
    private = stat.S_ISREG(info.st_mode) and info.st_uid == os.geteuid() and info.st_mode & 0o077 == 0
    if not private:  # said at info: a shell harness calls once per tool call, and this is no failure
        log.info(
            "observation store %s is readable by others or not this user's: recently read contents are not kept "
            "in it, so a stale error through it cannot say which lines changed (chmod 600 it to allow that)",
            path,
        )
    return private


def _open(path: Path, busy_timeout: float) -> tuple[sqlite3.Connection, bool]:
    """A connection to ``path``, checked, and whether nobody but its owner can read the file; one-line
    ValueErrors that name the file otherwise."""
    import sqlite3

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
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if mode is None:  # created private: it will hold contents of the files sessions read
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600))
        private = _private(path)
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
    return db, private


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
    db.executescript(_CONTENTS_SCHEMA)  # a store made before the table existed gains it
    from fs_tools.stores.sqlite_history import SCHEMA as HISTORY_SCHEMA

    db.executescript(HISTORY_SCHEMA)  # and the history tables
    columns = [row[1] for row in db.execute("PRAGMA table_info(contents)")]
    if columns != _CONTENT_COLUMNS:
        raise ValueError(
            f"observation store {shown!r} has a contents table with columns {columns}, "
            f"not fs-tools' {_CONTENT_COLUMNS}; give fs-tools a file of its own"
        )
    # every page, cheaply (no index cross-checks): a torn or overwritten file fails here, not mid-session
    problem = " ".join(str(db.execute("PRAGMA quick_check(1)").fetchone()[0]).split())  # may span lines
    if problem != "ok":
        raise ValueError(f"observation store {shown!r} is corrupt ({problem[:200]}); move it aside to start afresh")
    db.execute("BEGIN IMMEDIATE")  # the store must take writes, not only reads
    db.execute("ROLLBACK")
