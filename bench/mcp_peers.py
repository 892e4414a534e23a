"""Section 3b: per-call latency over MCP stdio — ``fs-tools serve`` against the official Node filesystem
server (npm ``@modelcontextprotocol/server-filesystem``), both driven by the same Python MCP client,
calls interleaved one by one."""

from __future__ import annotations

import asyncio
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from bench.files import MARK_A, MARK_B, Workload, make_workloads
from bench.harness import Row, ratio_row, rounds_for
from bench.library import Toggle

SECTION = "3 peers (MCP stdio)"
Call = Callable[[], Awaitable[Any]]


def mcp_rows(sizes: dict[str, int], smoke: bool, node_server: Path | None) -> list[Row]:
    if node_server is None:
        return [
            Row(
                SECTION,
                "-",
                "fs-tools serve",
                "Node server-filesystem",
                None,
                note="not installed: run python -m bench with peers",
            )
        ]
    # The Node server closes the connection on a 16 MB write_file (seen with 2026.8.31): its rows stop at 5 MB.
    within = {name: size for name, size in sizes.items() if size <= 5 << 20}
    skipped = [
        Row(
            SECTION,
            name,
            "fs-tools serve",
            "Node server-filesystem",
            None,
            note="the Node server drops a write this large",
        )
        for name in sizes
        if name not in within
    ]
    return asyncio.run(_run(within, smoke, node_server)) + skipped


async def _timed(cases: dict[str, Call], rounds: int) -> dict[str, float]:
    names = list(cases)
    for name in names:  # warm
        await cases[name]()
    samples: dict[str, list[float]] = {name: [] for name in names}
    rng = random.Random(len(names) * 7919 + rounds)
    for _ in range(rounds):
        order = names[:]
        rng.shuffle(order)  # a shuffled order per round, as in bench.harness.interleaved
        for name in order:
            started = time.perf_counter()
            await cases[name]()
            samples[name].append(time.perf_counter() - started)
    return {name: statistics.median(values) for name, values in samples.items()}


def _checked(result: Any, what: str) -> Any:
    if getattr(result, "isError", False):
        text = result.content[0].text if result.content else ""
        raise RuntimeError(f"{what} failed: {text[:300]}")
    return result


async def _run(sizes: dict[str, int], smoke: bool, node_server: Path) -> list[Row]:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="fs-tools-bench-mcp-") as tmp:
        base = Path(tmp).resolve()
        ours_root, fast_root, node_root = base / "ours", base / "fast", base / "node"
        ours_loads, node_loads = make_workloads(ours_root, sizes), make_workloads(node_root, sizes)
        fast_loads = make_workloads(fast_root, sizes)
        # no syntax check, as in section 1: the Node server has none, and section 7 times it on its own (the
        # workload files are not valid Python, so every change would be parsed twice and compared)
        serve = ["-m", "fs_tools.cli", "serve", "--no-check-syntax", "--root"]
        ours_params = StdioServerParameters(command=sys.executable, args=[*serve, str(ours_root)])
        # the same durability as the Node server, which never fsyncs: --no-durable
        fast_params = StdioServerParameters(command=sys.executable, args=[*serve, str(fast_root), "--no-durable"])
        node_params = StdioServerParameters(command="node", args=[str(node_server), str(node_root)])
        async with (
            stdio_client(ours_params) as (r1, w1),
            ClientSession(r1, w1) as ours,
            stdio_client(fast_params) as (r3, w3),
            ClientSession(r3, w3) as fast,
            stdio_client(node_params) as (r2, w2),
            ClientSession(r2, w2) as node,
        ):
            await ours.initialize()
            await fast.initialize()
            await node.initialize()
            for mine, quick, theirs in zip(ours_loads, fast_loads, node_loads, strict=True):
                rows += await _workload(ours, node, mine, theirs, rounds_for(mine.size, smoke))
                rows += await _same_durability(fast, node, quick, theirs, rounds_for(mine.size, smoke))
    return rows


async def _same_durability(fast: Any, node: Any, mine: Workload, theirs: Workload, rounds: int) -> list[Row]:
    """Edits and writes of ``serve --no-durable`` (no fsync, still atomic and gated) against the Node
    server, which writes a temp and renames it without an fsync either."""
    edits, writes = await _edits_and_writes(fast, node, mine, theirs, rounds, " (no fsync)")
    note = "same durability: neither fsyncs (serve --no-durable)"
    return [
        ratio_row(SECTION, mine.name, edits, "fs-tools edit (no fsync)", "node edit_file", limit=1.0, note=note),
        ratio_row(SECTION, mine.name, writes, "fs-tools write (no fsync)", "node write_file", limit=1.0, note=note),
    ]


async def _edits_and_writes(
    ours: Any, node: Any, mine: Workload, theirs: Workload, rounds: int, label: str
) -> tuple[dict[str, float], dict[str, float]]:
    """Median edits, then writes, of one fs-tools server (cases named ``fs-tools edit{label}``) and of
    the Node server, interleaved; both files are first put back to ``text_a``, whatever came before."""
    path = str(theirs.path)
    _checked(await ours.call_tool("read", {"file_path": mine.relative}), "fs-tools read")
    _checked(await ours.call_tool("write", {"file_path": mine.relative, "content": mine.text_a}), "fs-tools write")
    _checked(await node.call_tool("write_file", {"path": path, "content": theirs.text_a}), "node write_file")
    mine_turn, their_turn, w_mine, w_theirs = Toggle(), Toggle(), Toggle(), Toggle()

    def pair(turn: Toggle) -> tuple[str, str]:
        return (MARK_A, MARK_B) if turn.next() else (MARK_B, MARK_A)

    async def ours_edit() -> None:
        old, new = pair(mine_turn)
        args = {"file_path": mine.relative, "old_string": old, "new_string": new}
        _checked(await ours.call_tool("edit", args), "fs-tools edit")

    async def node_edit() -> None:
        old, new = pair(their_turn)
        edits = [{"oldText": old, "newText": new}]
        _checked(await node.call_tool("edit_file", {"path": path, "edits": edits}), "node edit_file")

    async def ours_write() -> None:
        text = mine.text_a if w_mine.next() else mine.text_b
        _checked(await ours.call_tool("write", {"file_path": mine.relative, "content": text}), "fs-tools write")

    async def node_write() -> None:
        text = theirs.text_a if w_theirs.next() else theirs.text_b
        _checked(await node.call_tool("write_file", {"path": path, "content": text}), "node write_file")

    edits = await _timed({f"fs-tools edit{label}": ours_edit, "node edit_file": node_edit}, rounds)
    writes = await _timed({f"fs-tools write{label}": ours_write, "node write_file": node_write}, rounds)
    return edits, writes


async def _workload(ours: Any, node: Any, mine: Workload, theirs: Workload, rounds: int) -> list[Row]:
    path = str(theirs.path)

    async def ours_read() -> None:
        _checked(await ours.call_tool("read", {"file_path": mine.relative}), "fs-tools read")

    async def node_read_whole() -> None:
        _checked(await node.call_tool("read_text_file", {"path": path}), "node read_text_file")

    async def node_read_window() -> None:
        _checked(await node.call_tool("read_text_file", {"path": path, "head": 2000}), "node read_text_file head")

    reads = await _timed(
        {"fs-tools read": ours_read, "node read (whole)": node_read_whole, "node read (head 2000)": node_read_window},
        rounds,
    )
    edits, writes = await _edits_and_writes(ours, node, mine, theirs, rounds, "")
    return [
        ratio_row(
            SECTION,
            mine.name,
            reads,
            "fs-tools read",
            "node read (whole)",
            limit=1.0,
            note="fs-tools returns the first page (2,000 lines or 50 KiB) numbered",
        ),
        ratio_row(SECTION, mine.name, reads, "fs-tools read", "node read (head 2000)", limit=1.0),
        ratio_row(
            SECTION,
            mine.name,
            edits,
            "fs-tools edit",
            "node edit_file",
            limit=1.0,
            note="node returns a diff; fs-tools a snippet",
        ),
        ratio_row(SECTION, mine.name, writes, "fs-tools write", "node write_file", limit=1.0),
    ]
