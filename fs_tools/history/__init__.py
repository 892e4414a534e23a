"""A session's history (SPEC §16): every committed change with its before and after versions, the
before-bytes in a content-addressed store with a size budget, and marks to diff and rewind to.

``model`` is the vocabulary and the store protocol; ``memory`` and ``sqlite`` keep it (in the process,
or in the SQLite file beside the observations). The rewind and the diff, which go through the provider
and the gates, are tools-layer code (``fs_tools.tools.rewind``, ``fs_tools.tools.history_diff``)."""

from fs_tools.history.memory import MemoryHistory
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
    "MemoryHistory",
    "Move",
    "RewindReport",
    "Skipped",
    "State",
    "make_mark",
    "parse_mark",
]
