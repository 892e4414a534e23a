"""Gemini (the ``google-genai`` SDK, the Gemini Developer API and Vertex AI): function declarations, and
``function_response`` parts answering ``function_call`` parts. Plain dicts: the ``google-genai`` package
is not needed.

    config = types.GenerateContentConfig(tools=[types.Tool(function_declarations=tool_definitions(workspace))])
    reply = client.models.generate_content(model=..., contents=contents, config=config)
    contents.append(reply.candidates[0].content)
    contents.append({"role": "user", "parts": function_responses(session, reply.candidates[0].content.parts)})

The declarations carry ``parameters`` in the OpenAPI subset both APIs accept; ``additionalProperties``,
which the Developer API refuses, is left out, and fs-tools still refuses an unknown argument with
INVALID_ARGS naming it. Gemini has no per-function strict flag (its ``VALIDATED`` calling mode is set
per request, in ``tool_config``), so there is no ``strict`` option here.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from fs_tools.adapters import field_of, render
from fs_tools.adapters.schemas import gemini_parameters
from fs_tools.result import ToolResult
from fs_tools.workspace import Session, Workspace


def tool_definitions(workspace: Workspace, *, json_schema: bool = False) -> list[dict[str, Any]]:
    """``[{"name", "description", "parameters"}]``: function declarations, for
    ``types.Tool(function_declarations=...)`` or a ``{"function_declarations": ...}`` dict.

    ``json_schema=True`` gives ``parameters_json_schema`` instead (google-genai 1.21 and later): the
    published JSON Schema whole, ``additionalProperties: false`` included, as the SDK sends it."""
    key = "parameters_json_schema" if json_schema else "parameters"
    return [
        {
            "name": schema["name"],
            "description": schema["description"],
            key: copy.deepcopy(schema["input_schema"]) if json_schema else gemini_parameters(schema["input_schema"]),
        }
        for schema in workspace.tool_schemas()
    ]


def function_call_of(item: Any) -> Any:
    """The function call of a part (``{"function_call": {...}}``, REST's ``functionCall``, or the SDK's
    ``Part``), or ``item`` itself when it is a function call already; None for any other part."""
    for key in ("function_call", "functionCall"):
        call = field_of(item, key)
        if call is not None:
            return call
    return item if field_of(item, "name") is not None else None


def call_function(session: Session, item: Any) -> ToolResult:
    """Run one function call (``{"name", "args", "id"?}``, a dict or the SDK's ``FunctionCall``, or a
    part holding one). ``args`` go to fs-tools as the model wrote them."""
    call = function_call_of(item)
    return session.call(field_of(call, "name"), field_of(call, "args"))


def function_response(session: Session, item: Any) -> dict[str, Any]:
    """The ``function_response`` part answering a function call: ``response`` is ``{"output": text}``,
    or on a failure ``{"error": "ERROR <code>: <message>"}``, as Gemini documents the two keys. The
    call's ``id`` is echoed when it has one."""
    call = function_call_of(item)
    result = call_function(session, call)
    key = "error" if result.is_error else "output"
    answer: dict[str, Any] = {"name": field_of(call, "name"), "response": {key: render(result)}}
    call_id = field_of(call, "id")
    if call_id is not None:
        answer["id"] = call_id
    return {"function_response": answer}


def function_responses(session: Session, parts: Iterable[Any]) -> list[dict[str, Any]]:
    """``function_response`` parts for every function call among a model turn's parts, in order (the
    parts of the next user turn)."""
    return [function_response(session, part) for part in parts if function_call_of(part) is not None]
