"""OpenAI function calling: tool definitions (Chat Completions and Responses, plain or strict) and a
dispatcher from a tool call to the message that answers it. Plain dicts: the ``openai`` package is not
needed.

    tools = tool_definitions(workspace, strict=True)                   # Chat Completions
    reply = client.chat.completions.create(model=..., messages=messages, tools=tools)
    for call in reply.choices[0].message.tool_calls or []:
        messages.append(answer_tool_call(session, call))             # {"role": "tool", ...}

The Responses API's built-in ``apply_patch`` tool (``{"type": "apply_patch"}``): with a workspace that
offers ``apply_patch`` (the ``codex`` dialect, or ``tools=[..., "apply_patch"]``),
``tool_definitions(workspace, api="responses", builtin_apply_patch=True)`` declares it instead of the
function, and ``answer_tool_call`` answers each ``apply_patch_call`` item — one file operation
(``create_file``, ``update_file`` or ``delete_file`` with a V4A ``diff``) — with its
``apply_patch_call_output``, through the same gated ``apply_patch``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fs_tools.adapters import field_of, render
from fs_tools.adapters.schemas import strict_required
from fs_tools.errors import ToolArgsError
from fs_tools.result import Media, ToolResult
from fs_tools.terms import speaking
from fs_tools.workspace import Session, Workspace


def strict_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The strict-mode form of a tool's input schema: every object lists all its properties as required
    and allows no others; an optional property is nullable (``null`` means its default). Keywords strict
    mode may refuse (``default``, ``minLength``, ``pattern``, ``minimum``, …) are left out and still
    enforced by fs-tools' validator."""
    return strict_required(schema)


def tool_definitions(
    workspace: Workspace, *, strict: bool = False, api: str = "chat", builtin_apply_patch: bool = False
) -> list[dict[str, Any]]:
    """The workspace's tools as OpenAI function tools. ``api`` is ``"chat"`` (Chat Completions:
    ``{"type": "function", "function": {...}}``) or ``"responses"`` (Responses: a flat
    ``{"type": "function", "name", ...}``). ``strict=True`` gives the strict form with ``strict: true``.

    Responses always carry ``strict`` (that API treats a tool without it as strict and rewrites its
    schema); Chat Completions, non-strict by default, carry it only when true, as OpenAI-compatible
    servers expect."""
    if api not in ("chat", "responses"):
        raise ValueError(f'api must be "chat" or "responses", not {api!r}')
    patcher = _apply_patch_tool(workspace) if builtin_apply_patch else None
    if builtin_apply_patch and (api != "responses" or patcher is None):
        raise ValueError(
            "builtin_apply_patch needs api='responses' and a workspace that offers apply_patch "
            "(dialect='codex', or tools=[..., 'apply_patch'])"
        )
    return [
        {"type": "apply_patch"}
        if patcher is not None and schema["name"] == patcher[0]
        else _definition(schema, strict=strict, api=api)
        for schema in workspace.tool_schemas()
    ]


def _apply_patch_tool(workspace: Workspace) -> tuple[str, str] | None:
    """The name the workspace offers apply_patch under, and its one argument (``input`` or ``patch``)."""
    for name, tool in workspace.tools.items():
        if tool.name.removeprefix(workspace.prefix) == "apply_patch":
            return name, next(iter(tool.arguments.model_fields))
    return None


def _definition(schema: Mapping[str, Any], *, strict: bool, api: str) -> dict[str, Any]:
    parameters = strict_schema(schema["input_schema"]) if strict else schema["input_schema"]
    function: dict[str, Any] = {"name": schema["name"], "description": schema["description"], "parameters": parameters}
    if api == "responses":
        return {"type": "function", **function, "strict": strict}
    if strict:
        function["strict"] = True
    return {"type": "function", "function": function}


_OPERATIONS = {"create_file": "Add File", "update_file": "Update File", "delete_file": "Delete File"}


def apply_operation(session: Session, operation: Any) -> ToolResult:
    """One file operation of the built-in apply_patch tool (``{"type", "path", "diff"?, "move_to"?}``,
    a dict or an SDK object) as a call of the workspace's gated ``apply_patch``; messages point into the
    operation (``/operation/diff``, its own line numbers)."""
    found = _apply_patch_tool(session.workspace)
    if found is None:
        raise ValueError("the workspace offers no apply_patch (use dialect='codex', or tools=[..., 'apply_patch'])")
    name, argument = found
    kind, path = field_of(operation, "type"), field_of(operation, "path")
    diff, move_to = field_of(operation, "diff"), field_of(operation, "move_to")
    problems = []
    if kind not in _OPERATIONS:
        problems.append(f"/operation/type: expected one of {', '.join(_OPERATIONS)}, got {kind!r}")
    if not isinstance(path, str) or not path:
        problems.append("/operation/path: expected a non-empty string")
    if kind != "delete_file" and not isinstance(diff, str):
        problems.append("/operation/diff: expected a string (the V4A diff)")
    if isinstance(path, str) and not path.isprintable():
        problems.append("/operation/path: must be one line of printable characters")
    if isinstance(move_to, str) and not move_to.isprintable():
        problems.append("/operation/move_to: must be one line of printable characters")
    for number, line in enumerate(str(diff or "").split("\n"), 1):
        if line.lstrip().startswith("*** ") and line.strip() != "*** End of File":
            # one operation is one file: a header inside its diff would reach other files
            problems.append(f"/operation/diff: diff line {number}: a '*** ' header; the diff holds one file's hunks")
            break
    if problems:
        return ToolResult.failure(ToolArgsError(problems))
    header = [f"*** {_OPERATIONS[kind]}: {path}"]
    if kind == "update_file" and isinstance(move_to, str) and move_to:
        header.append(f"*** Move to: {move_to}")
    body = str(diff or "").removesuffix("\n") if kind != "delete_file" else ""
    patch = "\n".join(["*** Begin Patch", *header, *([body] if body else []), "*** End Patch"]) + "\n"
    offset = str(1 + len(header))  # the diff's first line is this line of the patch
    with speaking({"patch": "operation/diff", "patch line": "diff line", "patch_line_offset": offset}):
        return session.call(name, {argument: patch})


def answer_apply_patch_call(session: Session, item: Any) -> dict[str, Any]:
    """The ``apply_patch_call_output`` item answering an ``apply_patch_call`` item: ``status`` is
    ``completed`` or ``failed``; ``output`` is the result's text (``ERROR <code>: …`` on a failure)."""
    result = apply_operation(session, field_of(item, "operation"))
    return {
        "type": "apply_patch_call_output",
        "call_id": field_of(item, "call_id"),
        "status": "failed" if result.is_error else "completed",
        "output": render(result),
    }


def call_tool(session: Session, tool_call: Any) -> ToolResult:
    """Run a Chat Completions tool call (``{"id", "type": "function", "function": {"name",
    "arguments"}}``) or a Responses ``function_call`` item (``{"call_id", "name", "arguments"}``).
    ``arguments`` is the model's JSON string, passed as is: broken JSON is an INVALID_ARGS result."""
    function = field_of(tool_call, "function") or tool_call
    return session.call(field_of(function, "name"), field_of(function, "arguments"))


def answer_tool_call(session: Session, tool_call: Any) -> dict[str, Any]:
    """The message answering a tool call: ``{"role": "tool", "tool_call_id", "content"}`` for Chat
    Completions, ``{"type": "function_call_output", "call_id", "output"}`` for a Responses item. On a
    failure the content starts with the error code, so the model sees which rule it broke. An
    ``apply_patch_call`` item (the built-in tool) gets its ``apply_patch_call_output``."""
    if field_of(tool_call, "type") == "apply_patch_call":
        return answer_apply_patch_call(session, tool_call)
    result = call_tool(session, tool_call)
    call_id = field_of(tool_call, "call_id")
    if call_id is not None and field_of(tool_call, "function") is None:
        if result.media:  # an image read: the Responses API takes it as an input_image in the output
            images = [{"type": "input_image", "image_url": _data_url(item)} for item in result.media]
            text = {"type": "input_text", "text": render(result, images_shown=True)}
            return {"type": "function_call_output", "call_id": call_id, "output": [text, *images]}
        return {"type": "function_call_output", "call_id": call_id, "output": render(result)}
    # a Chat Completions tool message carries text only: render says the image is not shown (a host may
    # follow it with image_message(result), from call_tool, to show it as a user message)
    return {"role": "tool", "tool_call_id": field_of(tool_call, "id"), "content": render(result)}


def _data_url(item: Media) -> str:
    return f"data:{item.mime_type};base64,{item.base64}"


def image_message(result: ToolResult) -> dict[str, Any] | None:
    """For Chat Completions: a user message showing the images of a result (a tool message cannot), to
    send right after the tool message; None when the result has none."""
    if not result.media:
        return None
    parts = [{"type": "image_url", "image_url": {"url": _data_url(item)}} for item in result.media]
    return {"role": "user", "content": [{"type": "text", "text": "The image the last tool call read:"}, *parts]}
