"""The one path every write and edit takes: configuration gates, the observation gate, then a compare-
and-set commit under the file's lock, and the session's ledger updated with what it wrote."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass

from fs_tools.errors import NotFound, NotObserved, SandboxDenied, StaleVersion, StoreUnavailable, path_label
from fs_tools.provider import Resolved, Snapshot
from fs_tools.provider.files import require_plain_file, vanished
from fs_tools.tools.base import ToolContext
from policy import Allow, Deny, Intent, Present, decide, decide_mutation_allowed
from policy.gates import NOT_OBSERVED

# Given the file's current snapshot (None when it is being created), the bytes to commit.
Produce = Callable[[Snapshot | None], bytes]


@dataclass(frozen=True)
class Committed:
    before: Snapshot | None
    after: Snapshot
    created: bool


def commit_gated(ctx: ToolContext, path: str, intent: Intent, produce: Produce) -> Committed:
    """Gate, then commit what ``produce`` makes of the current file. ``path`` is as the model sent it."""
    label = path_label(path)
    with contextlib.ExitStack() as stack:
        target = stack.enter_context(ctx.provider.resolve(path))
        _check_configuration(ctx, target, label)
        decision = decide(intent, ctx.store.get(ctx.session, target.key))
        if isinstance(decision, Deny):
            raise _denial(ctx, decision, target, label)
        expected = decision.expect.version if isinstance(decision.expect, Present) else None
        early = None
        if intent is Intent.WRITE:
            early = produce(None)  # known before the disk is touched: refuse oversized content first
            ctx.provider.check_content_size(len(early), label)
        if expected is None and not target.parent_exists:
            ctx.check_cancelled(f"{intent.value} of {label!r}")
            target = stack.enter_context(ctx.provider.resolve(path, create_parents=True))
            _check_configuration(ctx, target, label)
        try:
            return _commit(ctx, target, intent, decision, expected, early, produce, label)
        except BaseException:
            target.remove_created_directories()  # a failed create leaves no empty directories behind
            raise
    raise AssertionError("unreachable")  # pragma: no cover - the with block always returns or raises


def _commit(
    ctx: ToolContext,
    target: Resolved,
    intent: Intent,
    decision: Allow,
    expected: str | None,
    early: bytes | None,
    produce: Produce,
    label: str,
) -> Committed:
    with ctx.provider.locks.hold(target.key, cancel=ctx.cancel, display=label):
        before = _current(ctx, target, expected, label) if intent is Intent.EDIT else None
        data = early if early is not None else produce(before)
        ctx.check_cancelled(f"{intent.value} of {label!r}")
        try:
            after = ctx.provider.commit(target, data, expected=expected, display=label, basis=before, cancel=ctx.cancel)
        except StaleVersion as exc:
            if decision.on_mismatch == NOT_OBSERVED:
                raise NotObserved(
                    f"{label!r} already exists and this session has not read it", details={"reason": "exists"}
                ) from exc
            raise
        try:
            ctx.store.put(ctx.session, target.key, Present(after.version))
        except StoreUnavailable as exc:  # the file is written: say so, and that the session must re-read it
            with contextlib.suppress(StoreUnavailable):
                ctx.store.forget(ctx.session, target.key)  # fail closed: no stale record authorises a change
            raise StoreUnavailable(
                f"{label!r} was written, but this session's record of it could not be saved ({exc.message}); "
                "read it before changing it again"
            ) from exc
        return Committed(before=before, after=after, created=expected is None)


def _check_configuration(ctx: ToolContext, target: Resolved, label: str) -> None:
    # Every spelling of the file counts: with nested roots, one file has a relative path under each.
    for relative in ctx.provider.resolver.relative_forms(target.key):
        deny = decide_mutation_allowed(read_only=ctx.read_only, protected=ctx.protected, relative_path=relative)
        if deny is None:
            continue
        if deny.reason == "read_only":
            raise SandboxDenied(
                f"the workspace is read-only; {label!r} cannot be changed", details={"reason": "read_only"}
            )
        raise SandboxDenied(
            f"{label!r} is a protected path in this workspace and cannot be changed", details={"reason": "protected"}
        )


def _denial(ctx: ToolContext, decision: Deny, target: Resolved, label: str) -> Exception:
    current = target.leaf_stat()
    if decision.reason == "unseen":
        if current is None:
            return NotFound(f"{label!r} does not exist", details={"reason": "missing", "intent": "edit"})
        # A file no read can observe must say why, or "read the file, then retry" would loop forever.
        require_plain_file(current, label)
        ctx.provider.check_size(current.st_size, label)
        return NotObserved(f"{label!r} has not been read in this session", details={"reason": "unseen"})
    if current is not None:  # absent when observed, present now: the file changed since
        return StaleVersion(
            f"{label!r} did not exist when this session last read it, but it does now", details={"found": "exists"}
        )
    return NotFound(
        f"{label!r} does not exist (it was absent when this session read it)",
        details={"reason": "absent", "intent": "edit"},
    )


def _current(ctx: ToolContext, target: Resolved, expected: str | None, label: str) -> Snapshot:
    """The file as it is now, which must still be the version the session observed."""
    assert expected is not None  # the gate only lets an edit through with a version in hand
    now = ctx.provider.snapshot(target, label)
    if now is None:
        raise vanished(label)
    if now.version != expected:
        raise ctx.provider.stale(label, expected, now)
    return now
