from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fs_tools import Session, Workspace


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
