"""External-change hints: which files a session observed have changed on disk since it read them.

One watchdog observer watches every root. Its events only mark paths as worth a look; what counts is
the content hash, checked when a session asks (or, for subscribers, when an event arrives): a ``touch``
or an identical rewrite is not a change, and neither is the session's own write (its observation
already holds the new version). The watcher never makes a write succeed or fail — the version check at
commit stays the only authority.
"""

from __future__ import annotations

import functools
import importlib.metadata
import logging
import os
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver

from fs_tools.errors import Aborted, Busy, FsError
from fs_tools.provider import Provider
from policy import Absent, Observation, ObservationStore, Present

log = logging.getLogger("fs_tools.watcher")

MODIFIED, DELETED, CREATED = "modified", "deleted", "created"
_IGNORED_EVENTS = {"opened", "closed_no_write"}
_CONTENT_EVENTS = [
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileClosedEvent,
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
]


@dataclass(frozen=True)
class Change:
    """A file the session observed is no longer as it saw it. ``path`` is the canonical absolute path."""

    path: str
    kind: str  # modified | deleted (or moved away) | created (absent when read, present now)
    version: str | None = None  # the version on disk now (None when deleted)


def check(provider: Provider, key: str, observation: Callable[[], Observation | None]) -> Change | None:
    """Compare the session's observation of ``key`` with the disk, by hash.

    ``observation`` is called under the file's lock: a read or a commit holds that lock until it has
    recorded the version it saw or wrote, so the version compared is that one, never a copy taken before
    the lock (against which the session's own write, committed meanwhile, would look like a change)."""
    try:
        observed, version = provider.current_version(key, observation)
    except (Busy, Aborted):
        return None  # a writer holds it for long: unknown for now, and the writer's commit is what counts
    except FsError:
        observed, version = observation(), None  # gone, or no longer a readable regular file inside a root
    if observed is None:
        return None  # forgotten meanwhile
    if version is None:
        return Change(key, DELETED) if isinstance(observed, Present) else None
    if isinstance(observed, Absent):
        return Change(key, CREATED, version)
    return Change(key, MODIFIED, version) if version != observed.version else None


def changes_among(
    provider: Provider,
    observed: dict[str, Observation],
    candidates: Iterable[str] | None,
    recorded: Callable[[str], Observation | None] | None = None,
) -> list[Change]:
    """The changes among ``candidates`` (all of ``observed`` when None). ``recorded`` looks up the
    observation as the store holds it now, read under each file's lock (see ``check``); without it the
    ``observed`` snapshot is compared, and a commit finishing meanwhile may be reported as a change."""
    keys = observed.keys() if candidates is None else [k for k in candidates if k in observed]
    lookup = recorded if recorded is not None else observed.get
    found = (check(provider, key, functools.partial(lookup, key)) for key in sorted(keys))
    return [change for change in found if change is not None]


class _Subscription:
    """One callback; once ``cancel`` returns it is never called again."""

    def __init__(self, callback: Callable[[Change], None]) -> None:
        self._callback = callback
        self._active = True
        # held while the callback runs, so cancel waits for a call in progress on another thread;
        # reentrant, so a callback may unsubscribe itself
        self._calling = threading.RLock()

    def tell(self, change: Change) -> None:
        with self._calling:
            if not self._active:
                return
            try:
                self._callback(change)
            except Exception:  # a subscriber's bug must not stop the watcher
                log.exception("change subscriber failed")

    def cancel(self) -> None:
        with self._calling:
            self._active = False


WATCHDOG_NEEDED = (7, 1)  # the first release that handles a kernel queue overflow (lost events)


def watchdog_version() -> tuple[int, ...]:
    """The installed watchdog's release, as numbers (``(6, 0, 0)``)."""
    release = importlib.metadata.version("watchdog")
    return tuple(int(part) for part in re.findall(r"\d+", release)[:3])


class Watcher:
    """Watches the roots; a context manager, stopped (thread joined) by ``close``."""

    def __init__(self, provider: Provider, store: ObservationStore) -> None:
        found = watchdog_version()
        if found < WATCHDOG_NEEDED:
            # fs-tools allows watchdog 6 (Google ADK pins it), but watching without knowing of lost events
            # would let changed() miss a change: refused, never degraded
            needed = ".".join(map(str, WATCHDOG_NEEDED))
            raise ValueError(
                f"Workspace(watch=True) needs watchdog {needed} or later, which reports lost events "
                f"(installed: {'.'.join(map(str, found))}); install watchdog>={needed}, or leave watch off"
            )
        self._provider = provider
        self._store = store
        self._lock = threading.Lock()
        self._dirty: set[str] = set()
        self._subscribers: dict[str, list[_Subscription]] = {}
        self._told: dict[tuple[str, str], str | None] = {}  # (session, key) -> version last announced
        self._overflows = 0  # times the kernel dropped events: every observed file is then worth a look
        self._rescanned: dict[str, int] = {}  # session -> overflows its full re-hash has covered
        self._observer = _observer(self._queue_overflowed, provider.real_root_paths[0])
        handler = _Handler(self)
        try:
            for root in provider.real_root_paths:
                # only events that can mean new content: the kernel then never queues the open/access/close
                # events of reads (ours included), which would otherwise keep the observer thread busy
                self._observer.schedule(handler, root, recursive=True, event_filter=_CONTENT_EVENTS)
            self._observer.daemon = True
            self._observer.start()
        except BaseException:  # a watch the kernel refused (its limit): the reader's threads end with it
            self._observer.stop()  # (never started: stopping it stops and joins the reader)
            raise

    def is_current_thread(self) -> bool:
        """Whether the caller runs on the observer's thread (inside a callback)."""
        return threading.current_thread() is self._observer

    def close(self) -> bool:
        """Stop the observer; whether its thread has ended (never waits for itself: a callback may
        close the workspace it runs for, and its thread ends once the callback returns)."""
        self._observer.stop()
        if self.is_current_thread():
            return False
        self._observer.join(timeout=_JOIN_SECONDS)
        return not self._observer.is_alive()

    def changes(self, session: str) -> list[Change]:
        """The session's observed files whose content differs from what it saw, among the paths the
        observer has reported since it started."""
        with self._lock:
            dirty = set(self._dirty)
            overflows = self._overflows
            full = self._rescanned.get(session, 0) < overflows
        if not full:
            return self._changes(session, dirty)
        # events were lost: re-hash everything this session observed, once per overflow, and remember
        # what differs so the next call (which goes by the reported paths again) still reports it
        found = self._changes(session, None)
        with self._lock:
            self._dirty |= {change.path for change in found}
            self._rescanned[session] = max(self._rescanned.get(session, 0), overflows)
        return found

    def subscribe(self, session: str, callback: Callable[[Change], None]) -> Callable[[], None]:
        """Call ``callback`` (on the watcher's thread) for each real change to a file the session
        observed. Returns the function that unsubscribes: once it returns, the callback is never called
        again (if the callback is running on the watcher's thread, it waits for that call to return, so
        the callback must not wait for the thread that unsubscribes). To hand changes to asyncio, pass a
        callback that uses ``loop.call_soon_threadsafe``."""
        subscription = _Subscription(callback)
        with self._lock:
            self._subscribers.setdefault(session, []).append(subscription)

        def unsubscribe() -> None:
            subscription.cancel()
            with self._lock:
                subscriptions = self._subscribers.get(session, [])
                if subscription in subscriptions:
                    subscriptions.remove(subscription)

        return unsubscribe

    def _queue_overflowed(self) -> None:
        """The kernel dropped events (watchdog then rebuilds its watches): any observed file may have
        changed unreported. Sessions re-hash all they observed on their next ``changed()``; subscribers
        are checked on a thread of their own, so watchdog's reader goes back to draining the queue."""
        with self._lock:
            self._overflows += 1
            first = self._overflows == 1
            subscribed = any(self._subscribers.values())
        log.log(logging.WARNING if first else logging.DEBUG, "file events were lost; re-hashing every observed file")
        if subscribed:
            threading.Thread(target=self._announce, args=(None,), name="fs-tools-overflow", daemon=True).start()

    def _paths_changed(self, paths: set[str]) -> None:
        with self._lock:
            self._dirty |= paths
        self._announce(paths)

    def _changes(self, session: str, candidates: Iterable[str] | None) -> list[Change]:
        observed = self._store.observed(session)
        return changes_among(self._provider, observed, candidates, functools.partial(self._store.get, session))

    def _announce(self, paths: set[str] | None) -> None:
        with self._lock:
            sessions = [session for session, subscriptions in self._subscribers.items() if subscriptions]
        for session in sessions:
            for change in self._changes(session, paths):
                self._tell(session, change)

    def _tell(self, session: str, change: Change) -> None:
        # The subscriptions are read after the hash, not before it: one cancelled before the file
        # changed is not among them (and one cancelled since is skipped by its own check).
        with self._lock:
            subscriptions = list(self._subscribers.get(session, []))
            # one write makes several events; announce each new state of a file once
            if not subscriptions or self._told.get((session, change.path), "") == change.version:
                return
            self._told[(session, change.path)] = change.version
        for subscription in subscriptions:
            subscription.tell(change)


class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: Watcher) -> None:
        self._watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in _IGNORED_EVENTS:
            return
        paths = {str(event.src_path)}
        destination = getattr(event, "dest_path", "")
        if destination:
            paths.add(str(destination))  # an editor's atomic save moves a temp onto the target
        self._watcher._paths_changed(paths)


def _observer(on_overflow: Callable[[], None], probe: str) -> BaseObserver:
    """A watchdog observer that also calls ``on_overflow`` when the kernel's inotify queue overflows.

    watchdog (from 7.1) handles an overflow in its inotify reader's ``handle_event`` (each watch group
    rebuilds its watches) and tells no event handler. The observer is built through watchdog's public
    seams: ``BaseObserver(emitter_class, inotify_fd=...)`` with watchdog's own emitter, and a reader that
    is a subclass of ``InotifyFD`` whose ``handle_event`` also calls ``on_overflow``. (Not a log filter
    on watchdog's warning: a host's logging configuration — a level, a ``dictConfig``,
    ``logging.disable`` — would silently turn the signal off.) ``probe`` is a directory the reader may
    watch for a moment before anything else (a root). Where inotify is not the backend, the platform's
    observer is used as is."""
    try:
        from watchdog.observers.inotify import InotifyEmitter
        from watchdog.observers.inotify_c import CallbackId, InotifyConstants, InotifyEvent, InotifyFD, Mask
    except Exception:  # not Linux: no inotify
        return Observer()

    class Reader(InotifyFD):
        """watchdog's inotify reader, which says when it has read from the kernel for the first time.

        watchdog 7.1's reader frees its inotify descriptor and wake-up pipe itself only when it is
        stopped in or after a read: stopped before its thread's first read (a busy machine, a workspace
        closed at once) it leaves all three open. ``wait_until_reading`` closes that window."""

        def __init__(self) -> None:
            super().__init__()
            self.has_read = threading.Event()

        def handle_event(self, event: InotifyEvent) -> None:
            self.has_read.set()  # dispatched after the read that brought it: the reader is past its first read
            super().handle_event(event)
            if event.is_queue_overflow:
                on_overflow()  # every watch group has rebuilt its watches by now

        def wait_until_reading(self, path: str) -> None:
            """Make the kernel queue one event (a watch added and removed at once queues IN_IGNORED) and
            wait until it is dispatched. Bounded by the join timeout ``close`` uses: a reader that died
            meanwhile does not hang the caller (it would only leave its descriptors open, as before)."""
            callback = _Probe()
            ident = CallbackId(id(callback))
            wd = self.add_callback(os.fsencode(path), Mask(InotifyConstants.IN_DELETE_SELF), callback, ident)
            self.remove_callbacks([(wd, ident)])
            self.has_read.wait(timeout=_JOIN_SECONDS)

    class Watching(BaseObserver):
        """As watchdog's ``InotifyObserver``: an inotify instance of its own (so the kernel's limits
        are read when it is made), stopped with the observer."""

        def __init__(self) -> None:
            self._reader = Reader()
            self._reader.start()
            try:
                self._reader.wait_until_reading(probe)
            except BaseException:  # no watch to be had (the kernel's limit, a root gone): end its threads
                self._reader.stop()
                self._reader.join(timeout=_JOIN_SECONDS)
                raise
            super().__init__(InotifyEmitter, inotify_fd=self._reader)

        def on_thread_stop(self) -> None:
            super().on_thread_stop()  # the emitters stopped and joined: their watches are gone
            self._reader.stop()
            self._reader.join()

    return Watching()


_JOIN_SECONDS = 10  # how long close waits for the observer's thread, and the observer for its reader's first read


class _Probe:
    """The callback of the reader's probe watch: it hears nothing that matters."""

    def on_event(self, event: object) -> None:
        pass

    def on_watch_deleted(self, wd: int) -> None:
        pass

    def on_queue_overflow(self) -> None:
        pass

    def on_events_lost(self) -> None:
        pass
