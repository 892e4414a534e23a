"""Property tests (GUIDE "Tests"): any arguments give a structured result and never an exception, invalid
arguments never touch the disk, and the published JSON Schemas agree with the validator that enforces them.

Hypothesis and function-scoped fixtures do not mix, so the workspace here is module-scoped (a real temporary
directory from ``tmp_path_factory``) and every example snapshots the tree itself.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from fs_tools import ToolArgsError, ToolResult, Workspace
from fs_tools.arguments import MAX_NAME_BYTES, MAX_PATH_BYTES, validate_arguments
from fs_tools.errors import error_codes
from fs_tools.tools import ALL_TOOLS, Tool
from fs_tools.tools.grep import pattern_problem

TOOLS: dict[str, Tool[Any]] = {tool.name: tool for tool in ALL_TOOLS}
ARGUMENT_NAMES = [
    "file_path",
    "offset",
    "limit",
    "content",
    "old_string",
    "new_string",
    "replace_all",
    "edits",
    "dry_run",
    "path",
    "source",
    "destination",
    "overwrite",
    "file_paths",
    "pages",
    "notebook_path",
    "cell",
    "cell_id",
    "new_source",
    "cell_type",
    "edit_mode",
]
# Codes that mean the product has a bug, whatever the model sent.
BUG_CODES = {"INTERNAL_ERROR", "INVALID_TOOL_OUTPUT"}

PROPERTY_SETTINGS = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

# --- strategies -------------------------------------------------------------------------------------------

# Strings that hit real files and the usual suspects, as well as arbitrary text (hypothesis's default text has no
# surrogates; `any_text` adds them, since JSON can carry a lone surrogate as \ud800).
known_strings = st.sampled_from(
    [
        *["a.txt", "dir/b.txt", "new.txt", "dir", "dir/", "", "../outside/secret.txt", "a.txt\0", "\ud800"],
        *["one", "two", "\n", "nb.ipynb", "1-2", "code", "insert", "delete", "c1", "cell-1"],
    ]
)
any_text = st.text(alphabet=st.characters(exclude_categories=()), max_size=12)
strings = known_strings | st.text(max_size=12) | any_text
keys = (
    st.sampled_from(ARGUMENT_NAMES)
    | st.sampled_from(["filepath", "path", "old_str", "replaceAll"])
    | st.text(max_size=8)
)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-3, max_value=5)
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([1.0, 3.0, 0.0, -0.0, 2.5, 1e300])
    | strings
)
json_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(keys, children, max_size=5),
    max_leaves=20,
)
argument_objects = st.dictionaries(keys, json_values, max_size=6)


@st.composite
def edits_like(draw: st.DrawFn) -> list[Any]:
    """Lists of edit objects, mostly well-formed, so multi_edit's nested validation gets exercised."""
    item = st.fixed_dictionaries(
        {"old_string": strings, "new_string": strings},
        optional={"replace_all": st.booleans() | st.none() | json_values, "extra": json_values},
    )
    return draw(st.lists(item | json_values, max_size=4))


@st.composite
def tool_shaped(draw: st.DrawFn) -> dict[str, Any]:
    """Argument objects that look like real calls: declared names, mostly sensible types, some noise."""
    shape = {
        "file_path": strings,
        "offset": st.integers(min_value=-1, max_value=6) | st.none() | json_values,
        "limit": st.integers(min_value=-1, max_value=6) | st.none() | json_values,
        "content": strings,
        "old_string": strings,
        "new_string": strings,
        "replace_all": st.booleans() | st.none() | json_values,
        "edits": edits_like() | json_values,
        "dry_run": st.booleans() | st.none() | json_values,
        "path": strings,
        "source": strings,
        "destination": strings,
        "overwrite": st.booleans() | st.none() | json_values,
        "file_paths": st.lists(strings, max_size=4) | json_values,
        "pages": strings | st.sampled_from(["1", "1-2", "2,1", "0", "9-1", " 1 , 2 "]) | json_values,
        "notebook_path": strings,
        "cell": st.integers(min_value=-1, max_value=4) | st.none() | json_values,
        "cell_id": strings,
        "new_source": strings,
        "cell_type": st.sampled_from(["code", "markdown", "raw", "heading"]) | json_values,
        "edit_mode": st.sampled_from(["replace", "insert", "delete", "Replace"]) | json_values,
    }
    names = draw(st.lists(st.sampled_from(ARGUMENT_NAMES), unique=True, max_size=5))
    return {name: draw(shape[name]) for name in ["file_path", *names]}


not_json = (
    any_text
    | st.sampled_from(["", " ", "{", "{}x", '{"file_path": "a.txt",}', "{'file_path': 'a.txt'}", "NaN", "[1,]"])
    | json_values.map(lambda value: json.dumps(value)[:-1] + "\x00")
)


# Plausible calls, so the property also runs past validation into the gates, the provider and the tool bodies.
# old_string and new_string come from disjoint alphabets (and new_string never holds an old_string twice), so
# a replace_all cannot make a file grow geometrically over the examples.
plausible_paths = st.sampled_from(
    ["a.txt", "dir/b.txt", "new.txt", "dir/new.txt", "dir", "missing/deeper/x.txt", "../outside/secret.txt"]
)
plausible_old = st.sampled_from(["one", "two", "three", "alpha", "\n", "x", "two\n"]) | st.text("abcx \n", max_size=5)
plausible_new = st.sampled_from(["1", "2", "", "TWO", "x\n"]) | st.text("ABC\t", max_size=4)
plausible_int = st.integers(min_value=-1, max_value=6) | st.none() | st.sampled_from([2.0, 2.5, "2"])
plausible_edit = st.fixed_dictionaries(
    {"old_string": plausible_old, "new_string": plausible_new}, optional={"replace_all": st.booleans() | st.none()}
)
PLAUSIBLE: dict[str, st.SearchStrategy[dict[str, Any]]] = {
    "read": st.fixed_dictionaries(
        {"file_path": plausible_paths | st.just("nb.ipynb")},
        optional={
            "offset": plausible_int,
            "limit": plausible_int,
            "pages": st.sampled_from(["1", "1-3", "2,1", "0", "3-1", "x"]),
        },
    ),
    "write": st.fixed_dictionaries({"file_path": plausible_paths, "content": st.text(max_size=20)}),
    "edit": st.fixed_dictionaries(
        {"file_path": plausible_paths, "old_string": plausible_old, "new_string": plausible_new},
        optional={"replace_all": st.booleans() | st.none()},
    ),
    "multi_edit": st.fixed_dictionaries({"file_path": plausible_paths, "edits": st.lists(plausible_edit, max_size=3)}),
    "list": st.fixed_dictionaries({}, optional={"path": plausible_paths, "depth": plausible_int}),
    "glob": st.fixed_dictionaries({"pattern": st.sampled_from(["*", "**/*.txt", "dir/*", "[", "{a,b}"])}),
    "grep": st.fixed_dictionaries(
        {"pattern": st.sampled_from(["two", "^a", "(", "b.*"])}, optional={"path": plausible_paths}
    ),
    "read_many": st.fixed_dictionaries(
        {"file_paths": st.lists(plausible_paths, max_size=3)}, optional={"limit": plausible_int}
    ),
    "stat": st.fixed_dictionaries({"path": plausible_paths}),
    "move": st.fixed_dictionaries(
        {"source": plausible_paths, "destination": plausible_paths}, optional={"overwrite": st.booleans()}
    ),
    "copy": st.fixed_dictionaries(
        {"source": plausible_paths, "destination": plausible_paths}, optional={"overwrite": st.booleans()}
    ),
    "delete": st.fixed_dictionaries({"file_path": plausible_paths}),
    "create_directory": st.fixed_dictionaries({"path": plausible_paths}),
    "notebook_edit": st.fixed_dictionaries(
        {"notebook_path": st.sampled_from(["nb.ipynb", "a.txt", "missing.ipynb"])},
        optional={
            "cell": plausible_int,
            "cell_id": st.sampled_from(["c0", "c1", "cell-1", "nope", ""]),
            "new_source": st.text("ab #.\n", max_size=8),
            "cell_type": st.sampled_from(["code", "markdown", "raw", "heading"]),
            "edit_mode": st.sampled_from(["replace", "insert", "delete", "append"]),
        },
    ),
}


@st.composite
def arguments_for(draw: st.DrawFn, tool: str) -> Any:
    """Arguments in every form a host may pass: a mapping, its JSON text, a non-object, or not JSON at all;
    half of them plausible calls (one_of flattens nested alternatives, so the weighting is explicit)."""
    if draw(st.booleans()):
        plausible = draw(PLAUSIBLE[tool])
        return json.dumps(plausible) if draw(st.booleans()) else plausible
    objects = tool_shaped() | argument_objects
    return draw(st.one_of(objects, objects.map(json.dumps), json_values, json_values.map(json.dumps), not_json))


# --- the workspace -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``base/root`` is the workspace; ``base/outside`` must never change."""
    top = tmp_path_factory.mktemp("properties")
    (top / "root" / "dir").mkdir(parents=True)
    (top / "root" / "a.txt").write_text("one\ntwo\nthree\ntwo\n")
    (top / "root" / "dir" / "b.txt").write_text("alpha\r\nbeta\r\n")
    cells = [
        {"cell_type": "markdown", "id": "c0", "metadata": {}, "source": ["# one"]},
        {"cell_type": "code", "execution_count": None, "id": "c1", "metadata": {}, "outputs": [], "source": ["two"]},
    ]
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (top / "root" / "nb.ipynb").write_text(json.dumps(notebook, indent=1, sort_keys=True) + "\n")
    (top / "outside").mkdir()
    (top / "outside" / "secret.txt").write_text("TOP-SECRET\n")
    return top


@pytest.fixture(scope="module")
def prop_workspace(base: Path) -> Iterator[Workspace]:
    with Workspace(base / "root") as ws:
        yield ws


def tree(top: Path) -> dict[str, tuple[str, bytes | str | None, int, int]]:
    """Everything under ``top``: kind, bytes or link target, mode and mtime (a vanished temp file shows in its
    directory's mtime)."""
    found: dict[str, tuple[str, bytes | str | None, int, int]] = {}
    for dirpath, dirnames, filenames in os.walk(top):
        for name in [".", *dirnames, *filenames]:
            path = Path(dirpath) / name
            st_ = path.lstat()
            rel = os.path.normpath(path.relative_to(top))
            if name != "." and path.is_symlink():
                found[rel] = ("link", os.readlink(path), st_.st_mode, st_.st_mtime_ns)
            elif path.is_dir():
                found[rel] = ("dir", None, st_.st_mode, st_.st_mtime_ns)
            else:
                found[rel] = ("file", path.read_bytes(), st_.st_mode, st_.st_mtime_ns)
    return found


def check_structured(result: object) -> ToolResult:
    assert isinstance(result, ToolResult)
    assert isinstance(result.is_error, bool)
    assert isinstance(result.text, str)
    out = result.to_dict()
    json.dumps(out, allow_nan=False)
    assert out["isError"] is result.is_error
    if not result.is_error:
        assert result.error is None
        assert "error" not in out
        json.dumps(result.value, allow_nan=False)
        return result
    assert result.error is not None
    codes = error_codes()
    assert result.error.code in codes, result.error
    assert result.error.name == codes[result.error.code].__name__, result.error
    assert result.error.code not in BUG_CODES, (result.error, result.exception and result.exception.__cause__)
    assert result.text == result.error.message
    assert result.value is None
    return result


# --- any arguments -> a structured result; invalid arguments -> nothing on disk -------------------------------


@pytest.mark.parametrize("tool", sorted(TOOLS))
@PROPERTY_SETTINGS
@given(data=st.data())
def test_any_arguments_give_a_structured_result_and_invalid_ones_touch_nothing(
    prop_workspace: Workspace, base: Path, tool: str, data: st.DataObject
) -> None:
    session = prop_workspace.session("properties")
    arguments = data.draw(arguments_for(tool), label="arguments")
    path = arguments.get("file_path", arguments.get("notebook_path")) if isinstance(arguments, dict) else None
    if isinstance(path, str) and data.draw(st.booleans(), label="read first"):
        check_structured(session.call("read", {"file_path": path}))  # so edits get past the observation gate
    outside = tree(base / "outside")
    before = tree(base)
    result = check_structured(session.call(tool, arguments))
    event(result.error.code if result.error is not None else "success")
    if result.error is not None and result.error.code == "INVALID_ARGS":
        assert tree(base) == before, f"INVALID_ARGS but the disk changed: {result.text}"
        assert isinstance(result.exception, ToolArgsError)
        assert result.text == "invalid arguments: " + "; ".join(result.exception.violations)
        assert all(isinstance(v, str) and v for v in result.exception.violations)
    assert tree(base / "outside") == outside


@PROPERTY_SETTINGS
@given(name=st.text(max_size=12) | st.sampled_from(["reed", "Read", "multi-edit", "wirte"]), arguments=json_values)
def test_any_tool_name_gives_a_structured_result(prop_workspace: Workspace, name: str, arguments: Any) -> None:
    assume(name not in TOOLS)
    result = check_structured(prop_workspace.session("names").call(name, arguments))
    assert result.error is not None
    assert result.error.code == "UNKNOWN_TOOL"


# --- a mapping and its JSON text are the same arguments --------------------------------------------------


def outcome(tool: str, arguments: Any) -> tuple[str, Any]:
    try:
        return ("ok", validate_arguments(TOOLS[tool].arguments, arguments))
    except ToolArgsError as exc:
        return ("invalid", exc.violations)


@pytest.mark.parametrize("tool", sorted(TOOLS))
@PROPERTY_SETTINGS
@given(data=st.data())
def test_a_mapping_and_its_json_text_validate_the_same(tool: str, data: st.DataObject) -> None:
    arguments = data.draw(tool_shaped() | argument_objects | json_values, label="arguments")
    # A Python None is the host's "no arguments at all" (the default of session.call), not a JSON null; a Python
    # str is itself JSON text, so it has no "mapping" form to compare with.
    assume(arguments is not None and not isinstance(arguments, str))
    assert outcome(tool, json.dumps(arguments)) == outcome(tool, arguments)


# --- the published schema and the validator agree ---------------------------------------------------------


def schema_of(tool: str) -> dict[str, Any]:
    schema: dict[str, Any] = TOOLS[tool].schema()["input_schema"]
    return schema


def value_for(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values of the schema's own types (and its boundaries), occasionally anything at all."""
    types = schema.get("type")
    kinds = types if isinstance(types, list) else [types]
    options: list[st.SearchStrategy[Any]] = []
    for kind in kinds:
        if kind == "string":
            options.append(st.text(max_size=6) | st.sampled_from(["", "a", "a.txt"]))
        elif kind == "integer":
            options.append(st.integers(min_value=-2, max_value=4) | st.sampled_from([1.0, 0.0, 2.5, 10**30]))
        elif kind == "boolean":
            options.append(st.booleans())
        elif kind == "null":
            options.append(st.none())
        elif kind == "array":
            options.append(st.lists(value_for(schema["items"]), max_size=3))
        elif kind == "object":
            options.append(object_for(schema))
    return st.one_of(*options) | json_values if options else json_values


def object_for(schema: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    properties: dict[str, Any] = schema.get("properties", {})
    return st.fixed_dictionaries(
        {},
        optional={**{name: value_for(prop) for name, prop in properties.items()}, "extra": json_values},
    )


def schema_blind(tool: str, obj: dict[str, Any]) -> bool:
    """Arguments only our validator can judge: the documented places where JSON Schema cannot express a rule.

    - a path containing NUL, a lone surrogate, more than MAX_PATH_BYTES bytes or a component longer than
      MAX_NAME_BYTES (SPEC §8 makes these INVALID_ARGS at /file_path; "type": "string" cannot say so);
    - text (content, old_string, new_string) with a lone surrogate, which JSON can carry but a UTF-8 file
      cannot (same reason, same rule);
    - new_string equal to old_string, or equal once CRLF is read as LF (a cross-field rule);
    - a move's destination equal to its source (a cross-field rule);
    - notebook_edit's arguments that its edit_mode requires (a cell to replace or delete, new_source to
      replace or insert, cell_type to insert: cross-field rules; a portable schema has no if/then);
    - a grep pattern Python's ``re`` cannot compile (``?``, ``[``): the schema says "string", the regex
      syntax is the validator's to judge (a rare draw: hypothesis found ``'?'`` once in many runs);
    - a page 0 in read's ``pages`` (``"0"``, ``"0-3"``): the published pattern takes any digits, as one
      for "1 or more" with leading zeros is unreadable, and the validator refuses page 0 naming it
      (``fs_tools.arguments._check_pages``; a rare draw: found once in a whole-suite run).
    Nothing else is excused: any other disagreement is drift between the schema and the validator.
    """
    if tool == "notebook_edit" and TOOLS[tool].arguments.cross_field_violations(obj):
        return True
    for key in ("file_path", "path", "source", "destination", "notebook_path"):
        path = obj.get(key)
        if isinstance(path, str) and unusable_path(path):
            return True
    paths = obj.get("file_paths")
    if isinstance(paths, list) and any(isinstance(p, str) and unusable_path(p) for p in paths):
        return True
    pattern = obj.get("pattern")
    if tool == "grep" and isinstance(pattern, str) and pattern and pattern_problem(pattern) is not None:
        return True
    pages = obj.get("pages")
    if tool == "read" and isinstance(pages, str) and any(int(n) == 0 for n in re.findall(r"[0-9]+", pages)):
        return True
    source = obj.get("source")
    if tool == "move" and isinstance(source, str) and source and source.rstrip("/") == obj.get("destination"):
        return True
    if tool == "copy" and isinstance(source, str) and source == obj.get("destination"):
        return True
    if any(has_lone_surrogate(text) for text in strings_in(obj)):
        return True
    edit_objects = [obj] if tool == "edit" else obj.get("edits", []) if isinstance(obj.get("edits"), list) else []
    return any(
        isinstance(e, dict)
        and isinstance(e.get("old_string"), str)
        and isinstance(e.get("new_string"), str)
        and e["old_string"].replace("\r\n", "\n") == e["new_string"].replace("\r\n", "\n")
        for e in edit_objects
    )


def unusable_path(path: str) -> bool:
    if "\0" in path or has_lone_surrogate(path):
        return True
    encoded = path.encode("utf-8")
    return len(encoded) > MAX_PATH_BYTES or any(len(part) > MAX_NAME_BYTES for part in encoded.split(b"/"))


def has_lone_surrogate(text: str) -> bool:
    return any(0xD800 <= ord(c) <= 0xDFFF for c in text)


def strings_in(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from strings_in(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from strings_in(item)


def accepted(tool: str, obj: dict[str, Any]) -> tuple[bool, list[str]]:
    try:
        validate_arguments(TOOLS[tool].arguments, obj)
    except ToolArgsError as exc:
        return False, exc.violations
    return True, []


@pytest.mark.parametrize("tool", sorted(TOOLS))
@PROPERTY_SETTINGS
@given(data=st.data())
def test_schema_and_validator_agree(tool: str, data: st.DataObject) -> None:
    schema = schema_of(tool)
    obj = data.draw(object_for(schema) | tool_shaped() | argument_objects, label="arguments")
    assume(not schema_blind(tool, obj))
    ours, violations = accepted(tool, obj)
    theirs = Draft202012Validator(schema).is_valid(without_default_nulls(schema, obj))
    assert theirs == ours, f"schema says valid={theirs}, validator says valid={ours} {violations}"


@pytest.mark.parametrize(
    ("path", "violation"),
    [("", "/file_path: must not be empty"), ("dir/", "/file_path: must name a file, but it ends with '/'")],
)
@pytest.mark.parametrize("tool", ["edit", "multi_edit", "read", "write"])
def test_schema_and_validator_agree_on_paths_the_schema_can_describe(tool: str, path: str, violation: str) -> None:
    """Deterministic cases of the property above: the validator refuses an empty path and one ending in '/',
    and JSON Schema can say both (``minLength: 1``, ``pattern: "[^/]$"``), so the published schema must too."""
    objects: dict[str, dict[str, Any]] = {
        "read": {"file_path": path},
        "write": {"file_path": path, "content": "x"},
        "edit": {"file_path": path, "old_string": "a", "new_string": "b"},
        "multi_edit": {"file_path": path, "edits": [{"old_string": "a", "new_string": "b"}]},
    }
    obj = objects[tool]
    ours, violations = accepted(tool, obj)
    assert violations == [violation]
    assert Draft202012Validator(schema_of(tool)).is_valid(without_default_nulls(schema_of(tool), obj)) == ours


# --- the dialects' tools: any arguments -> a structured result, nothing outside touched ------------------------

from fs_tools.arguments import argument_names  # noqa: E402
from fs_tools.tools.dialects import DIALECTS  # noqa: E402
from tests.support.schemas import without_default_nulls  # noqa: E402

DIALECT_TOOLS = [
    (dialect.name, tool)
    for dialect in DIALECTS.values()
    for tool in (dialect.tools if dialect.name != "fs-tools" else dialect.extras)
]
PATCHES = st.sampled_from(
    [
        "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+1\n*** End Patch",
        "*** Begin Patch\n*** Add File: ../outside/x.txt\n+x\n*** End Patch",
        "*** Begin Patch\n*** Delete File: dir\n*** End Patch",
        "--- a/dir/b.txt\n+++ b/dir/b.txt\n@@ -1,2 +1,2 @@\n alpha\n-beta\n+gamma\n",
        "*** Begin Patch\n*** Update File: a.txt\n*** Move to: /etc/x\n@@\n-two\n+2\n*** End Patch",
    ]
)


@pytest.fixture(scope="module")
def dialect_workspaces(base: Path) -> Iterator[dict[str, Workspace]]:
    opened = {
        name: Workspace(base / "root", dialect=name, tools=[t.name for t in d.tools + d.extras])
        for name, d in DIALECTS.items()
    }
    yield opened
    for ws in opened.values():
        ws.close()


@pytest.mark.parametrize(("dialect", "tool"), DIALECT_TOOLS, ids=[f"{d}-{t.name}" for d, t in DIALECT_TOOLS])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_any_arguments_to_a_dialect_tool_give_a_structured_result(
    dialect_workspaces: dict[str, Workspace], base: Path, dialect: str, tool: Any, data: st.DataObject
) -> None:
    session = dialect_workspaces[dialect].session("dialect-properties")
    names = argument_names(tool.arguments)
    values = scalars | PATCHES | st.lists(strings | st.integers(min_value=-2, max_value=9), max_size=3) | json_values
    arguments = data.draw(st.dictionaries(st.sampled_from([*names, "junk"]), values, max_size=len(names) + 1))
    outside = tree(base / "outside")
    result = check_structured(session.call(tool.name, arguments))
    event(result.error.code if result.error is not None else "success")
    assert tree(base / "outside") == outside
