"""The gates every change takes — write, edit, delete, move: the configuration gates and the observation
gate, asked by the provider at the right moments, and the session's ledger updated with what changed."""

from __future__ import annotations

import contextlib
import logging
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fs_tools.errors import (
    ContentTooLarge,
    FsError,
    NoFileToEdit,
    NotObserved,
    NotRegularFile,
    SandboxDenied,
    SeenAbsent,
    StaleVersion,
    StoreUnavailable,
    Writer,
    path_label,
)
from fs_tools.history.model import DIR, LINK, OTHER, Effect, State, Step
from fs_tools.provider import DIRECTORY, FILE, SYMLINK, FileState, Snapshot, lines_now, same_but_whitespace
from policy import Deny, Intent, Observation, Present, Refusal, decide, decide_mutation_allowed

if TYPE_CHECKING:  # the tools' context: the tools import this module, so it never imports them back
    from fs_tools.tools.base import ToolContext

# Given the file's current snapshot, the bytes to commit (an edit).
Produce = Callable[[Snapshot], bytes]

log = logging.getLogger("fs_tools.history")


@dataclass(frozen=True)
class Committed:
    after: Snapshot
    created: bool


class SessionGate:
    """The gates of one session's write or edit, as the provider's commit asks them."""

    def __init__(self, ctx: ToolContext, intent: Intent) -> None:
        self.ctx = ctx
        self.intent = intent
        self.expected: str | None = None
        self.display = ""
        self._unseen = False

    def expect(self, file: FileState) -> str | None:
        self.display = file.display
        check_configuration(self.ctx, file)
        decision = decide(self.intent, self.ctx.store.get(self.ctx.session, file.key))
        if isinstance(decision, Deny):
            raise _denial(decision, file)
        self._unseen = not decision.seen
        self.expected = decision.expect.version if isinstance(decision.expect, Present) else None
        return self.expected

    def record(self, key: str, after: Snapshot, *, before: Snapshot | None = None, made: tuple[str, ...] = ()) -> None:
        was = before.version if before is not None else self.expected  # a version the gate knew, bytes unread
        steps: list[Step] = [Effect(directory, None, DIR) for directory in made]
        steps.append(Effect(key, was, after.version))
        record_change(self.ctx, steps, before, after)
        record_observations(self.ctx, {key: Present(after.version)}, f"{self.display!r} was written")

    def refusal(self) -> FsError | None:
        """A create that found the file there: for a session that never saw it, the file is unread."""
        if not self._unseen:
            return None
        return NotObserved(
            f"{self.display!r} already exists and this session has not read it", details={"reason": "exists"}
        )


class PinnedGate(SessionGate):
    """The session's gates, expecting a version given (one a region edit has just checked) instead of
    the one the session observed: every configuration and observation rule still applies."""

    def __init__(self, ctx: ToolContext, intent: Intent, version: str) -> None:
        super().__init__(ctx, intent)
        self._version = version

    def expect(self, file: FileState) -> str | None:
        super().expect(file)
        self.expected = self._version
        return self.expected


class Checked(Exception):
    """A call in check mode (``ToolContext.check_only``) passed every gate, and its change was made in
    memory (an edit's target found, unique, and replaced): nothing was written. Not an error: the
    workspace answers it as "would be allowed"."""


class _Stopped(Exception):
    """Raised by a checking gate or producer once the real gates have passed: the provider stops there,
    before anything is touched."""

    def __init__(self, file: FileState | None = None, expected: str | None = None, snapshot: Snapshot | None = None):
        super().__init__("stopped")
        self.file = file
        self.expected = expected
        self.snapshot = snapshot


class _CheckOnly:
    """A gate that asks ``inner`` as a commit would, then stops the commit before it touches anything
    (before a missing parent directory is made)."""

    def __init__(self, inner: SessionGate) -> None:
        self.inner = inner

    def expect(self, file: FileState) -> str | None:
        raise _Stopped(file, self.inner.expect(file))

    def record(  # pragma: no cover - expect always raises
        self, key: str, after: Snapshot, *, before: Snapshot | None = None, made: tuple[str, ...] = ()
    ) -> None:
        raise AssertionError("a check-only gate never commits")


def capture(ctx: ToolContext, path: str) -> Snapshot:
    """The file's bytes as the session's edit gate vouches for them (read under its lock, at the version
    the session observed: else the stale error a commit would raise, with the lines that changed)."""

    def stop(snapshot: Snapshot) -> bytes:
        raise _Stopped(snapshot=snapshot)

    try:
        ctx.provider.commit(path, SessionGate(ctx, Intent.EDIT), stop, cancel=ctx.cancel)
    except _Stopped as stopped:
        assert stopped.snapshot is not None
        return stopped.snapshot
    raise AssertionError("capture always raises")  # pragma: no cover


def check_replace(
    ctx: ToolContext, path: str, *, kind: str = "a write replaces only a regular file", reason: str | None = None
) -> Snapshot | None:
    """The gates of writing whole new bytes to ``path``, without writing: None when the path is free
    (a create), else the file there, which the session must have observed at its current version."""
    gate = SessionGate(ctx, Intent.WRITE)
    try:
        ctx.provider.commit(path, _CheckOnly(gate), b"", cancel=ctx.cancel)
    except _Stopped as checked:
        file, expected = checked.file, checked.expected
        assert file is not None
        if not file.exists:
            if expected is not None:  # observed there, gone now
                raise StaleVersion(f"{file.display!r} no longer exists", found="deleted") from None
            return None
        if file.kind != FILE:
            what = "a directory" if file.kind == DIRECTORY else "not a regular file"
            details: dict[str, object] = {"kind": "directory"} if file.kind == DIRECTORY else {}
            raise NotRegularFile(
                f"{file.display!r} is {what}; {kind}", details={**details, **({"reason": reason} if reason else {})}
            ) from None
        if expected is None:
            refusal = gate.refusal()
            if refusal is not None:
                raise refusal from None
            raise StaleVersion(
                f"{file.display!r} did not exist when this session last read it, but it does now",
                found="exists",
            ) from None
        return capture(ctx, path)
    raise AssertionError("a check-only gate always raises")  # pragma: no cover


def commit_gated(
    ctx: ToolContext,
    path: str,
    intent: Intent,
    content: bytes | Produce,
    *,
    pinned: str | None = None,
    mode: int | None = None,
) -> Committed:
    """Gate, then commit ``content`` (or what it makes of the current file). ``path`` is as the model
    sent it; ``pinned`` replaces the observed version the commit expects (a region edit); ``mode`` is the
    permission bits the file gets (a copy's: its source's), else a replacement keeps the old file's. In
    check mode every gate runs and an edit's change is made in memory, then ``Checked`` is raised:
    nothing is written."""
    if ctx.check_only:
        _check_commit(ctx, path, intent, content, pinned)
    gate = SessionGate(ctx, intent) if pinned is None else PinnedGate(ctx, intent, pinned)
    try:
        after = ctx.provider.commit(path, gate, content, cancel=ctx.cancel, mode=mode)
    except StaleVersion as exc:
        refusal = gate.refusal()
        if refusal is None:
            _say_why(ctx, path, gate, exc)
            raise
        raise refusal from exc
    return Committed(after=after, created=gate.expected is None)


def _how_it_changed(stale: StaleVersion) -> None:
    """What the lines that changed read now, and whether only whitespace changed — from the bytes the
    provider left on the error, once the file's lock is released (they are dropped after)."""
    contents, stale.contents = stale.contents, None
    if contents is None:
        return
    old, now = contents
    lines = stale.lines
    stale.learn(
        now=lines_now(now, lines[0], lines[1]) if lines is not None and lines[1] >= lines[0] else (),
        whitespace_only=same_but_whitespace(old, now),
    )


_RECENT_ENTRIES = 200  # entries of every session's history looked through for who changed a file


def _who_changed(ctx: ToolContext, path: str, expected: str | None, stale: StaleVersion) -> None:
    """What the history tells of a stale file's change: the session whose recorded change made the version
    there now (``writer``: its id and tool), and whether the version this session expected is the one its
    own last change made (``after_own_change``) — what changed the file came after that (a formatter, an
    editor on save, another writer). Only the most recent entries are looked through; a history that
    fails tells nothing, and the refusal stands as it is."""
    if ctx.history is None:
        return
    try:
        key = ctx.provider.key_of(path)
        recent = ctx.history.recent(max(0, ctx.history.latest() - _RECENT_ENTRIES), _RECENT_ENTRIES)
    except Exception:  # any failure of the store
        log.debug("history unavailable for a stale cause", exc_info=True)
        return
    writer: Writer | None = None
    for entry in reversed(recent):
        step = next((s for s in entry.steps if isinstance(s, Effect) and s.key == key), None)
        if step is None:
            continue
        if entry.session == ctx.session:
            stale.learn(after_own_change=expected is not None and step.after == expected)
            break
        if writer is None and stale.now_version is not None and step.after == stale.now_version:
            writer = Writer(session=entry.session, tool=entry.tool or "")
    stale.learn(writer=writer)


def _check_commit(ctx: ToolContext, path: str, intent: Intent, content: bytes | Produce, pinned: str | None) -> None:
    if isinstance(content, bytes):
        limit = ctx.provider.max_file_bytes
        if len(content) > limit:  # as the commit refuses it, before the disk is touched
            raise ContentTooLarge(
                f"the new content for {path_label(path)!r} is {len(content):,} bytes, over the {limit:,}-byte limit",
                details={"size": len(content), "limit": limit, "subject": "content"},
            )
        check_replace(ctx, path)
        raise Checked()
    produce = content

    def made(snapshot: Snapshot) -> bytes:
        produce(snapshot)  # an edit's matching: not found, not unique, too large are its errors
        raise Checked()

    gate = SessionGate(ctx, intent) if pinned is None else PinnedGate(ctx, intent, pinned)
    try:
        ctx.provider.commit(path, gate, made, cancel=ctx.cancel)
    except StaleVersion as exc:
        if gate.refusal() is None:
            _say_why(ctx, path, gate, exc)
        raise
    raise AssertionError("a checking commit always raises")  # pragma: no cover


def _say_why(ctx: ToolContext, path: str, gate: SessionGate, stale: StaleVersion) -> None:
    """A file changed since the session's read: what its changed lines read now and why it changed, where
    that is known, added to the refusal (the file's lock is released by now)."""
    if stale.found == "modified":
        _how_it_changed(stale)
        _who_changed(ctx, path, gate.expected, stale)


def record_change(ctx: ToolContext, steps: Sequence[Step], *snapshots: Snapshot | None) -> None:
    """Record a committed change in the session's history, with the bytes of the snapshots it names.

    The change is made: a history store that fails is logged, never the call's error. What it leaves
    out cannot be clobbered by a rewind: the next recorded change of that file does not start where
    the last recorded one ended, or the file is not at the version recorded last, and either way a
    rewind leaves it as it is."""
    if ctx.history is None or not steps:
        return
    blobs = {
        snap.version: snap.data
        for snap in snapshots
        if snap is not None and len(snap.data) == snap.stat.st_size  # empty when too large to keep
    }
    try:
        ctx.history.append(ctx.session, tool=ctx.tool, call=ctx.call, label=None, steps=steps, blobs=blobs)
    except Exception:  # any failure of the store (a damaged row included): the change stands, unrecorded
        log.exception("a change by %r (%s) was made but not recorded in history", ctx.session, ctx.tool)


def state_of(kind: str, snap: Snapshot | None, version: str | None = None) -> State:
    """What history calls an entry of ``kind``: a regular file by its version, else its kind."""
    if kind == FILE:
        return snap.version if snap is not None else version
    return {DIRECTORY: DIR, SYMLINK: LINK}.get(kind, OTHER)


def mode_of(snap: Snapshot | None) -> int | None:
    """The permission bits of a file a change takes away, for history: a rewind recreates it with them."""
    return stat.S_IMODE(snap.stat.st_mode) if snap is not None else None


def refuse_if_vanished(ctx: ToolContext, file: FileState) -> None:
    """A file the session saw that is gone now: stale (it was deleted or moved), not merely missing."""
    if not file.exists and isinstance(ctx.store.get(ctx.session, file.key), Present):
        raise StaleVersion(f"{file.display!r} no longer exists", found="deleted")


def observed_version(ctx: ToolContext, intent: Intent, file: FileState) -> str:
    decision = decide(intent, ctx.store.get(ctx.session, file.key))
    if isinstance(decision, Deny):
        raise _denial(decision, file)
    assert isinstance(decision.expect, Present)  # every intent but write allows only a seen version
    return decision.expect.version


def record_observations(
    ctx: ToolContext, observations: Mapping[str, Observation] | Callable[[], Mapping[str, Observation]], done: str
) -> None:
    """Record what the session's own change did to each file. The change is made: if the store fails, the
    session's records of those files are dropped (fail closed: no stale record authorises a change) and
    the error says what was done and that the session must read the files again."""
    keys: list[str] = list(observations) if not callable(observations) else []
    try:
        changes = observations() if callable(observations) else observations
        keys = list(changes)
        for key, observation in changes.items():
            ctx.changed(key)
            ctx.store.put(ctx.session, key, observation)
    except StoreUnavailable as exc:
        with contextlib.suppress(StoreUnavailable):
            for key in keys:
                ctx.store.forget(ctx.session, key)
        raise StoreUnavailable(
            f"{done}, but this session's record of it could not be saved ({exc.message}); read it before "
            "changing it again"
        ) from exc


def check_configuration(ctx: ToolContext, file: FileState) -> None:
    """The read-only and protected-path gates, for every spelling of the file (with nested roots, one
    file has a relative path under each)."""
    directory = file.kind == DIRECTORY
    for relative in file.relative_paths:
        spelled = f"{relative}/" if directory and relative != "." else relative  # 'secret/' covers the directory
        options = ctx.options
        deny = decide_mutation_allowed(read_only=options.read_only, protected=options.protected, relative_path=spelled)
        if deny is None:
            continue
        if deny.refusal is Refusal.READ_ONLY:
            raise SandboxDenied(
                f"the workspace is read-only; {file.display!r} cannot be changed", details={"reason": "read_only"}
            )
        raise SandboxDenied(
            f"{file.display!r} is a protected path in this workspace and cannot be changed",
            details={"reason": "protected"},
        )


def _denial(decision: Deny, file: FileState) -> Exception:
    label = file.display
    if decision.refusal is Refusal.UNSEEN:
        if not file.exists:
            return NoFileToEdit(f"{label!r} does not exist")
        # A file no read can observe must say why, or "read the file, then retry" would loop forever.
        if file.unreadable is not None:
            return file.unreadable
        return NotObserved(f"{label!r} has not been read in this session", details={"reason": "unseen"})
    if file.exists:  # absent when observed, present now: the file changed since
        return StaleVersion(f"{label!r} did not exist when this session last read it, but it does now", found="exists")
    return SeenAbsent(f"{label!r} does not exist (this session found it absent, or moved or deleted it)")
