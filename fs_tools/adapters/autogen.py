"""AutoGen (``autogen-agentchat`` / ``autogen-core`` 0.7): the workspace's tools as ``BaseTool`` objects,
for ``AssistantAgent`` and any workbench.

    agent = AssistantAgent("coder", model_client=client, tools=tools(session), max_tool_iterations=10)

Schema: each tool's ``schema`` is the published one (AutoGen would build its own from a pydantic model).

Validation: AutoGen validates a call with the tool's pydantic model in ``run_json``; ours passes the
arguments to ``session.call`` unchanged, so a wrong type or an invented key is our INVALID_ARGS
message. Only arguments that are not JSON at all are answered by AutoGen itself, before any tool runs.

Errors: AutoGen marks a result as an error (``FunctionExecutionResult.is_error``, which the model client
receives) only when the tool raises; a failure raises ``ToolFailed`` whose message is the text
``ERROR <code>: <message>``, which AutoGen passes on unchanged.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from autogen_core import CancellationToken
from autogen_core.tools import BaseTool, ToolSchema
from pydantic import BaseModel, ConfigDict

from fs_tools.adapters import render
from fs_tools.workspace import Session


class ToolFailed(Exception):
    """A failed call; its message is what the model reads (``ERROR <code>: <message>``)."""


class _Arguments(BaseModel):
    """What AutoGen's ``BaseTool`` wants as an argument type; never used to validate."""

    model_config = ConfigDict(extra="allow")


class WorkspaceTool(BaseTool[_Arguments, BaseModel]):
    """One fs-tools tool bound to a session."""

    def __init__(self, session: Session, schema: dict[str, Any]) -> None:
        super().__init__(_Arguments, BaseModel, schema["name"], schema["description"])
        self.session = session
        self._published = schema["input_schema"]

    @property
    def schema(self) -> ToolSchema:
        return ToolSchema(name=self.name, description=self.description, parameters=copy.deepcopy(self._published))

    async def run_json(
        self, args: Mapping[str, Any], cancellation_token: CancellationToken, call_id: str | None = None
    ) -> Any:
        result = await self.session.acall(self.name, dict(args) if isinstance(args, Mapping) else args)
        if result.is_error:
            raise ToolFailed(render(result))
        return render(result)

    async def run(self, args: _Arguments, cancellation_token: CancellationToken) -> BaseModel:
        raise NotImplementedError("fs-tools tools run through run_json")  # pragma: no cover

    def return_value_as_string(self, value: Any) -> str:
        return str(value)


def tools(session: Session) -> list[WorkspaceTool]:
    """One ``WorkspaceTool`` per tool of the workspace, bound to ``session``."""
    return [WorkspaceTool(session, schema) for schema in session.workspace.tool_schemas()]
