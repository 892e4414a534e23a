"""OpenAI Agents SDK (``openai-agents``): the workspace's tools as ``FunctionTool`` objects, and an
``ApplyPatchEditor`` for the SDK's ``ApplyPatchTool``.

    agent = Agent(name="coder", model=..., tools=tools(session))
    agent = Agent(name="coder", model=..., tools=tools(session, hosted_apply_patch=True))  # codex dialect

Validation: a raw ``FunctionTool`` gets the model's arguments as the JSON string it wrote; they reach
``session.call`` as they are (broken JSON included), so a wrong type or an invented key comes back as our
INVALID_ARGS message. ``strict=True`` gives the strict form of each schema (optional arguments nullable,
``null`` meaning the default) with ``strict_json_schema=True``; the SDK's own strict conversion of our
plain schema would make optional arguments required, so ``strict=False`` passes ``strict_json_schema=False``.

Errors: a failure is returned as the text ``ERROR <code>: <message>`` (raising would fail the run); the
SDK's protocol has no error flag for a function result. The editor's failures are ``ApplyPatchResult(
status="failed")``, which the SDK sends as the ``apply_patch_call_output``'s status.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agents import ApplyPatchTool, FunctionTool
from agents.editor import ApplyPatchOperation, ApplyPatchResult

from fs_tools.adapters import render
from fs_tools.adapters.openai import apply_operation
from fs_tools.adapters.schemas import strict_required
from fs_tools.workspace import Session

if TYPE_CHECKING:
    from agents.tool_context import ToolContext


def _invoke(session: Session, name: str) -> Any:
    async def invoke(context: ToolContext[Any], arguments: str) -> str:
        return render(await session.acall(name, arguments or "{}"))

    return invoke


def tools(session: Session, *, strict: bool = False, hosted_apply_patch: bool = False) -> list[Any]:
    """One ``FunctionTool`` per tool of the workspace. With ``hosted_apply_patch`` (a workspace that offers
    ``apply_patch``, and a Responses model), its function form is replaced by the SDK's hosted
    ``ApplyPatchTool`` on a ``WorkspaceEditor``."""
    out: list[Any] = []
    for schema in session.workspace.tool_schemas():
        if hosted_apply_patch and schema["name"].removeprefix(session.workspace.prefix) == "apply_patch":
            out.append(apply_patch_tool(session))
            continue
        out.append(
            FunctionTool(
                name=schema["name"],
                description=schema["description"],
                params_json_schema=strict_required(schema["input_schema"]) if strict else schema["input_schema"],
                on_invoke_tool=_invoke(session, schema["name"]),
                strict_json_schema=strict,
            )
        )
    if hosted_apply_patch and not any(isinstance(tool, ApplyPatchTool) for tool in out):
        raise ValueError("hosted_apply_patch needs a workspace that offers apply_patch (dialect='codex')")
    return out


class WorkspaceEditor:
    """The SDK's ``ApplyPatchEditor``: each file operation the model sends (a V4A diff) is applied through
    the workspace's gated ``apply_patch``, so it is refused on a file the session has not read, or that
    changed since."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def create_file(self, operation: ApplyPatchOperation) -> ApplyPatchResult:
        return self._apply(operation)

    def update_file(self, operation: ApplyPatchOperation) -> ApplyPatchResult:
        return self._apply(operation)

    def delete_file(self, operation: ApplyPatchOperation) -> ApplyPatchResult:
        return self._apply(operation)

    def _apply(self, operation: ApplyPatchOperation) -> ApplyPatchResult:
        result = apply_operation(self.session, operation)
        return ApplyPatchResult(status="failed" if result.is_error else "completed", output=render(result))


def apply_patch_tool(session: Session) -> ApplyPatchTool:
    """The SDK's hosted ``ApplyPatchTool`` (Responses models) on a ``WorkspaceEditor``; the workspace must
    offer ``apply_patch`` (``dialect="codex"``, or ``tools=[..., "apply_patch"]``)."""
    return ApplyPatchTool(editor=WorkspaceEditor(session))
