"""OpenAI function calling: tool definitions (Chat Completions and Responses, plain or strict) and a
dispatcher from a tool call to the message that answers it. Plain dicts: the ``openai`` package is not
needed.

    tools = tool_definitions(workspace, strict=True)                   # Chat Completions
    reply = client.chat.completions.create(model=..., messages=messages, tools=tools)
    for call in reply.choices[0].message.tool_calls or []:
        messages.append(answer_tool_call(session, call))             # {"role": "tool", ...}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fs_tools.adapters import field_of, render
from fs_tools.adapters.schemas import strict_required
from fs_tools.result import ToolResult
from fs_tools.workspace import Session, Workspace


def strict_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The strict-mode form of a tool's input schema: every object lists all its properties as required
    and allows no others; an optional property is nullable (``null`` means its default). Keywords strict
    mode may refuse (``default``, ``minLength``, ``pattern``, ``minimum``, …) are left out and still
    enforced by fs-tools' validator."""
    return strict_required(schema)


def tool_definitions(workspace: Workspace, *, strict: bool = False, api: str = "chat") -> list[dict[str, Any]]:
    """The workspace's tools as OpenAI function tools. ``api`` is ``"chat"`` (Chat Completions:
    ``{"type": "function", "function": {...}}``) or ``"responses"`` (Responses: a flat
    ``{"type": "function", "name", ...}``). ``strict=True`` gives the strict form with ``strict: true``.

    Responses always carry ``strict`` (that API treats a tool without it as strict and rewrites its
    schema); Chat Completions, non-strict by default, carry it only when true, as OpenAI-compatible
    servers expect."""
    if api not in ("chat", "responses"):
        raise ValueError(f'api must be "chat" or "responses", not {api!r}')
    return [_definition(schema, strict=strict, api=api) for schema in workspace.tool_schemas()]


def _definition(schema: Mapping[str, Any], *, strict: bool, api: str) -> dict[str, Any]:
    parameters = strict_schema(schema["input_schema"]) if strict else schema["input_schema"]
    function: dict[str, Any] = {"name": schema["name"], "description": schema["description"], "parameters": parameters}
    if api == "responses":
        return {"type": "function", **function, "strict": strict}
    if strict:
        function["strict"] = True
    return {"type": "function", "function": function}


def call_tool(session: Session, tool_call: Any) -> ToolResult:
    """Run a Chat Completions tool call (``{"id", "type": "function", "function": {"name",
    "arguments"}}``) or a Responses ``function_call`` item (``{"call_id", "name", "arguments"}``).
    ``arguments`` is the model's JSON string, passed as is: broken JSON is an INVALID_ARGS result."""
    function = field_of(tool_call, "function") or tool_call
    return session.call(field_of(function, "name"), field_of(function, "arguments"))


def answer_tool_call(session: Session, tool_call: Any) -> dict[str, Any]:
    """The message answering a tool call: ``{"role": "tool", "tool_call_id", "content"}`` for Chat
    Completions, ``{"type": "function_call_output", "call_id", "output"}`` for a Responses item. On a
    failure the content starts with the error code, so the model sees which rule it broke."""
    result = call_tool(session, tool_call)
    content = render(result)
    call_id = field_of(tool_call, "call_id")
    if call_id is not None and field_of(tool_call, "function") is None:
        return {"type": "function_call_output", "call_id": call_id, "output": content}
    return {"role": "tool", "tool_call_id": field_of(tool_call, "id"), "content": content}
