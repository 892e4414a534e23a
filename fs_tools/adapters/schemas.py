"""The published input schema (portable JSON Schema) reshaped into the subset each model API accepts.

Every form drops only what its API refuses; fs-tools' validator still enforces all of it (a violation
comes back as INVALID_ARGS naming the argument), so no form loosens what a call may do.

- ``strict_required``: strict mode as OpenAI defines it (every object lists all its properties as
  required and allows no others; an optional argument becomes nullable, and ``null`` means its
  default). Only keywords both OpenAI and Anthropic strict mode accept remain, so the same form also
  serves a framework that forwards it to either (LangChain, Pydantic AI).
- ``strict_optional``: Anthropic strict tool use, which keeps optional arguments optional; only the
  keywords its grammar supports remain (those ``anthropic.transform_schema`` keeps).
- ``gemini_parameters``: the OpenAPI subset of Gemini's ``FunctionDeclaration.parameters``, without
  ``additionalProperties``, which the Gemini Developer API refuses.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

_NULL = {"type": "null"}

# Keywords a strict form keeps (applied to schema nodes only, never to the names in a properties map).
_STRICT_REQUIRED_KEYWORDS = frozenset(
    {"type", "properties", "required", "additionalProperties", "items", "anyOf", "description", "enum", "const"}
)
_STRICT_OPTIONAL_KEYWORDS = _STRICT_REQUIRED_KEYWORDS | {"minItems"}
# Gemini's Schema (google.genai.types.Schema, the API's OpenAPI subset) without additionalProperties.
_GEMINI_KEYWORDS = frozenset(
    {
        "type",
        "format",
        "description",
        "nullable",
        "enum",
        "items",
        "maxItems",
        "minItems",
        "properties",
        "required",
        "minLength",
        "maxLength",
        "pattern",
        "minimum",
        "maximum",
        "default",
        "anyOf",
    }
)


def strict_required(schema: Mapping[str, Any]) -> dict[str, Any]:
    """OpenAI's strict form: all properties required, none other allowed, optional ones nullable."""
    return _strict_required(_pruned(schema, _STRICT_REQUIRED_KEYWORDS))


def strict_optional(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Anthropic's strict form: the published schema with only the keywords strict tool use supports
    (``minItems`` only as 0 or 1), and ``additionalProperties: false`` on every object."""
    out = _pruned(schema, _STRICT_OPTIONAL_KEYWORDS)
    for node in schema_nodes(out):
        if node.get("minItems") not in (None, 0, 1):
            del node["minItems"]

        if "properties" in node:
            node["additionalProperties"] = False
    return out


def gemini_parameters(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The form ``google.genai.types.Schema`` (``FunctionDeclaration.parameters``) accepts on both the
    Gemini Developer API and Vertex AI."""
    return _pruned(schema, _GEMINI_KEYWORDS)


def schema_nodes(node: dict[str, Any]) -> list[dict[str, Any]]:
    """``node`` and every schema nested in it (a properties map is walked by value, never taken for a
    schema, so a property named like a keyword is safe)."""
    found = [node]
    children: list[Any] = list(node["properties"].values()) if isinstance(node.get("properties"), dict) else []
    items = node.get("items")
    children += [items] if isinstance(items, dict) else []
    for key in ("anyOf", "oneOf", "allOf"):
        children += node.get(key) or []
    for child in children:
        if isinstance(child, dict):
            found += schema_nodes(child)
    return found


def _pruned(schema: Mapping[str, Any], keep: frozenset[str]) -> dict[str, Any]:
    out = copy.deepcopy(dict(schema))
    for node in schema_nodes(out):
        for key in [k for k in node if k not in keep]:
            del node[key]
    return out


def _strict_required(node: dict[str, Any]) -> dict[str, Any]:
    for child in schema_nodes(node)[:0:-1]:  # innermost first: a nullable wrapper copies a finished child
        _require_all(child)
    return _require_all(node)


def _require_all(node: dict[str, Any]) -> dict[str, Any]:
    properties = node.get("properties")
    if isinstance(properties, dict):
        required = set(node.get("required", []))
        node["properties"] = {name: prop if name in required else _nullable(prop) for name, prop in properties.items()}
        node["required"] = list(properties)
        node["additionalProperties"] = False
    return node


def _nullable(prop: dict[str, Any]) -> dict[str, Any]:
    """``prop`` or null, the way OpenAI's own SDK writes an optional field (``anyOf`` with a null branch,
    the description beside it)."""
    if prop.get("anyOf"):
        branches = prop["anyOf"]
        return prop if _NULL in branches else {**prop, "anyOf": [*branches, _NULL]}
    outer = {k: prop[k] for k in ("description",) if k in prop}
    inner = {k: v for k, v in prop.items() if k not in outer}
    return {"anyOf": [inner, _NULL], **outer}
