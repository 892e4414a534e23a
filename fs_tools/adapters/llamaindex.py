"""LlamaIndex (``llama-index-core``): the workspace's tools as ``AsyncBaseTool`` objects, for
``FunctionAgent``, ``ReActAgent`` and any LLM integration that takes tools.

    agent = FunctionAgent(tools=tools(session), llm=llm)

Schema: LlamaIndex hands a tool's parameters to the LLM through ``ToolMetadata.get_parameters_dict``,
which keeps only ``type``, ``properties``, ``required`` and definitions — ``additionalProperties: false``
would be dropped. Our metadata returns the published schema whole.

Validation: none by LlamaIndex; the agent calls ``acall(**arguments)`` with the model's dict, which
reaches ``session.call`` unchanged, so a wrong type or an invented key is our INVALID_ARGS message.

Errors: a failure is a ``ToolOutput`` with ``is_error=True`` and the text ``ERROR <code>: <message>``
(the agent sends the model the text; ``is_error`` is the host's, on the ``ToolCallResult`` events).
"""

from __future__ import annotations

import copy
from typing import Any

from llama_index.core.tools.types import AsyncBaseTool, ToolMetadata, ToolOutput
from pydantic import BaseModel, ConfigDict

from fs_tools.adapters import render
from fs_tools.result import ToolResult
from fs_tools.workspace import Session


class _Metadata(ToolMetadata):
    """Metadata whose parameters are the published schema, whole."""

    def __init__(self, name: str, description: str, schema: dict[str, Any]) -> None:
        # fn_schema stays a model class (the ReAct formatter reads it); its schema is ours, unchanged
        arguments = type(
            f"{name}_arguments",
            (BaseModel,),
            {
                "model_config": ConfigDict(extra="allow"),
                "model_json_schema": classmethod(lambda cls, *a, **k: copy.deepcopy(schema)),
            },
        )
        super().__init__(description=description, name=name, fn_schema=arguments)
        self.published = schema

    def get_parameters_dict(self) -> dict[str, Any]:
        return copy.deepcopy(self.published)


class WorkspaceTool(AsyncBaseTool):
    """One fs-tools tool bound to a session."""

    def __init__(self, session: Session, schema: dict[str, Any]) -> None:
        self._metadata = _Metadata(schema["name"], schema["description"], schema["input_schema"])
        self.session = session

    @property
    def metadata(self) -> ToolMetadata:
        return self._metadata

    def _output(self, arguments: dict[str, Any], result: ToolResult) -> ToolOutput:
        return ToolOutput(
            tool_name=self._metadata.name or "",
            content=render(result),
            raw_input=arguments,
            raw_output=result,
            is_error=result.is_error,
        )

    def call(self, *args: Any, **arguments: Any) -> ToolOutput:
        return self._output(arguments, self.session.call(self._metadata.name or "", _raw(args, arguments)))

    async def acall(self, *args: Any, **arguments: Any) -> ToolOutput:
        return self._output(arguments, await self.session.acall(self._metadata.name or "", _raw(args, arguments)))


def _raw(args: tuple[Any, ...], arguments: dict[str, Any]) -> Any:
    """The call's arguments: keywords, or one positional value (what a caller passed that was not an object)."""
    return args[0] if len(args) == 1 and not arguments else arguments


def tools(session: Session) -> list[WorkspaceTool]:
    """One ``WorkspaceTool`` per tool of the workspace, bound to ``session``."""
    return [WorkspaceTool(session, schema) for schema in session.workspace.tool_schemas()]
