"""The tool and error references of the documentation, generated from the code so they cannot drift.

Every example is produced by running fs-tools in a scratch workspace: tool pages show real calls and what
they return; the error reference triggers each code for real (the few that need a fault — a full disk,
a permission the root user would bypass, a crashing tool — inject it for the one call) and fails loudly
if a scenario produces another code. ``python -m fs_tools.reference DIR`` writes the pages (``docs``
for the committed ones, which ``tests/project/test_docs.py`` checks are what the code generates now).
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import fcntl
import json
import logging
import os
import sqlite3
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from fs_tools.boundary import remedy_for
from fs_tools.errors import Aborted, HarnessError, error_codes
from fs_tools.provider import FileProvider, FileState, Primitives, Snapshot
from fs_tools.result import ToolResult
from fs_tools.stores import MemoryHistory
from fs_tools.stores.sqlite import SqliteStore
from fs_tools.tools import ALL_TOOLS
from fs_tools.tools.base import Tool, ToolOutput
from fs_tools.workspace import Session, Workspace
from policy import MemoryStore

ERRORS_PAGE = "reference/errors.md"


def tool_page_path(name: str) -> str:
    return f"reference/tools/{name}.md"


@dataclasses.dataclass
class Scratch:
    """A throwaway workspace with a few files, for one example."""

    root: Path
    workspace: Workspace
    session: Session


_EXAMPLE_TIME_NS = 1_780_000_000 * 10**9


# A small notebook as Jupyter writes one (nbformat 4.5: indent 1, sorted keys, a final newline).
_NOTEBOOK = json.dumps(
    {
        "cells": [
            {"cell_type": "markdown", "id": "b1c0a7e2", "metadata": {}, "source": ["# Analysis"]},
            {
                "cell_type": "code",
                "execution_count": 1,
                "id": "5f3d9a40",
                "metadata": {},
                "outputs": [{"name": "stdout", "output_type": "stream", "text": ["hello\n"]}],
                "source": ["print('hi')"],
            },
        ],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    },
    indent=1,
    sort_keys=True,
)
_NOTEBOOK += "\n"


@contextlib.contextmanager
def scratch(**options: Any) -> Iterator[Scratch]:
    with tempfile.TemporaryDirectory(prefix="fs-tools-ref-") as tmp:
        root = Path(tmp) / "project"
        (root / "src").mkdir(parents=True)
        (root / "src" / "app.py").write_text(
            'def greet(name):\n    return "hello " + name\n\n\nprint(greet("world"))\n'
        )
        (root / "notes.txt").write_text("one\ntwo\nthree\n")
        (root / "README.md").write_text("# Project\n")
        (root / "analysis.ipynb").write_text(_NOTEBOOK)
        for made in (root / "src" / "app.py", root / "notes.txt", root / "README.md", root / "analysis.ipynb"):
            os.utime(made, ns=(_EXAMPLE_TIME_NS, _EXAMPLE_TIME_NS))  # examples show one fixed time
        with Workspace(root, **options) as workspace:
            yield Scratch(root, workspace, workspace.session("docs"))


# --- the tool pages -------------------------------------------------------------------------------


def tool_pages() -> dict[str, str]:
    """``{page path: markdown}`` for every tool."""
    pages = {}
    tools = list(ALL_TOOLS)
    for tool in tools:
        with scratch() as s:  # each example in a scratch workspace of its own
            pages[tool_page_path(tool.name)] = _tool_page(tool, s)
    pages["reference/tools/index.md"] = _tools_index(tools)
    return pages


def _tools_index(tools: list[Tool[Any]]) -> str:
    lines = [
        "# Tools",
        "",
        "Generated from the code: arguments, outputs and examples are what fs-tools publishes and returns.",
        "",
    ]
    for tool in tools:
        summary = tool.description.split(". ")[0].rstrip(".")
        lines.append(f"- [`{tool.name}`]({tool.name}.md) — {_prose(summary)}.")
    return "\n".join(lines) + "\n"


def _tool_page(tool: Tool[Any], s: Scratch) -> str:
    schema = tool.schema()["input_schema"]
    required = set(schema.get("required", []))
    out = [f"# `{tool.name}`", "", _prose(tool.description), ""]
    out += [
        f"**Preconditions.** {tool.preconditions}",
        "",
        "## Arguments",
        "",
        "| argument | description |",
        "|---|---|",
    ]
    for name, prop in schema["properties"].items():
        # name, type and whether it is needed in one narrow column, so a phone shows the description too
        needed = "required" if name in required else "optional"
        if "default" in prop and prop["default"] is not None:
            needed = f"default `{_cell(json.dumps(prop['default']))}`"
        out.append(f"| `{name}`<br>{_type_of(prop)}, {needed} | {_cell(prop.get('description', ''))} |")
    out += ["", "`null` for an optional argument means its default. Unknown arguments are refused.", ""]
    output = tool.output.model_json_schema()
    out += ["## Output", "", "On success the result's `text` is what the model reads, and `value` holds:", ""]
    out += ["| field | type |", "|---|---|"]
    for name, prop in output.get("properties", {}).items():
        out.append(f"| `{name}` | {_type_of(prop)} |")
    example = tool.example
    for name, args in example.setup:
        done = s.session.call(name, args)
        if done.is_error:
            raise RuntimeError(f"the {tool.name} example's setup call to {name} failed: {done.text}")
    result = s.session.call(tool.name, example.arguments)
    if result.is_error:
        raise RuntimeError(f"the {tool.name} example failed: {result.text}")
    out += ["", "## Example", ""]
    if example.setup:
        done_first = ", ".join(f"`{name}` of `{args.get('file_path', '')}`" for name, args in example.setup)
        out += [f"After {done_first} in the same session:", ""]
    shown = {"name": tool.name, "arguments": example.arguments}
    out += ["```json", json.dumps(shown, indent=2, ensure_ascii=False), "```", ""]
    out += ["returns the text", "", "```text", result.text, "```", "", "and the value", ""]
    out += ["```json", json.dumps(_stable(result.value), indent=2, ensure_ascii=False), "```", ""]
    return "\n".join(out)


def _stable(value: Any) -> Any:
    """Versions are content hashes of a scratch file: shown shortened, as a reader would quote them."""
    if isinstance(value, dict):
        return {k: (v[:8] + "…" if k == "version" and isinstance(v, str) else _stable(v)) for k, v in value.items()}
    return value


def _type_of(prop: dict[str, Any]) -> str:
    kind = prop.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        kind = kinds[0] if len(kinds) == 1 else " or ".join(kinds)
    if kind == "array":
        items = prop.get("items", {})
        return f"array of {_type_of(items)}" if items.get("type") else "array of objects"
    if kind is None and "anyOf" in prop:
        return " or ".join(_type_of(p) for p in prop["anyOf"] if p.get("type") != "null")
    return str(kind or "object")


def _prose(text: str) -> str:
    """Text from the code as Markdown shows it: a ``<TAB>`` in a description is text, not an HTML tag."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _cell(text: str) -> str:
    return _prose(text).replace("|", "\\|").replace("\n", " ")


# --- the error reference --------------------------------------------------------------------------


def _simulated(note: str) -> Callable[[Callable[[Scratch], ToolResult]], Callable[[Scratch], ToolResult]]:
    def mark(scenario: Callable[[Scratch], ToolResult]) -> Callable[[Scratch], ToolResult]:
        scenario.simulated = note  # type: ignore[attr-defined]
        return scenario

    return mark


def _stale(s: Scratch) -> ToolResult:
    s.session.call("read", {"file_path": "notes.txt"})
    (s.root / "notes.txt").write_text("one\nTWO\nthree\n")  # another writer
    return s.session.call("edit", {"file_path": "notes.txt", "old_string": "one", "new_string": "1"})


def _ambiguous(s: Scratch) -> ToolResult:
    s.session.call("read", {"file_path": "src/app.py"})
    return s.session.call("edit", {"file_path": "src/app.py", "old_string": "greet", "new_string": "welcome"})


def _edit_not_found(s: Scratch) -> ToolResult:
    s.session.call("read", {"file_path": "src/app.py"})
    old = 'def greet(name):\n  return "hello " + name'  # two spaces where the file has four
    return s.session.call("edit", {"file_path": "src/app.py", "old_string": old, "new_string": "x"})


def _too_large(s: Scratch) -> ToolResult:
    return s.session.call("write", {"file_path": "big.txt", "content": "x" * (s.workspace.provider.max_file_bytes + 1)})


class _SlowClock:
    """A clock that moves ``step`` seconds on at every look: a search whose every file takes that long,
    so the default budget runs out a few hundred files into a large tree (``Workspace(clock=...)``)."""

    def __init__(self, step: float) -> None:
        self.now = 0.0
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


@_simulated("a clock that moves 30 ms on each time grep looks at it, as on a disk that slow")
def _timeout(s: Scratch) -> ToolResult:
    vendor = s.root / "vendor"
    vendor.mkdir()
    for n in range(400):  # a vendored tree the search should not have entered
        (vendor / f"module_{n:03}.py").write_text(f"VALUE_{n} = {n}\n")
    with Workspace(s.root, clock=_SlowClock(step=0.03)) as workspace:
        return workspace.session("docs").call("grep", {"pattern": "greet"})


def _aborted_before(s: Scratch) -> ToolResult:
    return s.session.call("read", {"file_path": "notes.txt"}, cancel=_Cancel(after=0))


def _aborted(s: Scratch) -> ToolResult:
    return s.session.call("write", {"file_path": "new.txt", "content": "x\n"}, cancel=_Cancel(after=1))


class _Cancel:
    """A cancel token that becomes set after ``after`` checks."""

    def __init__(self, after: int) -> None:
        self.left = after

    def is_set(self) -> bool:
        self.left -= 1
        return self.left < 0


def _broken_tool(s: Scratch, body: Callable[..., ToolOutput]) -> None:
    s.workspace.tools["read"] = dataclasses.replace(s.workspace.tools["read"], run=body)


@_simulated("a tool returns a value its schema does not allow (a bug guard)")
def _invalid_output(s: Scratch) -> ToolResult:
    _broken_tool(s, lambda ctx, args: ToolOutput(text="", value={"unexpected": True}))
    return s.session.call("read", {"file_path": "notes.txt"})


@_simulated("a tool raises an unexpected exception")
def _internal(s: Scratch) -> ToolResult:
    def crash(ctx: Any, args: Any) -> ToolOutput:
        raise KeyError("boom")

    _broken_tool(s, crash)
    boundary_log = logging.getLogger("fs_tools.boundary")
    boundary_log.disabled = True  # the host's log would get the traceback; the docs build needs none
    try:
        return s.session.call("read", {"file_path": "notes.txt"})
    finally:
        boundary_log.disabled = False


class _Refusing(Primitives):
    """The kernel's primitives, but opening a file for reading is refused (EACCES)."""

    def open_regular_with_stat(self, dir_fd: int, name: str, display: str) -> tuple[int, os.stat_result]:
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))


class _Full(Primitives):
    """The kernel's primitives, but the disk is full when a temp file is written (ENOSPC)."""

    def write_all(self, fd: int, data: bytes) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def _with_primitives(s: Scratch, kind: type[Primitives]) -> Workspace:
    native = Primitives.native()
    return Workspace(FileProvider([s.root], primitives=kind(native.reopen_through_proc, native.native_rename)))


@_simulated("the operating system refuses to open the file (EACCES)")
def _permission(s: Scratch) -> ToolResult:
    with _with_primitives(s, _Refusing) as workspace:
        return workspace.session("docs").call("read", {"file_path": "notes.txt"})


@_simulated("the disk is full while the temp file is written (ENOSPC)")
def _no_space(s: Scratch) -> ToolResult:
    with _with_primitives(s, _Full) as workspace:
        session = workspace.session("docs")
        session.call("read", {"file_path": "notes.txt"})
        return session.call("write", {"file_path": "notes.txt", "content": "new\n"})


def _io_error(s: Scratch) -> ToolResult:
    os.symlink("loop", s.root / "loop")
    return s.session.call("read", {"file_path": "loop"})


def _fs_aborted(s: Scratch) -> ToolResult:
    """The provider's own condition; through a tool it surfaces as TOOL_ABORTED."""
    gate = _OpenGate()
    try:
        s.workspace.provider.commit("new.txt", gate, b"x", cancel=_Cancel(after=0))
    except Aborted as exc:
        return ToolResult.failure(exc)
    raise RuntimeError("the commit was not aborted")


class _OpenGate:
    """A gate that lets a create through and records nothing."""

    def expect(self, file: FileState) -> str | None:
        return None

    def record(self, key: str, after: Snapshot, *, before: Snapshot | None = None, made: tuple[str, ...] = ()) -> None:
        pass


def _busy(s: Scratch) -> ToolResult:
    holder = os.open(s.root, os.O_RDONLY | os.O_DIRECTORY)  # a separate open: its flock excludes ours
    try:
        with Workspace(s.root, lock_timeout=0.05) as workspace:
            session = workspace.session("docs")
            session.call("read", {"file_path": "notes.txt"})
            fcntl.flock(holder, fcntl.LOCK_EX)
            return session.call("write", {"file_path": "notes.txt", "content": "new\n"})
    finally:
        os.close(holder)


def _history_trimmed(s: Scratch) -> ToolResult:
    """A host that offers rewind, with a history budget the session's later writes outgrew."""

    class Store(MemoryStore):  # a history with the same marks in every run: the page shows them
        history = MemoryHistory(600, identity="reference")

    with Workspace(s.root, tools=["write", "checkpoint", "rewind"], store=Store()) as workspace:
        session = workspace.session("docs")
        mark = session.call("checkpoint", {}).value["mark"]
        for number in range(4):
            session.call("write", {"file_path": f"draft{number}.txt", "content": "draft\n" * 20})
        return session.call("rewind", {"mark": mark})


def _store_unavailable(s: Scratch) -> ToolResult:
    """A SQLite store another process holds locked past the store's busy timeout."""
    path = s.root.parent / "state.sqlite"
    store = SqliteStore(path, busy_timeout=0)
    holder = sqlite3.connect(path)
    try:
        holder.execute("BEGIN IMMEDIATE")
        with Workspace(s.root, store=store) as workspace:
            return workspace.session("docs").call("read", {"file_path": "notes.txt"})
    finally:
        holder.close()


def _binary(s: Scratch) -> ToolResult:
    (s.root / "app.db").write_bytes(b"SQLite format 3\0" + bytes(84))
    return s.session.call("read", {"file_path": "app.db"})


def _not_directory(s: Scratch) -> ToolResult:
    return s.session.call("read", {"file_path": "notes.txt/inner.txt"})


def _already_exists(s: Scratch) -> ToolResult:
    s.session.call("read", {"file_path": "notes.txt"})
    s.session.call("read", {"file_path": "README.md"})
    return s.session.call("move", {"source": "notes.txt", "destination": "README.md"})


def _placeholder(s: Scratch) -> ToolResult:
    s.session.call("read", {"file_path": "src/app.py"})
    old = 'def greet(name):\n    return "hello " + name'
    new = "def greet(name):\n    # ... rest of the function unchanged"
    return s.session.call("edit", {"file_path": "src/app.py", "old_string": old, "new_string": new})


def _syntax_error(s: Scratch) -> ToolResult:
    with Workspace(s.root, refuse_syntax_errors=True) as strict:
        session = strict.session("docs")
        session.call("read", {"file_path": "src/app.py"})
        return session.call(
            "edit", {"file_path": "src/app.py", "old_string": 'return "hello " + name', "new_string": "return (name"}
        )


ERROR_EXAMPLES: dict[str, Callable[[Scratch], ToolResult]] = {
    "INVALID_ARGS": lambda s: s.session.call("read", {"file_path": 3, "limt": "10"}),
    "UNKNOWN_TOOL": lambda s: s.session.call("red", {"file_path": "notes.txt"}),
    "INVALID_TOOL_OUTPUT": _invalid_output,
    "TOOL_TIMEOUT": _timeout,
    "TOOL_ABORTED_BEFORE_DISPATCH": _aborted_before,
    "TOOL_ABORTED": _aborted,
    "INTERNAL_ERROR": _internal,
    "FS_NOT_FOUND": lambda s: s.session.call("read", {"file_path": "src/main.py"}),
    "FS_NOT_DIRECTORY": _not_directory,
    "FS_NOT_REGULAR_FILE": lambda s: s.session.call("read", {"file_path": "src"}),
    "FS_NOT_TEXT": _binary,
    "FS_TOO_LARGE": _too_large,
    "FS_PERMISSION_DENIED": _permission,
    "FS_SANDBOX_DENIED": lambda s: s.session.call("read", {"file_path": "../../etc/passwd"}),
    "FS_NO_SPACE": _no_space,
    "FS_IO_ERROR": _io_error,
    "FS_NOT_OBSERVED": lambda s: s.session.call("write", {"file_path": "notes.txt", "content": "new\n"}),
    "FS_STALE_VERSION": _stale,
    "FS_EDIT_NOT_FOUND": _edit_not_found,
    "FS_AMBIGUOUS_EDIT": _ambiguous,
    "FS_BUSY": _busy,
    "STORE_UNAVAILABLE": _store_unavailable,
    "HISTORY_TRIMMED": _history_trimmed,
    "FS_ABORTED": _fs_aborted,
    "FS_NOT_EMPTY": lambda s: s.session.call("delete", {"file_path": "src"}),
    "FS_ALREADY_EXISTS": _already_exists,
    "FS_OMISSION_PLACEHOLDER": _placeholder,
    "FS_SYNTAX_ERROR": _syntax_error,
}


@dataclasses.dataclass(frozen=True)
class ErrorExample:
    code: str
    cls: type[HarnessError]
    message: str
    remedy: str
    simulated: str


def error_examples() -> list[ErrorExample]:
    """One real example per code, in the vocabulary's order; raises if a code has no scenario or a
    scenario produces another code."""
    out = []
    for code, cls in error_codes().items():
        scenario = ERROR_EXAMPLES.get(code)
        if scenario is None:
            raise RuntimeError(f"no example scenario for {code}: add one to ERROR_EXAMPLES")
        with scratch(max_file_bytes=1 << 10) as s:
            result = scenario(s)
        if result.error is None or result.error.code != code:
            got = result.error.code if result.error else "success"
            raise RuntimeError(f"the example for {code} produced {got}: {result.text[:200]}")
        message = result.text.replace(str(Path(tempfile.gettempdir())), "/tmp")
        head = message.split("\n", 1)[0]  # a timeout's first rows follow the remedy, after a colon
        if " — " not in head:  # a stale error's rows come before it, on lines of their own
            head = message.rsplit("\n", 1)[-1]
        remedy = head.rsplit(" — ", 1)[1].removesuffix(":") if " — " in head else ""
        out.append(ErrorExample(code, cls, message, remedy, getattr(scenario, "simulated", "")))
    return out


def errors_page() -> str:
    lines = [
        "# Error reference",
        "",
        "Generated from the code: every code in `fs_tools/errors.py`, with its meaning (the class's own",
        "description) and a message produced by running fs-tools — what the model sees. Where the boundary",
        "appends a remedy, it follows ` — `; each code's **Recovery** is its remedy in the boundary's table",
        "(`fs_tools.boundary.REMEDIES`, where a class without an entry takes its parent's). A failure is a",
        "`ToolResult` with `is_error` true, `error.code` (stable API), `error.name` (the class) and",
        "`error.message`; the lower layer's original exception stays reachable as `result.exception.__cause__`.",
        "",
        "| code and class | meaning |",
        "|---|---|",
    ]
    examples = error_examples()
    for e in examples:  # two columns, so that a phone shows the meaning beside the code
        link = f"[`{e.code}`](#{e.code.lower()})"
        lines.append(f"| {link}<br>`{e.cls.__name__}` | {_cell(_meaning(e.cls))} |")
    lines.append("")
    for e in examples:
        lines += [f"## {e.code}", "", _meaning(e.cls), ""]
        if e.simulated:
            lines += [f"Example (with a fault injected for the example: {e.simulated}):", ""]
        else:
            lines += ["Example:", ""]
        lines += ["```text", e.message, "```", "", f"**Recovery.** {remedy_for(e.cls).summary}", ""]
        if e.remedy:
            lines += [f"The message itself ends with the remedy: *{e.remedy}*.", ""]
    return "\n".join(lines)


def _meaning(cls: type[HarnessError]) -> str:
    """The class's docstring as Markdown (its double backquotes are reStructuredText's)."""
    return " ".join((cls.__doc__ or "").split()).replace("``", "`")


def all_pages() -> dict[str, str]:
    return {**tool_pages(), ERRORS_PAGE: errors_page()}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m fs_tools.reference OUTPUT_DIR", file=sys.stderr)
        return 2
    for path, text in all_pages().items():
        target = Path(args[0]) / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        print(target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
