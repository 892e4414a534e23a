"""A framework a test needs: imported, or the test skips where it is not installed — except where .ci/run
built an environment for it and names it in $REQUIRE_FRAMEWORKS (comma-separated modules): there a missing
framework fails instead of skipping."""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Any

import pytest


def framework(module: str) -> Any:
    if module in os.environ.get("REQUIRE_FRAMEWORKS", "").split(","):
        return importlib.import_module(module)
    return pytest.importorskip(module)


# One offline agent loop per framework (tests/surfaces/test_adapter*.py): the model's first call is malformed
# (a wrong type and an invented key: our validator must answer, not the framework's), its edit before a read
# is refused by our gate, and after a read the edit lands.
APP = "def greet(name):\n    return 'hi ' + name\n"
BAD = {"file_path": 5, "x": 1}
READ = {"file_path": "app.py"}
EDIT = {"file_path": "app.py", "old_string": "'hi '", "new_string": "'hello '"}
OURS = "ERROR INVALID_ARGS: invalid arguments: /file_path: expected string, got number; /x: unknown property"
EDITED = APP.replace("'hi '", "'hello '")


def edited(root: Path) -> bool:
    """The loop's edit landed on disk."""
    return (root / "app.py").read_text() == EDITED


# Keys a model may invent that are Python parameter names of a tool's own methods (``self``) or of a framework's
# wrapper around them (DSPy's callbacks take ``instance``): they must reach our validator like any other key.
PARAMETER_NAMES = {"file_path": "app.py", "self": 1, "instance": 1}
PARAMETER_NAMES_REFUSED = "ERROR INVALID_ARGS: invalid arguments: /self: unknown property; expected one of: file_path"
