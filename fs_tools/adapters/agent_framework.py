"""Microsoft Agent Framework (``agent-framework-core`` 1.x): the workspace's tools as ``FunctionTool``
objects, for ``Agent`` and any chat client that has the function-invocation layer, and ``ErrorFlags``, a
chat middleware that marks their failures as errors.

    agent = Agent(client, "You edit code.", tools=tools(session), middleware=[ErrorFlags()])
    response = await agent.run("rename greet to welcome in src/app.py")

Validation: a ``FunctionTool`` given a JSON schema (``input_model={...}``) checks the model's arguments
against it before the tool runs (required keys, ``additionalProperties: false``, each property's
``type`` and ``enum``), and the model reads only ``Error: Argument parsing failed.``. Ours are given an
argument model with no fields that allows every key, which accepts any object unchanged, so the model's
arguments reach ``session.acall`` as it wrote them and a wrong type or an invented key comes back as our
INVALID_ARGS message. Arguments that are not a JSON object (broken JSON, a bare value) reach the
framework's tools as ``{"raw": <what the model wrote>}``; ours pass that value on, so fs-tools answers it.

Schema: the model sees each tool's ``parameters()``, which is the published schema, whole
(``additionalProperties: false`` kept, key order as published; the framework would sort the keys of a
schema it generates). Provider clients may still reshape it on the wire.

Errors: the framework flags a failed call with ``exception`` on its ``function_result`` (a provider
client that has an error flag sends it: Anthropic's ``is_error``), but only when the tool raises, and
the model then reads ``Error: Function failed.``, not the tool's message. So a failure is returned as
the text ``ERROR <code>: <message>``, marked for the host (``ERROR_KEY`` in the text item's
``additional_properties``), and ``ErrorFlags`` sets ``exception`` on those results before each model
call. Without it the text is the same and nothing is flagged. The flag is set after the framework
counts errors, so these failures do not count towards ``max_consecutive_errors_per_request``.
"""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable
from typing import Any

from agent_framework import ChatContext, ChatMiddleware, Content, FunctionTool
from pydantic import BaseModel, ConfigDict

from fs_tools.adapters import render
from fs_tools.workspace import Session

ERROR_KEY = "fs_tools_error"
"""The key, in a failed result's text item's ``additional_properties``, whose value is the error code."""


class _Arguments(BaseModel):
    """The argument model the framework validates with: no fields, every key allowed, values unchanged."""

    model_config = ConfigDict(extra="allow")


class WorkspaceTool(FunctionTool):
    """One fs-tools tool bound to a session."""

    def __init__(self, session: Session, schema: dict[str, Any]) -> None:
        name: str = schema["name"]
        published: dict[str, Any] = schema["input_schema"]

        async def invoke(**arguments: Any) -> list[Content]:
            result = await session.acall(name, _raw(arguments, published))
            text = render(result)
            if result.error is None:
                return [Content.from_text(text)]
            return [Content.from_text(text, additional_properties={ERROR_KEY: result.error.code})]

        super().__init__(name=name, description=schema["description"], func=invoke, input_model=_Arguments)
        self.session = session
        self.published = published

    def parameters(self) -> dict[str, Any]:
        """The published input schema, whole."""
        return copy.deepcopy(self.published)


def _raw(arguments: dict[str, Any], schema: dict[str, Any]) -> Any:
    """What the model wrote: the framework wraps arguments that are not a JSON object as ``{"raw": ...}``."""
    if arguments.keys() == {"raw"} and "raw" not in schema.get("properties", {}):
        return arguments["raw"]
    return arguments


class ErrorFlags(ChatMiddleware):
    """Chat middleware: before each model call, a failed result of a ``WorkspaceTool`` gets ``exception``
    (the framework's error flag), so a provider with an error flag sends it."""

    async def process(self, context: ChatContext, call_next: Callable[[], Awaitable[None]]) -> None:
        for message in context.messages:
            for content in message.contents:
                if content.type == "function_result" and content.exception is None and failed(content):
                    content.exception = content.result
        await call_next()


def failed(content: Content) -> str | None:
    """The error code of a ``WorkspaceTool``'s failed ``function_result``; ``None`` for anything else."""
    for item in content.items or []:
        code = item.additional_properties.get(ERROR_KEY) if item.additional_properties else None
        if isinstance(code, str):
            return code
    return None


def tools(session: Session) -> list[WorkspaceTool]:
    """One ``WorkspaceTool`` per tool of the workspace, bound to ``session``."""
    return [WorkspaceTool(session, schema) for schema in session.workspace.tool_schemas()]
