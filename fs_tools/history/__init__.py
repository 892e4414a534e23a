"""A session's history (SPEC §16): every committed change with its before and after versions, the
before-bytes in a content-addressed store with a size budget, and marks to diff and rewind to.

``model`` is the vocabulary and the store protocol; the stores that keep it (in the process, in the
SQLite file beside the observations, in Redis) are ``fs_tools.stores``. The rewind and the diff go
through the provider and the gates: they are tools-layer code."""

from fs_tools.history.model import (
    DEFAULT_HISTORY_BYTES,
    DIR,
    LINK,
    OTHER,
    Effect,
    Entry,
    HistoryEntry,
    HistoryStore,
    Move,
    RewindReport,
    Skipped,
    State,
    make_mark,
    parse_mark,
)

__all__ = [
    "DEFAULT_HISTORY_BYTES",
    "DIR",
    "LINK",
    "OTHER",
    "Effect",
    "Entry",
    "HistoryEntry",
    "HistoryStore",
    "Move",
    "RewindReport",
    "Skipped",
    "State",
    "make_mark",
    "parse_mark",
]
