"""The OpenAI and Anthropic adapters: definitions in each API's shape, answers that carry our codes and
messages, and the docs' examples (recorded payloads, no network) run as written."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import jsonschema
import pytest

from fs_tools import Session, Workspace
from fs_tools.adapters import anthropic, openai

DOCS = Path(__file__).resolve().parent.parent / "docs" / "integrations"


@pytest.mark.parametrize("page", ["openai.md", "anthropic.md"])
def test_the_docs_example_runs(page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code = (DOCS / page).read_text(encoding="utf-8").split("```python\n", 1)[1].split("```", 1)[0]
    exec(compile(code, str(DOCS / page), "exec"), {"__name__": "docs_example"})


def _schema_nodes(node: dict[str, object]) -> list[dict[str, object]]:
    """Every schema node under ``node`` (property maps are walked by value, not checked as schemas)."""
    found = [node]
    properties = node.get("properties")
    children = list(properties.values()) if isinstance(properties, dict) else []
    for key in ("items", "anyOf", "oneOf", "allOf"):
        value = node.get(key)
        children += value if isinstance(value, list) else [value] if isinstance(value, dict) else []
    for child in children:
        found += _schema_nodes(child)
    return found


def test_strict_definitions_require_every_property_and_forbid_others(workspace: Workspace) -> None:
    for tool in openai.tool_definitions(workspace, strict=True):
        function = tool["function"]
        assert function["strict"] is True
        for node in _schema_nodes(function["parameters"]):
            if "properties" in node:
                assert node["required"] == list(node["properties"]), function["name"]  # type: ignore[call-overload]
                assert node["additionalProperties"] is False
            assert not {"default", "minLength", "pattern"} & set(node), function["name"]
        jsonschema.Draft202012Validator.check_schema(function["parameters"])
    strict = openai.tool_definitions(workspace, strict=True)
    glob = next(t["function"] for t in strict if t["function"]["name"] == "glob")
    assert "pattern" in glob["parameters"]["properties"]  # a property named like a keyword survives


def test_what_strict_mode_makes_the_model_send_is_accepted(root: Path, session: Session) -> None:
    """Strict mode makes the model fill every optional argument with null: that means the default."""
    (root / "a.txt").write_text("one\ntwo\n")
    arguments = json.dumps({"file_path": "a.txt", "offset": None, "limit": None})
    call = {"id": "call_1", "type": "function", "function": {"name": "read", "arguments": arguments}}
    assert openai.answer_tool_call(session, call)["content"] == "     1\tone\n     2\ttwo"


def test_responses_definitions_and_items(root: Path, workspace: Workspace) -> None:
    tools = openai.tool_definitions(workspace, api="responses")
    assert tools[0]["type"] == "function" and tools[0]["name"] == "read" and "function" not in tools[0]
    (root / "a.txt").write_text("one\n")
    item = {"type": "function_call", "call_id": "fc_1", "name": "read", "arguments": '{"file_path": "a.txt"}'}
    answer = openai.answer_tool_call(workspace.session("r"), item)
    assert answer == {"type": "function_call_output", "call_id": "fc_1", "output": "     1\tone"}
    with pytest.raises(ValueError, match="api must be"):
        openai.tool_definitions(workspace, api="completions")


def test_sdk_objects_work_like_dicts(root: Path, session: Session) -> None:
    (root / "a.txt").write_text("one\n")
    call = SimpleNamespace(id="call_9", type="function", function=SimpleNamespace(name="read", arguments="{"))
    answer = openai.answer_tool_call(session, call)
    assert answer["tool_call_id"] == "call_9"
    assert answer["content"].startswith("ERROR INVALID_ARGS: invalid arguments: not valid JSON")
    block = SimpleNamespace(type="tool_use", id="toolu_9", name="read", input={"file_path": "a.txt"})
    assert anthropic.tool_results(session, [SimpleNamespace(type="text", text="hi"), block]) == [
        {"type": "tool_result", "tool_use_id": "toolu_9", "content": "     1\tone"}
    ]


def test_anthropic_failures_set_is_error_and_keep_the_code(root: Path, session: Session) -> None:
    (root / "a.txt").write_text("one\n")
    edit = {
        "type": "tool_use",
        "id": "t1",
        "name": "edit",
        "input": {"file_path": "a.txt", "old_string": "one", "new_string": "1"},
    }
    refused = anthropic.tool_result(session, edit)
    assert refused["is_error"] is True and refused["content"].startswith("ERROR FS_NOT_OBSERVED:")
    assert (root / "a.txt").read_text() == "one\n"
    anthropic.tool_result(session, {"type": "tool_use", "id": "t2", "name": "read", "input": {"file_path": "a.txt"}})
    done = anthropic.tool_result(session, edit)
    assert "is_error" not in done and (root / "a.txt").read_text() == "1\n"


def test_definitions_are_the_published_schemas(workspace: Workspace) -> None:
    assert anthropic.tool_definitions(workspace) == workspace.tool_schemas()
    plain = openai.tool_definitions(workspace)
    assert [t["function"]["parameters"] for t in plain] == [s["input_schema"] for s in workspace.tool_schemas()]
