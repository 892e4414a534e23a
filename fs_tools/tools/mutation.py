"""The one path every write and edit takes: configuration gates, the observation gate, then a compare-
and-set commit under the file's lock, and the session's ledger updated with what it wrote."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass

from fs_tools.errors import NotFound, NotObserved, SandboxDenied, StaleVersion
from fs_tools.provider import Resolved, Snapshot
from fs_tools.provider.resolve import require_regular
from fs_tools.tools.base import ToolContext
from policy import Absent, Allow, Deny, Intent, Present, decide, decide_mutation_allowed
from policy.gates import NOT_OBSERVED

# Given the file's current snapshot (None when it is being created), the bytes to commit.
Produce = Callable[[Snapshot | None], bytes]


@dataclass(frozen=True)
class Committed:
    before: Snapshot | None
    after: Snapshot
    created: bool


def commit_gated(ctx: ToolContext, display: str, intent: Intent, produce: Produce) -> Committed:
    with contextlib.ExitStack() as stack:
        target = stack.enter_context(ctx.provider.resolve(display))
        _check_configuration(ctx, target, display)
        decision = decide(intent, ctx.store.get(ctx.session, target.key))
        if isinstance(decision, Deny):
            raise _denial(ctx, decision, target, display)
        if isinstance(decision.expect, Absent) and not target.parent_exists:
            target = stack.enter_context(ctx.provider.resolve(display, create_parents=True))
            _check_configuration(ctx, target, display)
        with ctx.provider.locks.hold(target.key):
            before = _current(ctx, target, decision, display) if intent is Intent.EDIT else None
            data = produce(before)
            ctx.check_cancelled(f"{intent.value} of {display!r}")
            try:
                after = ctx.provider.commit(
                    target, data, expect=decision.expect, display=display, basis=before, cancel=ctx.cancel
                )
            except StaleVersion as exc:
                if decision.on_mismatch == NOT_OBSERVED:
                    raise NotObserved(
                        f"{display!r} already exists and this session has not read it",
                        details={"reason": "exists"},
                    ) from exc
                raise
            ctx.store.put(ctx.session, target.key, Present(after.version))
            return Committed(before=before, after=after, created=isinstance(decision.expect, Absent))
    raise AssertionError("unreachable")  # pragma: no cover - the with block always returns or raises


def _check_configuration(ctx: ToolContext, target: Resolved, display: str) -> None:
    deny = decide_mutation_allowed(read_only=ctx.read_only, protected=ctx.protected, relative_path=target.relative)
    if deny is None:
        return
    if deny.reason == "read_only":
        raise SandboxDenied(
            f"the workspace is read-only; {display!r} cannot be changed", details={"reason": "read_only"}
        )
    raise SandboxDenied(
        f"{display!r} is a protected path in this workspace and cannot be changed", details={"reason": "protected"}
    )


def _denial(ctx: ToolContext, decision: Deny, target: Resolved, display: str) -> Exception:
    current = target.leaf_stat()
    exists = current is not None
    if decision.reason == "unseen":
        if current is None:
            return NotFound(f"{display!r} does not exist", details={"reason": "missing"})
        # A file no read can observe must say why, or "read the file, then retry" would loop forever.
        require_regular(current, display)
        ctx.provider.check_size(current.st_size, display)
        return NotObserved(f"{display!r} has not been read in this session", details={"reason": "unseen"})
    if exists:
        return StaleVersion(
            f"{display!r} did not exist when this session last read it, but it does now",
            details={"found": "exists"},
        )
    return NotFound(
        f"{display!r} does not exist (it was absent when this session read it)", details={"reason": "absent"}
    )


def _current(ctx: ToolContext, target: Resolved, decision: Allow, display: str) -> Snapshot:
    """The file as it is now, which must still be the version the session observed."""
    assert isinstance(decision.expect, Present)
    now = ctx.provider.snapshot(target, display)
    if now is None:
        raise StaleVersion(f"{display!r} no longer exists", details={"found": "deleted"})
    if now.version != decision.expect.version:
        raise ctx.provider.stale(display, decision.expect.version, now)
    return now
