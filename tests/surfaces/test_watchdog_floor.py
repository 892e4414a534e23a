"""fs-tools installs beside watchdog 6 (Google ADK pins it), but watching needs 7.1, the first release
that reports a kernel queue overflow: with an older watchdog, Workspace(watch=True) is a host error
naming what is needed — never a watcher that could miss a change."""

from __future__ import annotations

from pathlib import Path

import pytest

from fs_tools import Workspace
from fs_tools.watcher import WATCHDOG_NEEDED, watchdog_version


def test_watch_is_refused_below_watchdog_7_1_and_works_from_it(root: Path) -> None:
    (root / "f.txt").write_text("x\n")
    if watchdog_version() < WATCHDOG_NEEDED:
        with pytest.raises(ValueError, match=r"watch=True\) needs watchdog 7\.1 or later.*installed: 6\."):
            Workspace(root, watch=True)
        with Workspace(root) as unwatched:  # everything else works with watchdog 6
            assert unwatched.session("s").call("read", {"file_path": "f.txt"}).error is None
        return
    with Workspace(root, watch=True) as watched:
        session = watched.session("s")
        assert session.call("read", {"file_path": "f.txt"}).error is None
        assert session.changed() == []
