"""What every history store must answer, for the tests of each store."""

from __future__ import annotations

from typing import Any


def recent_entries_of_every_session(history: Any) -> None:
    """What each history store's ``recent`` answers: every session's newest entries, oldest first."""
    from fs_tools.history.model import Effect

    for n, who in enumerate(["a", "b", "a", "c\udc80"]):
        history.append(who, tool="edit", call=str(n), label=None, steps=[Effect(f"/k{n}", None, None)], blobs={})
    latest = history.latest()
    recent = history.recent(latest - 4, 3)
    assert [(e.session, e.call) for e in recent] == [("b", "1"), ("a", "2"), ("c\udc80", "3")]
    assert history.recent(latest, 10) == [] and history.recent(0, 0) == []
