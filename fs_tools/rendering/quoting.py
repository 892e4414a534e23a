"""What a tool's presenter may use: soft reads of arguments that may come from an older schema or be
garbage (never raising), and short quoting. A presenter returns None for anything it does not
recognise, and the generic rendering is used instead."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

MAX_VALUE_CHARS = 60


def text_of(args: Mapping[str, Any], key: str) -> str | None:
    value = args.get(key)
    return value if isinstance(value, str) else None


def is_integer(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def short(value: object) -> str:
    text = value if isinstance(value, str) else repr(value)
    text = text.replace("\n", "⏎")
    return text if len(text) <= MAX_VALUE_CHARS else text[: MAX_VALUE_CHARS - 1] + "…"


def quoted(value: str) -> str:
    return json.dumps(short(value), ensure_ascii=False)
