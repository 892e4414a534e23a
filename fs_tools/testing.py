"""The pytest kit for harness authors (entry point ``pytest11``): fixtures and helpers to test how an
agent loop recovers from concurrent edits, deterministically.

Fixtures (prefixed ``fst_`` so they never clash with pyfakefs's ``fs``):

- ``fst_root`` — a real temporary directory to use as a workspace root;
- ``fst_workspace`` — a ``Workspace`` on it, closed after the test;
- ``fst_session`` — a session of that workspace;
- ``fst_writer`` — a ``ConcurrentWriter``: changes a file "from outside" at a chosen moment;
- ``fst_fake_root``, ``fst_fake_workspace``, ``fst_fake_session``, ``fst_fake_writer`` — the same on an
  in-memory filesystem (pyfakefs's ``fs``; the root is ``/workspace``), for fast gate tests.

Helpers: ``assert_ok(result)``, ``assert_error(result, "FS_STALE_VERSION")``.

This module imports nothing heavy at import time: pytest loads it in every run of every project that has
fs-tools installed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from fs_tools.provider.resolve import Resolved
    from fs_tools.result import ToolResult
    from fs_tools.workspace import Session, Workspace

Change = bytes | str | Callable[[Path], None]


def assert_ok(result: ToolResult) -> ToolResult:
    """Fail with the model-facing message unless the call succeeded."""
    assert not result.is_error, f"expected success, got {result.error.code if result.error else ''}: {result.text}"
    return result


def assert_error(result: ToolResult, code: str) -> ToolResult:
    """Fail unless the call failed with ``code``; returns the result for further checks."""
    assert result.error is not None, f"expected {code}, got success: {result.text[:300]}"
    assert result.error.code == code, f"expected {code}, got {result.error.code}: {result.text}"
    return result


class ConcurrentWriter:
    """Changes files of a workspace "from outside" at a chosen moment of the workspace's own work.

    - ``after_read(path, change)``: right after the next read of ``path`` has recorded its version;
    - ``before_commit(path, change)``: between the version check of the next write/edit of ``path``
      and its commit (the commit's final re-check then sees the change);
    - ``on_operation(n, path, change)``: when the provider starts its n-th read or commit (1-based).

    ``change`` is the new content (bytes or str), or a function given the file's absolute path (to
    delete it, append to it, replace it with an editor-style atomic save, …). Each arrangement fires
    once; ``fired`` lists what fired, in order.
    """

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self.fired: list[str] = []
        self._after_read: dict[str, Change] = {}
        self._before_commit: dict[str, Change] = {}
        self._on_operation: dict[int, tuple[str, Change]] = {}
        self._operations = 0
        provider = workspace.provider
        self._originals: dict[str, Callable[..., Any]] = {
            "scan": provider.scan,
            "commit": provider.commit,
            "_check_expected": provider._check_expected,
        }
        # instance attributes shadow the methods for this workspace only; close() removes them
        provider.scan = self._scan  # type: ignore[method-assign]
        provider.commit = self._commit  # type: ignore[method-assign]
        provider._check_expected = self._check_expected  # type: ignore[method-assign,assignment]

    # -- arranging -----------------------------------------------------------------------------------

    def after_read(self, path: str, change: Change) -> None:
        self._after_read[self._key(path)] = change

    def before_commit(self, path: str, change: Change) -> None:
        self._before_commit[self._key(path)] = change

    def on_operation(self, n: int, path: str, change: Change) -> None:
        self._on_operation[n] = (path, change)

    def close(self) -> None:
        provider = self.workspace.provider
        for name in self._originals:
            provider.__dict__.pop(name, None)

    # -- hooks ---------------------------------------------------------------------------------------

    def _scan(self, target: Resolved, display: str, *args: Any, **kwargs: Any) -> Any:
        self._count()
        found = self._originals["scan"](target, display, *args, **kwargs)
        change = self._after_read.pop(target.key, None)
        if change is not None:
            self._apply(target.key, change, "after read")
        return found

    def _commit(self, target: Resolved, data: bytes, **kwargs: Any) -> Any:
        self._count()
        return self._originals["commit"](target, data, **kwargs)

    def _check_expected(self, target: Resolved, *args: Any) -> Any:
        checked = self._originals["_check_expected"](target, *args)
        change = self._before_commit.pop(target.key, None)
        if change is not None:
            self._apply(target.key, change, "before commit")
        return checked

    def _count(self) -> None:
        self._operations += 1
        arranged = self._on_operation.pop(self._operations, None)
        if arranged is not None:
            path, change = arranged
            self._apply(self._key(path), change, f"on operation {self._operations}")

    # -- helpers -------------------------------------------------------------------------------------

    def _key(self, path: str) -> str:
        with self.workspace.provider.resolve(path) as target:
            return target.key

    def _apply(self, key: str, change: Change, moment: str) -> None:
        target = Path(key)
        if callable(change):
            change(target)
        elif isinstance(change, bytes):
            target.write_bytes(change)
        else:
            target.write_text(change, encoding="utf-8")
        self.fired.append(f"{moment}: {key}")


@pytest.fixture
def fst_root(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    root.mkdir()
    return root


def _workspace_on(root: Path) -> Iterator[Workspace]:
    from fs_tools.workspace import Workspace

    with Workspace(root) as workspace:
        yield workspace


def _writer_on(workspace: Workspace) -> Iterator[ConcurrentWriter]:
    writer = ConcurrentWriter(workspace)
    yield writer
    writer.close()


@pytest.fixture
def fst_workspace(fst_root: Path) -> Iterator[Workspace]:
    yield from _workspace_on(fst_root)


@pytest.fixture
def fst_session(fst_workspace: Workspace) -> Session:
    return fst_workspace.session("fst-session")


@pytest.fixture
def fst_writer(fst_workspace: Workspace) -> Iterator[ConcurrentWriter]:
    yield from _writer_on(fst_workspace)


# -- the pyfakefs-backed variants ----------------------------------------------------------------------

FAKE_ROOT = Path("/workspace")


@pytest.fixture
def fst_fake_root(request: pytest.FixtureRequest) -> Iterator[Path]:
    """``/workspace`` on pyfakefs's in-memory filesystem, with the provider on its portable primitives
    (no ``/proc`` reopen, no ``renameat2`` through ``ctypes``: pyfakefs emulates neither)."""
    try:
        import pyfakefs  # noqa: F401
    except ImportError:  # pragma: no cover - the test extra installs it
        pytest.fail("fst_fake_* fixtures need pyfakefs: pip install pyfakefs (or fs-tools[test])")
    fake = request.getfixturevalue("fs")
    fake.pause()  # import on the real filesystem: an editable install's importer reads the real disk
    try:
        import fs_tools.workspace  # noqa: F401
        from fs_tools.provider.primitives import portable_primitives
    finally:
        fake.resume()
    fake.create_dir(FAKE_ROOT)
    with portable_primitives():
        yield FAKE_ROOT


@pytest.fixture
def fst_fake_workspace(fst_fake_root: Path) -> Iterator[Workspace]:
    yield from _workspace_on(fst_fake_root)


@pytest.fixture
def fst_fake_session(fst_fake_workspace: Workspace) -> Session:
    return fst_fake_workspace.session("fst-session")


@pytest.fixture
def fst_fake_writer(fst_fake_workspace: Workspace) -> Iterator[ConcurrentWriter]:
    yield from _writer_on(fst_fake_workspace)
