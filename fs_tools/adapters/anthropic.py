"""Anthropic Messages API: tool definitions and ``tool_result`` blocks (``is_error`` set on failures).
Plain dicts: the ``anthropic`` package is not needed.

    reply = client.messages.create(model=..., tools=tool_definitions(workspace), messages=messages)
    # tool_definitions(workspace, strict=True): Anthropic strict tool use
    messages.append({"role": "assistant", "content": reply.content})
    messages.append({"role": "user", "content": tool_results(session, reply.content)})
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from fs_tools.adapters import field_of, render
from fs_tools.adapters.schemas import strict_optional
from fs_tools.result import ToolResult
from fs_tools.tools.dialects.anthropic import API_TYPE as TEXT_EDITOR_TYPE
from fs_tools.tools.dialects.anthropic import NAME as TEXT_EDITOR_NAME
from fs_tools.workspace import Session, Workspace


def strict_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The form of a tool's input schema that Anthropic's strict tool use accepts: optional arguments stay
    optional; keywords its grammar does not support (``default``, ``minLength``, ``pattern``,
    ``minimum``, …) are left out and still enforced by fs-tools' validator."""
    return strict_optional(schema)


def tool_definitions(workspace: Workspace, *, strict: bool = False) -> list[dict[str, Any]]:
    """``[{"name", "description", "input_schema"}]``: fs-tools' schemas are already in this shape.
    ``strict=True`` adds ``"strict": true`` (Anthropic strict tool use: inputs always match the schema)
    and gives the schema in the form strict mode accepts.

    In the ``anthropic`` dialect the text editor is declared as the API's built-in tool
    (``{"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"}``), whose schema the
    model knows already; with a name prefix it cannot be, and is declared with its schema instead."""
    out: list[dict[str, Any]] = []
    for schema in workspace.tool_schemas():
        if workspace.dialect.name == "anthropic" and schema["name"] == TEXT_EDITOR_NAME:
            out.append({"type": TEXT_EDITOR_TYPE, "name": TEXT_EDITOR_NAME})
        elif strict:
            out.append({**schema, "input_schema": strict_schema(schema["input_schema"]), "strict": True})
        else:
            out.append(dict(schema))
    return out


def call_tool_use(session: Session, block: Any) -> ToolResult:
    """Run one ``tool_use`` block (``{"type": "tool_use", "id", "name", "input"}``, a dict or an SDK
    object). ``input`` goes to fs-tools as the model wrote it."""
    return session.call(field_of(block, "name"), field_of(block, "input"))


def tool_result(session: Session, block: Any) -> dict[str, Any]:
    """The ``tool_result`` block answering a ``tool_use`` block; ``is_error`` is set on failures and the
    text starts with the error code."""
    result = call_tool_use(session, block)
    content: str | list[dict[str, Any]] = render(result, images_shown=True)
    if result.media:  # an image read: the text, then the image as an image block
        content = [{"type": "text", "text": content}] + [
            {"type": "image", "source": {"type": "base64", "media_type": item.mime_type, "data": item.base64}}
            for item in result.media
        ]
    out: dict[str, Any] = {"type": "tool_result", "tool_use_id": field_of(block, "id"), "content": content}
    if result.is_error:
        out["is_error"] = True
    return out


def tool_results(session: Session, content: Iterable[Any]) -> list[dict[str, Any]]:
    """``tool_result`` blocks for every ``tool_use`` block of an assistant message's content, in order
    (the content of the next user message)."""
    return [tool_result(session, block) for block in content if field_of(block, "type") == "tool_use"]
