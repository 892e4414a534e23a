"""Strands Agents (``strands-agents``): the workspace's tools as ``PythonAgentTool`` objects built from a raw
tool spec, for ``Agent(tools=...)`` and direct calls (``agent.tool.read(file_path="app.py")``).

    agent = Agent(model=model, tools=tools(session))
    agent("rename greet to welcome in src/app.py")

Validation: Strands validates a call only for ``@tool`` functions (a pydantic model of the signature);
a tool built from a spec gets the model's input as the event loop parsed it, and hands it to
``session.acall`` unchanged, so a wrong type or an invented key is our INVALID_ARGS message. Strands itself
checks only the tool's name, and parses the streamed input JSON before any tool sees it: input that is not
JSON at all reaches the tool as ``{}`` (Strands logs a warning), so the model reads which arguments are
missing rather than that its JSON was broken.

Schema: each spec's ``inputSchema`` is ``{"json": <the published schema>}``. Strands normalizes a spec before
offering it (every property gets a ``type`` and a ``description`` when it has none, the schema a
``required`` list): ours already has them, so the only change is ``"required": []`` on a schema with no
required argument. ``additionalProperties: false`` is kept, and each provider passes the schema on as it is
(Bedrock's ``strict_tools`` adds ``additionalProperties: false`` where it is missing; ours has it).

Errors: a failure is a ``ToolResult`` with ``status="error"`` and the text ``ERROR <code>: <message>``;
providers that have an error flag set it from the status (Anthropic's ``is_error``, Bedrock's ``status``).
The images of a ``read`` of one follow the text as Strands ``image`` blocks (``images=False`` leaves them
out and says so).
"""

from __future__ import annotations

import copy
from typing import Any

from strands.tools import PythonAgentTool
from strands.types.media import ImageFormat
from strands.types.tools import ToolResult, ToolResultContent, ToolResultStatus, ToolSpec, ToolUse

from fs_tools.adapters import render
from fs_tools.result import ToolResult as FsResult
from fs_tools.workspace import Session

_FORMATS: dict[str, ImageFormat] = {"image/png": "png", "image/jpeg": "jpeg", "image/gif": "gif", "image/webp": "webp"}


class WorkspaceTool(PythonAgentTool):  # type: ignore[misc]
    """One fs-tools tool bound to a session: the published schema, and no validation but ours."""

    def __init__(self, session: Session, schema: dict[str, Any], *, images: bool = True) -> None:
        spec = ToolSpec(
            name=schema["name"],
            description=schema["description"],
            inputSchema={"json": copy.deepcopy(schema["input_schema"])},
        )
        super().__init__(schema["name"], spec, self._invoke)
        self.session = session
        self.images = images

    async def _invoke(self, tool_use: ToolUse, **invocation_state: Any) -> ToolResult:
        result = await self.session.acall(self.tool_name, tool_use.get("input", {}))
        status: ToolResultStatus = "error" if result.is_error else "success"
        return ToolResult(toolUseId=str(tool_use.get("toolUseId", "")), status=status, content=self._content(result))

    def _content(self, result: FsResult) -> list[ToolResultContent]:
        shown = [item for item in result.media if item.mime_type in _FORMATS] if self.images else []
        content: list[ToolResultContent] = [{"text": render(result, images_shown=bool(shown))}]
        content += [{"image": {"format": _FORMATS[item.mime_type], "source": {"bytes": item.data}}} for item in shown]
        return content


def tools(session: Session, *, images: bool = True) -> list[Any]:
    """One ``WorkspaceTool`` per tool of the workspace, bound to ``session`` (typed ``list[Any]``: ``Agent``'s
    ``tools`` parameter is an invariant ``list`` of a union, which a ``list[WorkspaceTool]`` does not match)."""
    return [WorkspaceTool(session, schema, images=images) for schema in session.workspace.tool_schemas()]
