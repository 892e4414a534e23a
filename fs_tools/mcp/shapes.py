"""What the MCP server sends, as plain JSON: the tool definitions of ``tools/list`` and the results of
``tools/call``.

The server builds its SDK objects from these dicts, and ``fs-tools schema`` and ``fs-tools call --json``
print them, so the command line shows exactly what a client gets, without the ``mcp`` extra.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fs_tools.adapters import render

if TYPE_CHECKING:
    from fs_tools.result import ToolResult
    from fs_tools.tools import Tool
    from fs_tools.workspace import Workspace


def tool_definition(tool: Tool[Any], *, structured: bool = True) -> dict[str, Any]:
    """``{"name", "title", "description", "inputSchema", "outputSchema", "annotations"}``; read-only tools
    carry ``readOnlyHint``, the others ``destructiveHint`` — but for one that only adds
    (``create_directory``: idempotent). ``outputSchema`` is the schema of a success's
    ``structuredContent`` (left out where results carry none: ``structured=False``)."""
    schema = tool.schema()
    title = tool.title or schema["name"]
    definition: dict[str, Any] = {
        "name": schema["name"],
        "title": title,
        "description": schema["description"],
        "inputSchema": schema["input_schema"],
    }
    if structured:
        definition["outputSchema"] = output_schema(tool)
    definition["annotations"] = {
        "title": title,
        "readOnlyHint": tool.read_only,
        "destructiveHint": not (tool.read_only or tool.additive),
        "idempotentHint": tool.read_only or tool.additive,
        "openWorldHint": False,
    }
    return definition


# What ``structuredContent`` holds when a call fails (``call_result``): the error's class, code and message.
ERROR_CONTENT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "error": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "code": {"type": "string"}, "message": {"type": "string"}},
            "required": ["name", "code", "message"],
            "additionalProperties": False,
        }
    },
    "required": ["error"],
    "additionalProperties": False,
}


def output_schema(tool: Tool[Any]) -> dict[str, Any]:
    """The JSON Schema of ``structuredContent``: the tool's output model (a success's value), or the
    error (a failure's: ``{"error": {"name", "code", "message"}}``) — some clients check a failure's
    content against the schema too."""
    success = tool.output.model_json_schema()
    if success.get("type") != "object":  # pragma: no cover - every output model is an object
        raise AssertionError(f"the output of {tool.name!r} is not an object")
    definitions = success.pop("$defs", None)
    schema: dict[str, Any] = {"type": "object", "anyOf": [success, ERROR_CONTENT]}
    if definitions is not None:
        schema["$defs"] = definitions  # the success's references point at the root's $defs
    return schema


def tool_definitions(workspace: Workspace, *, structured: bool = True) -> list[dict[str, Any]]:
    return [tool_definition(tool, structured=structured) for tool in workspace.tools.values()]


def call_result(result: ToolResult) -> dict[str, Any]:
    """``{"isError", "content", "structuredContent"}``. The text is what the adapters give a model (a
    failure's starts with ``ERROR <code>:``); ``structuredContent`` is the success value (a value that is
    not an object as ``{"value": ...}``) or ``{"error": {"name", "code", "message"}}``."""
    content: list[dict[str, Any]] = [{"type": "text", "text": render(result, images_shown=True)}]
    content += [{"type": "image", "data": item.base64, "mimeType": item.mime_type} for item in result.media]
    if result.error is not None:
        error = {"name": result.error.name, "code": result.error.code, "message": result.error.message}
        return {"isError": True, "content": content, "structuredContent": {"error": error}}
    value = result.value if isinstance(result.value, dict) else {"value": result.value}
    return {"isError": False, "content": content, "structuredContent": value}
