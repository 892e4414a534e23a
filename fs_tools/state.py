"""Where fs-tools keeps a user's state between processes: the user's state directory (XDG), never inside a
workspace root. Standard library only, and ``os.path`` alone: the hook command's first step (the relay)
imports it before anything else."""

from __future__ import annotations

import os

TYPE_CHECKING = False  # not typing's: see fs_tools.hooks.relay
if TYPE_CHECKING:
    from pathlib import Path


def state_path() -> str:
    """``$XDG_STATE_HOME/fs-tools``, or ``~/.local/state/fs-tools`` (the XDG spec: a relative
    ``XDG_STATE_HOME`` is invalid and ignored)."""
    base = os.environ.get("XDG_STATE_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "fs-tools")


def state_directory() -> Path:
    """``state_path()`` as a ``Path``."""
    from pathlib import Path

    return Path(state_path())
