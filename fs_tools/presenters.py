"""Short human-readable renderings of a call and its result, for UIs and for replaying logged sessions.

Presenters validate softly: arguments from an older schema, a newer one or plain garbage fall back to a
generic rendering, and so do the arguments of a call that was rejected before it ran (``INVALID_ARGS``,
``UNKNOWN_TOOL``), so that no rendering presents them as if they had been valid. They never raise —
execution is where validation is strict.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from fs_tools.arguments import argument_names
from fs_tools.rendering.quoting import quoted, short
from fs_tools.result import ToolResult

_MAX_TEXT_LINES = 3
REJECTED_CODES = frozenset({"INVALID_ARGS", "UNKNOWN_TOOL"})
"""Codes of a call refused before its tool ran: its arguments were never accepted."""


def present_call(name: object, arguments: object, *, rejected: bool = False) -> str:
    """One line describing a call, e.g. ``edit src/app.py: replace "x = 1" (1 occurrence)``.

    ``rejected``: the call was refused before it ran (a code in ``REJECTED_CODES``); its arguments are
    shown as they were sent, never read as the tool's."""
    try:
        args = _as_mapping(arguments)
        if isinstance(name, str) and not rejected and args is not None:
            specific = _specific(name, args)
            if specific is not None:
                return specific
        return _generic_call(name, arguments)
    except Exception:  # a presenter must never break the UI or the replay that uses it
        return f"{short(name)}(…)"


def present_result(name: object, arguments: object, result: ToolResult | Mapping[str, Any] | object) -> str:
    """The call's line, then ``→ ok`` or ``→ CODE: message`` with the first lines of the text."""
    try:
        is_error, code, text = _result_facts(result)
        head = present_call(name, arguments, rejected=is_error and code in REJECTED_CODES)
        first = "\n".join(text.splitlines()[:_MAX_TEXT_LINES])
        more = " …" if len(text.splitlines()) > _MAX_TEXT_LINES else ""
        status = f"→ {code}" if is_error else "→ ok"
        return f"{head}\n{status}: {first}{more}" if first else f"{head}\n{status}"
    except Exception:
        return f"{short(name)}(…)\n→ (unreadable result)"


def _as_mapping(arguments: object) -> Mapping[str, Any] | None:
    if isinstance(arguments, str | bytes):
        try:
            arguments = json.loads(arguments)
        except (ValueError, RecursionError):
            return None
    return arguments if isinstance(arguments, Mapping) else None


def _result_facts(result: object) -> tuple[bool, str, str]:
    if isinstance(result, ToolResult):
        return result.is_error, result.error.code if result.error else "", result.text
    if isinstance(result, Mapping):  # a to_dict() form, possibly from an older version
        content = result.get("content")
        text = ""
        if isinstance(content, list) and content and isinstance(content[0], Mapping):
            text = str(content[0].get("text", ""))
        error = result.get("error")
        info = error.get("info") if isinstance(error, Mapping) else None
        code = str(info.get("code", "ERROR")) if isinstance(info, Mapping) else "ERROR"
        return bool(result.get("isError")), code, text
    return False, "", short(result)


def _specific(name: str, args: Mapping[str, Any]) -> str | None:
    """The tool's own presenter, for arguments that name only what the tool declares (an unknown one
    means another schema, or garbage)."""
    from fs_tools.tools import ALL_TOOLS  # the replay imports presenters; the tools only when it renders

    tool = next((tool for tool in ALL_TOOLS if tool.name == name), None)
    if tool is None or tool.present is None or not set(args) <= set(argument_names(tool.arguments)):
        return None
    return tool.present(args)


def _generic_call(name: object, arguments: object) -> str:
    """``name(key=value, …)`` with each value as JSON (a string quoted, so ``"2"`` and ``2`` differ)."""
    args = _as_mapping(arguments)
    if args is None:
        return f"{short(name)}({short(arguments)})"
    shown = ", ".join(f"{short(k)}={_json_value(v)}" for k, v in list(args.items())[:6])
    return f"{short(name)}({shown}{', …' if len(args) > 6 else ''})"


def _json_value(value: object) -> str:
    if isinstance(value, str):
        return quoted(value)
    try:
        return short(json.dumps(value, ensure_ascii=False))
    except (TypeError, ValueError, RecursionError):
        return short(value)
