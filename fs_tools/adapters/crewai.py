"""CrewAI: the workspace's tools as CrewAI ``BaseTool`` objects, for ``Agent(tools=...)``.

    agent = Agent(role="coder", goal=..., backstory=..., llm=llm, tools=tools(session))

Schema: CrewAI shows the model its tool's ``args_schema`` in strict form (every property required,
``additionalProperties: false``), so each tool's is the strict form of the published schema (optional
arguments nullable, ``null`` meaning the default), which that conversion leaves as it is.

Validation: CrewAI validates a call against ``args_schema`` before ``_run``, in two places, unless the
schema has no fields; ours has none (and allows any key), so the model's arguments reach
``session.call`` unchanged and a wrong type or an invented key is our INVALID_ARGS message.

Errors: a failure is returned as CrewAI's ``ToolFailure`` with the text ``ERROR <code>: <message>`` (the
code in its ``details``, so CrewAI appends nothing to the text); the crew records it among the task's
``tool_failures``. CrewAI caches a tool's result per arguments by default — a second read of a changed
file would get the old text — so these tools are never cached.
"""

from __future__ import annotations

import copy
from typing import Any

from crewai.tools import BaseTool
from crewai.tools.tool_failure import ToolFailure
from pydantic import BaseModel, ConfigDict

from fs_tools.adapters import render
from fs_tools.adapters.schemas import strict_required
from fs_tools.workspace import Session


def _never_cached(arguments: Any, result: Any) -> bool:
    """A file tool's answer depends on the disk, not only on its arguments."""
    return False


def _arguments_model(name: str, schema: dict[str, Any]) -> type[BaseModel]:
    """A model with no fields (CrewAI then validates nothing) that allows every key and shows ``schema``."""
    return type(
        f"{name}_arguments",
        (BaseModel,),
        {
            "model_config": ConfigDict(extra="allow"),
            "model_json_schema": classmethod(lambda cls, *a, **k: copy.deepcopy(schema)),
        },
    )


class WorkspaceTool(BaseTool):  # type: ignore[misc]
    """One fs-tools tool bound to a session."""

    session: Any = None

    def _run(self, /, **arguments: Any) -> Any:
        result = self.session.call(self.name, arguments)
        if result.is_error:
            return ToolFailure(message=render(result), details={"code": result.error.code})
        return render(result)


def tools(session: Session) -> list[WorkspaceTool]:
    """One ``WorkspaceTool`` per tool of the workspace, bound to ``session``."""
    return [
        WorkspaceTool(
            name=schema["name"],
            description=schema["description"],
            args_schema=_arguments_model(schema["name"], strict_required(schema["input_schema"])),
            session=session,
            cache_function=_never_cached,
        )
        for schema in session.workspace.tool_schemas()
    ]
