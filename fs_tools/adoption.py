"""Reads and changes made by someone else's tools, taken in as a session's own: what a harness's built-in
``Read`` saw, and what its ``Edit`` or ``Write`` did (SPEC §19). The hooks call these through
``Session.observe`` and ``Session.adopt``; the gates before such a change are ``Session.check``'s.

Both read the file as it is now, confined as every read is: a path outside the roots is the provider's
error, never a record.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from fs_tools.errors import FsError
from fs_tools.history.model import Effect
from fs_tools.provider import decode_text, version_of
from fs_tools.tools.base import ToolContext
from policy import ABSENT, Present

log = logging.getLogger("fs_tools.history")


class _Keep:
    """A read's bytes, up to ``limit`` (past it only the fact that there were more)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.chunks: list[bytes] = []
        self.size = 0

    def feed(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if self.size <= self.limit:
            self.chunks.append(chunk)
        else:
            self.chunks = []

    def data(self) -> bytes | None:
        return b"".join(self.chunks) if self.size <= self.limit else None


@dataclass(frozen=True)
class Seen:
    """The file as it is now: its version (None: it does not exist, or never held still while read) and
    its bytes when they are within the kept limit."""

    key: str
    version: str | None
    data: bytes | None
    exists: bool


def _look(ctx: ToolContext, path: str, limit: int) -> Seen:
    key, found = ctx.provider.read(path, lambda: _Keep(limit), cancel=ctx.cancel)
    if found is None:
        return Seen(key, None, None, False)
    sink, scan = found
    version = scan.version if scan.settled else None
    data = sink.data()
    if version is not None and data is not None:
        ctx.provider.remember(version, data)  # for a later stale error's changed lines, and a rewind
    return Seen(key, version, data, True)


def observe(
    ctx: ToolContext, path: str, shown: tuple[int, str] | None = None, *, missing_only: bool = False
) -> str | None:
    """Record that the session has seen ``path`` as it is now (absent, or at its version); the version
    recorded (None: absent, or a file that never held still, which is left unrecorded).

    ``shown`` is what the other tool showed: its first line's number and the text of its lines. When the
    file's lines there differ now (it changed between that read and this record), the session saw an
    older version: what it saw is recorded (as the version of the text shown, which the file no longer
    has), so its next change is refused as stale — the file changed since this session read it — and
    never rests on the version it did not see; None is returned. ``missing_only`` (a read that failed):
    only a missing file is recorded, as absent."""
    seen = _look(ctx, path, ctx.provider.remember_limit)
    if missing_only and seen.exists:
        return None
    if not seen.exists:
        ctx.store.put(ctx.session, seen.key, ABSENT)
    elif seen.version is not None:
        if shown is not None and not _shows(seen.data, shown):
            ctx.store.put(ctx.session, seen.key, Present(version_of(shown[1].encode("utf-8", "surrogatepass"))))
            ctx.changed(seen.key)
            return None
        ctx.store.put(ctx.session, seen.key, Present(seen.version))
    ctx.changed(seen.key)
    return seen.version


_LONG_LINE = 1000  # a reader may cut a line this long: such lines are not compared


def _shows(data: bytes | None, shown: tuple[int, str]) -> bool:
    """Whether ``data``'s lines from ``shown[0]`` are ``shown[1]``'s (line endings aside). Bytes not kept,
    or not text: not comparable, taken as shown."""
    if data is None:
        return True
    try:
        text = decode_text(data, "").text
    except FsError:
        return True
    first, excerpt = shown
    want = excerpt.removeprefix("\ufeff").replace("\r\n", "\n").split("\n")
    have = text.replace("\r\n", "\n").split("\n")[max(first, 1) - 1 :][: len(want)]
    if len(want) > len(have):
        return False
    return all(a == b or len(a) > _LONG_LINE or len(b) > _LONG_LINE for a, b in zip(want, have, strict=False))


def adopt(ctx: ToolContext, path: str) -> str | None:
    """Take the change someone else's tool just made to ``path`` as the session's own: the file as it is
    now becomes what the session observed, and the change — from the version the session had observed
    (whose bytes the provider remembers from its read) to this one — enters the session's history.

    A change from a state the session never observed is recorded as seen but not in history: what it
    replaced is unknown, so no rewind may put anything back over it."""
    before = ctx.store.get(ctx.session, ctx.provider.key_of(path))
    seen = _look(ctx, path, ctx.provider.max_file_bytes)
    after = seen.version if seen.exists else None
    if seen.exists and after is None:  # never held still: nothing true to record
        ctx.store.forget(ctx.session, seen.key)
        return None
    ctx.store.put(ctx.session, seen.key, Present(after) if after is not None else ABSENT)
    ctx.changed(seen.key)
    if before is None or ctx.history is None:
        return after
    was = before.version if isinstance(before, Present) else None
    if was == after:
        return after
    blobs: dict[str, bytes] = {}
    if was is not None:
        old = ctx.provider.recall(was)
        if old is not None:
            blobs[was] = old
    if after is not None and seen.data is not None:
        blobs[after] = seen.data
    try:
        ctx.history.append(
            ctx.session, tool=ctx.tool, call=ctx.call, label=None, steps=[Effect(seen.key, was, after)], blobs=blobs
        )
    except Exception:  # the change stands, unrecorded, as for fs-tools' own changes
        log.exception("a change by %r (%s) was adopted but not recorded in history", ctx.session, ctx.tool)
    return after
