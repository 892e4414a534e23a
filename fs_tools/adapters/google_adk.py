"""Google ADK (``google-adk``): the workspace's tools as ADK ``BaseTool`` objects, for ``LlmAgent``.

    agent = LlmAgent(name="coder", model="gemini-2.5-flash", tools=tools(session))

Schema: each tool declares itself with ``parameters_json_schema`` — the published JSON Schema whole,
``additionalProperties: false`` included (ADK's ``FunctionTool`` would build one from a Python signature).

Validation: none by ADK for a ``BaseTool``; the model's arguments reach ``session.call`` unchanged
(``FunctionTool`` would validate them with pydantic, drop unknown keys and answer missing ones itself).

Errors: the result is a dict, which ADK sends as the ``function_response``: ``{"output": text}``, or on a
failure ``{"error": "ERROR <code>: <message>"}``, the keys Gemini documents (raising would end the run).
"""

from __future__ import annotations

import copy
from typing import Any

from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from fs_tools.adapters import render
from fs_tools.workspace import Session


class WorkspaceTool(BaseTool):  # type: ignore[misc]
    """One fs-tools tool bound to a session."""

    def __init__(self, session: Session, schema: dict[str, Any]) -> None:
        super().__init__(name=schema["name"], description=schema["description"])
        self.session = session
        self._published = schema["input_schema"]

    def _get_declaration(self) -> types.FunctionDeclaration:
        return types.FunctionDeclaration(
            name=self.name, description=self.description, parameters_json_schema=copy.deepcopy(self._published)
        )

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> dict[str, str]:
        result = await self.session.acall(self.name, args)
        return {"error": render(result)} if result.is_error else {"output": render(result)}


def tools(session: Session) -> list[WorkspaceTool]:
    """One ``WorkspaceTool`` per tool of the workspace, bound to ``session``."""
    return [WorkspaceTool(session, schema) for schema in session.workspace.tool_schemas()]
