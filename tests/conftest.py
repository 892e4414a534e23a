from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from fs_tools import Session, Workspace
from tests.support.redis_server import RedisServer


@pytest.fixture(autouse=True)
def _no_settings_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The suite's servers and commands run with the settings each test gives, never the FS_TOOLS_*
    variables of whoever runs the tests (FS_TOOLS_READ_ONLY=1 would fail every write)."""
    for name in [
        name
        for name in os.environ
        if name.startswith("FS_TOOLS_") and name not in ("FS_TOOLS_INSPECTOR_DIR", "FS_TOOLS_HARNESS_DIR")
    ]:
        monkeypatch.delenv(name)
    # Hook commands answer their events themselves, so no test leaves a hook server behind it; the hook
    # server's own tests (tests/surfaces/test_hook_server.py) turn it on and stop what they started.
    monkeypatch.setenv("FS_TOOLS_HOOK_SERVER", "0")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A real workspace root, with a sibling ``outside`` directory holding a secret."""
    ws_root = tmp_path / "root"
    ws_root.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("TOP-SECRET\n")
    return ws_root


@pytest.fixture
def workspace(root: Path) -> Iterator[Workspace]:
    with Workspace(root) as ws:
        yield ws


@pytest.fixture
def session(workspace: Workspace) -> Session:
    return workspace.session("test")


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A real redis-server on a free loopback port for a module's tests (skipped, or failed under
    REQUIRE_REDIS, where none is installed)."""
    running = RedisServer(tmp_path_factory.mktemp("redis"))
    running.start()
    yield running
    running.stop()
