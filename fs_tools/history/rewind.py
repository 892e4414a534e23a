"""Rewind: put back what a session changed since a mark, file by file, through the provider's atomic
operations and the configuration gates — and never over a change someone else made.

A path no move touches is restored by its net effect across the whole range (one atomic commit or
removal per file, from the state the session left to the state before its first change). The paths a
move touches (its ends, what is below them, the directories above them) are read as runs of changes
between the moves and undone newest first: a run by its net effect, a move by moving the entry back. A
path is left as it is (``FS_STALE_VERSION`` in the report) when someone else changed it between two of
the session's changes, or when it no longer holds what the session left there — the provider's
compare-and-set decides that, at the moment of each operation. ``force`` restores such paths anyway.
Each operation is recorded in history as the session's own change (tool ``rewind``), so a rewind that
was interrupted can be run again, and a rewind can itself be rewound."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass, field

from fs_tools.errors import (
    HarnessError,
    HistoryTrimmed,
    NotEmpty,
    NotRegularFile,
    OutsideRoots,
    StaleVersion,
    SymlinkOutside,
)
from fs_tools.gating import SessionGate, check_configuration, record_change, record_observations
from fs_tools.history.model import (
    DIR,
    LINK,
    OTHER,
    Effect,
    Entry,
    HistoryStore,
    Move,
    RewindReport,
    Skipped,
    State,
    is_version,
    make_mark,
    parse_mark,
)
from fs_tools.provider import DIRECTORY, FILE, FileState
from fs_tools.tools.base import ToolContext
from fs_tools.tools.delete import RemovalGate
from fs_tools.tools.move import MovingGate
from policy import ABSENT, Intent, Present

HISTORY_TRIMMED = HistoryTrimmed.default_code


def history_of(ctx: ToolContext) -> HistoryStore:
    assert ctx.history is not None, "a workspace always has a history store"
    return ctx.history


def entries_since(ctx: ToolContext, mark: str | None) -> tuple[list[Entry], int]:
    """The session's changes after ``mark`` (None: all it has) within this workspace's roots, and the
    position the mark names; a one-line ``ValueError`` for a mark that is not this session's."""
    history = history_of(ctx)
    position = 0 if mark is None else parse_mark(ctx.session, mark, history.latest(), history.identity)
    kept = within_roots(ctx, history.entries(ctx.session, position))
    return [entry for entry in kept if not entry.is_mark], position


def within_roots(ctx: ToolContext, entries: list[Entry]) -> list[Entry]:
    """The entries as this workspace sees them: only steps on paths under its roots (one store may serve
    several projects: ``fs-tools call``'s default state file does); a change left with none is gone."""
    roots = tuple(root.rstrip("/") + "/" for root in ctx.provider.real_root_paths)

    def inside(key: str) -> bool:
        return key.startswith(roots) or key + "/" in roots

    kept: list[Entry] = []
    for entry in entries:
        steps = tuple(
            step
            for step in entry.steps
            if (inside(step.key) if isinstance(step, Effect) else inside(step.source) and inside(step.destination))
        )
        if entry.is_mark or steps:
            kept.append(entry if steps == entry.steps else dataclasses.replace(entry, steps=steps))
    return kept


def rewind(ctx: ToolContext, mark: str, *, force: bool = False, forcing: str = "") -> RewindReport:
    """Restore every path the session changed since ``mark``; see the module's docstring. ``forcing``
    is how the caller can force (for the messages of paths left as they are)."""
    history = history_of(ctx)
    parse_mark(ctx.session, mark, history.latest(), history.identity)  # never None: "since the start" is diff's
    changes, position = entries_since(ctx, mark)
    trimmed = history.trimmed_through(ctx.session)
    if trimmed > position:
        return RewindReport(
            code=HISTORY_TRIMMED,
            message=(
                f"history no longer reaches {mark}: this session's changes up to "
                f"{make_mark(ctx.session, trimmed, history.identity)} "
                "were dropped to keep the history store within its budget (max_history_bytes); nothing was "
                "changed — rewind to a later mark (history lists the ones kept)"
            ),
        )
    work = _Rewind(ctx, history, force, forcing, _targets(history, changes))
    apart, segments = _segments(changes)
    for segment in reversed(segments):
        if isinstance(segment, Move):
            work.undo_move(segment)
        else:
            work.restore(segment)
    work.restore(apart)
    left = {item.path for item in work.skipped}
    report = RewindReport(
        restored=[path for path in dict.fromkeys(work.restored) if path not in left], skipped=work.skipped
    )
    report.message = _summary(report, mark)
    return report


def _targets(history: HistoryStore, entries: list[Entry]) -> dict[str, bytes]:
    """The bytes every path may be restored to, read before the first step: the rewind's own records
    count against the budget too, and must not drop what it still needs (bounded by the budget)."""
    wanted: set[str] = set()
    for entry in entries:
        for step in entry.steps:
            state = step.before if isinstance(step, Effect) else step.replaced
            if state is not None and is_version(state):
                wanted.add(state)
    found = {version: history.blob(version) for version in sorted(wanted)}
    return {version: data for version, data in found.items() if data is not None}


def _segments(entries: list[Entry]) -> tuple[list[Effect], list[list[Effect] | Move]]:
    """The steps in time order, in two parts: the changes of paths no move touches (restored by their net
    effect across the whole range: one operation per file), and, for the paths a move does touch (its
    ends, what is below them, the directories above them), runs of changes between the moves."""
    ends = {
        key
        for entry in entries
        for step in entry.steps
        if isinstance(step, Move)
        for key in (step.source, step.destination)
    }
    above = {parent for key in ends for parent in _parents(key)}

    def moved(key: str) -> bool:
        return key in ends or key in above or any(parent in ends for parent in _parents(key))

    apart: list[Effect] = []
    segments: list[list[Effect] | Move] = []
    for entry in entries:
        for step in entry.steps:
            if isinstance(step, Move):
                segments.append(step)
            elif not moved(step.key):
                apart.append(step)
            elif segments and isinstance(segments[-1], list):
                segments[-1].append(step)
            else:
                segments.append([step])
    return apart, segments


def _parents(key: str) -> list[str]:
    parents = []
    while "/" in key.strip("/"):
        key = key.rsplit("/", 1)[0]
        parents.append(key)
    return parents


def _summary(report: RewindReport, mark: str) -> str:
    if not report.restored and not report.skipped:
        return f"Nothing to rewind: every path this session changed since {mark} is as it was then"
    done = f"Restored {len(report.restored)} path(s) to how they were at {mark}"
    if not report.skipped:
        return done
    left = "; ".join(f"{item.path!r}: {item.code}" for item in report.skipped[:5])
    more = f" and {len(report.skipped) - 5} more" if len(report.skipped) > 5 else ""
    return f"{done}; left {len(report.skipped)} as they are ({left}{more})"


@dataclass
class _Net:
    """One path across a run: the state before the session's first change and after its last, and
    whether someone else's change came between two of them."""

    first: State
    last: State
    broken: bool = False
    # the permission bits of the file the first removal took away: the file there at the mark (a file
    # the session deleted and wrote again comes back with its own mode, not the new file's)
    mode: int | None = None


@dataclass
class _Rewind:
    ctx: ToolContext
    history: HistoryStore
    force: bool
    forcing: str
    blobs: dict[str, bytes]
    restored: list[str] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    blocked: set[str] = field(default_factory=set)  # paths left as they are: earlier changes stay too

    # --- a run of path changes --------------------------------------------------------------------

    def restore(self, run: list[Effect]) -> None:
        nets: dict[str, _Net] = {}
        for effect in run:
            net = nets.get(effect.key)
            if net is None:
                nets[effect.key] = _Net(effect.before, effect.after, mode=effect.mode)
                continue
            net.broken = net.broken or net.last != effect.before
            net.last = effect.after
            net.mode = effect.mode if net.mode is None else net.mode  # the file first there, before any create
        todo: dict[str, _Net] = {}
        for key, net in nets.items():
            if key in self.blocked or net.first == net.last:
                continue
            if net.broken and not self.force:
                path = self._path(key)
                self._skip(key, StaleVersion(f"{path!r} was changed by someone else between this session's changes"))
            elif net.first in (LINK, OTHER):
                kind = "a symlink" if net.first == LINK else "a special file"
                self._skip(
                    key,
                    NotRegularFile(
                        f"{self._path(key)!r} was {kind} before this session's change; a rewind restores files and "
                        "directories only, so it is left as it is"
                    ),
                )
            else:
                todo[key] = net
        # Files first (put back in place, or removed), then the directories that go (deepest first), then
        # the ones that come back (outermost first), then the files that come back into them.
        for key, net in todo.items():
            if is_version(net.last):
                if is_version(net.first):
                    self._put_file(key, net.first, net.last, net.mode)
                else:
                    self._remove(key, net.last)
        for key, net in sorted(todo.items(), key=lambda item: -item[0].count("/")):
            if net.last == DIR:
                self._remove(key, DIR)
        for key, net in sorted(todo.items(), key=lambda item: item[0].count("/")):
            if net.first == DIR:
                self._make_directory(key)
        for key, net in todo.items():
            if is_version(net.first) and not is_version(net.last):
                self._put_file(key, net.first, None, net.mode)

    def _put_file(self, key: str, target: State, last: str | None, mode: int | None = None) -> None:
        """Commit the bytes of version ``target`` over what the session left there (``last``; None: nothing),
        with ``mode``, the permission bits the file had when the session took it away; None (never taken
        away, or history written before modes were): a file put back in place keeps its mode, owner and
        group, one recreated is made as any new file."""
        if key in self.blocked:
            return
        data = self.blobs.get(target) if target is not None else None
        if data is None:
            self._skip(
                key,
                HistoryTrimmed(
                    f"the content {self._path(key)!r} had before this session's change is no longer kept (the history "
                    "store keeps at most max_history_bytes, and none in a store file others can read)"
                ),
            )
            return
        with self._step(key, target):
            gate = _RestoringGate(self.ctx, key, self._expected(key, last))
            self.ctx.provider.commit(self._path(key), gate, data, cancel=None, mode=mode)
            self.restored.append(self._path(key))

    def _remove(self, key: str, last: State) -> None:
        if key in self.blocked:
            return
        with self._step(key, None):
            state = self._expected(key, last) if is_version(last) else last
            self.ctx.provider.remove(self._path(key), _RestoringRemoval(self.ctx, key, state), cancel=None)
            self.restored.append(self._path(key))

    def _make_directory(self, key: str) -> None:
        if key in self.blocked:
            return
        ctx = self.ctx

        def gate(directory: FileState) -> None:
            check_configuration(ctx, directory)
            _same_path(directory, key)

        with self._step(key, DIR):
            made = ctx.provider.make_directory(self._path(key), gate)
            record_change(ctx, [Effect(directory, None, DIR) for directory in made])
            self.restored.append(self._path(key))

    # --- a move -------------------------------------------------------------------------------------

    def undo_move(self, move: Move) -> None:
        inside = None
        if move.kind == DIRECTORY:  # moved back, it would carry a path left as it is with it
            below = move.destination + "/"
            inside = min((key for key in self.blocked if key.startswith(below)), default=None)
        if inside is not None:
            self._skip(
                move.destination,
                StaleVersion(
                    f"{self._path(move.destination)!r} is not moved back to {self._path(move.source)!r}: "
                    f"{self._path(inside)!r} inside it is left as it is"
                ),
            )
        if move.source in self.blocked or move.destination in self.blocked:
            reason = StaleVersion(
                f"{self._path(move.source)!r} is not moved back from {self._path(move.destination)!r}, where this "
                "session moved it: one of them was changed by someone else since"
            )
            for key in (move.source, move.destination):
                if key not in self.blocked:
                    self._skip(key, reason)
            return
        with self._step(move.destination, None, moved_to=(move.source, move.version or move.kind)):
            version = self._expected(move.destination, move.version) if move.is_file else None
            gate = _MovingBack(self.ctx, move, version, self.force)
            self.ctx.provider.rename(
                self._path(move.destination), self._path(move.source), gate, overwrite=self.force, cancel=None
            )
            self.restored.append(self._path(move.source))
        if move.destination in self.blocked:
            self.blocked.add(move.source)  # the move stays, and so does what came before it at the source
        elif move.replaced is not None:
            self._put_file(move.destination, move.replaced, None, move.replaced_mode)

    # --- shared -------------------------------------------------------------------------------------

    def _expected(self, key: str, recorded: str | None) -> str | None:
        """The version the path must have for the operation: what the session left, or with ``force``
        whatever is there now."""
        if not self.force:
            return recorded
        _, now = self.ctx.provider.current_version(self._path(key), lambda: None)
        return now

    @contextlib.contextmanager
    def _step(self, key: str, target: State, *, moved_to: tuple[str, State] | None = None) -> Iterator[None]:
        """One operation bringing ``key`` to ``target`` (a move's: its source to hold ``moved_to``): a
        structured failure leaves the path (and its earlier changes) as it is — unless the path is at its
        target already (a rewind interrupted after its operation landed, run again)."""
        try:
            yield
        except HarnessError as exc:
            there, state = moved_to if moved_to is not None else (key, target)
            if (
                isinstance(exc, StaleVersion)
                and self._holds(key, None if moved_to else target)
                and self._holds(there, state)
            ):
                self._observe(there, state)
                self.restored.append(self._path(there))
                return
            self._skip(key, exc)

    def _holds(self, key: str, state: State) -> bool:
        """Whether ``key`` holds ``state`` now, at that very path."""
        path = self._path(key)
        try:
            found = self.ctx.provider.stat(path)
        except HarnessError as exc:
            return state is None and exc.code == "FS_NOT_FOUND"
        if found.key != key or state is None:
            return False
        if state in (DIR, DIRECTORY):
            return found.kind == DIRECTORY
        if found.kind != FILE or not is_version(state):
            return found.kind == state
        try:
            _, version = self.ctx.provider.current_version(path, lambda: None)
        except HarnessError:
            return False
        return version == state

    def _observe(self, key: str, state: State) -> None:
        observation = Present(state) if is_version(state) and state is not None else ABSENT if state is None else None
        if observation is not None:
            record_observations(self.ctx, {key: observation}, f"{self._path(key)!r} was found restored")

    def _skip(self, key: str, exc: HarnessError) -> None:
        self.blocked.add(key)
        path = self._path(key)
        if isinstance(exc, OutsideRoots) and not isinstance(exc, SymlinkOutside):
            message = "history names a path outside the workspace roots, which a rewind never touches"
        elif isinstance(exc, NotEmpty):
            count = exc.entries
            held = f"{count:,} entr{'y' if count == 1 else 'ies'}" if count else "entries"
            message = f"{path!r}, a directory this session made, is not empty ({held} left in it), so it is kept"
        elif isinstance(exc, StaleVersion):
            message = _stale_message(path, exc, self.forcing)
        else:
            message = exc.message
        self.skipped.append(Skipped(path, exc.code, message))

    def _path(self, key: str) -> str:
        """The key as the tools take it, and as messages name it: relative to the primary root, else
        (another root's) absolute — never outside the roots, which ``within_roots`` dropped."""
        primary = self.ctx.provider.real_root_paths[0]
        return key[len(primary) + 1 :] if key.startswith(primary + "/") else key


def _stale_message(path: str, exc: StaleVersion, forcing: str) -> str:
    found, lines = exc.found, exc.lines
    if found == "deleted":
        what = f"{path!r} was deleted by someone else after this session's last change to it"
    elif found == "exists":
        what = f"{exc.message} (someone else put it there after this session's change)"
    elif lines is not None:
        first, last = lines
        span = f"line {first} differs" if first == last else f"lines {first}-{last} differ"
        what = f"{path!r} was changed by someone else after this session's last change to it ({span})"
    else:
        what = exc.message
    hint = f" — {forcing}" if forcing else ""
    return f"{what}; left as it is{hint}"


def _same_path(file: FileState, key: str) -> None:
    """The path must still lead where history recorded: a directory on the way replaced by a symlink
    would make the rewind act on files the session never touched."""
    if file.key != key:
        raise StaleVersion(
            f"{file.display!r} now leads somewhere else than when this session changed it (a directory on its "
            "path was replaced, by a symlink perhaps)",
            found="moved",
        )


class _RestoringGate(SessionGate):
    """A rewind's commit: the configuration gates, the path leading where it did, and the version history
    says the file has (not the session's observation, which the rewind does not need)."""

    def __init__(self, ctx: ToolContext, key: str, expected: str | None) -> None:
        super().__init__(ctx, Intent.WRITE)
        self._key = key
        self._expected = expected

    def expect(self, file: FileState) -> str | None:
        self.display = file.display
        check_configuration(self.ctx, file)
        _same_path(file, self._key)
        if not file.exists and self._expected is not None:
            raise StaleVersion(f"{file.display!r} no longer exists", found="deleted")
        self.expected = self._expected
        return self.expected


class _RestoringRemoval(RemovalGate):
    """A rewind's removal of what the session made: a file at the version it left, or a directory it made
    that is still a directory — never whatever else is there now."""

    def __init__(self, ctx: ToolContext, key: str, state: State) -> None:
        super().__init__(ctx)
        self._key = key
        self._state = state

    def expect(self, file: FileState) -> str | None:
        self.display, self.kind = file.display, file.kind
        check_configuration(self.ctx, file)
        _same_path(file, self._key)
        wanted = DIRECTORY if self._state == DIR else FILE
        if file.kind != wanted:
            now = "a directory" if file.kind == DIRECTORY else f"a {file.kind}" if file.kind else "something else"
            was = "the directory this session made" if wanted == DIRECTORY else "the file this session left"
            raise StaleVersion(f"{file.display!r} is no longer {was}: it is {now} now", found="replaced")
        self.expected = self._state if wanted == FILE else None
        return self.expected


class _MovingBack(MovingGate):
    """A rewind's move back: the configuration gates, both paths leading where they did, the entry at the
    destination of the kind (and a file at the version) history recorded, and nothing at the original
    path (unless forced over a file there)."""

    def __init__(self, ctx: ToolContext, move: Move, version: str | None, force: bool) -> None:
        super().__init__(ctx)
        self._move = move
        self._version = version
        self._force = force

    def expect_source(self, file: FileState) -> str | None:
        check_configuration(self.ctx, file)
        _same_path(file, self._move.destination)
        if not file.exists:
            raise StaleVersion(f"{file.display!r} no longer exists", found="deleted")
        if file.kind != self._move.kind or (file.kind == DIRECTORY and not self._same_directory(file)):
            now = f"a {file.kind}" if file.kind != self._move.kind else "another directory"
            raise StaleVersion(
                f"{file.display!r} is no longer the {self._move.kind} this session moved there: it is {now} now",
                found="replaced",
            )
        self.version = self._version if file.kind == FILE else None
        return self.version

    def _same_directory(self, file: FileState) -> bool:
        """Whether the directory there is the one the session moved (its device and inode; a move recorded
        before identities were is taken as it is)."""
        if not self._move.identity:
            return True
        try:
            return self.ctx.provider.stat(file.key).identity == self._move.identity
        except HarnessError:
            return False

    def expect_destination(self, file: FileState) -> str | None:
        check_configuration(self.ctx, file)
        _same_path(file, self._move.source)
        if not file.exists:
            return None
        if not self._force or file.kind != FILE:
            raise StaleVersion(f"{file.display!r} exists again", found="exists")
        self.replaced = True
        _, self.replaced_version = self.ctx.provider.current_version(file.key, lambda: None)
        return self.replaced_version
