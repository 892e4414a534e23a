"""Tool arguments: declared once as a strict pydantic model, from which come the published JSON Schema,
the validator and the typed arguments the tool body receives.

Validation follows SPEC §4: every violation at once, each as ``<JSON Pointer>: <expected>, got <found>``,
unknown keys rejected with a did-you-mean, no coercion except whole-number floats for integers, and an
explicit ``null`` meaning "use the default" for optional arguments.
"""

from __future__ import annotations

import difflib
import functools
import json
import math
import re
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)
from pydantic_core import ErrorDetails, PydanticCustomError

from fs_tools.errors import ToolArgsError
from fs_tools.names import visible

MAX_PATH_BYTES = 4096
MAX_NAME_BYTES = 255


def json_type(value: object) -> str:
    """The JSON type name of a decoded JSON value, as JSON names it: 3 and 3.5 are both numbers
    ("integer" is a schema refinement, used for what is expected, never for what was received)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


def _whole_number(value: object) -> object:
    """JSON Schema counts 3.0 as an integer; so do we. Nothing else is coerced."""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return value


def _check_path(value: str) -> str:
    if not value:
        raise PydanticCustomError("fs_path", "must not be empty")
    if value.endswith("/"):
        raise PydanticCustomError("fs_path", "must name a file, but it ends with '/'")
    return _check_search_path(value)


def path_problem(value: str) -> str | None:
    """What is wrong with ``value`` as a file's path, as a validation message would say it (None: nothing),
    for paths that arrive inside another argument (a patch's file headers)."""
    try:
        _check_path(value)
    except PydanticCustomError as exc:
        return exc.message()
    return None


def _check_search_path(value: str) -> str:
    """Rules every path shares, a directory's included: no NUL, valid Unicode, bounded lengths."""
    if not value:
        raise PydanticCustomError("fs_path", "must not be empty")
    if "\0" in value:
        raise PydanticCustomError(
            "fs_path", "must not contain a NUL character (at index {index})", {"index": value.index("\0")}
        )
    try:
        encoded = value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise PydanticCustomError(
            "fs_path", "must be valid Unicode: lone surrogate at index {index}", {"index": exc.start}
        ) from None
    if len(encoded) > MAX_PATH_BYTES:
        raise PydanticCustomError(
            "fs_path",
            "expected a path of at most {limit} bytes, got {size} bytes",
            {"limit": MAX_PATH_BYTES, "size": len(encoded)},
        )
    longest = max(len(part) for part in encoded.split(b"/"))
    if longest > MAX_NAME_BYTES:
        raise PydanticCustomError(
            "fs_path",
            "expected each path component to be at most {limit} bytes, got one of {size} bytes",
            {"limit": MAX_NAME_BYTES, "size": longest},
        )
    return value


def _check_text(value: str) -> str:
    """Content must be encodable as UTF-8 (JSON can carry lone surrogates; files cannot)."""
    if value.isascii():  # known without a scan (CPython keeps the flag): no surrogate in it
        return value
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise PydanticCustomError(
            "fs_text", "must be valid Unicode: lone surrogate at index {index}", {"index": exc.start}
        ) from None
    return value


MAX_INTEGER = 2**63 - 1  # beyond any line, count or size a tool can use


def shown_number(value: object) -> str:
    """A received value as messages quote it: huge integers by their size, never by all their digits
    (``str`` of an int over 4,300 digits raises, and the model needs the size, not the digits)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_INTEGER:
        digits = int(value.bit_length() * 0.30103) + 1
        return f"{'a negative' if value < 0 else 'an'} integer of about {digits:,} digits"
    return repr(value)


# The bound is published (``maximum``), so the schema and the validator agree.
Integer = Annotated[int, Field(le=MAX_INTEGER), BeforeValidator(_whole_number)]


# The schema states what JSON Schema can (not empty, no trailing "/"); the validator adds what it cannot
# (NUL, lone surrogates, byte lengths) and words every message.
class _Schema:
    """A fixed JSON Schema for an annotated type, handed out fresh each time it is asked for: pydantic
    2.7 writes a field's default and description into the dict a ``WithJsonSchema`` holds, which all
    fields of that type share, so a required path would publish another field's default."""

    def __init__(self, **schema: Any) -> None:
        self._schema = schema

    def __get_pydantic_json_schema__(self, core: Any, handler: Any) -> dict[str, Any]:
        return dict(self._schema)


FilePath = Annotated[str, AfterValidator(_check_path), _Schema(type="string", minLength=1, pattern="[^/]$")]
SearchPath = Annotated[str, AfterValidator(_check_search_path), _Schema(type="string", minLength=1)]
EntryPath = SearchPath  # a path that may name a directory, required where a tool declares it so
Text = Annotated[str, AfterValidator(_check_text)]


# A PDF's pages (SPEC §18): "3", "1-5", "1,4,7-9"; ranges are checked against the page count once read.
PAGES_PATTERN = r"^\s*[0-9]{1,9}(\s*-\s*[0-9]{1,9})?(\s*,\s*[0-9]{1,9}(\s*-\s*[0-9]{1,9})?)*\s*$"


def _check_pages(value: str) -> str:
    shown = repr(value) if len(value) <= 40 else repr(value[:40]) + "…"
    if re.fullmatch(PAGES_PATTERN, value) is None:
        raise PydanticCustomError("fs_pages", f'expected pages such as "3", "1-5" or "1,4,7-9" (from 1), got {shown}')
    # Page 0 is checked here, whatever the file turns out to be, so the message can quote the value
    # received (the schema's pattern lets 0 through: a pattern for "1 or more" with leading zeros is
    # unreadable in a published schema)
    if any(int(number) == 0 for number in re.findall(r"[0-9]+", value)):
        raise PydanticCustomError(
            "fs_pages", f'pages are counted from 1, and {shown} names page 0; the first page is "1"'
        )
    return value


Pages = Annotated[str, AfterValidator(_check_pages), _Schema(type="string", pattern=PAGES_PATTERN)]


Loc = tuple[int | str, ...]
Violation = tuple[Loc, str]  # where (relative to the model), and what is wrong


class Deferred(str):
    """What a cross-field violation says when the tool answers it itself if it is the call's only one —
    with what only the file can tell (an edit whose new_string equals its old_string: where that text
    already is). With other violations it is reported in the same pass, as any other."""


class ToolArgs(BaseModel):
    """Base of every tool's arguments: strict, closed, immutable; ``null`` means the default.

    Rules across fields go in ``cross_field_violations``, which sees the raw object, so they are
    reported in the same pass as type errors (a model validator would only run once types are right).
    """

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    @classmethod
    def cross_field_violations(cls, data: Mapping[str, Any]) -> list[Violation]:
        return []

    @model_validator(mode="before")
    @classmethod
    def _null_means_default(cls, data: Any) -> Any:
        if isinstance(data, Mapping):
            if None not in data.values():
                return data
            optional = _optional_fields(cls)
            return {k: v for k, v in data.items() if not (v is None and k in optional)}
        return data


class ToolOutputModel(BaseModel):
    """Base of every tool's structured output (``ToolResult.value``)."""

    model_config = ConfigDict(strict=True, extra="forbid")


# --- parsing and validation -----------------------------------------------------------------------


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number")


def _parse_integer(digits: str) -> int:
    if len(digits.lstrip("-")) > 4000:  # Python refuses past 4,300 digits with advice for programmers
        raise ValueError(f"a number of {len(digits.lstrip('-')):,} digits is larger than any argument can be")
    return int(digits)


def parse_arguments(raw: object) -> dict[str, Any]:
    """A JSON string or a mapping, as an argument object; anything else is INVALID_ARGS."""
    if isinstance(raw, str | bytes | bytearray):
        try:
            value = json.loads(raw, parse_constant=_reject_constant, parse_int=_parse_integer)
        except json.JSONDecodeError as exc:
            raise ToolArgsError([f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"]) from exc
        except (ValueError, RecursionError) as exc:
            raise ToolArgsError([f"not valid JSON: {exc}"]) from exc
    else:
        value = raw
    if value is None and not isinstance(raw, str | bytes | bytearray):
        return {}  # a host passing no arguments at all
    if not isinstance(value, Mapping):
        raise ToolArgsError([f"/: expected object, got {json_type(value)}"])
    unreadable = [k for k in value if not isinstance(k, str) or not _encodable(k)]
    if unreadable:
        raise ToolArgsError([f"{pointer((str(k),))}: property name must be a valid Unicode string" for k in unreadable])
    return dict(value)


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def validate_arguments(model: type[ToolArgs], raw: object) -> ToolArgs:
    """Parse and validate; raise ToolArgsError listing every violation."""
    data = parse_arguments(raw)
    found = _rule_violations(model, data, ())
    try:
        args = model.model_validate(data)
    except ValidationError as exc:
        found += [(tuple(err["loc"]), _violation(model, err)) for err in exc.errors()]
        error: Exception | None = exc
    except RecursionError as exc:
        raise ToolArgsError(["/: the arguments are nested too deeply"]) from exc
    else:
        error = None
    if error is None and all(isinstance(message, Deferred) for _, message in found):
        return args  # nothing, or only what the tool answers better itself
    found.sort(key=lambda item: _declaration_order(model, item[0]))
    raise ToolArgsError([message for _, message in found]) from error


def _rule_violations(model: type[ToolArgs], data: Mapping[str, Any], loc: Loc) -> list[tuple[Loc, str]]:
    """Cross-field rules of ``model`` and of the models nested in it, wherever the shapes allow."""
    found: list[tuple[Loc, str]] = []
    for where, what in model.cross_field_violations(data):
        said = f"{pointer((*loc, *where))}: {what}"
        found.append(((*loc, *where), Deferred(said) if isinstance(what, Deferred) else said))
    for name, value in data.items():
        nested = _nested_model(model, name)
        if nested is None:
            continue
        if isinstance(value, Mapping):
            found += _rule_violations(nested, value, (*loc, name))
        elif isinstance(value, list):
            for index, item in enumerate(value):
                if isinstance(item, Mapping):
                    found += _rule_violations(nested, item, (*loc, name, index))
    return found


@functools.cache
def _optional_fields(model: type[BaseModel]) -> frozenset[str]:
    return frozenset(f.alias or name for name, f in model.model_fields.items() if not f.is_required())


def argument_names(model: type[BaseModel]) -> list[str]:
    """The names a model's arguments go by in a call, in declaration order: a field's alias where it
    has one (``-i``, which no Python name can be)."""
    return list(_argument_names(model))


@functools.cache
def _argument_names(model: type[BaseModel]) -> tuple[str, ...]:
    return tuple(f.alias or name for name, f in model.model_fields.items())


def _nested_model(model: type[BaseModel], name: str) -> type[ToolArgs] | None:
    return _nested_models(model).get(name)


@functools.cache
def _nested_models(model: type[BaseModel]) -> dict[str, type[ToolArgs]]:
    """The fields of ``model`` that hold (lists of) argument models, by name; computed once per model."""
    found: dict[str, type[ToolArgs]] = {}
    for name, field in model.model_fields.items():
        name = field.alias or name
        inner = getattr(field.annotation, "__args__", (field.annotation,))[0]
        if isinstance(inner, type) and issubclass(inner, ToolArgs):
            found[name] = inner
    return found


def _declaration_order(model: type[BaseModel], loc: Loc) -> tuple[int, ...]:
    """Sort key: each named step by its field's declaration index (unknown keys last), indexes as is."""
    key: list[int] = []
    current: type[BaseModel] | None = model
    for part in loc:
        if isinstance(part, int):
            key.append(part)
            continue
        names = argument_names(current) if current is not None else []
        key.append(names.index(part) if part in names else len(names))
        current = _nested_model(current, part) if current is not None else None
    return tuple(key)


def pointer(loc: tuple[int | str, ...]) -> str:
    """RFC 6901 JSON Pointer for a pydantic location; control characters and lone surrogates in
    property names are shown escaped, so a name can never forge a line or break the message's UTF-8."""
    if not loc:
        return "/"
    return "".join("/" + visible(str(p).replace("~", "~0").replace("/", "~1"), tabs=False) for p in loc)


_EXPECTED_TYPE = {
    "string_type": "string",
    "int_type": "integer",
    "int_from_float": "integer",
    "int_parsing": "integer",
    "bool_type": "boolean",
    "float_type": "number",
    "list_type": "array",
    "tuple_type": "array",
    "model_type": "object",
    "model_attributes_type": "object",
    "dict_type": "object",
}


def _violation(model: type[BaseModel], err: ErrorDetails) -> str:
    loc = tuple(err["loc"])
    where = pointer(loc)
    kind = err["type"]
    ctx = err.get("ctx") or {}
    received = err.get("input")
    if kind == "missing":
        return f"{where}: required property is missing"
    if kind == "extra_forbidden":
        return f"{where}: unknown property{_did_you_mean(model, loc)}"
    if kind in _EXPECTED_TYPE:
        return f"{where}: expected {_EXPECTED_TYPE[kind]}, got {json_type(received)}"
    if kind == "greater_than_equal":
        return f"{where}: expected integer >= {ctx.get('ge')}, got {shown_number(received)}"
    if kind == "less_than_equal":
        return f"{where}: expected integer <= {ctx.get('le')}, got {shown_number(received)}"
    if kind == "string_too_short" and ctx.get("min_length") == 1:
        return f"{where}: must not be empty"
    if kind == "too_short" and isinstance(received, str) and ctx.get("min_length") == 1:
        return f"{where}: must not be empty"
    if kind == "literal_error":
        return f"{where}: expected one of {ctx.get('expected')}, got {shown_number(received)}"
    if kind == "too_short":
        count = len(received) if isinstance(received, list) else 0
        return f"{where}: expected at least {ctx.get('min_length')} item(s), got {count}"
    return f"{where}: {err['msg']}"  # our own rules (fs_path, fs_text) carry finished messages


def _did_you_mean(model: type[BaseModel], loc: tuple[int | str, ...]) -> str:
    fields = _fields_at(model, loc[:-1])
    guess = difflib.get_close_matches(str(loc[-1]), fields, n=1, cutoff=0.6)
    return f'; did you mean "{guess[0]}"?' if guess else f"; expected one of: {', '.join(fields)}"


def _fields_at(model: type[BaseModel], loc: Loc) -> list[str]:
    current: type[BaseModel] = model
    for part in loc:
        if isinstance(part, str):
            current = _nested_model(current, part) or current
    return argument_names(current)


# --- the published schema ------------------------------------------------------------------------


def published_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON Schema a model sees: inlined, untitled, and portable (SPEC §11): no ``type`` arrays and no
    ``null`` branches, so strict clients and SDK schema helpers accept it. An optional argument is simply
    not ``required``; the validator still reads an explicit ``null`` for it as "the default"."""
    raw = model.model_json_schema()
    defs = raw.pop("$defs", {})
    schema: dict[str, Any] = _tidy(_inline(raw, defs))
    return schema


def _inline(node: Any, defs: Mapping[str, Any]) -> Any:
    if isinstance(node, dict):
        if "$ref" in node:
            return _inline(defs[node["$ref"].rsplit("/", 1)[-1]], defs)
        return {k: _inline(v, defs) for k, v in node.items()}
    if isinstance(node, list):
        return [_inline(v, defs) for v in node]
    return node


def _tidy(node: Any) -> Any:
    if isinstance(node, list):
        return [_tidy(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: _tidy(v) for k, v in node.items() if k != "title"}
    if out.get("type") in ("integer", "number"):
        # A bound on an optional Integer (``Integer | None = Field(ge=0)``) is left by pydantic in its own
        # words inside the branch: published as JSON Schema's (it was "ge": 0, which no client reads).
        for key, name in _BOUNDS.items():
            if key in out:
                bound = out.pop(key)
                tighter = min if name in ("maximum", "exclusiveMaximum") else max
                out[name] = tighter(bound, out[name]) if name in out else bound
    if out.get("type") == "object" and "properties" in out:
        required = set(out.get("required", []))
        out["properties"] = {
            name: prop if name in required else _without_null(prop) for name, prop in out["properties"].items()
        }
    return out


_BOUNDS = {"ge": "minimum", "le": "maximum", "gt": "exclusiveMinimum", "lt": "exclusiveMaximum"}


def _without_null(prop: dict[str, Any]) -> dict[str, Any]:
    """An optional property as published: its ``null`` branch (``X | None``) and a ``null`` default
    dropped, since leaving the property out says the same portably."""
    out = dict(prop)
    branches = out.pop("anyOf", None)
    if isinstance(branches, list):
        kept = [branch for branch in branches if branch != {"type": "null"}]
        if len(kept) == 1:
            out = {**kept[0], **out}
        elif kept:
            out["anyOf"] = kept
    if "default" in out and out["default"] is None:
        del out["default"]
    return out
