"""Observations and history kept in the process: lost with it, history bounded by its budget. Thread-safe."""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from fs_tools.history.model import DEFAULT_HISTORY_BYTES, Entry, HistoryStore, Step, entry_size
from fs_tools.provider import VersionCache
from fs_tools.stores.registry import SessionRegistry
from policy import MemoryStore


@dataclass
class _Kept:
    data: bytes
    references: int


class MemoryHistory:
    """Entries and the bytes they name, in dicts; past ``max_bytes`` the oldest entries (of any session)
    are dropped, with the bytes no kept entry names. A version's bytes are kept once, however many
    entries name it; bytes larger than the whole budget are never kept."""

    def __init__(self, max_bytes: int = DEFAULT_HISTORY_BYTES, *, identity: str | None = None) -> None:
        self.max_bytes = max_bytes
        # a new store each time, so its marks mean nothing elsewhere (a fixed one: for stable examples)
        self.identity = identity if identity is not None else os.urandom(8).hex()
        self._lock = threading.Lock()
        self._seq = 0
        self._order: deque[tuple[int, str, int]] = deque()  # (seq, session, own size) of every kept entry
        self._sessions: dict[str, deque[Entry]] = {}
        self._blobs: dict[str, _Kept] = {}
        self._trimmed: dict[str, int] = {}
        self._total = 0  # the kept entries' own sizes and the kept bytes

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
        with self._lock:
            self._seq += 1
            entry = Entry(self._seq, session, time.time(), tool, call, label, tuple(steps))
            size = entry_size(steps, label)
            for version in entry.versions():
                kept = self._blobs.get(version)
                if kept is not None:
                    kept.references += 1
                    continue
                data = blobs.get(version)
                if data is not None and len(data) <= self.max_bytes:
                    self._blobs[version] = _Kept(data, 1)
                    self._total += len(data)
            self._sessions.setdefault(session, deque()).append(entry)
            self._order.append((entry.seq, session, size))
            self._total += size
            self._trim()
            return entry.seq

    def _trim(self) -> None:
        while self._total > self.max_bytes and self._order:
            seq, session, size = self._order.popleft()
            entry = self._sessions[session].popleft()
            self._total -= size
            self._trimmed[session] = seq
            for version in entry.versions():
                kept = self._blobs.get(version)
                if kept is None:
                    continue
                kept.references -= 1
                if kept.references == 0:
                    del self._blobs[version]
                    self._total -= len(kept.data)
            if not self._sessions[session]:
                del self._sessions[session]

    def entries(self, session: str, after: int = 0) -> list[Entry]:
        with self._lock:
            return [entry for entry in self._sessions.get(session, ()) if entry.seq > after]

    def blob(self, version: str) -> bytes | None:
        with self._lock:
            kept = self._blobs.get(version)
            return None if kept is None else kept.data

    def recent(self, after: int, limit: int) -> list[Entry]:
        with self._lock:
            found = [entry for entries in self._sessions.values() for entry in entries if entry.seq > after]
        return sorted(found, key=lambda entry: entry.seq)[-limit:] if limit > 0 else []

    def trimmed_through(self, session: str) -> int:
        with self._lock:
            return self._trimmed.get(session, 0)

    def latest(self) -> int:
        with self._lock:
            return self._seq

    @property
    def kept_bytes(self) -> int:
        """What the kept entries and bytes cost the budget now."""
        with self._lock:
            return self._total


class ProcessStore(MemoryStore):
    """Observations and history in this process (the default): lost with it, seen by nothing else."""

    shared = False
    contents: VersionCache | None = None
    mcp_sessions: SessionRegistry | None = None  # a session stays with the process that opened it

    def __init__(self, max_history_bytes: int = DEFAULT_HISTORY_BYTES) -> None:
        super().__init__()
        self.history: HistoryStore = MemoryHistory(max_history_bytes)

    def bind(self, roots: Sequence[str]) -> None:
        pass

    def close(self) -> None:
        pass
