"""The vocabulary of a session's history: what one committed change did to each path, the entries a
store keeps, the marks a host rewinds to, and the protocol every history store implements."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import xxhash

from fs_tools.errors import StoreUnavailable

DEFAULT_HISTORY_BYTES = 64 << 20

# What a path holds, as far as history is concerned: None (nothing), a regular file by its version (the
# hex xxh3_128 of its bytes), or one of these kinds (never a version: a version is 32 hex digits).
State = str | None
DIR = "directory"
LINK = "symlink"
OTHER = "special file"


def is_version(state: State) -> bool:
    return state is not None and state not in (DIR, LINK, OTHER)


@dataclass(frozen=True)
class Effect:
    """One path went from ``before`` to ``after`` (a write, an edit, a create, a delete, a directory
    made or removed)."""

    key: str
    before: State
    after: State
    # The permission bits of the file this step took away (a delete), so a rewind recreates it with
    # them: a 0600 secret must not come back world-readable. None where nothing was taken away, or in a
    # row written before modes were recorded (then it comes back as a new file is made).
    mode: int | None = None


@dataclass(frozen=True)
class Move:
    """An entry moved from ``source`` to ``destination``: a regular file at ``version``, or a directory
    or a symlink whole; ``replaced`` is the version of a file it replaced at the destination."""

    source: str
    destination: str
    kind: str  # the provider's kind: FILE, DIRECTORY or SYMLINK
    version: str | None = None
    replaced: str | None = None
    identity: str = ""  # a directory's device and inode: the rewind moves back that directory only
    replaced_mode: int | None = None  # the permission bits of the file it replaced (see Effect.mode)

    @property
    def is_file(self) -> bool:
        return self.version is not None


Step = Effect | Move


@dataclass(frozen=True)
class Entry:
    """One recorded entry of a session: a mark (``label``, no steps) or a change (``tool`` and steps)."""

    seq: int
    session: str
    time: float
    tool: str | None = None
    call: str | None = None
    label: str | None = None
    steps: tuple[Step, ...] = ()

    @property
    def is_mark(self) -> bool:
        return self.tool is None

    def paths(self) -> list[str]:
        keys: list[str] = []
        for step in self.steps:
            keys.extend((step.key,) if isinstance(step, Effect) else (step.source, step.destination))
        return list(dict.fromkeys(keys))

    def versions(self) -> set[str]:
        return versions_of(self.steps)


def versions_of(steps: Sequence[Step]) -> set[str]:
    """Every file version the steps name: the bytes a diff or a rewind may need."""
    found: set[str] = set()
    for step in steps:
        for state in (step.before, step.after) if isinstance(step, Effect) else (step.version, step.replaced):
            if state is not None and is_version(state):
                found.add(state)
    return found


def encode_steps(steps: Sequence[Step]) -> list[list[object]]:
    """Steps as stores keep them: a list per step, a mode last where one was recorded (rows without it,
    as older versions wrote them, still load)."""
    rows: list[list[object]] = []
    for step in steps:
        if isinstance(step, Effect):
            row: list[object] = ["e", step.key, step.before, step.after]
            mode = step.mode
        else:
            row = ["m", step.source, step.destination, step.kind, step.version, step.replaced, step.identity]
            mode = step.replaced_mode
        rows.append(row if mode is None else [*row, mode])
    return rows


def decode_steps(rows: object) -> tuple[Step, ...]:
    """Steps as a store keeps them (``encode_steps``), checked field by field: a ``ValueError`` saying
    what is wrong with a row fs-tools did not write (a wrong type, a wrong length, a list where a path
    belongs — and so no nesting deeper than the format's own two levels)."""
    if not isinstance(rows, list):
        raise ValueError(f"its steps are {_kind(rows)}, not a list")
    steps: list[Step] = []
    for number, row in enumerate(rows, 1):
        # shorter rows were written before modes (and a move's identity) were recorded
        if isinstance(row, list) and len(row) in (4, 5) and row[0] == "e":
            mode = _mode(row[4]) if len(row) == 5 else None
            steps.append(Effect(_text(row[1], "a path"), _state(row[2]), _state(row[3]), mode))
        elif isinstance(row, list) and len(row) in (6, 7, 8) and row[0] == "m":
            identity = _text(row[6], "an identity") if len(row) >= 7 else ""
            source, destination = _text(row[1], "a path"), _text(row[2], "a path")
            kind, replaced_mode = _text(row[3], "a kind"), _mode(row[7]) if len(row) == 8 else None
            steps.append(Move(source, destination, kind, _state(row[4]), _state(row[5]), identity, replaced_mode))
        else:
            raise ValueError(
                f"its step {number} is not a step fs-tools writes (['e', path, before, after] or ['m', …])"
            )
    return tuple(steps)


def _mode(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 0o7777:
        raise ValueError(f"a mode is {value!r:.40}, not permission bits")
    return value


def _state(value: object) -> State:
    return None if value is None else _text(value, "a state")


def _text(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{what} is {_kind(value)}, not a string")
    if "\x00" in value:  # no name or version fs-tools writes holds one; the OS would refuse it later
        raise ValueError(f"{what} holds a NUL character")
    return value


def _kind(value: object) -> str:
    """The JSON type of a value, as a message names it."""
    if value is None:
        return "null"
    names = {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "a list", dict: "an object"}
    return names.get(type(value), type(value).__name__)


# The latest time a history row may carry: the start of year 9999 (UTC), which datetime can still show
# in every time zone (up to +14 hours; the end of 9999 is year 10000 east of UTC). A time a clock never
# gives (NaN, an infinity, past it) is a row written by something else.
LATEST_TIME = 253_370_764_800.0


def load_json(text: object) -> object:
    """A stored row's JSON, parsed: a ``ValueError`` for text that is not JSON or is nested deeper than
    the parser goes (its RecursionError stops at the interpreter's recursion limit, bounded work)."""
    if not isinstance(text, str | bytes):
        raise ValueError(f"it is {_kind(text)}, not JSON text")
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("it is nested deeper than any row fs-tools writes") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"it is not JSON ({type(exc).__name__})") from None
    except ValueError:  # a number of thousands of digits: Python's message would advise its own setting
        raise ValueError("it holds a number longer than any fs-tools writes") from None


def load_entry(seq: int, session: str, at: object, tool: object, call: object, label: object, steps: object) -> Entry:
    """An entry from a store's row, every field checked (``steps`` as parsed JSON); a ``ValueError``
    saying what is wrong with a row fs-tools did not write."""
    if not isinstance(at, int | float) or isinstance(at, bool) or not 0 <= at <= LATEST_TIME:  # NaN fails too
        raise ValueError(f"its time is {at!r:.40}, not a time a clock gives")
    for name, value in (("tool", tool), ("call", call), ("label", label)):
        if value is not None and not isinstance(value, str):
            raise ValueError(f"its {name} is {_kind(value)}, not a string")
    return Entry(seq, session, float(at), _optional(tool), _optional(call), _optional(label), decode_steps(steps))


def _optional(value: object) -> str | None:
    return value if isinstance(value, str) else None


def stored_count(value: object, what: str) -> int:
    """A position a store keeps (its newest seq, a session's newest trimmed one), as an int;
    anything else was written by something else: the damaged-row error, never an INTERNAL_ERROR."""
    if isinstance(value, bytes | str) and value.isascii() and value.isdigit() and len(value) <= 18:
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    raise StoreUnavailable(
        f"the history store's {what} is damaged ({value!r:.40} is not a count); history, diff and rewind need "
        "a store fs-tools wrote"
    )


def damaged(seq: object, exc: ValueError) -> StoreUnavailable:
    """A row written by something else: history, diff and rewind refuse the whole history (a write
    only logs it), saying which entry and what is wrong with it, in one line."""
    return StoreUnavailable(
        f"the history store's entry {seq} is damaged ({exc}); history, diff and rewind need a store fs-tools wrote"
    )


def entry_size(steps: Sequence[Step], label: str | None) -> int:
    """What an entry costs the budget besides its bytes: a fixed part and its paths."""
    paths = sum(
        len(step.key) if isinstance(step, Effect) else len(step.source) + len(step.destination) for step in steps
    )
    # about what an entry holds in memory, its strings included (tracemalloc: ~510 B of objects for one
    # step, plus ~270 B for a 60-character path and two versions)
    return 480 + 160 * len(steps) + 2 * paths + len(label or "")


# --- marks ----------------------------------------------------------------------------------------------

_MARK = re.compile(r"m([0-9]{1,18})-([0-9a-f]{8})")


def _owner(session: str, store: str) -> str:
    """Eight hex digits of the session and the store: a mark of another session or store is refused."""
    return xxhash.xxh3_64_hexdigest(f"{store}\0{session}".encode("utf-8", "surrogatepass"))[:8]


def make_mark(session: str, position: int, store: str) -> str:
    """The mark of a point in ``session``'s history in the store named ``store`` (its ``identity``):
    after the store's entry ``position``."""
    return f"m{position}-{_owner(session, store)}"


def parse_mark(session: str, mark: object, latest: int, store: str) -> int:
    """The position a mark names; a one-line ``ValueError`` for anything that is not a mark of this
    session in this store."""
    if not isinstance(mark, str):
        shown = repr(mark)[:60]
        raise ValueError(f"a mark is a string such as 'm12-1a2b3c4d' (from checkpoint() or history()), not {shown}")
    shown = repr(mark) if len(mark) <= 40 else repr(mark[:40]) + "…"  # a message stays short
    found = _MARK.fullmatch(mark.strip())
    if found is None:
        raise ValueError(f"unknown mark {shown}: marks look like 'm12-1a2b3c4d' (from checkpoint() or history())")
    if found.group(2) != _owner(session, store):
        raise ValueError(f"unknown mark {shown}: it is not a mark of session {session!r} in this history store")
    position = int(found.group(1))
    if position > latest:
        raise ValueError(f"unknown mark {shown}: this history store has no such point (its latest is m{latest})")
    return position


# --- what the public API returns ----------------------------------------------------------------------


@dataclass(frozen=True)
class HistoryEntry:
    """One line of ``session.history()``: a mark (``kind == "mark"``, with its ``label``) or a change
    (``kind == "change"``, with its ``tool`` and root-relative ``paths``). ``mark`` is the point to rewind
    to: the mark itself, or the point just before the change."""

    kind: str
    mark: str
    time: float
    label: str | None = None
    tool: str | None = None
    paths: tuple[str, ...] = ()


@dataclass(frozen=True)
class Skipped:
    """A path a rewind left as it is, and why (a stable code and a message naming what was found)."""

    path: str
    code: str
    message: str


@dataclass
class RewindReport:
    """What ``session.rewind`` did: the paths restored, the ones left as they are; ``code`` is set when
    nothing was touched at all (``HISTORY_TRIMMED``: history no longer reaches the mark)."""

    restored: list[str] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    code: str | None = None
    message: str = ""

    @property
    def is_error(self) -> bool:
        return self.code is not None or bool(self.skipped)


# --- the store ----------------------------------------------------------------------------------------


class HistoryStore(Protocol):
    """Where a workspace keeps its sessions' history: entries in time order (``seq`` grows, never
    reused) and the bytes they name, within ``max_bytes`` (the oldest entries dropped first);
    ``identity`` tells it from every other store (marks carry it)."""

    max_bytes: int

    @property
    def identity(self) -> str: ...

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
        """Record one entry and the bytes of the versions it names (those not kept already); its seq."""
        ...

    def entries(self, session: str, after: int = 0) -> list[Entry]:
        """The session's entries with seq above ``after``, oldest first."""
        ...

    def blob(self, version: str) -> bytes | None:
        """The bytes of ``version``, if kept."""
        ...

    def trimmed_through(self, session: str) -> int:
        """The seq of the session's newest entry dropped for the budget (0: none)."""
        ...

    def recent(self, after: int, limit: int) -> list[Entry]:
        """Every session's entries with seq above ``after``, the newest ``limit`` of them, oldest first
        (who changed a file last: a stale error's cause)."""
        ...

    def latest(self) -> int:
        """The seq of the newest entry of any session (0: none yet)."""
        ...
