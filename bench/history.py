"""Section 8: what history costs (SPEC §16) — the time recording adds to a change, the bytes the store
keeps per recorded change, and a rewind of 1,000 changes against the time it took to make them. Every
figure from this run.

    python -m bench --sections history
"""

from __future__ import annotations

import itertools
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.harness import Row, interleaved, ratio_row
from fs_tools import Session, Workspace

SECTION = "8 history"


def _editing(session: Session, name: str) -> Callable[[], object]:
    """A call that changes one line of ``name`` (read first), a different line each time."""
    counter = itertools.count()
    assert not session.call("read", {"file_path": name}).is_error

    def edit() -> object:
        number = next(counter)
        result = session.call(
            "edit", {"file_path": name, "old_string": f"line {number}\n", "new_string": f"LINE {number}\n"}
        )
        assert not result.is_error, result.text
        return result

    return edit


def _text(lines: int) -> str:
    return "".join(f"line {number}\n" for number in range(lines))


def recording_rows(smoke: bool) -> list[Row]:
    """An edit with history against the same edit with no history store at all (what the tool costs
    without recording), for the in-memory store and the SQLite store."""
    rows: list[Row] = []
    rounds = 5 if smoke else 200
    for size_lines, label in ((60, "1 KB"), (6_000, "100 KB")):
        for store_kind in ("memory", "sqlite"):
            with tempfile.TemporaryDirectory(prefix="fs-tools-bench-") as tmp:
                root = Path(tmp) / "root"
                root.mkdir()
                cases: dict[str, Callable[[], object]] = {}
                workspaces = []
                for name in ("history", "no history"):
                    path = f"{name.replace(' ', '-')}.txt"
                    (root / path).write_text(_text(size_lines + rounds + 10))
                    store = str(Path(tmp) / f"{path}.db") if store_kind == "sqlite" else None
                    ws = Workspace(root, store=store)
                    if name == "no history":
                        ws.history = None  # type: ignore[assignment]  # the recording seam, switched off
                    workspaces.append(ws)
                    cases[name] = _editing(ws.session("bench"), path)
                medians = interleaved(cases, rounds)
                for ws in workspaces:
                    ws.close()
            rows.append(
                ratio_row(
                    SECTION,
                    f"edit {label}, {store_kind} store: with history ÷ without",
                    medians,
                    "history",
                    "no history",
                    note="recording the change and the replaced bytes",
                )
            )
    return rows


def store_cost_rows(smoke: bool) -> list[Row]:
    """Bytes kept per recorded edit of a 10 KB file, against the file's size: the store keeps each
    version once (the after of one change is the before of the next)."""
    changes = 20 if smoke else 500
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="fs-tools-bench-") as tmp:
        root = Path(tmp) / "root"
        root.mkdir()
        (root / "file.txt").write_text(_text(1_000 + changes))
        size = (root / "file.txt").stat().st_size
        for store_kind in ("memory", "sqlite"):
            store = str(Path(tmp) / "state.db") if store_kind == "sqlite" else None
            with Workspace(root, store=store) as ws:
                edit = _editing(ws.session(f"bench-{store_kind}"), "file.txt")
                before = ws.history.kept_bytes  # type: ignore[attr-defined]
                disk_before = _disk(store)
                for _ in range(changes):
                    edit()
                kept = (ws.history.kept_bytes - before) / changes  # type: ignore[attr-defined]
                disk = (_disk(store) - disk_before) / changes if store else None
            (root / "file.txt").write_text(_text(1_000 + changes))
            note = f"{kept:,.0f} B kept per change of a {size:,} B file"
            if disk is not None:
                note += f"; the SQLite file grows {disk:,.0f} B per change"
            rows.append(
                Row(
                    SECTION,
                    f"bytes kept per recorded edit, {store_kind} store",
                    "kept",
                    "file size",
                    kept / size,
                    note=note,
                    extra={"kept_per_change": kept, "file_bytes": size, "disk_per_change": disk},
                )
            )
    return rows


def _disk(store: str | None) -> int:
    if store is None:
        return 0
    return sum(os.path.getsize(path) for path in (store, store + "-wal") if os.path.exists(path))


def rewind_rows(smoke: bool) -> list[Row]:
    """1,000 recorded edits over 100 files (10 each), then one rewind of them all: its time against the
    time the edits took (both through the library, SQLite store and in memory)."""
    files, per_file = (5, 2) if smoke else (100, 10)
    rows: list[Row] = []
    for store_kind in ("memory", "sqlite"):
        with tempfile.TemporaryDirectory(prefix="fs-tools-bench-") as tmp:
            root = Path(tmp) / "root"
            root.mkdir()
            for number in range(files):
                (root / f"f{number}.txt").write_text(_text(200))
            store = str(Path(tmp) / "state.db") if store_kind == "sqlite" else None
            with Workspace(root, store=store) as ws:
                session = ws.session("bench")
                mark = session.checkpoint()
                edits = [_editing(session, f"f{number}.txt") for number in range(files)]
                started = time.perf_counter()
                for _ in range(per_file):
                    for edit in edits:
                        edit()
                making = time.perf_counter() - started
                started = time.perf_counter()
                report = session.rewind(mark)
                rewinding = time.perf_counter() - started
                assert not report.is_error and len(report.restored) == files, report.message
            rows.append(
                Row(
                    SECTION,
                    f"rewind {files * per_file:,} changes ({files} files), {store_kind} store",
                    "rewind",
                    "making the changes",
                    rewinding / making,
                    rewinding,
                    making,
                    note=f"rewind {rewinding * 1000:,.0f} ms; the {files * per_file:,} edits {making * 1000:,.0f} ms",
                )
            )
    return rows


def history_rows(smoke: bool) -> list[Row]:
    return recording_rows(smoke) + store_cost_rows(smoke) + rewind_rows(smoke)
