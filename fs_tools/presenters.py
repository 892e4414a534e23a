"""Short human-readable renderings of a call and its result, for UIs and for replaying logged sessions.

Presenters validate softly: arguments from an older schema, a newer one or plain garbage fall back to a
generic rendering, and so do the arguments of a call that was rejected before it ran (``INVALID_ARGS``,
``UNKNOWN_TOOL``), so that no rendering presents them as if they had been valid. They never raise —
execution is where validation is strict.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from fs_tools.result import ToolResult

_MAX_VALUE_CHARS = 60
_MAX_TEXT_LINES = 3
REJECTED_CODES = frozenset({"INVALID_ARGS", "UNKNOWN_TOOL"})
"""Codes of a call refused before its tool ran: its arguments were never accepted."""


def present_call(name: object, arguments: object, *, rejected: bool = False) -> str:
    """One line describing a call, e.g. ``edit src/app.py: replace "x = 1" (1 occurrence)``.

    ``rejected``: the call was refused before it ran (a code in ``REJECTED_CODES``); its arguments are
    shown as they were sent, never read as the tool's."""
    try:
        args = _as_mapping(arguments)
        render = _CALLS.get(name) if isinstance(name, str) and not rejected else None
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
        is_error, code, text = _result_facts(result)
        head = present_call(name, arguments, rejected=is_error and code in REJECTED_CODES)
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


def _integer(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _only(args: Mapping[str, Any], known: frozenset[str]) -> bool:
    """No argument the renderer does not know: an unknown one means another schema (or garbage)."""
    return all(key in known for key in args)


def _short(value: object) -> str:
    text = value if isinstance(value, str) else repr(value)
    text = text.replace("\n", "⏎")
    return text if len(text) <= _MAX_VALUE_CHARS else text[: _MAX_VALUE_CHARS - 1] + "…"


def _quoted(value: str) -> str:
    return json.dumps(_short(value), ensure_ascii=False)


_READ_ARGS = frozenset({"file_path", "offset", "limit"})
_WRITE_ARGS = frozenset({"file_path", "content"})
_EDIT_ARGS = frozenset({"file_path", "old_string", "new_string", "replace_all", "dry_run"})
_MULTI_EDIT_ARGS = frozenset({"file_path", "edits"})


def _read(args: Mapping[str, Any]) -> str | None:
    path, offset, limit = _text(args, "file_path"), args.get("offset"), args.get("limit")
    if path is None or not _only(args, _READ_ARGS) or not all(v is None or _integer(v) for v in (offset, limit)):
        return None
    if isinstance(offset, int) and offset > 1:
        end = f"–{offset + limit - 1}" if isinstance(limit, int) else "–"
        return f"read {_short(path)} (lines {offset}{end})"
    return f"read {_short(path)}"


def _write(args: Mapping[str, Any]) -> str | None:
    path, content = _text(args, "file_path"), _text(args, "content")
    if path is None or content is None or not _only(args, _WRITE_ARGS):
        return None
    lines = content.count("\n") + (0 if content.endswith("\n") or not content else 1)
    return f"write {_short(path)} ({lines} line(s), {len(content.encode('utf-8', 'surrogatepass')):,} bytes)"


def _edit(args: Mapping[str, Any]) -> str | None:
    path, old, new = _text(args, "file_path"), _text(args, "old_string"), _text(args, "new_string")
    flags = args.get("replace_all"), args.get("dry_run")
    if path is None or old is None or new is None or not _only(args, _EDIT_ARGS):
        return None
    if not all(flag is None or isinstance(flag, bool) for flag in flags):
        return None
    scope = "every occurrence" if flags[0] is True else "1 occurrence"
    trial = ", dry run" if flags[1] is True else ""
    return f"edit {_short(path)}: replace {_quoted(old)} ({scope}{trial})"


def _multi_edit(args: Mapping[str, Any]) -> str | None:
    path, edits = _text(args, "file_path"), args.get("edits")
    if path is None or not isinstance(edits, list) or not _only(args, _MULTI_EDIT_ARGS):
        return None
    if not all(isinstance(edit, Mapping) for edit in edits):
        return None
    return f"multi_edit {_short(path)}: {len(edits)} edit(s)"


def _generic_call(name: object, arguments: object) -> str:
    """``name(key=value, …)`` with each value as JSON (a string quoted, so ``"2"`` and ``2`` differ)."""
    args = _as_mapping(arguments)
    if args is None:
        return f"{_short(name)}({_short(arguments)})"
    shown = ", ".join(f"{_short(k)}={_json_value(v)}" for k, v in list(args.items())[:6])
    return f"{_short(name)}({shown}{', …' if len(args) > 6 else ''})"


def _json_value(value: object) -> str:
    if isinstance(value, str):
        return _quoted(value)
    try:
        return _short(json.dumps(value, ensure_ascii=False))
    except (TypeError, ValueError, RecursionError):
        return _short(value)


_CALLS: dict[str, Callable[[Mapping[str, Any]], str | None]] = {
    "read": _read,
    "write": _write,
    "edit": _edit,
    "multi_edit": _multi_edit,
}
