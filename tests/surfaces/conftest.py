"""Fixtures of the surface tests: the workspace an adapter's offline agent loop edits."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fs_tools import Workspace
from tests.support.frameworks import APP


@pytest.fixture
def ws(root: Path) -> Iterator[Workspace]:
    """``app.py`` (``APP``) in a workspace that offers ``read`` and ``edit``."""
    (root / "app.py").write_text(APP)
    with Workspace(root, tools=["read", "edit"]) as workspace:
        yield workspace
