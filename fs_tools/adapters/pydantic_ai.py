"""Pydantic AI: the workspace's tools as ``pydantic_ai.Tool`` objects (or one ``FunctionToolset``).

    agent = Agent(model, toolsets=[toolset(session)])        # or Agent(model, tools=tools(session))

Validation: each tool is built with ``Tool.from_schema``, so Pydantic AI shows the model our JSON schema
but validates nothing; the model's arguments reach ``session.call`` as it wrote them, and a wrong type or
an invented key comes back as our INVALID_ARGS message naming the argument (``/limit``), not as
pydantic's generic error. Arguments that are JSON but not an object (``[1, 2]``) are passed on too,
instead of crashing the run in ``function(**args)``. Only arguments that are not JSON at all are refused
by Pydantic AI itself (its ``json_invalid`` retry), before any tool code runs.

Errors: the text the model sees is ``ERROR <code>: <message>`` either way; how it is raised differs.

- INVALID_ARGS raises ``ModelRetry``: a malformed call is what the agent's retry budget (``retries``,
  default 1) is for, and a model that keeps sending broken arguments should end the run.
- Every other code raises ``ToolFailed``: a stale version, an unread file or an ``old_string`` that does
  not match is the normal course of editing, not a broken call. ``ModelRetry`` would count each against
  the same budget, which only a success of that tool resets, so with the default budget a second failed
  edit (even after a successful re-read) would abort the run. ``ToolFailed`` still marks the result as
  failed for the model and is bounded by the run's ``UsageLimits``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from pydantic_core import SchemaValidator, core_schema

from fs_tools.adapters import render
from fs_tools.adapters.schemas import strict_required
from fs_tools.workspace import Session

if TYPE_CHECKING:
    from pydantic_ai import FunctionToolset, Tool

# Codes raised as ModelRetry (they consume the agent's retry budget); all others raise ToolFailed.
RETRY_CODES = frozenset({"INVALID_ARGS"})

# The keyword that carries arguments which are JSON but not an object, so they reach our validator.
_NOT_AN_OBJECT = "__fs_tools_arguments__"


def _as_keywords(arguments: Any) -> Any:
    return arguments if isinstance(arguments, Mapping) else {_NOT_AN_OBJECT: arguments}


# Accepts any decoded JSON; Pydantic AI calls the tool with the result as keywords.
_PASS_THROUGH = SchemaValidator(core_schema.no_info_plain_validator_function(_as_keywords))


def _tool_function(session: Session, name: str) -> Callable[..., Awaitable[str]]:
    from pydantic_ai import ModelRetry, ToolFailed

    async def call(**arguments: Any) -> str:
        raw = arguments[_NOT_AN_OBJECT] if set(arguments) == {_NOT_AN_OBJECT} else arguments
        result = await session.acall(name, raw)
        if result.error is None:
            return render(result)
        if result.error.code in RETRY_CODES:
            raise ModelRetry(render(result))
        raise ToolFailed(render(result))

    call.__name__ = name
    return call


def tools(session: Session, *, strict: bool | None = None) -> list[Tool[Any]]:
    """One ``pydantic_ai.Tool`` per fs-tools tool, bound to ``session``; arguments are not validated by
    Pydantic AI (see the module docstring).

    ``strict`` is the tools' ``Tool.strict``: ``True`` also gives them the strict form of their schema
    (all properties required, optional ones nullable, as ``fs_tools.adapters.openai.strict_schema``), so
    the provider's strict mode keeps optional arguments optional; ``None`` leaves the choice to Pydantic
    AI's per-provider default."""
    from pydantic_ai import Tool

    out: list[Tool[Any]] = []
    for schema in session.workspace.tool_schemas():
        tool: Tool[Any] = Tool.from_schema(
            _tool_function(session, schema["name"]),
            name=schema["name"],
            description=schema["description"],
            json_schema=strict_required(schema["input_schema"]) if strict else schema["input_schema"],
        )
        tool.strict = strict
        # from_schema accepts any JSON but then calls function(**args); non-objects must reach us instead.
        tool.function_schema.validator = _PASS_THROUGH
        out.append(tool)
    return out


def toolset(session: Session, *, strict: bool | None = None) -> FunctionToolset[Any]:
    """The same tools as one ``FunctionToolset``, for ``Agent(..., toolsets=[...])``."""
    from pydantic_ai import FunctionToolset

    return FunctionToolset(tools(session, strict=strict))
