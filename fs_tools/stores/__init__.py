"""Where observations and history are kept (SPEC §16, §17): one protocol, ``Store``, and one place that
opens a store from what a host names — ``open_store`` for a location (nothing: this process; a SQLite
file's path or ``sqlite:///…``; ``redis://``, ``rediss://``, ``unix://``), ``as_store`` for an object
the host made. The workspace, the CLI and the hooks know the protocol only.

Each backend is imported when it is opened (``sqlite3`` and redis-py are not loaded by this package)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, cast, runtime_checkable

from fs_tools.history.model import DEFAULT_HISTORY_BYTES, HistoryStore
from fs_tools.provider import VersionCache
from fs_tools.stores.location import KNOWN_STORES, StoreInsideRoot, check_outside_roots, store_location
from fs_tools.stores.memory import MemoryHistory, ProcessStore
from fs_tools.stores.registry import SessionRegistry
from policy import Observation, ObservationStore


@runtime_checkable
class Store(ObservationStore, Protocol):
    """Observations (``policy.ObservationStore``) and the history of changes, kept together.

    ``shared`` says whether other processes see and change it (a re-read there may have happened
    elsewhere); ``contents`` keeps recently read file contents across processes where the store can
    (a SQLite file), for stale errors that say what changed; ``bind`` gives it the workspace's canonical
    roots before the first call (a shared store forms its keys from them). Where the replicas of an MCP
    server share session ids is a store's to say too, when it can (``SharesMcpSessions``)."""

    @property
    def shared(self) -> bool: ...

    @property
    def history(self) -> HistoryStore: ...

    @property
    def contents(self) -> VersionCache | None: ...

    def bind(self, roots: Sequence[str]) -> None: ...

    def close(self) -> None: ...


@runtime_checkable
class SharesMcpSessions(Protocol):
    """A store that says where the replicas of an MCP server keep the session ids they issue (None: a
    session stays with the process that opened it). Apart from ``Store``, so a host's own store need
    not have it."""

    @property
    def mcp_sessions(self) -> SessionRegistry | None: ...


def mcp_sessions_of(store: Store) -> SessionRegistry | None:
    """Where ``store`` keeps MCP session ids for replicas; None where it keeps none."""
    return store.mcp_sessions if isinstance(store, SharesMcpSessions) else None


def open_store(
    location: str | os.PathLike[str] | None,
    roots: Sequence[str | os.PathLike[str]],
    *,
    max_history_bytes: int = DEFAULT_HISTORY_BYTES,
    workspace_id: str | None = None,
    key_prefix: str | None = None,
) -> Store:
    """The store a location names, opened: ``None`` keeps everything in this process; a Redis URL
    connects (``workspace_id`` and ``key_prefix`` name its keys); anything else is a SQLite file outside
    every root. A bad location or an unreachable server is a one-line ``ValueError`` naming it."""
    where = store_location(location, roots) if location is not None else None
    if not isinstance(where, str) and (workspace_id is not None or key_prefix is not None):
        named = "workspace_id" if workspace_id is not None else "key_prefix"
        raise ValueError(
            f"Workspace({named}=...) names the keys of a shared store: give store='redis://…' with it "
            "(a RedisStore made by the host takes it in its own constructor)"
        )
    if where is None:
        return ProcessStore(max_history_bytes)
    if isinstance(where, str):
        from fs_tools.stores.redis import RedisStore

        return RedisStore(
            where,
            workspace_id=workspace_id,
            key_prefix="fs-tools" if key_prefix is None else key_prefix,
            max_history_bytes=max_history_bytes,
        )
    from fs_tools.stores.sqlite import SqliteStore

    return SqliteStore(where, max_history_bytes=max_history_bytes)


def as_store(given: object, roots: Sequence[str | os.PathLike[str]], *, max_history_bytes: int) -> Store:
    """A store the host made, as a ``Store``: one of ours as it is (a SQLite file must still lie outside
    the roots); an ``ObservationStore`` of the host's with the history it carries (an attribute
    ``history``), else one kept in this process. Anything else is a one-line ``ValueError``."""
    path = getattr(given, "path", None)
    if isinstance(given, Store):
        if isinstance(path, Path):  # a SQLite store: the same rule, though the file exists already
            check_outside_roots(path, roots)
        return given
    if not all(callable(getattr(given, method, None)) for method in ("get", "put", "forget", "observed")):
        # bytes, a number, ...: every call would be an internal error
        raise ValueError(
            f"Workspace(store=...) takes a SQLite file's path, a redis:// URL or an observation store, "
            f"not {type(given).__name__}"
        )
    return HostStore(cast(ObservationStore, given), max_history_bytes=max_history_bytes)


class HostStore:
    """A host's own ``ObservationStore``: its observations, its ``history`` if it has one (else one in
    this process). One with a ``bind`` of its own is taken for a shared one (bound to the roots, brief
    re-reads off), as it always was; one that keeps MCP session ids (``SessionRegistry``) keeps them for
    the workspace's server too."""

    contents: VersionCache | None = None

    def __init__(self, observations: ObservationStore, *, max_history_bytes: int) -> None:
        self.observations = observations
        kept = getattr(observations, "history", None)
        self.history: HistoryStore = kept if kept is not None else MemoryHistory(max_history_bytes)
        self._bind = getattr(observations, "bind", None)
        self.shared = callable(self._bind)
        self.mcp_sessions = observations if isinstance(observations, SessionRegistry) else None

    def __getattr__(self, name: str) -> Any:
        if name == "observations":  # not set yet (a copy being made): never look it up through itself
            raise AttributeError(name)
        return getattr(self.observations, name)

    def get(self, session: str, key: str) -> Observation | None:
        return self.observations.get(session, key)

    def put(self, session: str, key: str, observation: Observation) -> None:
        self.observations.put(session, key, observation)

    def forget(self, session: str, key: str | None = None) -> None:
        self.observations.forget(session, key)

    def observed(self, session: str) -> dict[str, Observation]:
        return self.observations.observed(session)

    def bind(self, roots: Sequence[str]) -> None:
        if callable(self._bind):
            self._bind(roots)

    def close(self) -> None:
        closer = getattr(self.observations, "close", None)
        if callable(closer):
            closer()


__all__ = [
    "KNOWN_STORES",
    "HostStore",
    "MemoryHistory",
    "ProcessStore",
    "SessionRegistry",
    "SharesMcpSessions",
    "Store",
    "StoreInsideRoot",
    "as_store",
    "check_outside_roots",
    "mcp_sessions_of",
    "open_store",
    "store_location",
]
