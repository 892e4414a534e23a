"""``fs-tools demo``: a scripted agent session in a throwaway workspace, printing each call and result."""

from __future__ import annotations

import json
import tempfile
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fs_tools.result import ToolResult
from fs_tools.stores import MemoryHistory, ProcessStore
from fs_tools.workspace import Session, Workspace

APP = textwrap.dedent(
    """\
    def greet(name):
        print("hello", name)


    def main():
        greet("world")
        greet("fs-tools")
    """
)


class _DemoStore(ProcessStore):
    """The default in-memory stores, with a history whose marks are the same in every run (the docs
    show this output word for word)."""

    def __init__(self) -> None:
        super().__init__()
        self.history = MemoryHistory(identity="demo")


def _show(out: Callable[[str], None], title: str, name: str, args: Any, result: ToolResult) -> None:
    shown = args if isinstance(args, str) else json.dumps(args)
    if title:
        out(f"\n── {title}")
    out(f">>> {name} {shown}")
    status = f"error {result.error.code}" if result.error else "ok"
    out(f"<<< [{status}]")
    out(textwrap.indent(result.text, "    "))


def run_demo(out: Callable[[str], None] = print) -> int:
    with tempfile.TemporaryDirectory(prefix="fs-tools-demo-") as tmp:
        root = Path(tmp)
        (root / "app.py").write_text(APP, encoding="utf-8")
        (root / "old_notes.txt").write_text("TODO: greet everyone\n", encoding="utf-8")
        with Workspace(root, store=_DemoStore()) as ws:
            session = ws.session("demo")
            out("Workspace: a throwaway directory holding app.py and old_notes.txt; session key 'demo'.")
            start = session.checkpoint("start of the demo")
            steps = _script(session, root)
            failures = 0
            for title, name, args, expect in steps:
                if callable(args):
                    args = args()
                result = session.call(name, args)
                _show(out, title, name, args, result)
                got = result.error.code if result.error else None
                if got != expect:
                    failures += 1
                    out(f"!!! expected {expect or 'success'}, got {got or 'success'}")
            failures += _rewind(out, session, root, start)
            out(
                "\nEvery gate refused what it should, each error said how to recover, and the retry succeeded."
                if not failures
                else f"\n{failures} step(s) did not behave as scripted."
            )
            return 1 if failures else 0


def _rewind(out: Callable[[str], None], session: Session, root: Path, start: str) -> int:
    """The host takes the session's changes back, but not over the user's own edit; 1 if it did not."""
    app = root / "src" / "app.py"
    app.write_text(app.read_text(encoding="utf-8") + "# the user's own line\n", encoding="utf-8")
    out("\n── 11. The user adds a line to src/app.py; then the host rewinds the session to its start.")
    out(f">>> session.rewind({start!r})")
    report = session.rewind(start)
    out(textwrap.indent(report.message, "    "))
    for item in report.skipped:
        out(textwrap.indent(f"{item.path}: {item.code}: {item.message}", "    "))
    kept = "# the user's own line" in app.read_text(encoding="utf-8")
    back = (root / "old_notes.txt").is_file()
    stale = any(item.path == "src/app.py" and item.code == "FS_STALE_VERSION" for item in report.skipped)
    out("    old_notes.txt is back; src/app.py keeps the user's line." if kept and back and stale else "")
    if kept and back and stale:
        return 0
    out("!!! expected old_notes.txt restored and src/app.py left as the user changed it")
    return 1


def _script(session: Session, root: Path) -> list[tuple[str, str, Any, str | None]]:
    def external_change() -> dict[str, Any]:
        # Another writer (a human, a formatter) changes the file after the model read it.
        path = root / "app.py"
        path.write_text(path.read_text(encoding="utf-8").replace('"fs-tools"', '"everyone"'), encoding="utf-8")
        return {"file_path": "app.py", "old_string": 'print("hello", name)', "new_string": 'print(f"hello, {name}!")'}

    return [
        (
            "1. The model sends bad arguments: every violation comes back at once.",
            "read",
            '{"path": "app.py", "offset": "1"}',
            "INVALID_ARGS",
        ),
        (
            "2. It edits before reading: refused, with the one next step.",
            "edit",
            {"file_path": "app.py", "old_string": "hello", "new_string": "hi"},
            "FS_NOT_OBSERVED",
        ),
        ("3. It reads the file, which records the version it saw.", "read", {"file_path": "app.py"}, None),
        (
            "4. An ambiguous edit: the error names every matching line.",
            "edit",
            {"file_path": "app.py", "old_string": "greet(", "new_string": "welcome("},
            "FS_AMBIGUOUS_EDIT",
        ),
        (
            "5. Someone else changes the file; the model's edit is refused as stale.",
            "edit",
            external_change,
            "FS_STALE_VERSION",
        ),
        ("6. It re-reads the file, as the error said.", "read", {"file_path": "app.py", "offset": 5}, None),
        (
            "7. The retry succeeds, and the result shows the edited lines.",
            "edit",
            {"file_path": "app.py", "old_string": 'print("hello", name)', "new_string": 'print(f"hello, {name}!")'},
            None,
        ),
        (
            "8. It deletes a file it never read: refused, like a blind overwrite.",
            "delete",
            {"file_path": "old_notes.txt"},
            "FS_NOT_OBSERVED",
        ),
        ("9. It reads the notes first, and the delete goes through.", "read", {"file_path": "old_notes.txt"}, None),
        ("", "delete", {"file_path": "old_notes.txt"}, None),
        (
            "10. It moves app.py into src/: its read moves with it, so the next edit needs no re-read.",
            "move",
            {"source": "app.py", "destination": "src/app.py"},
            None,
        ),
        (
            "",
            "edit",
            {"file_path": "src/app.py", "old_string": 'greet("world")', "new_string": 'greet("src")'},
            None,
        ),
    ]
