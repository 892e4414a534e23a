"""The OpenAI, Anthropic and Gemini adapters: definitions in each API's shape, answers that carry our codes and
messages, and the docs' examples (recorded payloads, no network) run as written."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import jsonschema
import pytest

from fs_tools import Session, Workspace
from fs_tools.adapters import anthropic, gemini, openai
from fs_tools.adapters.schemas import schema_nodes
from fs_tools.tools import ALL_TOOLS

DOCS = Path(__file__).resolve().parents[2] / "docs" / "integrations"


@pytest.mark.parametrize("page", ["openai.md", "anthropic.md", "gemini.md"])
def test_the_docs_example_runs(page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code = (DOCS / page).read_text(encoding="utf-8").split("```python\n", 1)[1].split("```", 1)[0]
    exec(compile(code, str(DOCS / page), "exec"), {"__name__": "docs_example"})


def test_strict_definitions_require_every_property_and_forbid_others(workspace: Workspace) -> None:
    for tool in openai.tool_definitions(workspace, strict=True):
        function = tool["function"]
        assert function["strict"] is True
        for node in schema_nodes(function["parameters"]):
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
    # without "strict" the Responses API makes a tool strict and rewrites its schema
    assert {t["strict"] for t in tools} == {False}
    assert [t["parameters"] for t in tools] == [s["input_schema"] for s in workspace.tool_schemas()]
    assert {t["strict"] for t in openai.tool_definitions(workspace, api="responses", strict=True)} == {True}
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


def test_chat_definitions_say_strict_only_when_strict(workspace: Workspace) -> None:
    assert all("strict" not in t["function"] for t in openai.tool_definitions(workspace))
    assert all(t["function"]["strict"] is True for t in openai.tool_definitions(workspace, strict=True))


def test_anthropic_strict_definitions(workspace: Workspace) -> None:
    plain = {d["name"]: d for d in anthropic.tool_definitions(workspace)}
    for definition in anthropic.tool_definitions(workspace, strict=True):
        assert definition["strict"] is True
        assert definition["input_schema"] == anthropic.strict_schema(plain[definition["name"]]["input_schema"])
        assert definition["input_schema"].get("required") == plain[definition["name"]]["input_schema"].get("required")
        for node in schema_nodes(definition["input_schema"]):
            assert not {"default", "minLength", "pattern", "minimum", "maximum", "maxItems"} & set(node)
    edits = next(d for d in anthropic.tool_definitions(workspace, strict=True) if d["name"] == "multi_edit")
    assert edits["input_schema"]["properties"]["edits"]["minItems"] == 1  # 0 and 1 are supported
    assert "strict" not in anthropic.tool_definitions(workspace)[0]


# --- Gemini ----------------------------------------------------------------------------------------------


def test_gemini_declarations(workspace: Workspace) -> None:
    declarations = gemini.tool_definitions(workspace)
    assert [d["name"] for d in declarations] == [s["name"] for s in workspace.tool_schemas()]
    read = declarations[0]
    assert set(read) == {"name", "description", "parameters"}
    assert read["parameters"]["required"] == ["file_path"]
    assert read["parameters"]["properties"]["limit"]["default"] == 2000
    assert "additionalProperties" not in json.dumps(declarations)  # the Developer API refuses it


NOT_READ = "'a.txt' has not been read in this session — read the file, then retry"


def test_gemini_function_calls_are_answered_with_function_responses(root: Path, session: Session) -> None:
    (root / "a.txt").write_text("one\n")
    parts = [
        {"text": "Let me look."},
        {
            "function_call": {
                "id": "c1",
                "name": "edit",
                "args": {"file_path": "a.txt", "old_string": "one", "new_string": "1"},
            }
        },
        {"functionCall": {"name": "read", "args": {"file_path": "a.txt"}}},  # REST spelling, no id
        {"function_call": {"name": "read", "args": {"file_path": 3}}},
    ]
    assert gemini.function_responses(session, parts) == [
        {
            "function_response": {
                "name": "edit",
                "id": "c1",
                "response": {"error": f"ERROR FS_NOT_OBSERVED: {NOT_READ}"},
            }
        },
        {"function_response": {"name": "read", "response": {"output": "     1\tone"}}},
        {
            "function_response": {
                "name": "read",
                "response": {"error": "ERROR INVALID_ARGS: invalid arguments: /file_path: expected string, got number"},
            }
        },
    ]
    assert gemini.call_function(session, {"name": "read", "args": None}).error.code == "INVALID_ARGS"  # type: ignore[union-attr]


def test_gemini_sdk_objects_in_and_out(root: Path, session: Session) -> None:
    types = pytest.importorskip("google.genai.types")
    (root / "a.txt").write_text("one\n")
    call = types.FunctionCall(id="c9", name="read", args={"file_path": "a.txt"})
    reply = types.Content(role="model", parts=[types.Part(text="reading"), types.Part(function_call=call)])
    answers = gemini.function_responses(session, reply.parts or [])
    content = types.Content(role="user", parts=answers)  # the SDK takes our parts as they are
    assert content.parts is not None and content.parts[0].function_response is not None
    assert content.parts[0].function_response.response == {"output": "     1\tone"}
    assert content.parts[0].function_response.id == "c9"
    assert gemini.function_response(session.workspace.session("another"), call) == answers[0]  # not a re-read


# --- one workspace option, every adapter ----------------------------------------------------------------


def test_a_prefix_is_published_and_answered_by_every_adapter(root: Path) -> None:
    (root / "a.txt").write_text("one\n")
    with Workspace(root, prefix="fs_", brief_rereads=False) as workspace:
        session = workspace.session("p")
        names = [f"fs_{tool.name}" for tool in ALL_TOOLS]
        assert [t["function"]["name"] for t in openai.tool_definitions(workspace)] == names
        assert [t["name"] for t in openai.tool_definitions(workspace, api="responses")] == names
        assert [t["name"] for t in anthropic.tool_definitions(workspace, strict=True)] == names
        assert [t["name"] for t in gemini.tool_definitions(workspace)] == names
        read = '{"file_path": "a.txt"}'
        call = {"id": "c", "type": "function", "function": {"name": "fs_read", "arguments": read}}
        assert openai.answer_tool_call(session, call)["content"] == "     1\tone"
        block = {"type": "tool_use", "id": "t", "name": "fs_read", "input": {"file_path": "a.txt"}}
        assert anthropic.tool_result(session, block)["content"] == "     1\tone"
        part = {"function_call": {"name": "fs_read", "args": {"file_path": "a.txt"}}}
        assert gemini.function_response(session, part)["function_response"]["name"] == "fs_read"
        unprefixed = anthropic.tool_result(session, {**block, "name": "read"})
        assert unprefixed["content"].startswith("ERROR UNKNOWN_TOOL: unknown tool 'read'")
        assert 'did you mean "fs_read"?' in unprefixed["content"]


def test_a_remedy_names_the_tool_as_the_model_calls_it_and_only_if_offered(root: Path) -> None:
    (root / "sub").mkdir()
    with Workspace(root, prefix="fs_") as workspace:
        session = workspace.session("p")
        assert session.call("fs_read", {"file_path": "sub"}).text.endswith("— use fs_list to see its entries")
        missing = session.call("fs_edit", {"file_path": "new.txt", "old_string": "a", "new_string": "b"})
        assert missing.text.endswith("— to create it, use fs_write")
    with Workspace(root, tools=["read", "edit"]) as workspace:
        session = workspace.session("p")
        assert session.call("read", {"file_path": "sub"}).text == "'sub' is a directory, not a regular file"
        missing = session.call("edit", {"file_path": "new.txt", "old_string": "a", "new_string": "b"})
        assert missing.text == "'new.txt' does not exist"


def test_a_read_only_workspace_offers_no_mutating_tool_anywhere(root: Path) -> None:
    readers = [tool.name for tool in ALL_TOOLS if tool.read_only]
    with Workspace(root, read_only=True) as workspace:
        assert [t["function"]["name"] for t in openai.tool_definitions(workspace, strict=True)] == readers
        assert [t["name"] for t in anthropic.tool_definitions(workspace)] == readers
        assert [t["name"] for t in gemini.tool_definitions(workspace)] == readers
        block = {"type": "tool_use", "id": "t", "name": "write", "input": {"file_path": "new.txt", "content": "x"}}
        refused = anthropic.tool_result(workspace.session("r"), block)
        assert refused["content"].startswith("ERROR FS_SANDBOX_DENIED: the workspace is read-only")
    assert not (root / "new.txt").exists()
