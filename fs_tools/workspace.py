"""``Workspace`` and ``Session``: the public entry points, and the dispatch of one call through
validation, the tool body and the error boundary."""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import functools
import itertools
import logging
import os
import re
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, cast

from pydantic import ValidationError

from fs_tools import abilities, adoption
from fs_tools.arguments import FilePath, ToolArgs, validate_arguments
from fs_tools.boundary import internal, remediate
from fs_tools.errors import (
    HarnessError,
    InvalidToolOutput,
    MissingPath,
    NotFound,
    ToolAbortedBeforeDispatch,
    UnknownTool,
)
from fs_tools.gating import Checked
from fs_tools.history import DEFAULT_HISTORY_BYTES, HistoryEntry, HistoryStore, RewindReport
from fs_tools.history.rewind import rewind
from fs_tools.matching.paths import similar_paths
from fs_tools.options import Options
from fs_tools.provider import (
    DEFAULT_IMAGE_BYTES,
    DEFAULT_IMAGE_PIXELS,
    DEFAULT_LOCK_SECONDS,
    CancelToken,
    FileProvider,
    Provider,
)
from fs_tools.result import ToolResult
from fs_tools.stores import Store, as_store, open_store
from fs_tools.terms import speaking
from fs_tools.tools import ALL_TOOLS, ReadMemory, Tool, ToolContext, checkpoints
from fs_tools.tools.dialects import DIALECTS, Dialect
from policy import ObservationStore, ProtectedPaths

if TYPE_CHECKING:
    from fs_tools.watcher import Change, Watcher

DEFAULT_MAX_FILE_BYTES = 16 << 20
_PATH_ARGUMENTS = ("file_path", "path", "source", "dir_path")  # the argument a missing-path error is about
CLOSE_WAIT_SECONDS = 30.0

log = logging.getLogger("fs_tools.workspace")


class _InFlight:
    """The calls running on a workspace, so ``close`` can stop and wait for them; refuses new calls
    once closing. ``closing`` doubles as every call's cancel token: a call in flight stops at its next
    safe point (before any commit)."""

    def __init__(self) -> None:
        self.closing = threading.Event()
        self._idle = threading.Condition()
        self._active = 0
        self._mine = threading.local()  # calls of this thread (a call that closes its own workspace)

    @contextlib.contextmanager
    def enter(self) -> Iterator[bool]:
        """Yields False (and counts nothing) when the workspace is closing or closed."""
        with self._idle:
            if self.closing.is_set():
                admitted = False
            else:
                admitted = True
                self._active += 1
        if admitted:
            self._mine.count = getattr(self._mine, "count", 0) + 1
        try:
            yield admitted
        finally:
            if admitted:
                self._mine.count -= 1
                with self._idle:
                    self._active -= 1
                    self._idle.notify_all()

    def close(self, timeout: float) -> bool:
        """Refuse new calls, cancel those in flight, wait for them (but for the calls of the thread
        that closes, which cannot end while it waits); False if some were still running."""
        mine = getattr(self._mine, "count", 0)
        with self._idle:
            self.closing.set()
            return self._idle.wait_for(lambda: self._active <= mine, timeout) and mine == 0


class _EitherCancel:
    """Set when the caller's token or the workspace's closing event is set."""

    def __init__(self, caller: CancelToken | None, closing: threading.Event) -> None:
        self._caller = caller
        self._closing = closing

    def is_set(self) -> bool:
        return self._closing.is_set() or (self._caller is not None and self._caller.is_set())


class Workspace:
    """One or more roots (the first is primary) and everything needed to serve tools confined to them.

    Keyword options: ``read_only`` refuses every write and edit; ``protected`` lists gitignore-style
    patterns no write or edit may touch; ``max_file_bytes`` bounds what is read or written;
    ``store`` is an ``ObservationStore``, the path of a SQLite file that keeps observations across
    processes (outside every root, where no model can overwrite it; ``sqlite:///absolute/path`` too),
    or a ``redis://`` URL that shares them (and history) across processes and hosts (SPEC §17; any other
    ``scheme://`` is refused;
    ``workspace_id`` names the workspace in its keys, by default the primary root's canonical path, and
    ``key_prefix`` keeps deployments apart; see ``RedisStore``); in-memory by default; ``search_seconds``
    is the time budget of glob and grep, measured on ``clock`` (``time.monotonic``; a simulation may give
    its own); ``watch`` starts one
    watchdog observer for all roots, so ``session.changed()`` re-hashes only what it reported;
    ``lock_timeout`` bounds how long a call waits for a lock another writer holds (then ``FS_BUSY``);
    ``max_read_bytes`` is the largest file ``read`` scans (it pages, but hashes the whole file; by default
    1 GiB, or ``max_file_bytes`` if that is larger); ``tools`` names the tools to offer (all by default);
    ``prefix`` is put before every tool name the model sees and calls (``"fs_"`` publishes ``fs_read``);
    ``brief_rereads`` (on by default) answers a re-read of the same lines of a file the session already
    read at the same version with a short note instead of the same text again (off with a Redis store,
    where the session may have read it elsewhere since); ``check_placeholders`` (on
    by default) refuses new text that would replace code with an omission placeholder (``# ... rest of
    code unchanged``) with ``FS_OMISSION_PLACEHOLDER``; ``check_syntax`` (on by default) reports in a
    write's or an edit's result the syntax errors the change introduced (tree-sitter grammars, files up to
    256 KB), and ``refuse_syntax_errors`` refuses such a change with ``FS_SYNTAX_ERROR`` instead;
    ``stale="region"`` lets an edit through when the file changed since the session's read but not in
    the lines the edit covers (the result names the lines that did change), where the default,
    ``"strict"``, refuses any change since the read; ``dialect`` offers one model family's own tools
    (``"claude-code"``, ``"anthropic"``, ``"codex"``, ``"gemini"``; SPEC §14) on the same gates, and
    ``tools`` then names that dialect's tools (``"apply_patch"`` and the history tools ``"checkpoint"``,
    ``"history"``, ``"diff"`` and ``"rewind"`` are offered in the default dialect only when named);
    ``max_history_bytes`` bounds the session history the store keeps (SPEC §16; 64 MiB by default, 0
    keeps none; see ``Session.checkpoint``, ``history``, ``diff`` and ``rewind``); ``durable=False``
    skips the fsyncs of every change to the files (the temp file's and the directory's; a SQLite store
    keeps its own): writes stay atomic and gated, but a machine crash may lose a change that was
    reported done (for scratch workspaces, CI and benchmarks against tools that never fsync);
    ``max_image_pixels`` (1568, the long side) and ``max_image_bytes`` (5 MiB) bound the image a ``read``
    of a PNG, JPEG, GIF or WebP file shows (scaled down to fit; SPEC §18); ``max_pdf_pages`` (20) is how
    many pages a ``read`` of a PDF without ``pages`` shows.

    ``roots`` may also be a provider (``FileProvider(roots, primitives=Primitives.portable())``, or any
    implementation of the ``Provider`` protocol): the workspace serves through it and closes it when it
    closes (if the constructor raises, the provider is still the caller's to close); its limits
    (``max_file_bytes``, ``max_read_bytes``, ``lock_timeout``, ``durable``) are then the provider's.

    A read-only workspace lists no mutating tool; a call to one is still answered by its read-only gate
    (``FS_SANDBOX_DENIED``), while a tool left out of ``tools`` is ``UNKNOWN_TOOL``.
    """

    def __init__(
        self,
        roots: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | Provider,
        *,
        read_only: bool = False,
        protected: Iterable[str] = (),
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
        store: ObservationStore | str | os.PathLike[str] | None = None,
        search_seconds: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
        watch: bool = False,
        lock_timeout: float = DEFAULT_LOCK_SECONDS,
        max_read_bytes: int | None = None,
        tools: Iterable[str] | None = None,
        prefix: str = "",
        brief_rereads: bool = True,
        check_placeholders: bool = True,
        check_syntax: bool = True,
        refuse_syntax_errors: bool = False,
        stale: str = "strict",
        dialect: str = "fs-tools",
        max_history_bytes: int | None = None,
        durable: bool = True,
        workspace_id: str | None = None,
        key_prefix: str | None = None,
        max_image_pixels: int = DEFAULT_IMAGE_PIXELS,
        max_image_bytes: int = DEFAULT_IMAGE_BYTES,
        max_pdf_pages: int = 20,
    ) -> None:
        if not isinstance(durable, bool):
            raise ValueError(f"Workspace(durable=...) must be True or False, got {durable!r}")
        given: Provider | None = roots if isinstance(roots, Provider) else None
        if given is not None and (max_file_bytes, max_read_bytes, lock_timeout, durable) != (
            DEFAULT_MAX_FILE_BYTES,
            None,
            DEFAULT_LOCK_SECONDS,
            True,
        ):
            raise ValueError(
                "Workspace(provider, ...): max_file_bytes, max_read_bytes, lock_timeout and durable are the "
                "provider's; set them where the provider is made"
            )
        self._in_flight = _InFlight()
        self._closing = threading.Lock()
        self._torn_down = False
        self.options = Options(
            read_only=read_only,
            protected=ProtectedPaths(protected),
            search_seconds=search_seconds,
            clock=clock,
            check_placeholders=check_placeholders,
            check_syntax=check_syntax,
            refuse_syntax_errors=refuse_syntax_errors,
            stale=stale,
            max_image_pixels=max_image_pixels,
            max_image_bytes=max_image_bytes,
            max_pdf_pages=max_pdf_pages,
        )
        self._reads = ReadMemory() if brief_rereads else None
        budget = _history_budget(max_history_bytes)
        self._call_prefix = os.urandom(4).hex()  # call ids stay apart across processes sharing a store
        self._calls = itertools.count(1)
        self.dialect = _dialect(dialect)
        self.prefix = _checked_prefix(prefix, self.dialect)
        chosen = [dataclasses.replace(tool, name=prefix + tool.name) for tool in _selected_tools(tools, self.dialect)]
        # What is listed, and what is withheld only because the workspace is read-only: a call to a
        # withheld tool still reaches its read-only gate, so the model learns why, not that it is unknown.
        self.tools: dict[str, Tool[Any]] = {t.name: t for t in chosen if t.read_only or not read_only}
        self._withheld: dict[str, Tool[Any]] = {t.name: t for t in chosen if t.name not in self.tools}
        # What a remedy may suggest: the abilities of the tools on offer, each to how the model calls it.
        self._abilities = _abilities_of(self.tools.values())
        # A notebook is read as its cells where its cells can be changed; elsewhere as the JSON an edit changes
        self._cells = abilities.CHANGE_CELLS in _abilities_of(chosen)
        if not self.tools:
            known = self.dialect.tools + self.dialect.extras
            mutating = ", ".join(tool.name for tool in known if not tool.read_only)
            why = f" (a read-only workspace offers none of {mutating})" if chosen else ""
            offered = [tool.name for tool in known if tool.read_only or not read_only]
            if not offered:
                raise ValueError(
                    f"the {self.dialect.name} dialect has no tool a read-only workspace can offer ({mutating} "
                    "changes files); use another dialect, or leave read_only off"
                )
            raise ValueError(
                f"Workspace(tools=...) leaves no tool to offer{why}; name at least one of {', '.join(offered)}"
            )
        # Checked in order of cost, and whatever was opened is closed again if a later option is bad:
        # a host that retries with a fixed option leaks no descriptor or connection.
        root_names = given.real_root_paths if given is not None else _root_list(cast(_Roots, roots))
        if store is None or isinstance(store, str | os.PathLike):
            self.store: Store = open_store(
                store, root_names, max_history_bytes=budget, workspace_id=workspace_id, key_prefix=key_prefix
            )
        elif workspace_id is not None or key_prefix is not None:
            named = "workspace_id" if workspace_id is not None else "key_prefix"
            raise ValueError(
                f"Workspace({named}=...) names the keys of a shared store: give store='redis://…' with it "
                "(a RedisStore made by the host takes it in its own constructor)"
            )
        else:
            self.store = as_store(store, root_names, max_history_bytes=budget)
        opened = self.store if store is None or isinstance(store, str | os.PathLike) else None
        if self.store.shared:
            # the session may have read the file through another process since, so "unchanged since
            # your last read" could be false here; each re-read shows the text
            self._reads = None
        self.history: HistoryStore = self.store.history
        if max_history_bytes is not None:
            self.history.max_bytes = budget
        try:
            if given is not None:
                self.provider: Provider = given
            else:
                self.provider = FileProvider(
                    _root_list(cast(_Roots, roots)),
                    max_file_bytes=max_file_bytes,
                    max_read_bytes=max_read_bytes,
                    lock_timeout=lock_timeout,
                    durable=durable,
                )
            try:
                self.store.bind(self.provider.real_root_paths)  # a shared store forms its keys from them
            except BaseException:
                if given is None:
                    self.provider.close()
                raise
        except BaseException:
            if opened is not None:
                opened.close()
            raise
        try:
            self.watcher: Watcher | None = None
            if watch:  # watchdog is imported only by a workspace that watches
                from fs_tools.watcher import Watcher

                self.watcher = Watcher(self.provider, self.store)
        except BaseException:
            if given is None:  # a provider the caller gave stays the caller's until the workspace exists
                self.provider.close()
            if opened is not None:
                opened.close()
            raise

    @property
    def roots(self) -> list[Path]:
        return [Path(root) for root in self.provider.root_paths]

    def session(self, key: str) -> Session:
        """The session named ``key``: the same key always sees the same observations."""
        return Session(self, key)

    def tool_schemas(self) -> list[dict[str, Any]]:
        """``{"name", "description", "input_schema"}`` for every tool."""
        return [tool.schema() for tool in self.tools.values()]

    @property
    def closed(self) -> bool:
        return self._in_flight.closing.is_set()

    def close(self) -> None:
        """Refuse new calls, stop the calls in flight at their next safe point and wait for them, then
        release the roots, the watcher and the store. Idempotent, and safe from any thread (a watcher
        callback or a tool call of this workspace included: what is still in use then stays open)."""
        with self._closing:
            if self._torn_down:
                return
            self._torn_down = True
            settled = self._in_flight.close(CLOSE_WAIT_SECONDS)
            watcher, self.watcher = self.watcher, None
            if watcher is not None and not watcher.close():
                if watcher.is_current_thread() and settled:
                    # closed from a watcher callback: finish once the callback has returned
                    threading.Thread(target=self._release_after, args=(watcher,), daemon=True).start()
                    return
                settled = False
            if settled:
                self._release()
            else:  # still in use: closing the root descriptors could let a call act on a reused number
                log.error("workspace closed while still in use; its root descriptors are left open")

    @property
    def read_only(self) -> bool:
        return self.options.read_only

    @property
    def protected(self) -> ProtectedPaths:
        return self.options.protected

    def _release_after(self, watcher: Watcher) -> None:
        if watcher.close():
            self._release()
        else:
            log.error("the watcher did not stop; the workspace's root descriptors are left open")

    def _release(self) -> None:
        try:
            self.provider.close()
        finally:
            self.store.close()

    @contextlib.contextmanager
    def _open_for(self, what: str) -> Iterator[None]:
        """For host-side calls other than tools: a one-line error once the workspace is closed."""
        with self._in_flight.enter() as admitted:
            if not admitted:
                raise RuntimeError(f"{what} on a closed Workspace")
            yield

    def __enter__(self) -> Workspace:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def dispatch(
        self,
        session: str,
        name: object,
        arguments: object,
        cancel: CancelToken | None = None,
        *,
        check_only: bool = False,
    ) -> ToolResult:
        """Run one call; never raises for anything a caller can send. ``check_only``: see ``Session.check``."""
        tool_name = name if isinstance(name, str) else repr(name)
        with self._in_flight.enter() as admitted:
            if not admitted:
                return ToolResult.failure(
                    ToolAbortedBeforeDispatch(f"the call to {tool_name!r} was refused: the workspace is closed")
                )
            either = _EitherCancel(cancel, self._in_flight.closing)
            return self._dispatch(session, tool_name, name, arguments, either, check_only)

    def _dispatch(
        self, session: str, tool_name: str, name: object, arguments: object, cancel: CancelToken, check_only: bool
    ) -> ToolResult:
        known = self.tools.get(name) or self._withheld.get(name) if isinstance(name, str) else None
        # its messages use its argument names, unless the host names them otherwise for this call
        with speaking(known.terms if known is not None else None, beneath=True):
            return self._run(session, tool_name, name, arguments, cancel, check_only)

    def _run(
        self, session: str, tool_name: str, name: object, arguments: object, cancel: CancelToken, check_only: bool
    ) -> ToolResult:
        args: object = None
        try:
            if cancel.is_set():
                raise ToolAbortedBeforeDispatch(f"the call to {tool_name!r} was cancelled before it started")
            tool = self._tool(name)
            if check_only and not tool.checkable:
                raise RuntimeError(f"{tool.name!r} cannot be checked without being run")
            args = validate_arguments(tool.arguments, arguments)
            context = self._context(session, tool_name, cancel)
            context.check_only = check_only
            try:
                output = tool.run(context, args)
            except Checked:
                passed = f"{tool.name}: every gate passed; nothing was written (a check)"
                return ToolResult.success(passed, {"checked": True})
            try:
                tool.output.model_validate(output.value)  # strict, extra="forbid": the value is exactly the schema's
                value = output.value
            except ValidationError as exc:
                raise InvalidToolOutput(
                    f"tool {tool.name!r} produced output that does not match its schema "
                    f"({exc.error_count()} problem(s)); this is a bug in the tool, not in your call"
                ) from exc
            return ToolResult.success(output.text, value, output.media)
        except NotFound as exc:
            return ToolResult.failure(remediate(self._with_suggestions(exc, args), self._abilities))
        except HarnessError as exc:
            return ToolResult.failure(remediate(exc, self._abilities))
        except Exception as exc:
            return ToolResult.failure(internal(exc, tool_name))

    def _context(self, session: str, tool: str, cancel: CancelToken | None) -> ToolContext:
        return ToolContext(
            provider=self.provider,
            store=self.store,
            session=session,
            options=self.options,
            cancel=cancel,
            reads=self._reads,
            explain=self._explain,
            history=self.history,
            tool=tool,
            call=f"{self._call_prefix}-{next(self._calls)}",
            cells=self._cells,
        )

    def _with_suggestions(self, exc: NotFound, args: object) -> NotFound:
        """A missing path's error with the closest existing paths (``did_you_mean``) in its details."""
        if not isinstance(exc, MissingPath) or exc.did_you_mean:
            return exc
        path = next(
            (getattr(args, name) for name in _PATH_ARGUMENTS if isinstance(getattr(args, name, None), str)), None
        )
        if path is None:
            return exc
        try:
            found = similar_paths(self.provider, path)
        except HarnessError:  # a suggestion is a courtesy: the error stands without it
            return exc
        if not found:
            return exc
        exc.suggest(found)
        return exc

    def _explain(self, exc: HarnessError) -> str:
        """The message the model would get for ``exc`` as a call's result: for an error a tool shows inline."""
        return remediate(exc, self._abilities).message

    def _tool(self, name: object) -> Tool[Any]:
        if isinstance(name, str):
            found = self.tools.get(name) or self._withheld.get(name)
            if found is not None:
                return found
        names = list(self.tools)
        guess = difflib.get_close_matches(name, names, n=1, cutoff=0.5) if isinstance(name, str) else []
        hint = f'; did you mean "{guess[0]}"?' if guess else "."
        shown = name if isinstance(name, str) else repr(name)
        raise UnknownTool(f"unknown tool {shown!r}{hint} Available tools: {', '.join(names)}")


_TOOL_NAME_CHARACTERS = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
MAX_TOOL_NAME = 64  # OpenAI's and Gemini's limit on a function name


_Roots = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]


def _root_list(roots: _Roots) -> list[str | os.PathLike[str]]:
    """The roots as given, one or several (what is wrong with them is the provider's to say)."""
    if isinstance(roots, str | os.PathLike):
        return [roots]
    return list(roots) if isinstance(roots, Iterable) else []


def _history_budget(value: object) -> int:
    if value is None:
        return DEFAULT_HISTORY_BYTES
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"Workspace(max_history_bytes=...) must be a whole number of bytes, 0 or more; got {value!r}")
    return value


def _dialect(name: object) -> Dialect:
    if not isinstance(name, str) or name not in DIALECTS:
        raise ValueError(f"Workspace(dialect=...): unknown dialect {name!r}; valid names: {', '.join(DIALECTS)}")
    return DIALECTS[name]


def _abilities_of(tools: Iterable[Tool[Any]]) -> dict[str, str]:
    """What ``tools`` (as offered, prefixed names and all) let the model do, each ability to how the
    model calls the first tool that has it ("fs_list", "Write", "str_replace_based_edit_tool with
    command create"); a dialect's tool has the abilities of the fs-tools tools whose part it plays."""
    found: dict[str, str] = {}
    for tool in tools:
        if tool.stands_for:
            plays = [(ability, how) for part, how in tool.stands_for.items() for ability in _ABILITIES_OF.get(part, ())]
        else:
            plays = [(ability, "{name}") for ability in tool.abilities]
        for ability, how in plays:
            found.setdefault(ability, how.format(name=tool.name))
    return found


_ABILITIES_OF = {tool.name: tool.abilities for tool in ALL_TOOLS}  # the fs-tools tools'


def _selected_tools(names: Iterable[str] | None, dialect: Dialect) -> list[Tool[Any]]:
    """The tools ``Workspace(tools=...)`` names among the dialect's, in the dialect's order (its
    extras only when named); a host error for a bad name."""
    if names is None:
        return list(dialect.tools)
    if isinstance(names, str):
        raise ValueError(f"Workspace(tools=...) takes a list of tool names, not the string {names!r}")
    wanted = list(names)
    every = dialect.tools + dialect.extras
    known = [tool.name for tool in every]
    unknown = [name for name in wanted if name not in known]
    if unknown:
        where = f" of the {dialect.name} dialect" if dialect.name != "fs-tools" else ""
        raise ValueError(f"Workspace(tools=...): unknown tool {unknown[0]!r}{where}; valid names: {', '.join(known)}")
    return [tool for tool in every if tool.name in wanted]


def _checked_prefix(prefix: str, dialect: Dialect) -> str:
    """A prefix every model API accepts in a function name: a letter or ``_`` first, then letters, digits,
    ``_`` or ``-``, leaving the longest prefixed name within 64 characters."""
    if not isinstance(prefix, str):
        raise ValueError(f"Workspace(prefix=...) must be a string, not {prefix!r}")
    if prefix and not _TOOL_NAME_CHARACTERS.fullmatch(prefix):
        raise ValueError(
            f"Workspace(prefix={prefix!r}): use letters, digits, '_' and '-', starting with a letter or '_'"
        )
    longest = max(len(tool.name) for tool in dialect.tools + dialect.extras)
    if len(prefix) + longest > MAX_TOOL_NAME:
        raise ValueError(f"Workspace(prefix={prefix!r}) is too long: tool names must stay within {MAX_TOOL_NAME}")
    return prefix


def keep_contents_in_store(workspace: Workspace) -> None:
    """Let the provider find contents an earlier process read, through the workspace's SQLite store, so
    a stale error says which lines changed and an adopted change can be rewound (``fs-tools call`` and the
    hooks run one process per call; a server's provider remembers them in memory)."""
    contents = workspace.store.contents
    if contents is not None and isinstance(workspace.provider, FileProvider):
        workspace.provider.keep_contents_in(contents)


class Session:
    """A conversation's view of a workspace: its own observations, the same tools."""

    def __init__(self, workspace: Workspace, key: str) -> None:
        self.workspace = workspace
        self.key = key

    def call(
        self, name: str, arguments: Mapping[str, Any] | str | None = None, *, cancel: CancelToken | None = None
    ) -> ToolResult:
        """Call a tool with a mapping or a JSON string of arguments. Never raises for bad input."""
        return self.workspace.dispatch(self.key, name, arguments, cancel)

    def check(self, name: str, arguments: Mapping[str, Any] | str | None = None) -> ToolResult:
        """What ``call`` would answer, without changing anything: every gate of the change runs (roots,
        read-only, protected paths, read-before-write, staleness), and an edit's or a patch's targets are
        found and replaced in memory, so a target that is missing or not unique gets the same diagnosis.
        A success (``value == {"checked": True}``) means the change would pass its gates now. For the tools
        that change files by writing them (write, edit, multi_edit, notebook_edit, apply_patch and their
        dialects' forms); a ``ValueError`` for any other. Never raises for bad arguments."""
        tool = self.workspace.tools.get(name) or self.workspace._withheld.get(name)
        if tool is not None and not tool.checkable:
            raise ValueError(f"Session.check: {name!r} is not a tool whose change can be checked without making it")
        return self.workspace.dispatch(self.key, name, arguments, check_only=True)

    def observe(self, path: str, *, shown: tuple[int, str] | None = None, missing_only: bool = False) -> str | None:
        """Record that this session has seen ``path`` as it is now, as a read would (for a read made by
        other tools: a harness's own, SPEC §19); the version recorded, None for a file that is absent.
        ``shown`` — the first line number and the text that read showed — is checked against the file
        now: if it changed in between, the session saw an older version, and that is what is recorded (its
        next change is refused as stale; None returned). ``missing_only`` (a read
        that failed) records only a missing file, as absent. A path outside the roots, or one no read may
        open, raises its ``HarnessError``."""
        validate_arguments(_ForgetArgs, {"file_path": path})
        with self.workspace._open_for("session.observe()"):
            return adoption.observe(self._context("observe"), path, shown, missing_only=missing_only)

    def adopt(self, path: str, *, tool: str = "adopt") -> str | None:
        """Take the change another tool just made to ``path`` (a harness's ``Edit``) as this session's
        own: the file as it is now is what the session observed, and the change from the version it had
        observed enters its history under ``tool``, so ``diff`` and ``rewind`` cover it. The version now,
        None when the change removed the file. A path outside the roots raises its ``HarnessError``."""
        validate_arguments(_ForgetArgs, {"file_path": path})
        with self.workspace._open_for("session.adopt()"):
            return adoption.adopt(self._context(tool), path)

    async def acall(self, name: str, arguments: Mapping[str, Any] | str | None = None) -> ToolResult:
        """The async twin of ``call``: runs in a worker thread.

        If the awaiting task is cancelled, the call is told to stop at its next safe point (before any
        commit), the worker is awaited so nothing runs on behind the caller's back, and the
        cancellation propagates.
        """
        import asyncio  # imported by async callers only: ~28 ms of every import of the library

        cancel = threading.Event()
        worker = asyncio.ensure_future(asyncio.to_thread(self.call, name, arguments, cancel=cancel))
        try:
            return await asyncio.shield(worker)
        except asyncio.CancelledError:
            cancel.set()
            await asyncio.wait([worker])
            raise

    def changed(self) -> list[Change]:
        """The files this session observed whose content (or existence) differs from what it saw.

        With ``watch=True`` only paths the observer reported are re-hashed; without it, every observed
        file is. A hint for the harness: the commit's version check stays the authority."""
        with self.workspace._open_for("session.changed()"):
            watcher = self.workspace.watcher
            if watcher is not None:
                return watcher.changes(self.key)
            store = self.workspace.store
            # the observation as recorded under each file's lock: the session's own commit finishing
            # meanwhile is not a change
            from fs_tools.watcher import changes_among

            return changes_among(
                self.workspace.provider, store.observed(self.key), None, functools.partial(store.get, self.key)
            )

    def on_change(self, callback: Callable[[Change], None]) -> Callable[[], None]:
        """Be told (on the watcher's thread) of each real change to a file this session observed; needs
        ``Workspace(..., watch=True)``. Returns the function that unsubscribes."""
        watcher = self.workspace.watcher
        if watcher is None:
            raise RuntimeError("on_change needs a workspace created with watch=True")
        return watcher.subscribe(self.key, callback)

    async def watch_changes(self) -> AsyncIterator[Change]:
        """Changes to this session's observed files as an async iterator (the watcher's thread hands
        each one to this event loop); needs ``Workspace(..., watch=True)``. Stops when the caller stops
        iterating."""
        import asyncio

        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[Change] = asyncio.Queue()

        def hand_over(change: Change) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, change)

        unsubscribe = self.on_change(hand_over)
        try:
            while True:
                yield await queue.get()
        finally:
            unsubscribe()

    # --- history (SPEC §16) ----------------------------------------------------------------------------

    def checkpoint(self, label: str | None = None) -> str:
        """A mark of this point in the session's history, for ``diff(since=)`` and ``rewind``: a plain
        string, valid in a new Workspace on the same store."""
        if label is not None and not isinstance(label, str):
            raise ValueError(f"checkpoint(label=...) must be a string or None, not {label!r}")
        if label is not None and (len(label) > MAX_LABEL or not _is_unicode(label)):
            raise ValueError(f"checkpoint(label=...) must be Unicode text of at most {MAX_LABEL:,} characters")
        with self.workspace._open_for("session.checkpoint()"):
            return checkpoints.checkpoint(self._context("checkpoint"), label)

    def history(self) -> list[HistoryEntry]:
        """The session's marks and changes, oldest first; each entry's ``mark`` is the point to rewind to
        (a change's: just before it)."""
        with self.workspace._open_for("session.history()"):
            return checkpoints.listing(self._context("history"))

    def diff(self, since: str | None = None) -> str:
        """A unified diff (``patch -p1`` applies it) of what this session changed since the mark ``since``
        (None: since its first recorded change); a one-line ``ValueError`` for an unknown mark."""
        with self.workspace._open_for("session.diff()"):
            return checkpoints.diff(self._context("diff"), since)

    def rewind(self, mark: str, *, force: bool = False) -> RewindReport:
        """Restore every path this session changed since ``mark``, atomically per file; a path someone
        else changed since the session's last change to it is left as it is (``FS_STALE_VERSION`` in
        ``.skipped``) unless ``force``. A one-line ``ValueError`` for an unknown mark; ``.code`` is
        ``HISTORY_TRIMMED`` (and nothing is touched) when history no longer reaches it."""
        if not isinstance(force, bool):
            raise ValueError(f"rewind(force=...) must be True or False, not {force!r}")
        with self.workspace._open_for("session.rewind()"):
            return rewind(self._context("rewind"), mark, force=force, forcing="a forced rewind restores it anyway")

    def _context(self, tool: str) -> ToolContext:
        return self.workspace._context(self.key, tool, None)

    def forget(self, path: str | None = None) -> None:
        """Drop this session's observation of ``path`` (as the tools take it), or all of them."""
        reads = self.workspace._reads
        if path is None:
            self.workspace.store.forget(self.key)
            if reads is not None:
                reads.forget(self.key)
            return
        validate_arguments(_ForgetArgs, {"file_path": path})  # a ToolArgsError names what is wrong
        with self.workspace._open_for("session.forget()"):
            key = self.workspace.provider.key_of(path)
            self.workspace.store.forget(self.key, key)
            if reads is not None:
                reads.forget(self.key, key)


MAX_LABEL = 1_000


def _is_unicode(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate
        return False
    return True


class _ForgetArgs(ToolArgs):
    file_path: FilePath
