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


def tool_definition(tool: Tool[Any]) -> dict[str, Any]:
    """``{"name", "description", "inputSchema", "annotations"}``; read-only tools carry ``readOnlyHint``,
    the others ``destructiveHint`` — but for one that only adds (``create_directory``: idempotent)."""
    schema = tool.schema()
    return {
        "name": schema["name"],
        "description": schema["description"],
        "inputSchema": schema["input_schema"],
        "annotations": {
            "readOnlyHint": tool.read_only,
            "destructiveHint": not (tool.read_only or tool.additive),
            "idempotentHint": tool.read_only or tool.additive,
            "openWorldHint": False,
        },
    }


def tool_definitions(workspace: Workspace) -> list[dict[str, Any]]:
    return [tool_definition(tool) for tool in workspace.tools.values()]


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
