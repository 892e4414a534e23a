"""Presenters validate softly: any input gives a string, never an exception."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from fs_tools import Session
from fs_tools.presenters import present_call, present_result

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4),
    max_leaves=12,
)
NAMES = st.sampled_from(["read", "write", "edit", "multi_edit", "list", "nope"]) | st.text(max_size=10)


def test_known_calls_are_rendered_specifically() -> None:
    assert present_call("read", {"file_path": "a.py", "offset": 40, "limit": 20}) == "read a.py (lines 40–59)"
    assert present_call("write", '{"file_path": "a.py", "content": "x\\ny\\n"}') == "write a.py (2 line(s), 4 bytes)"
    assert present_call("edit", {"file_path": "a.py", "old_string": "x = 1", "new_string": "x = 2"}) == (
        'edit a.py: replace "x = 1" (1 occurrence)'
    )
    assert present_call("multi_edit", {"file_path": "a.py", "edits": [{}, {}]}) == "multi_edit a.py: 2 edit(s)"


def test_arguments_of_an_older_schema_fall_back_to_a_generic_rendering() -> None:
    assert present_call("read", {"path": "a.py", "start": 3}) == 'read(path="a.py", start=3)'
    assert present_call("edit", "not json at all") == "edit(not json at all)"
    # a known argument with an unknown one, or of the wrong type: not the tool's arguments either
    assert present_call("read", {"file_path": "a.py", "encoding": "latin-1"}).startswith("read(file_path=")
    assert present_call("read", {"file_path": "a.py", "offset": "40"}) == 'read(file_path="a.py", offset="40")'
    edit = {"file_path": "a.py", "old_string": "x", "new_string": "y", "replace_all": "yes"}
    assert present_call("edit", edit).startswith("edit(file_path=")


def test_a_call_refused_before_it_ran_is_shown_as_sent() -> None:
    edit = {"file_path": "a.py", "old_string": "greet", "new_string": "greet"}  # /new_string: must differ
    assert present_call("edit", edit) == 'edit a.py: replace "greet" (1 occurrence)'
    assert present_call("edit", edit, rejected=True) == 'edit(file_path="a.py", old_string="greet", new_string="greet")'
    result = {
        "isError": True,
        "content": [{"type": "text", "text": "invalid arguments: …"}],
        "error": {"message": "invalid arguments: …", "info": {"name": "ToolArgsError", "code": "INVALID_ARGS"}},
    }
    assert present_result("edit", edit, result).startswith('edit(file_path="a.py", old_string="greet"')


def test_a_result_and_its_dict_form_render_the_same(root: Path, session: Session) -> None:
    (root / "a.py").write_text("x = 1\n")
    result = session.call("edit", {"file_path": "a.py", "old_string": "x = 1", "new_string": "x = 2"})
    assert result.error is not None
    arguments = {"file_path": "a.py", "old_string": "x = 1", "new_string": "x = 2"}
    rendered = present_result("edit", arguments, result)
    assert rendered.startswith('edit a.py: replace "x = 1" (1 occurrence)\n→ FS_NOT_OBSERVED: ')
    assert present_result("edit", arguments, result.to_dict()) == rendered


@settings(max_examples=300, deadline=None)
@given(name=NAMES, arguments=JSON | st.text(max_size=40), result=JSON)
def test_presenters_never_raise(name: str, arguments: object, result: object) -> None:
    assert isinstance(present_call(name, arguments), str)
    assert isinstance(present_result(name, arguments, result), str)
