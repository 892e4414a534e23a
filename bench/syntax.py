"""What the syntax check costs an edit (SPEC §15): the same edit of a Python file with the check on and
off, on valid source (this project's own, repeated to size) and on text that is not valid Python (the
library section's workload files), in one interleaved run. The edits alternate on one file, as a session's
run of edits does: the parse of each checked text is kept, so a valid file's next change is parsed
incrementally; a text with errors is parsed whole (the old text's errors are the kept ones).
Targets (issue 36): a 100 KB valid file ≤ 1.5× the edit without the check, one with errors ≤ 2×.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

from bench.files import MARK_A, MARK_B, make_text
from bench.harness import Row, interleaved, ratio_row
from fs_tools import Session, Workspace

SECTION = "7 syntax check"
SIZES = {"1KB": 1 << 10, "100KB": 100 << 10, "250KB": 250 << 10}
SMOKE_SIZES = {"1KB": 1 << 10, "8KB": 8 << 10}
SOURCE = Path(__file__).resolve().parent.parent / "fs_tools"


def _valid_python(size: int) -> str:
    """Whole files of this project's source until ``size`` is reached, with the marker line at the end."""
    parts: list[str] = []
    length = 0
    for path in sorted(SOURCE.rglob("*.py")):
        if length >= size:
            break
        text = path.read_text(encoding="utf-8")
        parts.append(text)
        length += len(text)
    body = "\n".join(parts)[: max(0, size - len(MARK_A) - 200)]
    body = body[: body.rfind("\n\n\n") + 1] if "\n\n\n" in body else ""  # end between two definitions
    return body + "\n\ndef _marker(value):\n" + MARK_A + "\n    return marker\n"


def syntax_rows(smoke: bool) -> list[Row]:
    rows: list[Row] = []
    for size_name, size in (SMOKE_SIZES if smoke else SIZES).items():
        for kind, text in (("valid Python", _valid_python(size)), ("not valid Python", make_text(size))):
            rows.append(_row(size_name, kind, text, smoke))
    return rows


def _row(size_name: str, kind: str, text: str, smoke: bool) -> Row:
    with tempfile.TemporaryDirectory(prefix="fs-tools-bench-syntax-") as tmp:
        on_root, off_root = Path(tmp) / "on", Path(tmp) / "off"
        for root in (on_root, off_root):
            root.mkdir()
            (root / "f.py").write_text(text)
        with Workspace(on_root) as on_ws, Workspace(off_root, check_syntax=False) as off_ws:
            cases: dict[str, Callable[[], object]] = {
                "edit, syntax check on": _toggling(on_ws.session("bench")),
                "edit, syntax check off": _toggling(off_ws.session("bench")),
            }
            medians = interleaved(cases, 3 if smoke else 40, warm=2)
    targets = {("100KB", "valid Python"): 1.5, ("100KB", "not valid Python"): 2.0}
    return ratio_row(
        SECTION,
        f"{size_name} {kind}",
        medians,
        "edit, syntax check on",
        "edit, syntax check off",
        limit=targets.get((size_name, kind)),
        note="valid: an incremental parse from the kept one; with errors: one whole parse",
    )


def _toggling(session: Session) -> Callable[[], None]:
    assert not session.call("read", {"file_path": "f.py", "limit": 1}).is_error
    turn = [False]

    def edit() -> None:
        turn[0] = not turn[0]
        old, new = (MARK_A, MARK_B) if turn[0] else (MARK_B, MARK_A)
        result = session.call("edit", {"file_path": "f.py", "old_string": old, "new_string": new})
        assert not result.is_error, result.text

    return edit
