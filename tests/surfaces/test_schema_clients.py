"""The published schemas and every adapter's forms of them, checked by the clients that consume them
(SPEC §11): jsonschema's Draft 2020-12 meta-schema, Anthropic's SDK schema helper and typed params,
google-genai's types, the openai SDK's typed params, and OpenAI's documented strict-mode rules (a
checker below). No network: each client's own validation is the judge."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from pydantic import TypeAdapter

from fs_tools import Session, Workspace
from fs_tools.adapters import anthropic, gemini, openai
from fs_tools.adapters.schemas import schema_nodes


def _published(workspace: Workspace) -> Iterator[tuple[str, dict[str, Any]]]:
    for entry in workspace.tool_schemas():
        yield entry["name"], entry["input_schema"]


# --- the published schemas are portable ------------------------------------------------------------


def test_published_schemas_have_no_type_arrays_and_no_null(workspace: Workspace) -> None:
    for name, schema in _published(workspace):
        Draft202012Validator.check_schema(schema)
        for node in schema_nodes(schema):
            assert isinstance(node.get("type", ""), str), (name, node)
            assert {"type": "null"} not in node.get("anyOf", []), (name, node)
            assert node.get("default", "absent") is not None, (name, node)


def test_optional_arguments_are_not_required_and_keep_their_facts(workspace: Workspace) -> None:
    read = dict(_published(workspace))["read"]
    assert read["required"] == ["file_path"]
    assert read["properties"]["offset"] == {
        "default": 1,
        "description": "First line to show (1-based). Default 1.",
        "maximum": 2**63 - 1,
        "minimum": 1,
        "type": "integer",
    }
    glob = dict(_published(workspace))["grep"]["properties"]["glob"]  # declared ``str | None = None``
    assert glob["type"] == "string" and "default" not in glob and "anyOf" not in glob


def test_an_explicit_null_still_means_the_default(root: Any, session: Session) -> None:
    (root / "a.txt").write_text("one\n")
    nulls = {"file_path": "a.txt", "offset": None, "limit": None}
    assert session.call("read", nulls).text == "     1\tone"
    assert session.call("grep", {"pattern": "one", "glob": None, "path": None}).value["files_with_matches"] == 1


# --- Anthropic --------------------------------------------------------------------------------------


@pytest.fixture
def anthropic_sdk() -> Any:
    return pytest.importorskip("anthropic")


def test_anthropics_schema_helper_accepts_every_published_schema(workspace: Workspace, anthropic_sdk: Any) -> None:
    for name, schema in _published(workspace):
        transformed = anthropic_sdk.transform_schema(schema)  # raised on a type array
        assert list(transformed["properties"]) == list(schema["properties"]), name


def test_anthropic_definitions_are_valid_tool_params(workspace: Workspace, anthropic_sdk: Any) -> None:
    from anthropic.types import ToolParam

    declared = ToolParam.__required_keys__ | ToolParam.__optional_keys__
    for strict in (False, True):
        for definition in anthropic.tool_definitions(workspace, strict=strict):
            TypeAdapter(ToolParam).validate_python(definition)
            assert set(definition) <= declared
            assert definition.get("strict", False) is strict
            Draft202012Validator.check_schema(definition["input_schema"])


def _typeless_enums(schema: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(schema)
    for node in schema_nodes(out):
        if "enum" in node:
            node.pop("type", None)
    return out


def test_the_anthropic_strict_form_is_what_the_sdk_would_send(workspace: Workspace, anthropic_sdk: Any) -> None:
    """The SDK's strict transform moves every keyword strict tool use does not support into the
    description; our strict form has none, so the transform leaves it as it is — but for ``type`` beside
    an ``enum``, which newer SDKs drop (the literals say it) and older ones require."""
    for definition in anthropic.tool_definitions(workspace, strict=True):
        schema = definition["input_schema"]
        assert _typeless_enums(anthropic_sdk.transform_schema(schema)) == _typeless_enums(schema), definition["name"]
        for node in schema_nodes(schema):
            if node.get("type") == "object":
                assert node["additionalProperties"] is False
    read = next(d for d in anthropic.tool_definitions(workspace, strict=True) if d["name"] == "read")
    assert read["input_schema"]["required"] == ["file_path"]  # optional stays optional


# --- Gemini (google-genai) --------------------------------------------------------------------------


@pytest.fixture
def genai_types() -> Any:
    return pytest.importorskip("google.genai.types")


def test_google_schema_accepts_every_published_schema(workspace: Workspace, genai_types: Any) -> None:
    """``parameters=<our schema>`` is how users hand a JSON schema to google-genai's declarations."""
    for name, schema in _published(workspace):
        parsed = genai_types.Schema.model_validate(schema)  # refused a type array
        assert parsed.required == schema.get("required"), name
        genai_types.FunctionDeclaration(name=name, parameters_json_schema=schema)


def test_gemini_declarations_are_accepted_by_the_sdk(workspace: Workspace, genai_types: Any) -> None:
    declarations = gemini.tool_definitions(workspace)
    tool = genai_types.Tool(function_declarations=declarations)
    assert [d.name for d in tool.function_declarations] == [s["name"] for s in workspace.tool_schemas()]
    for declaration, parsed in zip(declarations, tool.function_declarations, strict=True):
        # nothing dropped by the SDK, and nothing the Developer API refuses (additionalProperties)
        dumped = parsed.parameters.model_dump(by_alias=True, exclude_none=True, mode="json")
        assert _keys(dumped) == _keys(declaration["parameters"])
        assert "additionalProperties" not in json.dumps(declaration)
    genai_types.GenerateContentConfig(tools=[{"function_declarations": declarations}])


def _keys(node: Any) -> Any:
    """The shape of a schema: its keys, nested (values aside: the SDK spells types in capitals)."""
    if isinstance(node, dict):
        return {k: _keys(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_keys(v) for v in node]
    return None


# --- OpenAI ------------------------------------------------------------------------------------------

# OpenAI's documented strict-mode rules (Structured Outputs, "Supported schemas"): the root is an object,
# not anyOf; every object has additionalProperties false and lists every property in required; optional
# fields are emulated with a union with null; only these keywords; at most 10 levels of nesting and
# 5000 properties.
_OPENAI_STRICT_KEYWORDS = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "anyOf",
        "enum",
        "const",
        "description",
        "$ref",
        "$defs",
        "pattern",
        "format",
        "multipleOf",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "minItems",
        "maxItems",
    }
)
_OPENAI_TYPES = frozenset({"string", "number", "integer", "boolean", "object", "array", "null"})


def openai_strict_violations(schema: dict[str, Any]) -> list[str]:
    found = []
    if schema.get("type") != "object" or "anyOf" in schema:
        found.append("/: the root must be an object, not anyOf")
    for node, pointer, depth in _walk(schema, "", 1):
        where = pointer or "/"
        found += [f"{where}: keyword {key!r} is not supported" for key in node if key not in _OPENAI_STRICT_KEYWORDS]
        types = node.get("type", [])
        found += [
            f"{where}: type {t!r}" for t in ([types] if isinstance(types, str) else types) if t not in _OPENAI_TYPES
        ]
        if node.get("type") == "object" or "properties" in node:
            if node.get("additionalProperties") is not False:
                found.append(f"{where}: additionalProperties must be false")
            if sorted(node.get("required", [])) != sorted(node.get("properties", {})):
                found.append(f"{where}: every property must be required")
        if depth > 10:
            found.append(f"{where}: nested deeper than 10 levels")
    if sum(len(n.get("properties", {})) for n, _, _ in _walk(schema, "", 1)) > 5000:
        found.append("/: more than 5000 properties")
    return found


def _walk(node: dict[str, Any], where: str, depth: int) -> Iterator[tuple[dict[str, Any], str, int]]:
    yield node, where, depth
    for name, prop in node.get("properties", {}).items():
        yield from _walk(prop, f"{where}/properties/{name}", depth + 1)
    if isinstance(node.get("items"), dict):
        yield from _walk(node["items"], f"{where}/items", depth)
    for index, branch in enumerate(node.get("anyOf", [])):
        yield from _walk(branch, f"{where}/anyOf/{index}", depth)


def _accepts_null(schema: dict[str, Any]) -> bool:
    return Draft202012Validator(schema).is_valid(None)


def _optional_properties(schema: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(pointer, property schema) of every optional property, objects in array items included."""
    for node, where, _ in _walk(schema, "", 1):
        for name in set(node.get("properties", {})) - set(node.get("required", [])):
            yield f"{where}/properties/{name}", node["properties"][name]


def _assert_strict_and_optional_nullable(published: dict[str, Any], strict: dict[str, Any]) -> None:
    assert openai_strict_violations(strict) == []
    Draft202012Validator.check_schema(strict)
    strict_nodes = {where: node for node, where, _ in _walk(strict, "", 1)}
    for where, _ in _optional_properties(published):
        assert _accepts_null(strict_nodes[where]), where


def test_the_checker_catches_the_published_schemas(workspace: Workspace) -> None:
    read = dict(_published(workspace))["read"]
    problems = openai_strict_violations(read)
    assert "/: every property must be required" in problems
    assert "/properties/offset: keyword 'default' is not supported" in problems


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_openai_strict_definitions_follow_the_documented_rules(workspace: Workspace, api: str) -> None:
    published = dict(_published(workspace))
    for definition in openai.tool_definitions(workspace, strict=True, api=api):
        function = definition["function"] if api == "chat" else definition
        assert function["strict"] is True
        _assert_strict_and_optional_nullable(published[function["name"]], function["parameters"])


def test_openai_definitions_are_the_sdks_typed_params(workspace: Workspace) -> None:
    pytest.importorskip("openai")
    from openai.types.chat import ChatCompletionToolParam
    from openai.types.responses import FunctionToolParam
    from openai.types.shared_params import FunctionDefinition

    for strict in (False, True):
        for flat in openai.tool_definitions(workspace, strict=strict, api="responses"):
            TypeAdapter(FunctionToolParam).validate_python(flat)  # ``strict`` is Required there
            assert FunctionToolParam.__required_keys__ <= set(flat)
            assert flat["strict"] is strict
        for nested in openai.tool_definitions(workspace, strict=strict, api="chat"):
            TypeAdapter(ChatCompletionToolParam).validate_python(nested)
            assert (
                set(nested["function"]) <= FunctionDefinition.__required_keys__ | FunctionDefinition.__optional_keys__
            )
            assert nested["function"].get("strict", False) is strict


# --- frameworks: what they send in strict mode ---------------------------------------------------------


def test_langchain_strict_binding_sends_a_valid_strict_schema(workspace: Workspace, session: Session) -> None:
    pytest.importorskip("langchain_core")
    from langchain_core.utils.function_calling import convert_to_openai_tool

    from fs_tools.adapters.langchain import tools

    published = dict(_published(workspace))
    for tool in tools(session, strict=True):
        before = json.dumps(tool.args_schema)
        function = convert_to_openai_tool(tool, strict=True)["function"]  # what bind_tools(strict=True) sends
        assert function["strict"] is True
        _assert_strict_and_optional_nullable(published[tool.name], function["parameters"])
        assert json.dumps(tool.args_schema) == before  # LangChain's conversion changed nothing of ours
    # the pitfall the option exists for: the plain tools under a strict binding break the rules
    plain = convert_to_openai_tool(tools(session)[0], strict=True)["function"]["parameters"]
    assert openai_strict_violations(plain) != []


def test_pydantic_ai_strict_tools_stay_strict_through_its_openai_transform(
    workspace: Workspace, session: Session
) -> None:
    pytest.importorskip("pydantic_ai")
    from pydantic_ai.profiles.openai import OpenAIJsonSchemaTransformer

    from fs_tools.adapters.pydantic_ai import tools

    published = dict(_published(workspace))
    for tool in tools(session, strict=True):
        definition = tool.tool_def
        assert definition.strict is True
        sent = OpenAIJsonSchemaTransformer(definition.parameters_json_schema, strict=True).walk()
        _assert_strict_and_optional_nullable(published[tool.name], sent)
    assert {tool.strict for tool in tools(session)} == {None}
    assert {tool.strict for tool in tools(session, strict=False)} == {False}
