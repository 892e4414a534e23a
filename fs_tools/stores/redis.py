"""Observations and history in Redis (SPEC §17), so several processes and hosts share sessions: a
session's calls may land on any worker or replica and its gates hold.

``RedisStore`` implements ``policy.ObservationStore`` and, as ``.history``, the history store of SPEC §16.
It lives here, not in ``policy``, because it does I/O; ``redis`` (redis-py) is imported when a store is
made, not with this module.

Correctness never rests on the store: a commit re-checks the file's content hash under the file's lock,
whatever the store said. The store decides what a session may do (read-before-write, staleness), so it
fails closed: Redis unreachable is ``STORE_UNAVAILABLE`` for the call, never a call that goes on without
its gate; Redis back but empty means every session has seen nothing (``FS_NOT_OBSERVED``) until it reads
again.

Keys are formed from a workspace id (default: the primary root's canonical path; with several roots,
all of them in order) and each file's path
relative to its root, so hosts that mount the workspace at different paths agree when given the same id;
``key_prefix`` keeps several deployments apart in one Redis. One Redis server (or a primary with its
replicas) is assumed, not Redis Cluster: a history append touches keys a cluster would spread over slots.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from fs_tools.errors import StoreUnavailable
from fs_tools.history.model import (
    DEFAULT_HISTORY_BYTES,
    Effect,
    Entry,
    Step,
    damaged,
    encode_steps,
    entry_size,
    load_entry,
    load_json,
    stored_count,
    versions_of,
)
from fs_tools.provider import VersionCache
from fs_tools.stores.location import is_redis_url, shown_url
from policy import ABSENT, Observation, Present

if TYPE_CHECKING:
    import redis

log = logging.getLogger("fs_tools.stores.redis")

DEFAULT_SESSION_SECONDS = 7 * 24 * 3600
# MCP session ids replicas share (streamable HTTP): as the SDK keeps its in-process sessions — closed
# after 30 minutes without a request, at most 10,000 at once — except that past the cap the least
# recently used id is ended instead of the new one refused (a client told 404 opens another session)
DEFAULT_MCP_IDLE_SECONDS = 30 * 60
DEFAULT_MAX_MCP_SESSIONS = 10_000
_ABSENT = b""  # an observation of no file; a present one is its 32-hex version


def _raw(value: str) -> bytes:
    """A session key or a path as Redis keeps it: exactly, a lone surrogate (a non-UTF-8 name) included."""
    return value.encode("utf-8", "surrogatepass")


def _text(value: bytes) -> str:
    return value.decode("utf-8", "surrogatepass")


class SharedKeys:
    """File keys (canonical absolute paths, as the provider forms them) as a shared store keeps them:
    the index of the root that holds the file and the path below it. A key under no root (never formed
    by fs-tools) is kept absolute, behind a ``/``."""

    def __init__(self, roots: Sequence[str]) -> None:
        self.roots = tuple(roots)
        # the innermost root first: nested roots give one file one key, whichever root resolved it
        self._order = sorted(range(len(self.roots)), key=lambda i: -len(self.roots[i]))

    def shared(self, key: str) -> str:
        for index in self._order:
            root = self.roots[index]
            if key == root:
                return f"{index}:"
            inside = root if root.endswith("/") else root + "/"
            if key.startswith(inside):
                return f"{index}:{key[len(inside) :]}"
        return "/" + key

    def local(self, shared: str) -> str | None:
        """The file key of a shared one; None for a key this workspace's roots cannot hold (written by
        a workspace with other roots, or by something else)."""
        if shared.startswith("/"):
            return shared[1:]
        index, colon, below = shared.partition(":")
        if not colon or not index.isdigit() or int(index) >= len(self.roots):
            return None
        root = self.roots[int(index)]
        return os.path.join(root, below) if below else root

    def local_steps(self, steps: Sequence[Step]) -> tuple[Step, ...]:
        """Steps as kept, with this workspace's file keys; a ValueError for a key its roots cannot hold."""

        def local(shared: str) -> str:
            key = self.local(shared)
            if key is None:
                raise ValueError(f"a path under no root of this workspace: {shared[:80]!r}")
            return key

        return self.steps(steps, local)

    def steps(self, steps: Sequence[Step], convert: Any) -> tuple[Step, ...]:
        return tuple(
            dataclasses.replace(step, key=convert(step.key))
            if isinstance(step, Effect)
            else dataclasses.replace(step, source=convert(step.source), destination=convert(step.destination))
            for step in steps
        )


class RedisStore:
    """Observations and history in one Redis server, shared by every process given the same URL,
    workspace id and prefix.

    ``url`` is a redis-py URL (``redis://[[user]:password@]host:port/db``, ``rediss://`` for TLS,
    ``unix:///path``). The constructor connects and raises a one-line ``ValueError`` naming the server
    (never its password) when it cannot; later, any Redis failure is the call's ``STORE_UNAVAILABLE``.
    A session's observations expire ``session_seconds`` after its last recorded observation. History
    (``.history``) keeps at most ``max_history_bytes`` (entries and the contents they name; the oldest
    dropped first).

    ``workspace_id`` names the workspace in the keys (default: the primary root's canonical path, or all
    the roots' in order when there are several; set when a ``Workspace`` takes the store); hosts that
    mount it at different paths give the same id.
    ``key_prefix`` namespaces deployments sharing one Redis.
    """

    shared = True  # a session's calls may land on any process: what one remembers, another may not
    contents: VersionCache | None = None

    def __init__(
        self,
        url: str,
        *,
        workspace_id: str | None = None,
        key_prefix: str = "fs-tools",
        session_seconds: float = DEFAULT_SESSION_SECONDS,
        max_history_bytes: int = DEFAULT_HISTORY_BYTES,
        timeout: float = 5.0,
        mcp_idle_seconds: float = DEFAULT_MCP_IDLE_SECONDS,
        max_mcp_sessions: int = DEFAULT_MAX_MCP_SESSIONS,
    ) -> None:
        if not is_redis_url(url):
            raise ValueError(f"a Redis store needs a redis://, rediss:// or unix:// URL, not {url[:60]!r}")
        for name, value in (("workspace_id", workspace_id), ("key_prefix", key_prefix)):
            if value is not None and (not isinstance(value, str) or not value or "\0" in value):
                raise ValueError(f"RedisStore({name}=...) must be a non-empty string, got {value!r}")
        for name, number in (
            ("session_seconds", session_seconds),
            ("mcp_idle_seconds", mcp_idle_seconds),
            ("max_mcp_sessions", max_mcp_sessions),
        ):
            if not isinstance(number, int | float) or isinstance(number, bool) or not 1 <= number < 2**53:
                what = "a number of sessions" if name == "max_mcp_sessions" else "a number of seconds"
                raise ValueError(f"RedisStore({name}=...) must be {what} of at least 1, got {number!r}")
        try:
            import redis
            from redis.backoff import NoBackoff
            from redis.retry import Retry
        except ImportError as exc:
            raise ValueError(f"a Redis store needs redis-py ({exc}): pip install 'agent-fs-tools[redis]'") from exc
        self.url = url
        self.shown = shown_url(url)
        self.key_prefix = key_prefix
        self.workspace_id = workspace_id
        self.session_seconds = int(session_seconds)
        self.mcp_idle_seconds = int(mcp_idle_seconds)
        self.max_mcp_sessions = int(max_mcp_sessions)
        self._errors: tuple[type[BaseException], ...] = (redis.RedisError,)
        try:
            # one retry, at once, of a command that met a dropped connection (a restart): it reconnects;
            # a timeout is not retried, so a server that hangs fails each step within ``timeout``. Every
            # command is safe to send twice (a history append carries a token the script checks).
            self._redis: redis.Redis = redis.Redis.from_url(
                url,
                socket_timeout=timeout,
                socket_connect_timeout=timeout,
                retry=Retry(NoBackoff(), 1, supported_errors=(redis.ConnectionError,)),
                retry_on_error=[redis.ConnectionError],
            )
            self._redis.ping()
        except (ValueError, redis.RedisError) as exc:
            reason = " ".join(str(exc).split()) or type(exc).__name__
            raise ValueError(f"observation store {self.shown} cannot be reached: {reason}") from exc
        self._keys: SharedKeys | None = None
        self.history = RedisHistory(self, max_bytes=max_history_bytes)
        self._open_mcp = self._redis.register_script(_OPEN_MCP)
        self._use_mcp = self._redis.register_script(_USE_MCP)

    # --- binding to a workspace ---------------------------------------------------------------------

    def bind(self, roots: Sequence[str]) -> None:
        """Form keys from ``roots`` (canonical, the primary first); the workspace id defaults to the
        primary root. A store bound to other roots refuses: its keys would name other files."""
        roots = tuple(roots)
        if self._keys is not None and self._keys.roots != roots:
            raise ValueError(
                f"this RedisStore serves the roots {list(self._keys.roots)}; make another for {list(roots)}"
            )
        self._keys = SharedKeys(roots)
        if self.workspace_id is None:  # one root: its path; several: all of them, in order
            self.workspace_id = roots[0] if len(roots) == 1 else json.dumps(list(roots))

    @property
    def keys(self) -> SharedKeys:
        if self._keys is None:
            raise RuntimeError("a RedisStore is used through a Workspace (which binds it to its roots)")
        return self._keys

    def name(self, *parts: bytes | str) -> bytes:
        """A Redis key of this deployment and workspace."""
        base = f"{self.key_prefix}\0{self.workspace_id}\0".encode("utf-8", "surrogatepass")
        return base + b"\0".join(part if isinstance(part, bytes) else _raw(part) for part in parts)

    @contextlib.contextmanager
    def guard(self, doing: str) -> Iterator[redis.Redis]:
        """The client, for one step; a Redis failure becomes ``STORE_UNAVAILABLE``. The message is for
        the model: it names the condition, never the server (the host's log gets it)."""
        try:
            yield self._redis
        except self._errors as exc:
            log.error("observation store %s failed while %s: %s", self.shown, doing, exc)
            raise StoreUnavailable(
                f"the session's observation store cannot be reached ({type(exc).__name__}) — retry the call "
                "in a moment; if it keeps failing, tell the user"
            ) from exc

    # --- observations -------------------------------------------------------------------------------

    def get(self, session: str, key: str) -> Observation | None:
        with self.guard("reading an observation") as db:
            found = db.hget(self.name("o", _raw(session)), _raw(self.keys.shared(key)))
        return _observation(found)

    def put(self, session: str, key: str, observation: Observation) -> None:
        value = observation.version.encode("ascii") if isinstance(observation, Present) else _ABSENT
        name = self.name("o", _raw(session))
        with self.guard("recording an observation") as db:
            pipe = db.pipeline(transaction=True)
            pipe.hset(name, _raw(self.keys.shared(key)), value)
            pipe.expire(name, self.session_seconds)
            pipe.execute()

    def forget(self, session: str, key: str | None = None) -> None:
        name = self.name("o", _raw(session))
        with self.guard("forgetting an observation") as db:
            if key is None:
                db.delete(name)
            else:
                db.hdel(name, _raw(self.keys.shared(key)))

    def observed(self, session: str) -> dict[str, Observation]:
        with self.guard("listing observations") as db:
            found = db.hgetall(self.name("o", _raw(session)))
        observed: dict[str, Observation] = {}
        for field, value in found.items():
            observation = _observation(value)
            key = self.keys.local(_text(field)) if isinstance(field, bytes) else None
            if observation is not None and key is not None:
                observed[key] = observation
        return observed

    # --- the MCP sessions replicas share (streamable HTTP) -------------------------------------------

    @property
    def mcp_sessions(self) -> RedisStore:
        """Itself: the replicas of an MCP server keep their session ids here."""
        return self

    def open_mcp_session(self, session_id: str) -> list[str]:
        """Record an MCP session id a replica issued: every replica then accepts it until it has gone
        ``mcp_idle_seconds`` without a request. Past ``max_mcp_sessions`` the least recently used ids
        are ended (one, unless the cap was lowered): they are returned, so that what their sessions
        kept can be forgotten too."""
        keys = self._mcp_keys(session_id)
        with self.guard("opening an MCP session") as db:
            limits = [self.mcp_idle_seconds, self.max_mcp_sessions]
            kept = max(self.session_seconds, self.mcp_idle_seconds)
            ended = self._open_mcp(keys, [*limits, self.name("mcp", b""), _raw(session_id), kept], db)
        return [_text(each) for each in ended]

    def mcp_session_open(self, session_id: str) -> bool:
        """Whether some replica issued ``session_id`` and nobody ended it; its idle time starts again,
        and it becomes the most recently used."""
        with self.guard("looking up an MCP session") as db:
            kept = max(self.session_seconds, self.mcp_idle_seconds)
            arguments: list[int | bytes] = [self.mcp_idle_seconds, _raw(session_id), kept]
            return bool(self._use_mcp(self._mcp_keys(session_id), arguments, db))

    def close_mcp_session(self, session_id: str) -> bool:
        """End an MCP session everywhere; whether it was open."""
        with self.guard("ending an MCP session") as db:
            pipe = db.pipeline(transaction=True)
            pipe.delete(self.name("mcp", session_id))
            pipe.zrem(self.name("mcp-live"), _raw(session_id))
            return bool(pipe.execute()[0])

    def _mcp_keys(self, session_id: str) -> list[bytes]:
        """The id's key, the ids in order of last use, and the counter that orders them (a count, not a
        clock: replicas whose clocks differ still agree on the order)."""
        return [self.name("mcp", session_id), self.name("mcp-live"), self.name("mcp-used")]

    def close(self) -> None:
        with contextlib.suppress(*self._errors):
            self._redis.close()


def _observation(value: object) -> Observation | None:
    if not isinstance(value, bytes):
        return None
    if value == _ABSENT:
        return ABSENT
    try:
        return Present(value.decode("ascii"))
    except UnicodeDecodeError:  # not a value fs-tools wrote: as good as unseen (the gate asks for a read)
        return None


# --- history ---------------------------------------------------------------------------------------

# One entry appended and the oldest dropped past the budget, in one atomic step (a worker that dies
# midway leaves nothing half-done). KEYS[1] is the history's key base; ARGV: session, entry, its size,
# the budget, keep bytes (1/0), the append's token (a retry of it returns the first seq), the number of
# versions, then (version, given 1/0, bytes) for each.
_APPEND = """
local b = KEYS[1]
local session, body, size, budget = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local keep, token, n = ARGV[5] == '1', ARGV[6], tonumber(ARGV[7])
local done = redis.call('GET', b .. 'token\0' .. token)
if done then return tonumber(done) end  -- the same append sent again (a retry): recorded once
local seq = redis.call('INCR', b .. 'seq')
redis.call('SET', b .. 'token\0' .. token, seq, 'EX', 3600)
local added = size
local versions = {}
for i = 0, n - 1 do
  local version, given, data = ARGV[8 + 3 * i], ARGV[9 + 3 * i], ARGV[10 + 3 * i]
  table.insert(versions, version)
  if redis.call('HEXISTS', b .. 'refs', version) == 1 then
    redis.call('HINCRBY', b .. 'refs', version, 1)
  elseif keep and given == '1' and #data <= budget then
    redis.call('SET', b .. 'blob\\0' .. version, data)
    redis.call('HSET', b .. 'refs', version, 1)
    added = added + #data
  end
end
redis.call('HSET', b .. 'entry', seq, body)
redis.call('HSET', b .. 'who', seq, session)
redis.call('HSET', b .. 'size', seq, size)
redis.call('HSET', b .. 'versions', seq, table.concat(versions, ' '))
redis.call('ZADD', b .. 'order', seq, seq)
redis.call('ZADD', b .. 'session\\0' .. session, seq, seq)
local total = redis.call('INCRBY', b .. 'total', added)
while total > budget do
  local oldest = redis.call('ZRANGE', b .. 'order', 0, 0)
  if #oldest == 0 then break end
  local s = oldest[1]
  local who = redis.call('HGET', b .. 'who', s)
  local own = tonumber(redis.call('HGET', b .. 'size', s) or '0') or 0
  local named = redis.call('HGET', b .. 'versions', s) or ''
  redis.call('ZREM', b .. 'order', s)
  redis.call('HDEL', b .. 'entry', s)
  redis.call('HDEL', b .. 'who', s)
  redis.call('HDEL', b .. 'size', s)
  redis.call('HDEL', b .. 'versions', s)
  total = total - own
  if who then
    redis.call('ZREM', b .. 'session\\0' .. who, s)
    local through = tonumber(redis.call('HGET', b .. 'trimmed', who) or '0') or 0
    if tonumber(s) > through then redis.call('HSET', b .. 'trimmed', who, s) end
  end
  for version in string.gmatch(named, '%S+') do
    if redis.call('HEXISTS', b .. 'refs', version) == 1 then
      if redis.call('HINCRBY', b .. 'refs', version, -1) <= 0 then
        total = total - redis.call('STRLEN', b .. 'blob\\0' .. version)
        redis.call('DEL', b .. 'blob\\0' .. version)
        redis.call('HDEL', b .. 'refs', version)
      end
    end
  end
end
redis.call('SET', b .. 'total', total)
return seq
"""

# A session's entries after a seq, as (seq, entry) pairs, in one step.
_ENTRIES = """
local b = KEYS[1]
local seqs = redis.call('ZRANGEBYSCORE', b .. 'session\\0' .. ARGV[1], '(' .. ARGV[2], '+inf')
local found = {}
for _, s in ipairs(seqs) do
  local body = redis.call('HGET', b .. 'entry', s)
  if body then
    table.insert(found, s)
    table.insert(found, body)
  end
end
return found
"""

# Every session's newest entries after a seq, as (seq, session, entry) triples, oldest first, in one step.
_RECENT = """
local b = KEYS[1]
local seqs = redis.call('ZREVRANGEBYSCORE', b .. 'order', '+inf', '(' .. ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
local found = {}
for i = #seqs, 1, -1 do
  local s = seqs[i]
  local body = redis.call('HGET', b .. 'entry', s)
  local who = redis.call('HGET', b .. 'who', s)
  if body and who then
    table.insert(found, s)
    table.insert(found, who)
    table.insert(found, body)
  end
end
return found
"""

# An MCP session id opened: its key (expiring when idle), its place as the most recently used, then the
# least recently used ended while there are more than the cap. An id whose key expired keeps its place
# until it is ended so (the order holds at most the cap): the caller forgets what those sessions kept.
# KEYS: the id's key, the order (a sorted set), the counter. ARGV: idle seconds, the cap, the ids' key
# prefix, the id, how long the order outlives its last use (an abandoned workspace's goes, as its
# sessions' observations do).
_OPEN_MCP = """
redis.call('SET', KEYS[1], '1', 'EX', ARGV[1])
redis.call('ZADD', KEYS[2], redis.call('INCR', KEYS[3]), ARGV[4])
redis.call('EXPIRE', KEYS[2], ARGV[5])
redis.call('EXPIRE', KEYS[3], ARGV[5])
local over = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[2])
if over <= 0 then
  return {}
end
local oldest = redis.call('ZPOPMIN', KEYS[2], over)
local ended = {}
for i = 1, #oldest, 2 do
  redis.call('DEL', ARGV[3] .. oldest[i])
  ended[#ended + 1] = oldest[i]
end
return ended
"""

# An MCP session id used: 1 (its idle time restarts, it becomes the most recently used) or 0 (unknown,
# ended or idle too long). KEYS as above; ARGV: idle seconds, the id, how long the order outlives its use.
_USE_MCP = """
if redis.call('EXPIRE', KEYS[1], ARGV[1]) == 0 then
  return 0
end
redis.call('ZADD', KEYS[2], 'XX', redis.call('INCR', KEYS[3]), ARGV[2])
redis.call('EXPIRE', KEYS[2], ARGV[3])
redis.call('EXPIRE', KEYS[3], ARGV[3])
return 1
"""

_SEND_KEPT_BYTES = 64 << 10  # above this, an append first asks which contents are kept already


class RedisHistory:
    """The history of SPEC §16 in the store's Redis: entries in one order shared by every process
    (``seq`` from one counter), the bytes they name kept once, the oldest dropped past ``max_bytes`` —
    each append one atomic script. Paths are kept as the store's shared keys."""

    def __init__(self, store: RedisStore, *, max_bytes: int = DEFAULT_HISTORY_BYTES) -> None:
        self.max_bytes = max_bytes
        self._store = store
        self._append = store._redis.register_script(_APPEND)
        self._entries = store._redis.register_script(_ENTRIES)
        self._recent = store._redis.register_script(_RECENT)

    def _base(self) -> bytes:
        return self._store.name("h", b"")

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
        keys = self._store.keys
        body = json.dumps(
            {
                "at": time.time(),
                "tool": tool,
                "call": call,
                "label": label,
                "steps": encode_steps(keys.steps(steps, keys.shared)),
            }
        )
        args: list[bytes | str | int] = [_raw(session), body, entry_size(steps, label), self.max_bytes, 1]
        versions = sorted(versions_of(steps))
        args += [uuid.uuid4().hex, len(versions)]
        with self._store.guard("recording history") as db:
            kept: set[str] = set()
            if sum(len(blobs.get(version, b"")) for version in versions) > _SEND_KEPT_BYTES:
                # large contents: send only what history does not keep already (one look first)
                found = db.hmget(self._base() + b"refs", versions)
                kept = {version for version, refs in zip(versions, found, strict=True) if refs is not None}
            for version in versions:
                data = None if version in kept else blobs.get(version)
                args += [version, 0 if data is None else 1, b"" if data is None else data]
            return int(self._append(keys=[self._base()], args=args, client=db))

    def entries(self, session: str, after: int = 0) -> list[Entry]:
        with self._store.guard("reading history") as db:
            found = self._entries(keys=[self._base()], args=[_raw(session), int(after)], client=db)
        return self._loaded([(seq, session, body) for seq, body in zip(found[::2], found[1::2], strict=True)])

    def recent(self, after: int, limit: int) -> list[Entry]:
        if limit <= 0:
            return []
        with self._store.guard("reading history") as db:
            found = self._recent(keys=[self._base()], args=[int(after), int(limit)], client=db)
        triples = zip(found[::3], found[1::3], found[2::3], strict=True)
        return self._loaded([(seq, _text(who) if isinstance(who, bytes) else "", body) for seq, who, body in triples])

    def _loaded(self, rows: list[tuple[Any, str, Any]]) -> list[Entry]:
        """Entries from (seq, session, stored body) rows, paths made this process's again."""
        keys = self._store.keys
        entries = []
        for seq, session, body in rows:
            shown = seq.decode("ascii", "replace")[:20] if isinstance(seq, bytes) else "?"
            try:
                kept = load_json(body)
                if not isinstance(kept, dict) or not {"at", "tool", "call", "label", "steps"} <= kept.keys():
                    raise ValueError("it is not an entry such as fs-tools writes")
                entry = load_entry(
                    int(seq), session, kept["at"], kept["tool"], kept["call"], kept["label"], kept["steps"]
                )
                entries.append(dataclasses.replace(entry, steps=keys.local_steps(entry.steps)))
            except ValueError as exc:  # written by something else
                raise damaged(shown, exc) from exc
        return entries

    def blob(self, version: str) -> bytes | None:
        with self._store.guard("reading history") as db:
            data = db.get(self._base() + b"blob\0" + version.encode("ascii", "replace"))
        if not isinstance(data, bytes):
            return None
        from fs_tools.provider import version_of

        return data if version_of(data) == version else None  # never bytes that are not that version

    def trimmed_through(self, session: str) -> int:
        with self._store.guard("reading history") as db:
            found = db.hget(self._base() + b"trimmed", _raw(session))
        return 0 if found is None else stored_count(found, "record of trimmed entries")

    def latest(self) -> int:
        with self._store.guard("reading history") as db:
            found = db.get(self._base() + b"seq")
        return 0 if found is None else stored_count(found, "sequence")

    @property
    def identity(self) -> str:
        """Made with the history, and made anew when Redis comes back empty: marks carry it, so a mark
        made before is refused then, not taken for a point of the new history (asked each time)."""
        name = self._base() + b"identity"
        with self._store.guard("reading history") as db:
            found = db.get(name)
            if found is None:
                db.set(name, os.urandom(8).hex(), nx=True)
                found = db.get(name)
        return found.decode("ascii") if isinstance(found, bytes) else ""

    @property
    def kept_bytes(self) -> int:
        with self._store.guard("reading history") as db:
            found = db.get(self._base() + b"total")
        return 0 if found is None else int(found)
