"""The pytest kit for harness authors (entry point ``pytest11``): fixtures and helpers to test how an
agent loop recovers from concurrent edits, deterministically.

Fixtures (prefixed ``fst_`` so they never clash with pyfakefs's ``fs``):

- ``fst_root`` — a real temporary directory to use as a workspace root;
- ``fst_workspace`` — a ``Workspace`` on it, closed after the test;
- ``fst_workspace_options`` — the ``Workspace`` keyword options of ``fst_workspace`` (``{}``; override it
  in a conftest, or set them for one test with ``@pytest.mark.fs_tools(read_only=True, ...)``);
- ``fst_make_workspace`` — a factory: ``fst_make_workspace("app", "lib", protected=[...])`` makes a
  workspace on fresh temporary roots, closed after the test;
- ``fst_session`` — a session of that workspace;
- ``fst_writer`` — a ``ConcurrentWriter``: changes a file "from outside" at a chosen moment, and fails
  the test at teardown if an arranged change never happened;
- ``fst_fake_root``, ``fst_fake_workspace``, ``fst_fake_session``, ``fst_fake_writer`` — the same on an
  in-memory filesystem (pyfakefs's ``fs``; the root is ``/workspace``), for fast gate tests.

Helpers: ``assert_ok(result)``, ``assert_error(result, "FS_STALE_VERSION")``; ``ConcurrentWriter`` is a
context manager too (``with ConcurrentWriter(workspace) as writer:``).

This module imports nothing heavy at import time: pytest loads it in every run of every project that has
fs-tools installed.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol

import pytest

if TYPE_CHECKING:
    from fs_tools.result import ToolResult
    from fs_tools.workspace import Session, Workspace

Change = bytes | str | Callable[[Path], None]

MARKER = "fs_tools"
_CALL_OUTCOME = pytest.StashKey[str]()  # "passed", "failed" or "skipped": the test body's own outcome


def assert_ok(result: ToolResult) -> ToolResult:
    """Fail with the model-facing message unless the call succeeded."""
    assert not result.is_error, f"expected success, got {result.error.code if result.error else ''}: {result.text}"
    return result


def assert_error(result: ToolResult, code: str) -> ToolResult:
    """Fail unless the call failed with ``code``; returns the result for further checks."""
    assert result.error is not None, f"expected {code}, got success: {result.text[:300]}"
    assert result.error.code == code, f"expected {code}, got {result.error.code}: {result.text}"
    return result


@dataclass(frozen=True)
class Arrangement:
    """One change a ``ConcurrentWriter`` will make, and the moment it waits for."""

    moment: str  # "after_read", "before_commit" or "on_operation"
    path: str  # as the test wrote it: what ``fired`` and the failure messages show
    key: str  # the canonical absolute path the provider works on
    change: Change
    operation: int = 0  # the provider operation ``on_operation`` waits for

    def label(self) -> str:
        """How ``fired`` names the moment: ``after read``, ``before commit``, ``on operation 2``."""
        return f"on operation {self.operation}" if self.moment == "on_operation" else self.moment.replace("_", " ")

    def never_happened(self, operations: int) -> str:
        """Why the arrangement did not fire, for the test's failure message."""
        if self.moment == "after_read":
            return f"after_read of {self.path!r} never happened: nothing read {self.path!r} after it was arranged"
        if self.moment == "before_commit":
            return (
                f"before_commit of {self.path!r} never happened: no write or edit of {self.path!r} reached "
                "its commit after it was arranged"
            )
        return (
            f"on_operation({self.operation}, {self.path!r}) never happened: the workspace ran {operations} "
            "read(s) and commit(s)"
        )


class ConcurrentWriter:
    """Changes files of a workspace "from outside" at a chosen moment of the workspace's own work.

    - ``after_read(path, change)``: right after the next read of ``path`` has recorded its version;
    - ``before_commit(path, change)``: between the version check of the next write/edit of ``path``
      and its commit (the commit's final re-check then sees the change);
    - ``on_operation(n, path, change)``: when the provider starts its n-th read or commit (1-based).

    ``change`` is the new content (bytes or str), or a function given the file's absolute path (to
    delete it, append to it, replace it with an editor-style atomic save, …). Each arrangement fires
    once (two for the same moment and file fire on successive occurrences); ``fired`` lists what fired,
    in order, by the path as the test wrote it (``"after read: a.txt"``).

    It listens to the workspace's provider from construction on (``Provider.listen``). ``close()`` stops
    listening; as a context manager the writer closes on exit and then fails the test (``pytest.fail``)
    if an arrangement never fired — unless the body raised: that exception propagates unchanged, with a
    note naming what never fired.
    """

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self.fired: list[str] = []
        self._pending: list[Arrangement] = []
        self._operations = 0
        self._closed = False
        self._stop = workspace.provider.listen(self)  # the provider's public seam for its moments

    def __enter__(self) -> ConcurrentWriter:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        __tracebackhide__ = True
        self.close()
        if exc is None:
            self.assert_all_fired()
        else:
            for reason in self.unfired():
                exc.add_note(f"ConcurrentWriter: {reason}")

    # -- arranging -----------------------------------------------------------------------------------

    def after_read(self, path: str, change: Change) -> None:
        """Change ``path`` right after the next read of it has recorded its version."""
        self._arrange("after_read", path, change)

    def before_commit(self, path: str, change: Change) -> None:
        """Change ``path`` between the version check of its next write or edit and the commit."""
        self._arrange("before_commit", path, change)

    def on_operation(self, n: int, path: str, change: Change) -> None:
        """Change ``path`` when the provider starts its ``n``-th read or commit (1-based)."""
        self._arrange("on_operation", path, change, operation=n)

    def unfired(self) -> list[str]:
        """Why each arrangement that has not fired yet did not, in the order they were arranged."""
        return [arranged.never_happened(self._operations) for arranged in self._pending]

    def assert_all_fired(self) -> None:
        """Fail the test if an arrangement never fired: it tests nothing, so the test is wrong."""
        __tracebackhide__ = True
        reasons = self.unfired()
        if reasons:
            fired = ", ".join(self.fired) or "nothing"
            pytest.fail("\n".join([*reasons, f"(what fired: {fired})"]))

    def close(self) -> None:
        """Stop listening (idempotent); arrangements that did not fire stay in ``unfired()``."""
        if self._closed:
            return
        self._closed = True
        self._stop()

    # -- the provider's moments (``ProviderListener``) -------------------------------------------------

    def operation_started(self, key: str) -> None:
        self._count()

    def read_recorded(self, key: str) -> None:
        self._fire(self._take("after_read", key))

    def version_checked(self, key: str) -> None:
        self._fire(self._take("before_commit", key))

    def _count(self) -> None:
        self._operations += 1
        self._fire(self._take("on_operation", operation=self._operations))

    # -- helpers -------------------------------------------------------------------------------------

    def _arrange(self, moment: str, path: str, change: Change, *, operation: int = 0) -> None:
        if self._closed:
            raise RuntimeError(f"{moment}({path!r}) on a closed ConcurrentWriter: it could never fire")
        self._pending.append(Arrangement(moment, path, self._key(path), change, operation))

    def _take(self, moment: str, key: str = "", *, operation: int = 0) -> Arrangement | None:
        """The first pending arrangement for this moment (of this file, or of this operation), removed."""
        if self._closed:
            return None
        for arranged in self._pending:
            if arranged.moment == moment and (arranged.key == key if key else arranged.operation == operation):
                self._pending.remove(arranged)
                return arranged
        return None

    def _key(self, path: str) -> str:
        return self.workspace.provider.key_of(path)

    def _fire(self, arranged: Arrangement | None) -> None:
        if arranged is None:
            return
        target, change = Path(arranged.key), arranged.change
        if callable(change):
            change(target)
        elif isinstance(change, bytes):
            target.write_bytes(change)
        else:
            target.write_text(change, encoding="utf-8")
        self.fired.append(f"{arranged.label()}: {arranged.path}")


class WorkspaceFactory(Protocol):
    """The type of ``fst_make_workspace``."""

    def __call__(self, *roots: str, **options: Any) -> Workspace: ...


# -- plugin hooks ---------------------------------------------------------------------------------------


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(**options): Workspace keyword options for fst_workspace and fst_fake_workspace "
        "(read_only=True, protected=[...], max_file_bytes=..., ...); they update fst_workspace_options",
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    """Remember the test body's outcome, so a writer's teardown does not pile an error on a failure."""
    report = yield
    if report.when == "call":
        item.stash[_CALL_OUTCOME] = report.outcome
    return report


# -- workspaces -----------------------------------------------------------------------------------------


def _options_for(request: pytest.FixtureRequest, defaults: dict[str, Any]) -> dict[str, Any]:
    """``defaults`` updated by the ``fs_tools`` markers, the closest one (the test's own) last."""
    options = dict(defaults)
    for marker in reversed(list(request.node.iter_markers(MARKER))):
        if marker.args:
            raise TypeError(f"@pytest.mark.{MARKER} takes Workspace keyword options only, got {marker.args!r}")
        options.update(marker.kwargs)
    return options


def _workspace_on(root: Path, options: dict[str, Any]) -> Iterator[Workspace]:
    from fs_tools.workspace import Workspace

    with Workspace(root, **options) as workspace:
        yield workspace


def _writer_on(workspace: Workspace, request: pytest.FixtureRequest) -> Iterator[ConcurrentWriter]:
    __tracebackhide__ = True
    writer = ConcurrentWriter(workspace)
    yield writer
    writer.close()
    if request.node.stash.get(_CALL_OUTCOME, None) == "passed":
        writer.assert_all_fired()


@pytest.fixture
def fst_root(tmp_path: Path) -> Path:
    """A real, empty temporary directory (``tmp_path / "workspace"``): the root of ``fst_workspace``."""
    root = tmp_path / "workspace"
    root.mkdir()
    return root


@pytest.fixture
def fst_workspace_options() -> dict[str, Any]:
    """The ``Workspace`` keyword options of ``fst_workspace`` and ``fst_fake_workspace``: none. Override
    this fixture (in a conftest, module or class) to change them for many tests; a test's
    ``@pytest.mark.fs_tools(**options)`` updates them for that test."""
    return {}


@pytest.fixture
def fst_workspace(
    request: pytest.FixtureRequest, fst_root: Path, fst_workspace_options: dict[str, Any]
) -> Iterator[Workspace]:
    """A ``Workspace`` on ``fst_root``, with ``fst_workspace_options`` and the test's ``fs_tools`` marker;
    closed after the test."""
    yield from _workspace_on(fst_root, _options_for(request, fst_workspace_options))


@pytest.fixture
def fst_make_workspace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WorkspaceFactory]:
    """A factory: ``fst_make_workspace(*root_names, **options)`` makes a ``Workspace`` on fresh, empty
    temporary roots (one named ``workspace`` by default; ``ws.roots`` lists them), with ``Workspace``'s
    keyword options; every workspace it made is closed after the test."""
    made: list[Workspace] = []

    def make(*roots: str, **options: Any) -> Workspace:
        from fs_tools.workspace import Workspace

        parent = tmp_path_factory.mktemp("fst-workspace")
        paths = [parent / name for name in roots or ("workspace",)]
        for path in paths:
            path.mkdir(parents=True)
        made.append(Workspace(paths, **options))
        return made[-1]

    yield make
    for workspace in reversed(made):
        workspace.close()


@pytest.fixture
def fst_session(fst_workspace: Workspace) -> Session:
    """The session ``"fst-session"`` of ``fst_workspace``."""
    return fst_workspace.session("fst-session")


@pytest.fixture
def fst_writer(request: pytest.FixtureRequest, fst_workspace: Workspace) -> Iterator[ConcurrentWriter]:
    """A ``ConcurrentWriter`` on ``fst_workspace``; at teardown it fails a passing test whose arranged
    change never happened."""
    yield from _writer_on(fst_workspace, request)


# -- the pyfakefs-backed variants ----------------------------------------------------------------------

FAKE_ROOT = Path("/workspace")


@pytest.fixture
def fst_fake_root(request: pytest.FixtureRequest) -> Iterator[Path]:
    """``/workspace`` on pyfakefs's in-memory filesystem. A workspace built on it by hand needs a provider
    on the portable primitives (``Workspace(FileProvider(root, primitives=Primitives.portable()))``):
    pyfakefs emulates neither the ``/proc`` reopen nor ``renameat2`` through ``ctypes``."""
    try:
        import pyfakefs  # noqa: F401
    except ImportError:  # pragma: no cover - the test extra installs it
        pytest.fail("fst_fake_* fixtures need pyfakefs: pip install pyfakefs (or agent-fs-tools[test])")
    fake = request.getfixturevalue("fs")
    fake.pause()  # import on the real filesystem: an editable install's importer reads the real disk
    try:
        import fs_tools.workspace  # noqa: F401
    finally:
        fake.resume()
    fake.create_dir(FAKE_ROOT)
    yield FAKE_ROOT


@pytest.fixture
def fst_fake_workspace(
    request: pytest.FixtureRequest, fst_fake_root: Path, fst_workspace_options: dict[str, Any]
) -> Iterator[Workspace]:
    """A ``Workspace`` on ``fst_fake_root`` (in memory), with the same options as ``fst_workspace``;
    closed after the test."""
    from fs_tools.provider import FileProvider, Primitives
    from fs_tools.workspace import Workspace

    options = _options_for(request, fst_workspace_options)
    limits = {name: options.pop(name) for name in _PROVIDER_OPTIONS if name in options}
    provider = FileProvider([fst_fake_root], primitives=Primitives.portable(), **limits)
    try:
        workspace = Workspace(provider, **options)
    except BaseException:
        provider.close()
        raise
    with workspace:
        yield workspace


_PROVIDER_OPTIONS = ("max_file_bytes", "max_read_bytes", "lock_timeout")  # a provider's own limits


@pytest.fixture
def fst_fake_session(fst_fake_workspace: Workspace) -> Session:
    """The session ``"fst-session"`` of ``fst_fake_workspace``."""
    return fst_fake_workspace.session("fst-session")


@pytest.fixture
def fst_fake_writer(request: pytest.FixtureRequest, fst_fake_workspace: Workspace) -> Iterator[ConcurrentWriter]:
    """A ``ConcurrentWriter`` on ``fst_fake_workspace``, checked at teardown like ``fst_writer``."""
    yield from _writer_on(fst_fake_workspace, request)
