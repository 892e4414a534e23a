"""A published schema's view of a value: its default nulls left out, as a strict client sends it."""

from __future__ import annotations

from typing import Any


def without_default_nulls(schema: dict[str, Any], value: Any) -> Any:
    """``value`` with every explicit ``null`` for an optional argument taken out: the validator reads such a
    ``null`` as "the default" (SPEC §11), which a portable schema, having no ``type`` arrays, cannot say."""
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [without_default_nulls(schema["items"], item) for item in value]
    properties = schema.get("properties")
    if not isinstance(value, dict) or not isinstance(properties, dict):
        return value
    required = set(schema.get("required", []))
    return {
        key: without_default_nulls(properties.get(key, {}), item)
        for key, item in value.items()
        if not (item is None and key in properties and key not in required)
    }
