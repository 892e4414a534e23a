"""Every tool publishes the schema of what a success returns (MCP's ``outputSchema``), and every success
value conforms to it: each tool's reference example in every dialect, and calls that reach the less
common shapes of a value (an image, a PDF's pages, a notebook's cells, a failed file among many, each
kind of grep, history)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from fs_tools import Workspace
from fs_tools.mcp.shapes import call_result, tool_definition, tool_definitions
from fs_tools.reference import scratch
from fs_tools.tools.dialects import DIALECTS
from tests.support.pdf_files import make_pdf

EVERY = [(dialect.name, tool) for dialect in DIALECTS.values() for tool in dialect.tools + dialect.extras]


def _conforms(tool_name: str, workspace: Workspace, structured: Any) -> None:
    schema = tool_definition(workspace.tools[tool_name])["outputSchema"]
    errors = sorted(Draft202012Validator(schema).iter_errors(structured), key=lambda error: list(error.path))
    assert errors == [], f"{tool_name}: {[f'{list(e.path)}: {e.message}' for e in errors[:3]]}"


@pytest.mark.parametrize(("dialect", "tool"), EVERY, ids=[f"{d}-{t.name}" for d, t in EVERY])
def test_each_example_conforms_to_the_published_output_schema(dialect: str, tool: Any) -> None:
    names = [tool.name] + [name for name, _ in tool.example.setup]
    with scratch(dialect=dialect, tools=sorted(set(names))) as s:
        definition = tool_definition(tool)
        Draft202012Validator.check_schema(definition["outputSchema"])
        assert definition["outputSchema"]["type"] == "object"
        assert definition["title"] and definition["title"] == definition["annotations"]["title"]
        marks = []
        for name, arguments in tool.example.setup:
            done = s.session.call(name, arguments)
            assert not done.is_error, done.text
            marks += [done.value["mark"]] if name == "checkpoint" else []
        arguments = {**tool.example.arguments, **({"mark": marks[0]} if marks else {})}  # a store's own marks
        result = s.session.call(tool.name, arguments)
        assert not result.is_error, result.text
        _conforms(tool.name, s.workspace, call_result(result)["structuredContent"])


def _png() -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (3, 2), (200, 10, 10)).save(out, format="PNG")
    return out.getvalue()


def test_the_less_common_shapes_of_a_value_conform(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def f():\n    return 1\n" * 3)
    (tmp_path / "b.txt").write_text("alpha\nbeta\nalpha\n")
    (tmp_path / "pic.png").write_bytes(_png())
    (tmp_path / "doc.pdf").write_bytes(make_pdf(["first page", "second page"]))
    (tmp_path / "nb.ipynb").write_text(
        json.dumps({"cells": [{"cell_type": "code", "id": "c1", "metadata": {}, "outputs": [], "source": ["x = 1"],
                               "execution_count": None}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    )  # fmt: skip
    (tmp_path / "d").mkdir()
    calls: list[tuple[str, dict[str, Any]]] = [
        ("read", {"file_path": "pic.png"}),
        ("read", {"file_path": "doc.pdf", "pages": "2"}),
        ("read", {"file_path": "nb.ipynb"}),
        ("read", {"file_path": "b.txt", "offset": 2, "limit": 1}),
        ("read_many", {"file_paths": ["a.py", "missing.txt", "pic.png"]}),
        ("grep", {"pattern": "alpha"}),
        ("grep", {"pattern": "ALPHA", "glob": "*.txt", "case_insensitive": True}),
        ("glob", {"pattern": "**/*"}),
        ("list", {"path": "."}),
        ("stat", {"path": "d"}),
        ("checkpoint", {"label": "before"}),
        ("write", {"file_path": "new.py", "content": "def broken(:\n"}),
        ("edit", {"file_path": "b.txt", "old_string": "beta", "new_string": "gamma"}),
        ("edit", {"file_path": "b.txt", "old_string": "alpha", "new_string": "a", "replace_all": True}),
        ("multi_edit", {"file_path": "a.py", "edits": [{"old_string": "return 1", "new_string": "return 2",
                                                          "replace_all": True}]}),
        ("notebook_edit", {"notebook_path": "nb.ipynb", "cell_id": "c1", "new_source": "x = 2"}),
        ("copy", {"source": "b.txt", "destination": "d/c.txt"}),
        ("move", {"source": "d/c.txt", "destination": "d/e.txt"}),
        ("create_directory", {"path": "d"}),
        ("delete", {"file_path": "d/e.txt"}),
        ("history", {}),
        ("diff", {}),
        ("rewind", {"mark": "MARK"}),
    ]  # fmt: skip
    every = [tool.name for dialect in DIALECTS.values() if dialect.name == "fs-tools" for tool in dialect.tools]
    every += ["checkpoint", "history", "diff", "rewind", "apply_patch"]
    with Workspace(tmp_path, tools=every) as workspace:
        session = workspace.session("s")
        for path in ("b.txt", "a.py", "nb.ipynb"):
            assert not session.call("read", {"file_path": path}).is_error
        mark = ""
        for name, arguments in calls:
            if name == "rewind":
                arguments = {"mark": mark}
            result = session.call(name, arguments)
            assert not result.is_error, (name, result.text)
            if name == "checkpoint":
                mark = result.value["mark"]
            _conforms(name, workspace, call_result(result)["structuredContent"])
        shown = {definition["name"] for definition in tool_definitions(workspace)}
        assert {name for name, _ in calls} <= shown


def test_a_failure_conforms_too_and_a_success_is_not_taken_for_one(tmp_path: Path) -> None:
    """Some clients (the TypeScript SDK's) check a failure's structuredContent against the schema as well."""
    with Workspace(tmp_path) as workspace:
        failed = workspace.session("s").call("edit", {"file_path": "none.txt", "old_string": "a", "new_string": "b"})
        assert failed.is_error
        _conforms("edit", workspace, call_result(failed)["structuredContent"])
        schema = tool_definition(workspace.tools["edit"])["outputSchema"]
        assert not Draft202012Validator(schema).is_valid({"error": {"code": "FS_NOT_FOUND"}})
        assert not Draft202012Validator(schema).is_valid({"path": "a.txt"})


def test_results_without_structured_content_publish_no_output_schema(tmp_path: Path) -> None:
    with Workspace(tmp_path) as workspace:
        assert all("outputSchema" not in d for d in tool_definitions(workspace, structured=False))
        assert all("outputSchema" in d for d in tool_definitions(workspace))


@pytest.mark.parametrize("mode", ["content", "files_with_matches", "count"])
def test_each_of_claude_codes_grep_modes_conforms(tmp_path: Path, mode: str) -> None:
    (tmp_path / "b.txt").write_text("alpha\nbeta\nalpha\n")
    with Workspace(tmp_path, dialect="claude-code") as workspace:
        result = workspace.session("s").call("Grep", {"pattern": "alpha", "output_mode": mode, "-n": True, "-C": 1})
        assert not result.is_error, result.text
        _conforms("Grep", workspace, call_result(result)["structuredContent"])
