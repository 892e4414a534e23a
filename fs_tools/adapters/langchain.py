"""LangChain: the workspace's tools as ``BaseTool`` objects, for ``bind_tools`` and any tool-calling loop.

    model = chat_model.bind_tools(tools(session))
    strict = chat_model.bind_tools(tools(session, strict=True), strict=True)   # strict mode
    for call in model.invoke(messages).tool_calls:
        messages.append(by_name[call["name"]].invoke(call))       # a ToolMessage

Validation: ``args_schema`` is our JSON schema as a dict, which LangChain passes to the model as is and
never validates against, and ``_run`` takes only ``**arguments``, so LangChain injects nothing into them
(a ``StructuredTool`` would overwrite a model's ``config`` or ``run_manager`` key with its own). The
model's arguments reach ``session.call`` unchanged; a wrong type or an invented key comes back as our
INVALID_ARGS message naming the argument.

Strict mode: ``bind_tools(..., strict=True)`` only marks every property required and adds
``additionalProperties: false``; it keeps keywords strict mode refuses (``default``, ``minLength``) and
leaves optional arguments non-nullable. ``tools(session, strict=True)`` makes ``args_schema`` the strict
form of ``fs_tools.adapters.openai.strict_schema`` already (optional arguments nullable, ``null`` meaning
the default), which LangChain's strict conversion leaves unchanged.

Errors: a failure raises ``ToolException`` and ``handle_tool_error`` is on, so invoking the tool with a
tool call returns a ``ToolMessage`` with ``status="error"`` and content ``ERROR <code>: <message>``. On
success the content is the text and the ``artifact`` is the structured value, which LangChain keeps
from the model.
"""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.tools import BaseTool, ToolException

from fs_tools.adapters import render
from fs_tools.adapters.schemas import strict_required
from fs_tools.result import ToolResult
from fs_tools.workspace import Session


class WorkspaceTool(BaseTool):
    """One fs-tools tool bound to a session."""

    session: Session
    handle_tool_error: bool = True
    response_format: Literal["content", "content_and_artifact"] = "content_and_artifact"

    def _run(self, /, **arguments: Any) -> tuple[str, Any]:
        return _answer(self.session.call(self.name, arguments))

    async def _arun(self, /, **arguments: Any) -> tuple[str, Any]:
        return _answer(await self.session.acall(self.name, arguments))


def _answer(result: ToolResult) -> tuple[str, Any]:
    if result.error is not None:
        raise ToolException(render(result))
    return render(result), result.value


def tools(session: Session, *, strict: bool = False) -> list[BaseTool]:
    """One tool per fs-tools tool, bound to ``session``; arguments are not validated by LangChain.
    ``strict=True`` gives each tool the strict form of its schema, for ``bind_tools(..., strict=True)``."""
    return [
        WorkspaceTool(
            name=schema["name"],
            description=schema["description"],
            args_schema=strict_required(schema["input_schema"]) if strict else schema["input_schema"],
            session=session,
        )
        for schema in session.workspace.tool_schemas()
    ]
