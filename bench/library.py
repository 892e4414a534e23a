"""Sections 1 and 2: fs-tools through the library against the raw baseline, and the observation
policy's own cost (on vs off, bad arguments, a session holding 100,000 observations)."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import tempfile
import tracemalloc
from pathlib import Path

from bench.baseline import raw_edit, raw_read, raw_write
from bench.files import MARK_A, MARK_B, Workload, make_workloads
from bench.gates import NullStore, policy_off
from bench.harness import Row, interleaved, ratio_row, rounds_for
from fs_tools import Session, Workspace
from policy import MemoryStore, Present


def _ok(result: object) -> None:
    if getattr(result, "is_error", False):
        raise RuntimeError(f"benchmark call failed: {getattr(result, 'text', result)}")


class Toggle:
    """Alternates a file between its two variants, so every edit/write really changes it."""

    def __init__(self) -> None:
        self.flip = False

    def next(self) -> bool:
        self.flip = not self.flip
        return self.flip


def library_rows(sizes: dict[str, int], smoke: bool) -> list[Row]:
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="fs-tools-bench-") as tmp:
        base = Path(tmp)
        ours_root, raw_root, off_root = base / "ours", base / "raw", base / "off"
        loads = {
            name: make_workloads(root, sizes)
            for name, root in [("ours", ours_root), ("raw", raw_root), ("off", off_root)]
        }
        # The syntax check (a tree-sitter parse of each .py change) is timed on its own in section 7:
        # here both sides leave it out, so the rows stay the provider's and the gates' cost.
        with (
            Workspace(ours_root, check_syntax=False) as ours_ws,
            Workspace(off_root, store=NullStore(), check_syntax=False) as off_ws,
        ):
            ours, off = ours_ws.session("bench"), off_ws.session("bench")
            for i, load in enumerate(loads["ours"]):
                raw_load, off_load = loads["raw"][i], loads["off"][i]
                rows += _read_rows(ours, off, load, raw_load, off_load, smoke)
                rows += _mutation_rows(ours, off, load, raw_load, off_load, smoke)
            rows.append(_bad_arguments_row(ours, loads["ours"][0], loads["raw"][0], smoke))
    rows += observation_rows(10_000 if smoke else 100_000)
    return rows


def _read_rows(
    ours: Session, off: Session, load: Workload, raw_load: Workload, off_load: Workload, smoke: bool
) -> list[Row]:
    first = ours.call("read", {"file_path": load.relative})
    _ok(first)
    shown = int(first.value["lines_shown"])  # type: ignore[index]
    cases = {
        "fs-tools read": lambda: _ok(ours.call("read", {"file_path": load.relative})),
        "raw read": lambda: raw_read(raw_load.path, shown),
        "policy off read": lambda: _ok(off.call("read", {"file_path": off_load.relative})),
    }
    medians = interleaved(cases, rounds_for(load.size, smoke))
    limit = 2.0 if load.size <= 4 << 10 else 1.2  # issue 18's targets
    return [
        ratio_row(
            "1 raw baseline",
            load.name,
            medians,
            "fs-tools read",
            "raw read",
            limit=limit,
            note=f"both show {shown} numbered lines; fs-tools also hashes and counts the whole file",
        ),
        ratio_row("2 gate overhead", load.name, medians, "fs-tools read", "policy off read"),
    ]


def _mutation_rows(
    ours: Session, off: Session, load: Workload, raw_load: Workload, off_load: Workload, smoke: bool
) -> list[Row]:
    _ok(ours.call("read", {"file_path": load.relative}))
    edit_turn, raw_turn, off_turn = Toggle(), Toggle(), Toggle()

    def swap(turn: Toggle) -> tuple[str, str]:
        return (MARK_A, MARK_B) if turn.next() else (MARK_B, MARK_A)

    def ours_edit() -> None:
        old, new = swap(edit_turn)
        _ok(ours.call("edit", {"file_path": load.relative, "old_string": old, "new_string": new}))

    def raw_edit_case() -> None:
        old, new = swap(raw_turn)
        raw_edit(raw_load.path, old, new)

    def raw_durable_edit() -> None:
        old, new = swap(raw_turn)
        raw_edit(raw_load.path, old, new, sync_directory=True)

    def off_edit() -> None:
        old, new = swap(off_turn)
        with policy_off():
            _ok(off.call("edit", {"file_path": off_load.relative, "old_string": old, "new_string": new}))

    rounds = rounds_for(load.size, smoke)
    edits = interleaved(
        {
            "fs-tools edit": ours_edit,
            "raw edit": raw_edit_case,
            "raw edit + dir fsync": raw_durable_edit,
            "policy off edit": off_edit,
        },
        rounds,
    )
    write_turn, raw_write_turn, off_write_turn = Toggle(), Toggle(), Toggle()

    def content(turn: Toggle) -> str:
        return load.text_a if turn.next() else load.text_b

    writes = interleaved(
        {
            "fs-tools write": lambda: _ok(
                ours.call("write", {"file_path": load.relative, "content": content(write_turn)})
            ),
            "raw write": lambda: raw_write(raw_load.path, content(raw_write_turn)),
            "policy off write": lambda: _off_write(off, off_load, content(off_write_turn)),
        },
        rounds,
    )
    small = load.size <= 4 << 10
    # issue 18's targets: an edit within 2x the raw edit at 1 KB and within 1.2x a raw edit with the same
    # fsyncs above it; a write of 1 MB or more within 1.3x the raw write
    return [
        ratio_row(
            "1 raw baseline",
            load.name,
            edits,
            "fs-tools edit",
            "raw edit",
            limit=2.0 if small else None,
            note="fs-tools also fsyncs the directory and returns a snippet",
        ),
        ratio_row(
            "1 raw baseline", load.name, edits, "fs-tools edit", "raw edit + dir fsync", limit=None if small else 1.2
        ),
        ratio_row(
            "1 raw baseline",
            load.name,
            writes,
            "fs-tools write",
            "raw write",
            limit=1.3 if load.size >= 1 << 20 else None,
        ),
        ratio_row("2 gate overhead", load.name, edits, "fs-tools edit", "policy off edit"),
        ratio_row(
            "2 gate overhead",
            load.name,
            writes,
            "fs-tools write",
            "policy off write",
            note="on: the commit re-hashes the current file under the directory lock",
        ),
    ]


def _off_write(off: Session, load: Workload, text: str) -> None:
    with policy_off():
        _ok(off.call("write", {"file_path": load.relative, "content": text}))


def _bad_arguments_row(ours: Session, load: Workload, raw_load: Workload, smoke: bool) -> Row:
    bad = {"file_path": 3, "limt": "ten", "offset": "2"}  # three mistakes, one call

    def rejected() -> None:
        result = ours.call("read", bad)
        if result.error is None or result.error.code != "INVALID_ARGS":
            raise RuntimeError(result.text)

    medians = interleaved(
        {"rejected call": rejected, "fs-tools read": lambda: _ok(ours.call("read", {"file_path": load.relative}))},
        rounds_for(load.size, smoke),
    )
    return ratio_row(
        "2 gate overhead",
        load.name,
        medians,
        "rejected call",
        "fs-tools read",
        note="bad arguments: three violations reported in one INVALID_ARGS, vs a good read",
    )


def observation_rows(count: int) -> list[Row]:
    """Memory per observation and lookup time with ``count`` observations in one session."""
    rng = random.Random(5)

    def key_of(i: int) -> str:  # a realistic absolute path, ~60 characters
        return f"/home/dev/projects/service/src/pkg{i % 300:03d}/module_{i:06d}.py"

    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    store = MemoryStore()
    for i in range(count):  # everything the store holds is allocated here: paths, versions, entries
        store.put("session", key_of(i), Present(f"{rng.getrandbits(128):032x}"))
    per_observation = (tracemalloc.get_traced_memory()[0] - before) / count
    tracemalloc.stop()
    plain = {key_of(i): "v" for i in range(count)}
    probe = [key_of(rng.randrange(count)) for _ in range(10_000)]

    def store_lookups() -> None:
        for key in probe:
            store.get("session", key)

    def dict_lookups() -> None:
        for key in probe:
            plain.get(key)

    medians = interleaved({"store.get": store_lookups, "dict.get": dict_lookups}, 30)
    workload = f"{count:,} observations"
    lookup = ratio_row(
        "2 gate overhead",
        workload,
        medians,
        "store.get",
        "dict.get",
        note=f"{medians['store.get'] / len(probe) * 1e9:.0f} ns per lookup",
    )
    memory = Row(
        "2 gate overhead",
        workload,
        "bytes per observation",
        "512-byte target",
        per_observation / 512,
        target="<= 1x",
        met=per_observation <= 512,
        note=f"{per_observation:.0f} B each (path, version, entry; tracemalloc)",
    )
    return [lookup, memory, _rss_row(count)]


_RSS_PROBE = """
import os, random, sys
from policy import MemoryStore, Present
def rss():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
count, rng = int(sys.argv[1]), random.Random(5)
store, before = MemoryStore(), rss()
for i in range(count):  # the path and the version are made here: the store is what keeps them
    key = f"/home/dev/projects/service/src/pkg{i % 300:03d}/module_{i:06d}.py"
    store.put("session", key, Present(f"{rng.getrandbits(128):032x}"))
print((rss() - before) / count)
"""


def _rss_row(count: int) -> Row:
    """Resident memory a process grows by per observation recorded, in a fresh process: the path (~60
    characters) and the version each observation keeps, the store's entries and dictionaries, and what
    the allocator keeps around them."""
    workload = f"{count:,} observations"
    if not os.path.exists("/proc/self/statm"):
        return Row("2 gate overhead", workload, "RSS growth per observation", "256-byte target", None, note="no /proc")
    done = subprocess.run([sys.executable, "-c", _RSS_PROBE, str(count)], capture_output=True, text=True, check=True)
    per = float(done.stdout.strip())
    return Row(
        "2 gate overhead",
        workload,
        "RSS growth per observation",
        "256-byte target",
        per / 256,
        target="<= 1x",
        met=per <= 256,
        note=f"{per:.0f} B each (resident set of a fresh process: path, version, entry)",
    )
