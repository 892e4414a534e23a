"""Where fs-tools keeps a user's state between processes: the user's state directory (XDG), never inside a
workspace root. Standard library only: the command's start-up imports it."""

from __future__ import annotations

import os
from pathlib import Path


def state_directory() -> Path:
    """``$XDG_STATE_HOME/fs-tools``, or ``~/.local/state/fs-tools`` (the XDG spec: a relative
    ``XDG_STATE_HOME`` is invalid and ignored)."""
    base = os.environ.get("XDG_STATE_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "fs-tools"
