"""Argument validation (SPEC §4), the dispatch-level error codes (SPEC §5: UNKNOWN_TOOL, INVALID_TOOL_OUTPUT,
INTERNAL_ERROR, TOOL_ABORTED_BEFORE_DISPATCH), the result shape (SPEC §3) and the published tool schemas.

Messages are asserted in full wherever the SPEC gives their format: every one is read by a model that retries
on it alone.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import threading
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from pydantic import ValidationError

from fs_tools import Session, ToolArgsError, ToolResult, Workspace
from fs_tools.arguments import ToolArgs, ToolOutputModel
from fs_tools.errors import error_codes
from fs_tools.tools import Example, Tool, ToolContext, ToolOutput

TOOLS = ("read", "write", "edit", "multi_edit")


def invalid(result: ToolResult) -> str:
    """The message of an INVALID_ARGS result (fails the test if the result is anything else)."""
    assert result.is_error, f"expected INVALID_ARGS, got success: {result.text}"
    assert result.error is not None
    assert result.error.code == "INVALID_ARGS", result.text
    assert result.error.name == "ToolArgsError"
    assert isinstance(result.exception, ToolArgsError)
    assert result.value is None
    assert result.text == result.error.message
    return result.text


def tree(top: Path) -> dict[str, tuple[str, bytes | str | None, int]]:
    """Everything under ``top``: kind, bytes or link target, and mtime (so even a vanished temp file shows)."""
    found: dict[str, tuple[str, bytes | str | None, int]] = {}
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            st = path.lstat()
            rel = str(path.relative_to(top))
            if path.is_symlink():
                found[rel] = ("link", os.readlink(path), st.st_mtime_ns)
            elif path.is_dir():
                found[rel] = ("dir", None, st.st_mtime_ns)
            else:
                found[rel] = ("file", path.read_bytes(), st.st_mtime_ns)
    found["."] = ("dir", None, top.stat().st_mtime_ns)
    return found


@pytest.fixture
def text_file(root: Path) -> Path:
    path = root / "a.txt"
    path.write_text("one\ntwo\nthree\ntwo\n")
    return path


# --- the message format: path, expectation, what was received ---------------------------------------


@pytest.mark.parametrize(
    ("tool", "args", "message"),
    [
        # The SPEC's own example: what was received is named as JSON names it, so 3 and 3.5 are both numbers
        # ("integer" names an expectation, never a received value).
        ("read", {"file_path": 3}, "invalid arguments: /file_path: expected string, got number"),
        ("read", {"file_path": 3.5}, "invalid arguments: /file_path: expected string, got number"),
        ("read", {"file_path": True}, "invalid arguments: /file_path: expected string, got boolean"),
        ("read", {"file_path": ["a.txt"]}, "invalid arguments: /file_path: expected string, got array"),
        ("read", {"file_path": {"p": "a.txt"}}, "invalid arguments: /file_path: expected string, got object"),
        ("write", {"file_path": "b.txt", "content": 5}, "invalid arguments: /content: expected string, got number"),
        (
            "multi_edit",
            {"file_path": "a.txt", "edits": {"old_string": "a", "new_string": "b"}},
            "invalid arguments: /edits: expected array, got object",
        ),
        (
            "multi_edit",
            {"file_path": "a.txt", "edits": [{"old_string": "one", "new_string": "1"}, "two"]},
            "invalid arguments: /edits/1: expected object, got string",
        ),
    ],
)
def test_type_violation_names_pointer_expected_and_received_json_types(
    session: Session, tool: str, args: dict[str, Any], message: str
) -> None:
    assert invalid(session.call(tool, args)) == message


def test_every_violation_is_reported_at_once_in_declaration_order(session: Session) -> None:
    result = session.call("read", {"bogus": 1, "limit": 0, "offset": "2", "file_path": None})
    assert invalid(result) == (
        "invalid arguments: /file_path: expected string, got null; /offset: expected integer, got string; "
        "/limit: expected integer >= 1, got 0; /bogus: unknown property; "
        "expected one of: file_path, offset, limit, pages"
    )
    assert isinstance(result.exception, ToolArgsError)
    assert result.exception.violations == [
        "/file_path: expected string, got null",
        "/offset: expected integer, got string",
        "/limit: expected integer >= 1, got 0",
        "/bogus: unknown property; expected one of: file_path, offset, limit, pages",
    ]


def test_declaration_order_does_not_depend_on_the_order_of_the_keys_sent(session: Session) -> None:
    result = session.call("write", {"content": 5, "file_path": 1})
    assert invalid(result) == (
        "invalid arguments: /file_path: expected string, got number; /content: expected string, got number"
    )


def test_nested_violations_carry_json_pointers_with_the_edit_index(session: Session, text_file: Path) -> None:
    edits = [
        {"old_string": "one", "new_string": "1"},
        {"old_string": "two", "new_string": "two"},
        {"old_string": 2, "new_string": "3"},
        {"old_string": "three", "new_string": None},
    ]
    result = session.call("multi_edit", {"file_path": "a.txt", "edits": edits})
    assert invalid(result) == (
        "invalid arguments: /edits/1/new_string: must differ from old_string; "
        "/edits/2/old_string: expected string, got number; /edits/3/new_string: expected string, got null"
    )
    assert text_file.read_text() == "one\ntwo\nthree\ntwo\n"


def test_json_pointer_escapes_slash_and_tilde_in_property_names(session: Session) -> None:
    result = session.call("read", {"file_path": "a.txt", "a/b~c": 1})
    assert invalid(result) == (
        "invalid arguments: /a~1b~0c: unknown property; expected one of: file_path, offset, limit, pages"
    )


def test_cross_field_rule_is_reported_with_the_type_violations_of_the_same_call(session: Session) -> None:
    # SPEC §4: semantic constraints are checked "in the same pass" and all violations are reported at once, so a
    # model that fixes file_path is not then surprised by a second round trip about new_string.
    result = session.call("edit", {"file_path": 3, "old_string": "x", "new_string": "x"})
    assert invalid(result) == (
        "invalid arguments: /file_path: expected string, got number; /new_string: must differ from old_string"
    )


def test_cross_field_rule_is_reported_alongside_an_unknown_property(session: Session) -> None:
    result = session.call("edit", {"file_path": "a.txt", "old_string": "x", "new_string": "x", "bogus": 1})
    assert invalid(result) == (
        "invalid arguments: /new_string: must differ from old_string; "
        "/bogus: unknown property; expected one of: file_path, old_string, new_string, replace_all, dry_run"
    )


# --- required and unknown properties ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "args", "message"),
    [
        ("read", {}, "invalid arguments: /file_path: required property is missing"),
        (
            "edit",
            {"file_path": "a.txt"},
            "invalid arguments: /old_string: required property is missing; /new_string: required property is missing",
        ),
        (
            "multi_edit",
            {"file_path": "a.txt", "edits": [{"new_string": "x"}]},
            "invalid arguments: /edits/0/old_string: required property is missing",
        ),
    ],
)
def test_missing_required_property(session: Session, tool: str, args: dict[str, Any], message: str) -> None:
    assert invalid(session.call(tool, args)) == message


@pytest.mark.parametrize(
    ("tool", "args", "message"),
    [
        (
            "read",
            {"filepath": "a.txt"},
            "invalid arguments: /file_path: required property is missing; /filepath: unknown property; did you mean "
            '"file_path"?',
        ),
        (
            "read",
            {"file_path": "a.txt", "ofset": 2},
            'invalid arguments: /ofset: unknown property; did you mean "offset"?',
        ),
        (
            "multi_edit",
            {"file_path": "a.txt", "edits": [{"old_sting": "a", "new_string": "b"}]},
            "invalid arguments: /edits/0/old_string: required property is missing; /edits/0/old_sting: unknown "
            'property; did you mean "old_string"?',
        ),
    ],
)
def test_unknown_property_suggests_the_close_declared_name(
    session: Session, tool: str, args: dict[str, Any], message: str
) -> None:
    assert invalid(session.call(tool, args)) == message


def test_unknown_property_without_a_close_name_lists_the_declared_ones(session: Session) -> None:
    result = session.call("write", {"file_path": "b.txt", "content": "x", "zzzz": True})
    message = invalid(result)
    assert message == "invalid arguments: /zzzz: unknown property; expected one of: file_path, content"
    assert "did you mean" not in message


# --- no coercion, with the one leniency --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "extra", "message"),
    [
        ("read", {"offset": "3"}, "invalid arguments: /offset: expected integer, got string"),
        ("read", {"limit": True}, "invalid arguments: /limit: expected integer, got boolean"),
        ("read", {"offset": 3.5}, "invalid arguments: /offset: expected integer, got number"),
        ("read", {"offset": [3]}, "invalid arguments: /offset: expected integer, got array"),
        ("edit", {"replace_all": "true"}, "invalid arguments: /replace_all: expected boolean, got string"),
        ("edit", {"replace_all": 1}, "invalid arguments: /replace_all: expected boolean, got number"),
        ("edit", {"replace_all": 1.0}, "invalid arguments: /replace_all: expected boolean, got number"),
        ("edit", {"replace_all": "false"}, "invalid arguments: /replace_all: expected boolean, got string"),
    ],
)
def test_no_coercion(session: Session, text_file: Path, tool: str, extra: dict[str, Any], message: str) -> None:
    base: dict[str, Any] = {"file_path": "a.txt"}
    if tool == "edit":
        base |= {"old_string": "one", "new_string": "1"}
    assert invalid(session.call(tool, base | extra)) == message
    assert text_file.read_text() == "one\ntwo\nthree\ntwo\n"


def test_a_whole_number_float_is_an_integer(session: Session, text_file: Path) -> None:
    result = session.call("read", {"file_path": "a.txt", "offset": 3.0, "limit": 1.0})
    assert not result.is_error, result.text
    assert result.value["offset"] == 3
    assert type(result.value["offset"]) is int
    assert result.value["lines_shown"] == 1
    assert result.text.splitlines()[0] == "     3\tthree"


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf")])
def test_non_finite_floats_in_a_mapping_are_not_integers(session: Session, value: float) -> None:
    assert invalid(session.call("read", {"file_path": "a.txt", "offset": value})) == (
        "invalid arguments: /offset: expected integer, got number"
    )


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_literals_are_not_json(session: Session, literal: str) -> None:
    message = invalid(session.call("read", '{"file_path": "a.txt", "offset": ' + literal + "}"))
    assert message.startswith("invalid arguments: not valid JSON: ")
    assert literal in message


# --- null means the default -----------------------------------------------------------------------------


def test_null_offset_and_limit_mean_the_defaults(session: Session, text_file: Path) -> None:
    result = session.call("read", {"file_path": "a.txt", "offset": None, "limit": None})
    assert not result.is_error, result.text
    assert result.value["offset"] == 1
    assert result.value["lines_shown"] == 4
    assert result.text.splitlines()[0] == "     1\tone"


def test_null_replace_all_means_false(session: Session, text_file: Path) -> None:
    assert not session.call("read", {"file_path": "a.txt"}).is_error
    result = session.call("edit", {"file_path": "a.txt", "old_string": "two", "new_string": "2", "replace_all": None})
    assert result.error is not None
    assert result.error.code == "FS_AMBIGUOUS_EDIT", result.text
    edits = [{"old_string": "two", "new_string": "2", "replace_all": None}]
    result = session.call("multi_edit", {"file_path": "a.txt", "edits": edits})
    assert result.error is not None
    assert result.error.code == "FS_AMBIGUOUS_EDIT", result.text
    assert text_file.read_text() == "one\ntwo\nthree\ntwo\n"


@pytest.mark.parametrize(
    ("tool", "args", "message"),
    [
        ("read", {"file_path": None}, "invalid arguments: /file_path: expected string, got null"),
        (
            "write",
            {"file_path": "b.txt", "content": None},
            "invalid arguments: /content: expected string, got null",
        ),
        ("multi_edit", {"file_path": "a.txt", "edits": None}, "invalid arguments: /edits: expected array, got null"),
        (
            "multi_edit",
            {"file_path": "a.txt", "edits": [{"old_string": None, "new_string": "x"}]},
            "invalid arguments: /edits/0/old_string: expected string, got null",
        ),
    ],
)
def test_null_for_a_required_argument_is_a_violation(
    session: Session, root: Path, tool: str, args: dict[str, Any], message: str
) -> None:
    assert invalid(session.call(tool, args)) == message
    assert not (root / "b.txt").exists()


# --- semantic constraints -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "args", "message"),
    [
        ("read", {"file_path": "a.txt", "offset": 0}, "invalid arguments: /offset: expected integer >= 1, got 0"),
        ("read", {"file_path": "a.txt", "offset": -5}, "invalid arguments: /offset: expected integer >= 1, got -5"),
        ("read", {"file_path": "a.txt", "limit": 0}, "invalid arguments: /limit: expected integer >= 1, got 0"),
        (
            "edit",
            {"file_path": "a.txt", "old_string": "", "new_string": "x"},
            "invalid arguments: /old_string: must not be empty",
        ),
        (
            "edit",
            {"file_path": "a.txt", "old_string": "two", "new_string": "two"},
            "invalid arguments: /new_string: must differ from old_string — it is the same text, so the edit would "
            "change nothing. That text is already in the file at line 2 (and elsewhere): if it is as it should be, "
            "nothing is left to do; otherwise put the text you want there in new_string:\n     2\ttwo",
        ),
        (
            "multi_edit",
            {"file_path": "a.txt", "edits": []},
            "invalid arguments: /edits: expected at least 1 item(s), got 0",
        ),
        (
            "multi_edit",
            {
                "file_path": "a.txt",
                "edits": [{"old_string": "one", "new_string": "1"}, {"old_string": "two", "new_string": "two"}],
            },
            "invalid arguments: /edits/1/new_string: must differ from old_string — it is the same text, so the "
            "edit would change nothing. That text is already in the file at line 2 (and elsewhere): if it is as it "
            "should be, nothing is left to do; otherwise put the text you want there in /edits/1/new_string:\n"
            "     2\ttwo",
        ),
        (
            "multi_edit",
            {
                "file_path": "a.txt",
                "edits": [{"old_string": "one", "new_string": "1"}, {"old_string": "", "new_string": "2"}],
            },
            "invalid arguments: /edits/1/old_string: must not be empty",
        ),
        ("read", {"file_path": ""}, "invalid arguments: /file_path: must not be empty"),
    ],
)
def test_semantic_constraints(session: Session, text_file: Path, tool: str, args: dict[str, Any], message: str) -> None:
    assert not session.call("read", {"file_path": "a.txt"}).is_error  # so only the arguments can refuse the call
    assert invalid(session.call(tool, args)) == message
    assert text_file.read_text() == "one\ntwo\nthree\ntwo\n"


@pytest.mark.parametrize(
    "file_path",
    ["a\0b.txt", "a\ud800.txt", "d/" + "x" * 256, "d/" * 2100 + "x", "dir/"],
    ids=["nul", "lone-surrogate", "long-component", "long-path", "trailing-slash"],
)
@pytest.mark.parametrize("tool", TOOLS)
def test_unusable_paths_are_invalid_args_at_file_path(session: Session, root: Path, tool: str, file_path: str) -> None:
    calls: dict[str, dict[str, Any]] = {
        "read": {"file_path": file_path},
        "write": {"file_path": file_path, "content": "x"},
        "edit": {"file_path": file_path, "old_string": "x", "new_string": "y"},
        "multi_edit": {"file_path": file_path, "edits": [{"old_string": "x", "new_string": "y"}]},
    }
    args = calls[tool]
    before = tree(root)
    message = invalid(session.call(tool, args))
    assert message.startswith("invalid arguments: /file_path: ")
    assert file_path not in message  # the path is named by its pointer, not pasted (it may be 4 KiB long)
    assert tree(root) == before


def test_a_name_of_exactly_255_bytes_is_a_valid_argument(session: Session, root: Path) -> None:
    name = "n" * 255
    result = session.call("write", {"file_path": name, "content": "ok"})
    assert not result.is_error, result.text
    assert (root / name).read_bytes() == b"ok"


# --- not JSON, or not an object -----------------------------------------------------------------------------


def test_arguments_that_are_not_json_report_the_parser_position(session: Session) -> None:
    result = session.call("read", '{"file_path": 3 "offset": 1}')
    assert invalid(result) == "invalid arguments: not valid JSON: Expecting ',' delimiter at line 1 column 17"
    assert isinstance(result.exception, ToolArgsError)
    assert isinstance(result.exception.__cause__, json.JSONDecodeError)


def test_not_json_on_a_later_line(session: Session) -> None:
    result = session.call("read", '{\n  "file_path": "a.txt",\n  "offset": 1,\n}')
    assert invalid(result) == (
        "invalid arguments: not valid JSON: Expecting property name enclosed in double quotes at line 4 column 1"
    )


@pytest.mark.parametrize(
    ("raw", "received"),
    [
        ("[1, 2]", "array"),
        ('"a.txt"', "string"),
        ("3", "number"),
        ("2.5", "number"),
        ("true", "boolean"),
        ("null", "null"),
    ],
)
def test_a_json_value_that_is_not_an_object(session: Session, raw: str, received: str) -> None:
    assert invalid(session.call("read", raw)) == f"invalid arguments: /: expected object, got {received}"


def test_a_non_mapping_python_value_is_treated_like_its_json(session: Session) -> None:
    result = session.call("read", [1, 2])  # type: ignore[arg-type]
    assert invalid(result) == "invalid arguments: /: expected object, got array"


@pytest.mark.parametrize(
    "args",
    [
        {"file_path": "a.txt"},
        {"file_path": "a.txt", "offset": 2, "limit": 1},
        {"file_path": "a.txt", "offset": None},
        {"file_path": 3},
        {"filepath": "a.txt"},
        {"file_path": "a.txt", "offset": 0, "limit": "x"},
        {"file_path": "a.txt", "offset": 2.0},
    ],
)
def test_arguments_as_json_string_and_as_mapping_behave_the_same(
    session: Session, text_file: Path, args: dict[str, Any]
) -> None:
    as_mapping = session.call("read", args)
    as_string = session.workspace.session("another").call("read", json.dumps(args))  # not a re-read
    assert as_string.to_dict() == as_mapping.to_dict()
    assert as_string.value == as_mapping.value


def test_invalid_arguments_never_touch_the_disk(session: Session, root: Path, text_file: Path) -> None:
    assert not session.call("read", {"file_path": "a.txt"}).is_error
    before = tree(root.parent)
    invalid(session.call("write", {"file_path": "new/dir/b.txt", "content": "x", "mode": 1}))
    invalid(session.call("write", {"file_path": "a.txt", "content": b"x"}))  # bytes are not JSON
    invalid(session.call("edit", {"file_path": "a.txt", "old_string": "one", "new_string": "1", "replace_all": "no"}))
    edits = [{"old_string": "one", "new_string": "1"}, {"old_string": "two"}]
    invalid(session.call("multi_edit", {"file_path": "a.txt", "edits": edits}))
    assert tree(root.parent) == before


def test_messages_do_not_paste_the_schema(session: Session) -> None:
    message = invalid(session.call("edit", {"file_path": 1, "old_string": [], "new_string": {}, "x": 1}))
    for fragment in ("additionalProperties", "properties", "$defs", "minLength", "Replace every occurrence"):
        assert fragment not in message
    assert len(message) < 400


# --- dispatch-level codes ------------------------------------------------------------------------------


def test_unknown_tool_suggests_the_closest_name(session: Session) -> None:
    result = session.call("reed", {"file_path": "a.txt"})
    assert result.error is not None
    assert (result.error.code, result.error.name) == ("UNKNOWN_TOOL", "UnknownTool")
    assert "'reed'" in result.text
    assert 'did you mean "read"?' in result.text
    result = session.call("multi-edit", {})
    assert result.error is not None
    assert result.error.code == "UNKNOWN_TOOL"
    assert 'did you mean "multi_edit"?' in result.text


def test_unknown_tool_without_a_close_name_lists_the_tools(session: Session) -> None:
    result = session.call("xyzzy", {})
    assert result.error is not None
    assert result.error.code == "UNKNOWN_TOOL"
    assert "did you mean" not in result.text
    for name in TOOLS:
        assert name in result.text


def test_unknown_tool_wins_over_invalid_arguments(session: Session) -> None:
    result = session.call("reed", "not json")
    assert result.error is not None
    assert result.error.code == "UNKNOWN_TOOL"


class EchoArgs(ToolArgs):
    word: str


class EchoOutput(ToolOutputModel):
    echoed: str


def register(workspace: Workspace, name: str, body: Any) -> None:
    workspace.tools[name] = Tool(
        name=name,
        description="test tool",
        arguments=EchoArgs,
        output=EchoOutput,
        run=body,
        read_only=True,
        preconditions="none",
        example=Example({"word": "hi"}),
    )


def test_a_tool_body_that_raises_is_internal_error_with_the_cause_chained(
    workspace: Workspace, session: Session, caplog: pytest.LogCaptureFixture
) -> None:
    secret = "/var/lib/hidden/secret-detail"
    raised: list[ValueError] = []

    def body(ctx: ToolContext, args: EchoArgs) -> ToolOutput:
        error = ValueError(f"cannot parse {secret}")
        raised.append(error)
        raise error

    register(workspace, "explode", body)
    with caplog.at_level(logging.ERROR):
        result = session.call("explode", {"word": "hi"})
    assert result.error is not None
    assert (result.error.code, result.error.name) == ("INTERNAL_ERROR", "InternalError")
    assert result.value is None
    assert "explode" in result.text
    assert "Traceback" not in result.text
    assert secret not in result.text
    assert len(result.text) < 400
    assert result.exception is not None
    assert result.exception.__cause__ is raised[0]
    assert any(record.exc_info and record.exc_info[1] is raised[0] for record in caplog.records)


def test_a_tool_body_returning_a_bad_value_is_invalid_tool_output(workspace: Workspace, session: Session) -> None:
    def body(ctx: ToolContext, args: EchoArgs) -> ToolOutput:
        return ToolOutput(text=args.word, value={"echoed": 42, "extra": True})

    register(workspace, "bad_output", body)
    result = session.call("bad_output", {"word": "hi"})
    assert result.error is not None
    assert (result.error.code, result.error.name) == ("INVALID_TOOL_OUTPUT", "InvalidToolOutput")
    assert result.value is None
    assert "bad_output" in result.text
    assert result.exception is not None
    assert isinstance(result.exception.__cause__, ValidationError)


def test_a_registered_tool_with_a_good_value_succeeds(workspace: Workspace, session: Session) -> None:
    def body(ctx: ToolContext, args: EchoArgs) -> ToolOutput:
        return ToolOutput(text=args.word, value={"echoed": args.word})

    register(workspace, "echo", body)
    result = session.call("echo", {"word": "hi"})
    assert not result.is_error, result.text
    assert result.value == {"echoed": "hi"}
    assert invalid(session.call("echo", {"word": 1})) == "invalid arguments: /word: expected string, got number"


def test_a_call_cancelled_before_dispatch_does_nothing(session: Session, root: Path, text_file: Path) -> None:
    assert not session.call("read", {"file_path": "a.txt"}).is_error
    before = tree(root.parent)
    cancel = threading.Event()
    cancel.set()
    calls: list[tuple[str, dict[str, Any]]] = [
        ("write", {"file_path": "new.txt", "content": "x"}),
        ("write", {"file_path": "a.txt", "content": "x"}),
        ("edit", {"file_path": "a.txt", "old_string": "one", "new_string": "1"}),
        ("multi_edit", {"file_path": "a.txt", "edits": [{"old_string": "three", "new_string": "3"}]}),
        ("read", {"file_path": "a.txt"}),
    ]
    for name, args in calls:
        result = session.call(name, args, cancel=cancel)
        assert result.error is not None
        assert (result.error.code, result.error.name) == (
            "TOOL_ABORTED_BEFORE_DISPATCH",
            "ToolAbortedBeforeDispatch",
        )
        assert name in result.text
    assert tree(root.parent) == before
    # A cancelled read records no observation: a fresh session whose only read was cancelled may not edit.
    fresh = session.workspace.session("fresh")
    assert fresh.call("read", {"file_path": "a.txt"}, cancel=cancel).is_error
    refused = fresh.call("edit", {"file_path": "a.txt", "old_string": "one", "new_string": "1"})
    assert refused.error is not None
    assert refused.error.code == "FS_NOT_OBSERVED", refused.text
    # The first session's observation still authorises its edit.
    result = session.call("edit", {"file_path": "a.txt", "old_string": "one", "new_string": "1"})
    assert not result.is_error, result.text
    assert text_file.read_text() == "1\ntwo\nthree\ntwo\n"


# --- the result shape (SPEC §3) -------------------------------------------------------------------------


def test_to_dict_on_success_has_no_error_key(session: Session, text_file: Path) -> None:
    result = session.call("read", {"file_path": "a.txt"})
    assert not result.is_error
    assert result.error is None
    assert result.to_dict() == {"isError": False, "content": [{"type": "text", "text": result.text}]}
    json.dumps(result.to_dict())
    json.dumps(result.value)


def test_to_dict_on_failure(session: Session) -> None:
    result = session.call("read", {"file_path": 3})
    assert result.to_dict() == {
        "isError": True,
        "content": [{"type": "text", "text": "invalid arguments: /file_path: expected string, got number"}],
        "error": {
            "message": "invalid arguments: /file_path: expected string, got number",
            "info": {"name": "ToolArgsError", "code": "INVALID_ARGS"},
        },
    }
    json.dumps(result.to_dict())


def test_every_code_used_here_is_in_the_vocabulary() -> None:
    codes = error_codes()
    used = ("INVALID_ARGS", "UNKNOWN_TOOL", "INVALID_TOOL_OUTPUT", "INTERNAL_ERROR", "TOOL_ABORTED_BEFORE_DISPATCH")
    for code in used:
        assert code in codes
    assert codes["INVALID_ARGS"] is ToolArgsError


# --- the published schemas --------------------------------------------------------------------------------


EXPECTED_PROPERTIES = {
    "read": (["file_path", "offset", "limit", "pages"], ["file_path"]),
    "write": (["file_path", "content"], ["file_path", "content"]),
    "edit": (
        ["file_path", "old_string", "new_string", "replace_all", "dry_run"],
        ["file_path", "old_string", "new_string"],
    ),
    "multi_edit": (["file_path", "edits", "dry_run"], ["file_path", "edits"]),
    "list": (["path", "depth", "include_hidden"], []),
    "glob": (["pattern", "path"], ["pattern"]),
    "grep": (["pattern", "path", "glob", "case_insensitive", "include_ignored"], ["pattern"]),
    "read_many": (["file_paths", "limit"], ["file_paths"]),
    "stat": (["path"], ["path"]),
    "move": (["source", "destination", "overwrite"], ["source", "destination"]),
    "copy": (["source", "destination", "overwrite"], ["source", "destination"]),
    "delete": (["file_path"], ["file_path"]),
    "create_directory": (["path"], ["path"]),
    "notebook_edit": (["notebook_path", "cell_id", "cell", "new_source", "cell_type", "edit_mode"], ["notebook_path"]),
}


def test_tool_schemas_list_every_tool_with_its_contract_arguments(workspace: Workspace) -> None:
    schemas = workspace.tool_schemas()
    assert sorted(s["name"] for s in schemas) == sorted(EXPECTED_PROPERTIES)
    for entry in schemas:
        assert set(entry) == {"name", "description", "input_schema"}
        assert isinstance(entry["description"], str)
        assert entry["description"]
        schema = entry["input_schema"]
        Draft202012Validator.check_schema(schema)
        assert schema["type"] == "object"
        assert schema["additionalProperties"] is False
        properties, required = EXPECTED_PROPERTIES[entry["name"]]
        assert list(schema["properties"]) == properties
        assert sorted(schema.get("required", [])) == sorted(required)
        assert "$ref" not in json.dumps(schema)
        json.dumps(entry)


def test_published_schemas_are_portable(workspace: Workspace) -> None:
    """SPEC §11: no type arrays and no null branches; an optional argument is simply not required."""
    text = json.dumps(workspace.tool_schemas())
    assert '"null"' not in text and '"type": [' not in text
    offset = next(s for s in workspace.tool_schemas() if s["name"] == "read")["input_schema"]["properties"]["offset"]
    assert (offset["type"], offset["default"], offset["minimum"]) == ("integer", 1, 1)


# --- selecting, renaming and withholding tools --------------------------------------------------------------


MUTATING = ("write", "edit", "multi_edit", "move", "delete", "create_directory")
READ_ONLY_TOOLS = ["read", "list", "glob", "grep", "read_many", "stat"]


def test_a_read_only_workspace_lists_no_mutating_tool(root: Path) -> None:
    with Workspace(root, read_only=True) as ws:
        assert [s["name"] for s in ws.tool_schemas()] == READ_ONLY_TOOLS
        tool_list = pytest.importorskip("fs_tools.mcp.server").tool_list

        assert [t.name for t in tool_list(ws)] == READ_ONLY_TOOLS


@pytest.mark.parametrize("tool", MUTATING)
def test_a_withheld_mutating_tool_still_answers_with_the_read_only_gate(root: Path, tool: str) -> None:
    (root / "a.txt").write_text("one\n")
    arguments = {
        "write": {"file_path": "a.txt", "content": "x"},
        "edit": {"file_path": "a.txt", "old_string": "one", "new_string": "1"},
        "multi_edit": {"file_path": "a.txt", "edits": [{"old_string": "one", "new_string": "1"}]},
        "move": {"source": "a.txt", "destination": "b.txt"},
        "delete": {"file_path": "a.txt"},
        "create_directory": {"path": "new"},
    }[tool]
    with Workspace(root, read_only=True) as ws:
        session = ws.session("s")
        assert not session.call("read", {"file_path": "a.txt"}).is_error
        result = session.call(tool, arguments)
        assert result.error is not None and result.error.code == "FS_SANDBOX_DENIED", result.text
        changed = "new" if tool == "create_directory" else "a.txt"
        assert result.text == f"the workspace is read-only; {changed!r} cannot be changed"
    assert (root / "a.txt").read_text() == "one\n"


def test_tools_selects_what_is_listed_and_dispatched(root: Path) -> None:
    (root / "a.txt").write_text("one\n")
    with Workspace(root, tools=["edit", "read"]) as ws:
        assert [s["name"] for s in ws.tool_schemas()] == ["read", "edit"]  # the library's order
        session = ws.session("s")
        assert not session.call("read", {"file_path": "a.txt"}).is_error
        left_out = session.call("write", {"file_path": "b.txt", "content": "x"})
        assert left_out.error is not None and left_out.error.code == "UNKNOWN_TOOL"
        assert left_out.text == "unknown tool 'write'. Available tools: read, edit"
    assert not (root / "b.txt").exists()
    with Workspace(root, tools=["read", "write"], read_only=True) as ws:  # selected, but withheld: still the gate
        assert [s["name"] for s in ws.tool_schemas()] == ["read"]
        result = ws.session("s").call("write", {"file_path": "b.txt", "content": "x"})
        assert result.error is not None and result.error.code == "FS_SANDBOX_DENIED"


@pytest.mark.parametrize(
    ("tools", "message"),
    [
        (
            ["read", "reed"],
            "Workspace(tools=...): unknown tool 'reed'; valid names: read, write, edit, multi_edit, list, glob, grep, "
            "read_many, stat, move, copy, delete, create_directory, notebook_edit, apply_patch, checkpoint, history, "
            "diff, rewind",
        ),
        ("read", "Workspace(tools=...) takes a list of tool names, not the string 'read'"),
    ],
)
def test_a_bad_tools_option_is_a_one_line_host_error(root: Path, tools: Any, message: str) -> None:
    with pytest.raises(ValueError) as raised:
        Workspace(root, tools=tools)
    assert str(raised.value) == message


def test_a_prefix_renames_every_tool_the_model_sees(root: Path) -> None:
    (root / "a.txt").write_text("one\n")
    with Workspace(root, prefix="fs_", tools=["read", "list"]) as ws:
        assert [s["name"] for s in ws.tool_schemas()] == ["fs_read", "fs_list"]
        session = ws.session("s")
        assert session.call("fs_read", {"file_path": "a.txt"}).text == "     1\tone"
        unknown = session.call("read", {"file_path": "a.txt"})
        assert unknown.text == "unknown tool 'read'; did you mean \"fs_read\"? Available tools: fs_read, fs_list"
        directory = session.call("fs_read", {"file_path": "."})
        assert directory.error is not None and directory.error.code == "FS_NOT_REGULAR_FILE"
        assert directory.text.endswith("— use fs_list to see its entries")  # a remedy names the tool as shown


@pytest.mark.parametrize("prefix", ["fs read", "1fs_", "fs.", "x" * 60])
def test_a_bad_prefix_is_a_one_line_host_error(root: Path, prefix: str) -> None:
    with pytest.raises(ValueError, match=r"^Workspace\(prefix="):
        Workspace(root, prefix=prefix)


def test_multi_edit_schema_describes_the_edit_items(workspace: Workspace) -> None:
    schema = next(s["input_schema"] for s in workspace.tool_schemas() if s["name"] == "multi_edit")
    edits = schema["properties"]["edits"]
    assert edits["type"] == "array"
    assert edits["minItems"] == 1
    assert list(edits["items"]["properties"]) == ["old_string", "new_string", "replace_all"]
    assert sorted(edits["items"]["required"]) == ["new_string", "old_string"]
    assert edits["items"]["additionalProperties"] is False


@pytest.mark.parametrize("tool", ["write", "edit", "multi_edit"])
def test_mutating_tool_descriptions_state_the_read_first_precondition(workspace: Workspace, tool: str) -> None:
    description = next(s["description"] for s in workspace.tool_schemas() if s["name"] == tool)
    assert re.search(r"\bread (the file |it )?first\b|\bmust have read\b", description, re.IGNORECASE), description


def test_read_description_says_it_authorises_edits(workspace: Workspace) -> None:
    description = next(s["description"] for s in workspace.tool_schemas() if s["name"] == "read")
    assert re.search(r"required before you (write|edit)", description, re.IGNORECASE), description


# --- async twin -------------------------------------------------------------------------------------------


def test_acall_returns_the_same_results_as_call(session: Session, text_file: Path) -> None:
    async def scenario() -> tuple[ToolResult, ToolResult, ToolResult]:
        read = await session.acall("read", {"file_path": "a.txt", "offset": 2, "limit": 1})
        bad = await session.acall("read", '{"file_path": 3}')
        edit = await session.acall("edit", {"file_path": "a.txt", "old_string": "three", "new_string": "3"})
        return read, bad, edit

    read, bad, edit = asyncio.run(scenario())
    assert not read.is_error, read.text
    assert read.value["offset"] == 2
    assert read.text.splitlines()[0] == "     2\ttwo"
    assert invalid(bad) == "invalid arguments: /file_path: expected string, got number"
    assert not edit.is_error, edit.text
    assert text_file.read_text() == "one\ntwo\n3\ntwo\n"


def test_acall_calls_can_run_concurrently(session: Session, root: Path) -> None:
    for i in range(5):
        (root / f"f{i}.txt").write_text(f"line {i}\n")

    async def scenario() -> list[ToolResult]:
        return list(await asyncio.gather(*(session.acall("read", {"file_path": f"f{i}.txt"}) for i in range(5))))

    results = asyncio.run(scenario())
    assert [r.text for r in results] == [f"     1\tline {i}" for i in range(5)]


@pytest.mark.parametrize(
    ("options", "says"),
    [({"tools": []}, "no tool to offer; name"), ({"tools": ["write"], "read_only": True}, "read-only workspace")],
)
def test_a_workspace_that_would_offer_no_tool_is_a_host_error(root: Path, options: dict[str, Any], says: str) -> None:
    with pytest.raises(ValueError, match=r"^Workspace\(tools=\.\.\.\) leaves no tool") as raised:
        Workspace(root, **options)
    assert says in str(raised.value)


def test_an_empty_root_is_refused_rather_than_the_current_directory(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(root)  # abspath('') would be this directory: an unset "$DIR" must not serve it
    with pytest.raises(ValueError, match="a workspace root is empty"):
        Workspace("")
    with pytest.raises(ValueError, match="a workspace root is empty"):
        Workspace([str(root), ""])
