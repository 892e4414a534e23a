"""Haystack (``haystack-ai`` 3.x): the workspace's tools as Haystack ``Tool`` objects, for the ``Agent``
component and any Chat Generator that takes tools.

    agent = Agent(chat_generator=OpenAIChatGenerator(model="gpt-4.1"), tools=tools(session))
    agent.run(messages=[ChatMessage.from_user("rename greet to welcome in src/app.py")])  # or run_async

Schema: a Haystack tool carries its JSON schema as ``parameters`` and every Chat Generator sends its
``tool_spec``; ours is the published schema, whole (``additionalProperties: false`` kept). A generator's
``tools_strict=True`` rewrites it (every property required, not nullable), so with it use
``tools(session, strict=True)``: the strict form, optional arguments nullable, ``null`` meaning the default,
which that rewrite leaves as it is.

Validation: none by Haystack; the Agent calls ``invoke(**arguments)`` with the model's dict, which reaches
``session.call`` unchanged, so a wrong type or an invented key is our INVALID_ARGS message. Arguments that
are not a JSON object never reach a tool: the OpenAI generators drop a call whose arguments are not JSON, and
JSON that is not an object (``5``) stops Haystack's own Agent before any tool runs.

Errors: a failure raises ``ToolFailed`` (a ``ToolInvocationError``) whose message is the text ``ERROR <code>:
<message>``; the Agent sends the model that text as the tool result with ``ToolCallResult.error=True``
(``raise_on_tool_invocation_failure`` must stay ``False``, its default, or a failure ends the run). The base
``Tool.invoke`` would prefix Haystack's own ``Failed to invoke Tool ...`` wording, so ours answers directly.
"""

from __future__ import annotations

import copy
from typing import Any

from haystack.tools.errors import ToolInvocationError
from haystack.tools.tool import Tool

from fs_tools.adapters import render
from fs_tools.adapters.schemas import strict_required
from fs_tools.result import ToolResult
from fs_tools.workspace import Session


class ToolFailed(ToolInvocationError):
    """A failed call; its message is what the model reads (``ERROR <code>: <message>``), ``result`` is ours."""

    def __init__(self, tool_name: str, result: ToolResult) -> None:
        super().__init__(render(result), tool_name=tool_name)
        self.result = result


def _answer(name: str, result: ToolResult) -> str:
    if result.is_error:
        raise ToolFailed(name, result)
    return render(result)


class WorkspaceTool(Tool):
    """One fs-tools tool bound to a session; ``invoke`` and ``invoke_async`` call it as the model wrote it."""

    def __init__(self, session: Session, schema: dict[str, Any], *, strict: bool = False) -> None:
        self.session = session
        published = schema["input_schema"]
        super().__init__(
            name=schema["name"],
            description=schema["description"],
            parameters=strict_required(published) if strict else copy.deepcopy(published),
            function=self.invoke,  # what Haystack holds as the tool's functions: ours, whichever it calls
            async_function=self.invoke_async,
        )

    def invoke(self, /, **arguments: Any) -> str:
        return _answer(self.name, self.session.call(self.name, arguments))

    async def invoke_async(self, /, **arguments: Any) -> str:
        return _answer(self.name, await self.session.acall(self.name, arguments))


def tools(session: Session, *, strict: bool = False) -> list[WorkspaceTool]:
    """One ``WorkspaceTool`` per tool of the workspace, bound to ``session``; ``strict`` for a generator
    with ``tools_strict=True``."""
    return [WorkspaceTool(session, schema, strict=strict) for schema in session.workspace.tool_schemas()]
