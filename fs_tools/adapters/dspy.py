"""DSPy (``dspy`` 3.x): the workspace's tools as ``dspy.Tool`` objects, for ``dspy.ReAct`` (and the
experimental ``dspy.ReActV2``, or any signature with a ``list[dspy.Tool]`` input).

    react = dspy.ReAct("task -> answer", tools=tools(session))
    react(task="rename greet to welcome in src/app.py")  # or: await react.acall(task=...)

Validation: ``dspy.Tool.__call__`` and ``acall`` check each argument against the tool's ``args`` before the
function runs (an unknown key, or a value its property schema refuses, is a ``ValueError``) and parse it
with pydantic; ReAct would show the model ``Execution error in read:`` and a Python traceback.
``WorkspaceTool`` overrides both to hand the model's dict to ``session.call`` / ``session.acall``
unchanged, so a wrong type or an invented key is our INVALID_ARGS message; DSPy's callbacks
(``on_tool_start`` / ``on_tool_end``) still see every call, its input as one ``arguments`` dict.

Schema: ``args`` holds the published properties (what DSPy's own code reads). What the model sees is the
published schema, whole: as JSON where DSPy prints a tool into the prompt (ReAct's instructions, a
``list[dspy.Tool]`` field in text mode), and as the function's parameters with native function calling.
DSPy's own forms print the properties only (as a Python dict), drop ``additionalProperties`` and mark
every property without a default as required.

Errors: ReAct has no error flag: an observation is text, and a tool that raises is shown as DSPy's wrapping
plus a traceback. A failure is the text ``ERROR <code>: <message>``, a ``str`` whose ``is_error`` tells the
host (the observations in ``prediction.trajectory``). ``ReActV2``'s ``ToolCallResult.is_error`` is set only
for a tool that raised, so it stays ``False`` for ours.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any, TypeVar, cast

import dspy
from dspy.utils.callback import with_callbacks
from pydantic import Field

from fs_tools.adapters import ToolText
from fs_tools.workspace import Session

_Method = TypeVar("_Method", bound=Callable[..., Any])


def _traced(method: _Method) -> _Method:
    """DSPy's callbacks around a call, as ``dspy.Tool``'s own ``__call__`` and ``acall`` have them."""
    return cast(_Method, with_callbacks(method))


class WorkspaceTool(dspy.Tool):
    """One fs-tools tool bound to a session; called with the model's arguments as it wrote them."""

    session: Any = None
    input_schema: dict[str, Any] = Field(default_factory=dict)

    def __init__(self, session: Session, schema: dict[str, Any]) -> None:
        name = schema["name"]
        published = copy.deepcopy(schema["input_schema"])

        def call(**arguments: Any) -> ToolText:  # what ToolCalls.ToolCall.execute calls; the agents call ours
            return ToolText(session.call(name, arguments))

        super().__init__(
            func=call,
            name=name,
            desc=schema["description"],
            args=copy.deepcopy(published.get("properties", {})),
            arg_types={},  # DSPy parses nothing: the arguments stay as the model wrote them
        )
        self.session = session
        self.input_schema = published

    # The model's keys are never Python parameters here (``self``, or ``instance`` of DSPy's callback wrapper,
    # would collide): the callbacks see one input, ``arguments``, the dict the model wrote.
    def __call__(self, /, **arguments: Any) -> ToolText:
        return self._call(arguments)

    async def acall(self, /, **arguments: Any) -> ToolText:
        return await self._acall(arguments)

    @_traced
    def _call(self, arguments: dict[str, Any]) -> ToolText:
        return ToolText(self.session.call(self.name, arguments))

    @_traced
    async def _acall(self, arguments: dict[str, Any]) -> ToolText:
        return ToolText(await self.session.acall(self.name, arguments))

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> WorkspaceTool:
        return self  # a copied program (optimizers deep-copy theirs) keeps the tool: it is bound to one session

    def __str__(self) -> str:
        desc = f", whose description is <desc>{self.desc}</desc>.".replace("\n", "  ") if self.desc else "."
        return f"{self.name}{desc} It takes arguments matching this JSON schema: {json.dumps(self.input_schema)}."

    def format_as_litellm_function_call(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.desc, "parameters": copy.deepcopy(self.input_schema)},
        }


def tools(session: Session) -> list[WorkspaceTool]:
    """One ``WorkspaceTool`` per tool of the workspace, bound to ``session``."""
    return [WorkspaceTool(session, schema) for schema in session.workspace.tool_schemas()]
