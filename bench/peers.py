"""Section 3a: in-process peers on the same files — OpenHands' ``OHEditor`` (view, str_replace) and
LangChain's file tools (read_file, write_file). They are installed by ``python -m bench`` into its own
environment (``bench/requirements-peers.txt``), never as dependencies of fs-tools."""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.files import MARK_A, MARK_B, Workload, make_workloads
from bench.harness import Row, interleaved, ratio_row, rounds_for
from bench.library import Toggle, _ok
from fs_tools import Workspace

SECTION = "3 peers (in-process)"
OPENHANDS_LIMIT = 10 * 1024 * 1024  # OHEditor refuses larger files ("File is too large")


def _openhands() -> Any | None:
    try:
        from openhands_aci.editor.editor import OHEditor
    except ImportError:
        return None
    return OHEditor


def _langchain() -> Any | None:
    try:
        from langchain_community.agent_toolkits import FileManagementToolkit
    except ImportError:
        return None
    return FileManagementToolkit


def _quiet_logging() -> None:
    # openhands-aci turns on DEBUG logging for its dependencies on import; a benchmark must not time
    # log formatting, so every peer runs with logging at WARNING (fs-tools logs nothing per call)
    logging.getLogger().setLevel(logging.WARNING)
    for name in list(logging.root.manager.loggerDict):
        logging.getLogger(name).setLevel(logging.WARNING)


def peer_rows(sizes: dict[str, int], smoke: bool) -> list[Row]:
    oh_class, toolkit = _openhands(), _langchain()
    missing = [name for name, found in (("openhands-aci", oh_class), ("langchain-community", toolkit)) if found is None]
    rows: list[Row] = []
    if missing:
        rows.append(
            Row(
                SECTION, "-", "fs-tools", ", ".join(missing), None, note="not installed: run python -m bench with peers"
            )
        )
    with tempfile.TemporaryDirectory(prefix="fs-tools-bench-peers-") as tmp:
        base = Path(tmp)
        ours_loads = make_workloads(base / "ours", sizes)
        oh_loads = make_workloads(base / "openhands", sizes)
        lc_loads = make_workloads(base / "langchain", sizes)
        editor = oh_class() if oh_class is not None else None
        lc_tools = {}
        if toolkit is not None:
            lc_tools = {
                t.name: t
                for t in toolkit(
                    root_dir=str(base / "langchain"), selected_tools=["read_file", "write_file"]
                ).get_tools()
            }
        _quiet_logging()
        with Workspace(base / "ours", check_syntax=False) as ws:  # as sections 1-2: not Python
            session = ws.session("bench")
            for ours, oh, lc in zip(ours_loads, oh_loads, lc_loads, strict=True):
                rounds = rounds_for(ours.size, smoke)
                takes = editor if ours.size <= OPENHANDS_LIMIT else None
                if editor is not None and takes is None:
                    rows.append(
                        Row(SECTION, ours.name, "fs-tools", "OHEditor", None, note="OHEditor refuses files over 10 MB")
                    )
                rows += _reads(session, ours, oh, lc, takes, lc_tools, rounds)
                if takes is not None:
                    rows += _edits(session, ours, oh, takes, rounds)
                if lc_tools:
                    rows += _writes(session, ours, lc, lc_tools, rounds)
    return rows


def _reads(
    session: Any, ours: Workload, oh: Workload, lc: Workload, editor: Any, lc_tools: dict[str, Any], rounds: int
) -> list[Row]:
    cases: dict[str, Callable[[], object]] = {
        "fs-tools read": lambda: _ok(session.call("read", {"file_path": ours.relative}))
    }
    if editor is not None:
        cases["OHEditor view"] = lambda: editor(command="view", path=str(oh.path))
    if lc_tools:
        cases["LangChain read_file"] = lambda: lc_tools["read_file"].invoke({"file_path": lc.relative})
    medians = interleaved(cases, rounds)
    rows = []
    if editor is not None:
        rows.append(
            ratio_row(
                SECTION,
                ours.name,
                medians,
                "fs-tools read",
                "OHEditor view",
                limit=1.0,
                note="OHEditor numbers every line (then truncates the output); fs-tools pages",
            )
        )
    if lc_tools:
        rows.append(
            ratio_row(
                SECTION,
                ours.name,
                medians,
                "fs-tools read",
                "LangChain read_file",
                note="LangChain returns the raw text: no numbering, no version, no paging",
            )
        )
    return rows


def _edits(session: Any, ours: Workload, oh: Workload, editor: Any, rounds: int) -> list[Row]:
    _ok(session.call("read", {"file_path": ours.relative}))
    mine, theirs = Toggle(), Toggle()

    def pair(turn: Toggle) -> tuple[str, str]:
        return (MARK_A, MARK_B) if turn.next() else (MARK_B, MARK_A)

    def ours_edit() -> None:
        old, new = pair(mine)
        _ok(session.call("edit", {"file_path": ours.relative, "old_string": old, "new_string": new}))

    def oh_edit() -> None:
        old, new = pair(theirs)
        editor(command="str_replace", path=str(oh.path), old_str=old, new_str=new)

    medians = interleaved({"fs-tools edit": ours_edit, "OHEditor str_replace": oh_edit}, rounds)
    return [
        ratio_row(
            SECTION,
            ours.name,
            medians,
            "fs-tools edit",
            "OHEditor str_replace",
            limit=1.0,
            note="fs-tools: version check, temp + fsync + rename + dir fsync; OHEditor: in-place write, no fsync",
        )
    ]


def _writes(session: Any, ours: Workload, lc: Workload, lc_tools: dict[str, Any], rounds: int) -> list[Row]:
    _ok(session.call("read", {"file_path": ours.relative}))
    mine, theirs = Toggle(), Toggle()
    medians = interleaved(
        {
            "fs-tools write": lambda: _ok(
                session.call(
                    "write", {"file_path": ours.relative, "content": ours.text_a if mine.next() else ours.text_b}
                )
            ),
            "LangChain write_file": lambda: lc_tools["write_file"].invoke(
                {"file_path": lc.relative, "text": lc.text_a if theirs.next() else lc.text_b}
            ),
        },
        rounds,
    )
    return [
        ratio_row(
            SECTION,
            ours.name,
            medians,
            "fs-tools write",
            "LangChain write_file",
            note="LangChain: open(..., 'w') in place, no fsync, no version check",
        )
    ]
