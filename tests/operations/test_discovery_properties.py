"""Any arguments to the discovery tools give a structured result; schemas and validator agree on them."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from fs_tools import Workspace
from fs_tools.arguments import validate_arguments
from fs_tools.errors import ToolArgsError, error_codes
from fs_tools.tools import DISCOVERY_TOOLS
from fs_tools.tools.grep import pattern_problem
from tests.support.schemas import without_default_nulls

NAMES = ["path", "depth", "include_hidden", "pattern", "glob", "case_insensitive", "include_ignored", "file_path"]
SCALARS = st.none() | st.booleans() | st.integers(-3, 30) | st.floats(allow_nan=False) | st.text(max_size=12)
VALUES = st.recursive(SCALARS, lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3))
ARGUMENTS = st.dictionaries(st.sampled_from(NAMES) | st.text(max_size=6), VALUES, max_size=5)
TOOL = st.sampled_from([tool.name for tool in DISCOVERY_TOOLS])


def _compiles(pattern: str) -> bool:
    try:
        re.compile(pattern)
    except (re.error, RecursionError, OverflowError):
        return False
    return pattern_problem(pattern) is None  # grep refuses some compilable patterns (cost limits)


@settings(max_examples=300, deadline=None)
@given(tool=TOOL, arguments=ARGUMENTS | VALUES)
def test_any_arguments_give_a_structured_result(tool: str, arguments: Any) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "src").mkdir()
        (Path(tmp) / "src" / "a.py").write_text("x = 1\n")
        with Workspace(tmp) as ws:
            result = ws.session("s").call(tool, arguments)
    assert isinstance(result.is_error, bool)
    if result.error is not None:
        assert result.error.code in error_codes()
        assert result.error.code not in {"INTERNAL_ERROR", "INVALID_TOOL_OUTPUT"}, result.text


@settings(max_examples=400, deadline=None)
@given(tool=TOOL, arguments=ARGUMENTS)
def test_schema_and_validator_agree(tool: str, arguments: dict[str, Any]) -> None:
    declared = next(t for t in DISCOVERY_TOOLS if t.name == tool)
    for key in ("path", "pattern", "glob"):  # rules JSON Schema cannot state: NUL, surrogates, regex validity
        value = arguments.get(key)
        if isinstance(value, str):
            assume(("\0" not in value and value.isprintable()) or value == "")
            assume(not any(0xD800 <= ord(c) <= 0xDFFF for c in value))
    if tool == "grep" and isinstance(arguments.get("pattern"), str):
        assume(_compiles(arguments["pattern"]))
    try:
        validate_arguments(declared.arguments, arguments)
        ours = True
    except ToolArgsError:
        ours = False
    schema = declared.schema()["input_schema"]
    assert Draft202012Validator(schema).is_valid(without_default_nulls(schema, arguments)) == ours, arguments
