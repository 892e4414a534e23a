"""smolagents: the workspace's tools as ``smolagents.Tool`` objects, and a ``ToolCallingAgent`` that hands
them the model's arguments as it wrote them.

    agent = WorkspaceAgent(tools=tools(session), model=model)
    agent.run("rename greet to welcome in src/app.py")

Validation: ``ToolCallingAgent.execute_tool_call`` checks every call against the tool's ``inputs`` before
the tool runs — an invented key, a wrong type or a missing argument gets smolagents' own message, and the
model never sees ours (typing the inputs ``any`` does not help: unknown keys are still refused, and the
model is told every argument is an optional string). ``WorkspaceAgent`` skips that check for these tools
only, so their arguments reach ``session.call`` unchanged and come back as our INVALID_ARGS message;
every other tool of the agent is called as smolagents calls it.

Schema: smolagents builds what the model sees from ``inputs``; each of ours carries the published
property schema (its type, description, enum and bounds), optional ones marked ``nullable``.
smolagents drops ``additionalProperties``; fs-tools still refuses an unknown argument.

Errors: smolagents has no error flag for a tool's output; a failure is the text ``ERROR <code>:
<message>`` (raising would end the step with smolagents' own wrapping). The output is a ``str`` whose
``is_error`` attribute tells the host.
"""

from __future__ import annotations

import copy
from typing import Any

from smolagents import Tool, ToolCallingAgent  # type: ignore[import-untyped]

from fs_tools.adapters import ToolText
from fs_tools.workspace import Session


class WorkspaceTool(Tool):  # type: ignore[misc]
    """One fs-tools tool bound to a session."""

    skip_forward_signature_validation = True  # forward(**arguments), whatever the model sent
    output_type = "string"

    def __init__(self, session: Session, schema: dict[str, Any]) -> None:
        self.name = schema["name"]
        self.description = schema["description"]
        self.session = session
        published = schema["input_schema"]
        required = set(published.get("required", []))
        self.inputs = {
            name: {"description": "", **_typed(copy.deepcopy(prop)), **({} if name in required else {"nullable": True})}
            for name, prop in published.get("properties", {}).items()
        }
        super().__init__()

    def forward(self, *args: Any, **arguments: Any) -> ToolText:
        raw = args[0] if args and not arguments else arguments  # arguments that were not an object reach us too
        return ToolText(self.session.call(self.name, raw))


def _typed(prop: dict[str, Any]) -> dict[str, Any]:
    """smolagents wants a ``type`` on every input: an ``anyOf`` without one is offered as ``any``."""
    if "type" not in prop:
        prop["type"] = "any"
    return prop


class WorkspaceAgent(ToolCallingAgent):  # type: ignore[misc]
    """A ``ToolCallingAgent`` whose fs-tools tools get the model's arguments unvalidated by smolagents."""

    def execute_tool_call(self, tool_name: str, arguments: Any) -> Any:
        tool = self.tools.get(tool_name)
        if isinstance(tool, WorkspaceTool):
            return tool.forward(**arguments) if isinstance(arguments, dict) else tool.forward(arguments)
        return super().execute_tool_call(tool_name, arguments)


def tools(session: Session) -> list[WorkspaceTool]:
    """One ``WorkspaceTool`` per tool of the workspace, bound to ``session``; give them to a
    ``WorkspaceAgent`` so smolagents does not answer for our validator."""
    return [WorkspaceTool(session, schema) for schema in session.workspace.tool_schemas()]
