"""Short human-readable renderings of a call and its result, for UIs and for replaying logged sessions.

Presenters validate softly: arguments from an older schema, a newer one or plain garbage fall back to a
generic rendering. They never raise — execution is where validation is strict.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from fs_tools.result import ToolResult

_MAX_VALUE_CHARS = 60
_MAX_TEXT_LINES = 3


def present_call(name: object, arguments: object) -> str:
    """One line describing a call, e.g. ``edit src/app.py: replace "x = 1" (1 occurrence)``."""
    try:
        args = _as_mapping(arguments)
        render = _CALLS.get(str(name))
        if render is not None and args is not None:
            specific = render(args)
            if specific is not None:
                return specific
        return _generic_call(name, arguments)
    except Exception:  # a presenter must never break the UI or the replay that uses it
        return f"{_short(name)}(…)"


def present_result(name: object, arguments: object, result: ToolResult | Mapping[str, Any] | object) -> str:
    """The call's line, then ``→ ok`` or ``→ CODE: message`` with the first lines of the text."""
    try:
        head = present_call(name, arguments)
        is_error, code, text = _result_facts(result)
        first = "\n".join(text.splitlines()[:_MAX_TEXT_LINES])
        more = " …" if len(text.splitlines()) > _MAX_TEXT_LINES else ""
        status = f"→ {code}" if is_error else "→ ok"
        return f"{head}\n{status}: {first}{more}" if first else f"{head}\n{status}"
    except Exception:
        return f"{_short(name)}(…)\n→ (unreadable result)"


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
    return False, "", _short(result)


def _text(args: Mapping[str, Any], key: str) -> str | None:
    value = args.get(key)
    return value if isinstance(value, str) else None


def _short(value: object) -> str:
    text = value if isinstance(value, str) else repr(value)
    text = text.replace("\n", "⏎")
    return text if len(text) <= _MAX_VALUE_CHARS else text[: _MAX_VALUE_CHARS - 1] + "…"


def _quoted(value: str) -> str:
    return json.dumps(_short(value), ensure_ascii=False)


def _read(args: Mapping[str, Any]) -> str | None:
    path = _text(args, "file_path")
    if path is None:
        return None
    offset, limit = args.get("offset"), args.get("limit")
    if isinstance(offset, int) and not isinstance(offset, bool) and offset > 1:
        end = f"–{offset + limit - 1}" if isinstance(limit, int) and not isinstance(limit, bool) else "–"
        return f"read {_short(path)} (lines {offset}{end})"
    return f"read {_short(path)}"


def _write(args: Mapping[str, Any]) -> str | None:
    path, content = _text(args, "file_path"), _text(args, "content")
    if path is None:
        return None
    if content is None:
        return f"write {_short(path)}"
    lines = content.count("\n") + (0 if content.endswith("\n") or not content else 1)
    return f"write {_short(path)} ({lines} line(s), {len(content.encode('utf-8', 'surrogatepass')):,} bytes)"


def _edit(args: Mapping[str, Any]) -> str | None:
    path, old = _text(args, "file_path"), _text(args, "old_string")
    if path is None or old is None:
        return None
    scope = "every occurrence" if args.get("replace_all") is True else "1 occurrence"
    return f"edit {_short(path)}: replace {_quoted(old)} ({scope})"


def _multi_edit(args: Mapping[str, Any]) -> str | None:
    path, edits = _text(args, "file_path"), args.get("edits")
    if path is None or not isinstance(edits, list):
        return None
    return f"multi_edit {_short(path)}: {len(edits)} edit(s)"


def _generic_call(name: object, arguments: object) -> str:
    args = _as_mapping(arguments)
    if args is None:
        return f"{_short(name)}({_short(arguments)})"
    shown = ", ".join(f"{_short(k)}={_short(v)}" for k, v in list(args.items())[:6])
    return f"{_short(name)}({shown}{', …' if len(args) > 6 else ''})"


_CALLS: dict[str, Callable[[Mapping[str, Any]], str | None]] = {
    "read": _read,
    "write": _write,
    "edit": _edit,
    "multi_edit": _multi_edit,
}
