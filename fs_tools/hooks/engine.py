"""One hook event in, one verdict out: the event's tool call mapped onto the harness's dialect (whose tools
fs-tools already speaks, SPEC §14) and put through ``Session.check``, ``observe`` or ``adopt``."""

from __future__ import annotations

import contextlib
import contextvars
import fcntl
import hashlib
import json
import logging
import os
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fs_tools.hooks.harnesses import HARNESSES, Call, Harness, Reply, unjudged
from fs_tools.state import state_directory

if TYPE_CHECKING:
    from fs_tools.workspace import Session, Workspace

HOOK_HARNESSES = tuple(HARNESSES)
LEASE_SECONDS = 30.0  # how long a change allowed before it is made keeps other sessions off the file
LEASE_LOCK_SECONDS = 10.0  # the longest wait for the leases' lock
# When the command that asked gave up (time.monotonic()), where one waits for the answer (a hook server):
# nothing is waited for, or leased, past it.
DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar("fs_tools_hook_deadline", default=None)
MAX_WORKSPACES = 16  # workspaces kept open by gates that live long (a hook server): the least recently used close
log = logging.getLogger("fs_tools.hooks")


NO_OPINION = Reply()


class HookGates:
    """The gates for one harness's hook events, on a workspace opened once (an in-process hook keeps one;
    the ``fs-tools hook`` command opens one per event). ``roots`` default to the event's ``cwd`` (Claude
    Code's and Gemini CLI's project directory when they name it); ``store`` is a SQLite file or a Redis URL
    (None: in memory, for one process); ``protected`` and ``read_only`` are the workspace's. Given a
    ``workspace`` (an in-process hook beside fs-tools' own tools), the gates share its roots, files, store
    and policy, so a read through either counts for both; it stays the caller's to close."""

    def __init__(
        self,
        harness: str,
        *,
        roots: Sequence[str | os.PathLike[str]] | None = None,
        store: str | os.PathLike[str] | None = None,
        protected: Sequence[str] = (),
        read_only: bool = False,
        leases: str | os.PathLike[str] | None = None,
        workspace: Workspace | None = None,
    ) -> None:
        if harness not in HARNESSES:
            raise ValueError(f"unknown harness {harness!r}; one of {', '.join(HARNESSES)}")
        self.harness: Harness = HARNESSES[harness]
        self._roots = [os.fspath(root) for root in roots] if roots else None
        self._store = store
        self._protected = list(protected)
        self._read_only = read_only
        self._leases = Path(leases) if leases is not None else _lease_directory(store)
        self._workspaces: dict[tuple[str, ...], Workspace] = {}
        self._identities: dict[tuple[str, ...], tuple[tuple[int, int] | None, ...]] = {}
        self._beside = workspace
        if workspace is not None:
            self._roots = [str(root) for root in workspace.roots]

    def close(self) -> None:
        if self._beside is None:  # one beside the caller's shares its provider: the caller closes that
            for workspace in self._workspaces.values():
                workspace.close()
        self._workspaces.clear()

    def __enter__(self) -> HookGates:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def handle(self, event: object) -> Reply:
        """The verdict on one event (the harness's JSON, parsed). Never raises."""
        try:
            return self._handle(event)
        except Exception as exc:  # a hook never breaks its harness
            log.debug("hook event not judged", exc_info=True)
            return unjudged(f"{type(exc).__name__}: {exc}")

    def _handle(self, event: object) -> Reply:
        if not isinstance(event, Mapping):
            return unjudged(f"the event is not a JSON object but {type(event).__name__}")
        call = self.harness.call_of(event)
        if isinstance(call, str):  # not a call fs-tools judges: say why only when it is malformed
            return unjudged(call) if call else NO_OPINION
        session = self._session(call, event)
        if call.phase == "pre":
            return self._before(session, call)
        if call.phase == "post":
            self._after(session, call)
        elif call.phase == "failed":
            self._failed(session, call)
        return NO_OPINION

    # --- the phases -------------------------------------------------------------------------------------

    def _before(self, session: Session, call: Call) -> Reply:
        assert call.check is not None
        # The lease first, then the check: between another session's check and its write, this one waits;
        # after that write, this one's check finds the file changed since its read.
        keys = self._keys(session, call) if call.leased else []
        holder = self._claim(session.key, keys)
        if holder is not None:
            busy = call.paths[keys.index(holder)]
            return Reply(
                deny=True,
                reason=f"{busy!r} is being changed by another agent's session right now (its change was allowed "
                "and is being made) — read the file again in a moment, then retry",
            )
        try:
            result = session.check(call.check, call.arguments)
        except BaseException:
            self._give_back(session.key, keys)
            raise
        if result.error is not None:
            self._give_back(session.key, keys)
            code = result.error.code
            if code in self.harness.not_verdicts:
                return NO_OPINION
            if code in _NOT_A_VERDICT:
                return unjudged(f"{code}: {result.error.message}")
            hint = self.harness.hint if code in ("FS_NOT_OBSERVED", "FS_STALE_VERSION") else ""
            return Reply(deny=True, reason=result.text + hint)
        for path in call.creates:  # a file it may create: seen absent, so its creation is its own change
            with contextlib.suppress(Exception):
                session.observe(path)
        return NO_OPINION

    @staticmethod
    def _keys(session: Session, call: Call) -> list[str]:
        """The files' identities; none for a path no file of the roots has (the check refuses it)."""
        from fs_tools.errors import HarnessError

        try:
            return [session.workspace.provider.key_of(path) for path in call.paths]
        except HarnessError:
            return []

    def _after(self, session: Session, call: Call) -> None:
        from fs_tools.errors import HarnessError

        try:
            if call.read:
                for path in call.paths:
                    with contextlib.suppress(HarnessError):  # outside the roots, unreadable: nothing seen
                        session.observe(path, shown=call.shown)
                return
            for path in call.paths:
                with contextlib.suppress(HarnessError):
                    session.adopt(path, tool=call.tool)
        finally:
            self._release(session, call)

    def _failed(self, session: Session, call: Call) -> None:
        """A read that failed on a missing file saw that there is none (so the session may create it); a
        failed change gives back its lease."""
        from fs_tools.errors import HarnessError

        if call.read:
            for path in call.paths:
                with contextlib.suppress(HarnessError):
                    session.observe(path, missing_only=True)
            return
        self._release(session, call)

    # --- sessions -------------------------------------------------------------------------------------

    def _session(self, call: Call, event: Mapping[str, Any]) -> Session:
        roots = self._roots or [self.harness.project_of(event)]
        key = tuple(roots)
        workspace = self._workspaces.get(key)
        if workspace is not None and self._beside is None and self._identities.get(key) != self._identity(roots):
            # Kept open between events (a hook server, an in-process hook): a root or the store file that
            # is another one now (removed and made again) is opened afresh, never used through old handles.
            del self._workspaces[key]
            with contextlib.suppress(Exception):
                workspace.close()
            workspace = None
        if workspace is None:
            if self._beside is None and len(self._workspaces) >= MAX_WORKSPACES:
                oldest = next(iter(self._workspaces))
                self._identities.pop(oldest, None)
                with contextlib.suppress(Exception):
                    self._workspaces.pop(oldest).close()
            workspace = self._workspaces[key] = self._open(roots)
            self._identities[key] = self._identity(roots)  # once open: the store file may be new
        else:
            self._workspaces[key] = self._workspaces.pop(key)  # the most recently used last
        return workspace.session(call.session)

    def _identity(self, roots: Sequence[str]) -> tuple[tuple[int, int] | None, ...]:
        """Which directories the roots and which file the store are now (device and inode; None: none)."""
        paths = [*roots]
        if self._store is not None:
            from fs_tools.stores.location import store_location

            try:
                where = store_location(self._store, [])
            except ValueError:
                where = None  # the workspace says what is wrong with it
            if isinstance(where, Path):
                paths.append(str(where))
        found: list[tuple[int, int] | None] = []
        for path in paths:
            try:
                info = os.stat(path)
            except OSError:
                found.append(None)
            else:
                found.append((info.st_dev, info.st_ino))
        return tuple(found)

    def _open(self, roots: list[str]) -> Workspace:
        from fs_tools.workspace import Workspace, keep_contents_in_store

        beside = self._beside
        if beside is not None:
            sibling = Workspace(
                beside.provider,
                dialect=self.harness.dialect,
                store=beside.store,
                protected=beside.protected.patterns,
                read_only=beside.read_only,
                check_syntax=False,
            )
            sibling.history = beside.history  # one history: diff and rewind cover both kinds of change
            return sibling
        workspace = Workspace(
            roots,
            dialect=self.harness.dialect,
            store=self._store,
            protected=self._protected,
            read_only=self._read_only,
            check_syntax=False,  # a check shows no result text a syntax report could go in
        )
        keep_contents_in_store(workspace)
        return workspace

    # --- leases: a change allowed but not yet made keeps other sessions off the file -------------------

    def _claim(self, session: str, keys: list[str]) -> str | None:
        """Take the lease of every key for ``session``; the first key another session holds, if any (then
        nothing is taken)."""
        if not keys:
            return None
        with self._lease_lock() as directory:
            now = time.time()
            for key in keys:
                holder = _read_lease(directory / _lease_name(key))
                if holder is not None and holder[0] != session and holder[1] > now:
                    return key
            _in_time()  # a lease taken after the command gave up would outlive its post event
            for key in keys:
                _write_lease(directory / _lease_name(key), session, now + LEASE_SECONDS)
        return None

    def _release(self, session: Session, call: Call) -> None:
        self._give_back(session.key, self._keys(session, call))

    def _give_back(self, session: str, keys: list[str]) -> None:
        if not keys:
            return
        with self._lease_lock() as directory:
            for key in keys:
                lease = directory / _lease_name(key)
                holder = _read_lease(lease)
                if holder is not None and (holder[0] == session or holder[1] <= time.time()):
                    with contextlib.suppress(FileNotFoundError):
                        lease.unlink()

    @contextlib.contextmanager
    def _lease_lock(self) -> Iterator[Path]:
        directory = self._leases
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(directory / ".lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            # Held for a few file operations at a time: one held for seconds is a writer stopped (Ctrl-Z)
            # or hung, and the event gets no opinion rather than waiting on it (a hook server has no alarm).
            waited = time.monotonic() + LEASE_LOCK_SECONDS
            given = DEADLINE.get()
            if given is not None:
                waited = min(waited, given)
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > waited:
                        _in_time()
                        raise TimeoutError(
                            f"the leases' lock {directory / '.lock'} was held for over {LEASE_LOCK_SECONDS:g} s"
                        ) from None
                    time.sleep(0.005)
            yield directory
        finally:
            os.close(fd)


def _in_time() -> None:
    given = DEADLINE.get()
    if given is not None and time.monotonic() >= given:
        raise TimeoutError("the command that asked stopped waiting")


# A check that did not judge the change: the call could not be formed or run (the harness's own tool then
# answers it), not a gate's verdict.
_NOT_A_VERDICT = frozenset({"INVALID_ARGS", "UNKNOWN_TOOL", "INTERNAL_ERROR", "FS_STORE_UNAVAILABLE", "FS_BUSY"})


def _lease_directory(store: str | os.PathLike[str] | None) -> Path:
    """Beside a SQLite store; for a Redis store or none, in the user's state directory (a lease is local
    to a machine)."""
    if store is not None and not (isinstance(store, str) and "://" in store):
        return Path(f"{os.fspath(store)}.leases")
    return state_directory() / "leases"


def _lease_name(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:32]


def _read_lease(path: Path) -> tuple[str, float] | None:
    try:
        held = json.loads(path.read_text())
        return str(held["session"]), float(held["until"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _write_lease(path: Path, session: str, until: float) -> None:
    temporary = path.with_suffix(".new")
    temporary.write_text(json.dumps({"session": session, "until": until}))
    os.replace(temporary, path)


def hook_event(
    harness: str,
    event: object,
    *,
    roots: Sequence[str | os.PathLike[str]] | None = None,
    store: str | os.PathLike[str] | None = None,
    protected: Sequence[str] = (),
    read_only: bool = False,
) -> Reply:
    """The verdict on one hook event, with a workspace opened for it and closed after (what the
    ``fs-tools hook`` command does per event). Never raises for what the harness sends; a bad
    ``harness`` name is a ``ValueError``."""
    gates = HookGates(harness, roots=roots, store=store, protected=protected, read_only=read_only)
    try:
        return gates.handle(event)
    finally:
        with contextlib.suppress(Exception):
            gates.close()
