"""Jupyter notebooks (SPEC §18): read shows cells with index, type, id and source, outputs summarised;
notebook_edit replaces, inserts or deletes one cell, gated like edit, every untouched byte kept in the
layout the file was in (nbformat's own layout checked with nbformat itself)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import nbformat
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fs_tools import Session, Workspace
from fs_tools.errors import TooLarge


def cell(kind: str, source: Any, cell_id: str | None = None, **more: Any) -> dict[str, Any]:
    made: dict[str, Any] = {"cell_type": kind, "metadata": {}, "source": source}
    if cell_id is not None:
        made["id"] = cell_id
    if kind == "code":
        made.setdefault("execution_count", None)
        made.setdefault("outputs", [])
    made.update(more)
    return made


def notebook(cells: list[dict[str, Any]], minor: int = 5) -> dict[str, Any]:
    kernel = {"display_name": "Python 3", "language": "python", "name": "python3"}
    return {"cells": cells, "metadata": {"kernelspec": kernel}, "nbformat": 4, "nbformat_minor": minor}


def jupyter_bytes(document: dict[str, Any]) -> bytes:
    """The bytes Jupyter writes for ``document``: nbformat's own writer."""
    node = nbformat.from_dict(document)
    return (nbformat.writes(node) + "\n").encode("utf-8")


SAMPLE = notebook(
    [
        cell("markdown", ["# Title\n", "Some text"], "intro"),
        cell(
            "code",
            ["import math\n", "print(math.pi)"],
            "calc",
            execution_count=3,
            outputs=[
                {"name": "stdout", "output_type": "stream", "text": ["3.14159\n"]},
                {
                    "data": {"image/png": "iVBORw0KGgo=", "text/plain": ["<Figure>"]},
                    "execution_count": 3,
                    "metadata": {},
                    "output_type": "execute_result",
                },
                {
                    "ename": "ZeroDivisionError",
                    "evalue": "division by zero",
                    "output_type": "error",
                    "traceback": ["\x1b[31mTraceback\x1b[0m"],
                },
            ],
        ),
        cell("code", "x = 'é'", "last"),
    ]
)


@pytest.fixture
def nb(root: Path) -> Path:
    path = root / "analysis.ipynb"
    path.write_bytes(jupyter_bytes(SAMPLE))
    return path


def edit(session: Session, **arguments: Any) -> Any:
    return session.call("notebook_edit", {"notebook_path": "analysis.ipynb", **arguments})


def reread(path: Path) -> dict[str, Any]:
    node = nbformat.read(str(path), as_version=nbformat.NO_CONVERT)
    nbformat.validate(node)  # the schema nbformat itself checks
    loaded: dict[str, Any] = json.loads(path.read_bytes())
    return loaded


# --- read ----------------------------------------------------------------------------------------------


def test_read_shows_cells_with_index_type_id_and_source_and_summarises_outputs(nb: Path, session: Session) -> None:
    result = session.call("read", {"file_path": "analysis.ipynb"})
    assert not result.is_error, result.text
    assert result.text.startswith("'analysis.ipynb': Jupyter notebook, 3 cells (nbformat 4.5, Python 3)\n\n")
    assert '--- cell 0, markdown, id "intro" ---\n# Title\nSome text\n\n' in result.text
    assert '--- cell 1, code, id "calc", execution count 3 ---\nimport math\nprint(math.pi)\n' in result.text
    assert "[output 1: stdout]\n3.14159\n" in result.text
    assert "[output 2: execute_result, image/png (12 bytes), text/plain (8 bytes)]\n<Figure>" in result.text
    assert "[output 3: error ZeroDivisionError: division by zero]" in result.text
    assert "\x1b" not in result.text and "Traceback" not in result.text
    assert result.text.endswith("--- cell 2, code, id \"last\" ---\nx = 'é'")
    value = result.value
    assert (value["kind"], value["cell_count"], value["cells_shown"]) == ("notebook", 3, [0, 1, 2])
    assert value["version"] is not None and value["next_offset"] is None


def test_the_kind_is_decided_by_content_not_the_name(root: Path, session: Session) -> None:
    (root / "data.json").write_bytes(jupyter_bytes(SAMPLE))
    (root / "fake.ipynb").write_text("just text\n")
    (root / "config.json").write_text('{"cells": [1, 2], "nbformat": 4}\n')  # cells that are not cells
    (root / "deep.ipynb").write_text('{"cells": ' + "[" * 100_000 + "]" * 100_000 + ', "nbformat": 4}')
    assert session.call("read", {"file_path": "data.json"}).value["kind"] == "notebook"
    for name in ("fake.ipynb", "config.json", "deep.ipynb"):
        result = session.call("read", {"file_path": name})
        assert not result.is_error and result.value["kind"] == "text", (name, result.text[:200])


def test_a_long_notebook_is_read_by_cells_with_offset_and_limit(root: Path, session: Session) -> None:
    (root / "analysis.ipynb").write_bytes(
        jupyter_bytes(notebook([cell("code", f"x = {n}", f"c{n}") for n in range(6)]))
    )
    first = session.call("read", {"file_path": "analysis.ipynb", "limit": 2})
    assert first.value["cells_shown"] == [0, 1] and first.value["next_offset"] == 3
    assert first.text.endswith(
        "[showing cells 0–1 of 6 (indexes from 0; limit 2); continue with offset=3 (it counts cells from 1 in a "
        "notebook)]"
    )
    rest = session.call("read", {"file_path": "analysis.ipynb", "offset": 3})
    assert rest.value["cells_shown"] == [2, 3, 4, 5] and '--- cell 2, code, id "c2" ---\nx = 2' in rest.text
    past = session.call("read", {"file_path": "analysis.ipynb", "offset": 9})
    assert past.error is not None and past.error.code == "FS_NOT_FOUND"
    assert "a notebook of 6 cell(s)" in past.text and "between 1 and 6" in past.text
    with Workspace(root) as ws:  # a session whose only read showed nothing may change nothing
        other = ws.session("other")
        other.call("read", {"file_path": "analysis.ipynb", "offset": 9})
        refused = other.call("notebook_edit", {"notebook_path": "analysis.ipynb", "cell": 0, "new_source": "x"})
    assert refused.error is not None and refused.error.code == "FS_NOT_OBSERVED"


def test_outputs_and_cells_are_cut_within_the_output_cap(root: Path, session: Session) -> None:
    noisy = [{"name": "stdout", "output_type": "stream", "text": [f"line {n}\n" for n in range(500)]}]
    cells = [cell("code", "print(...)", "noisy", outputs=noisy), cell("code", "y = 1\n" * 20_000, "huge")]
    (root / "analysis.ipynb").write_bytes(jupyter_bytes(notebook(cells)))
    result = session.call("read", {"file_path": "analysis.ipynb"})
    assert "line 19\n[… output cut: 500 lines" in result.text and "line 20\n" not in result.text
    assert result.value["cells_shown"] == [0] and result.value["next_offset"] == 2
    alone = session.call("read", {"file_path": "analysis.ipynb", "offset": 2})
    assert "[… the rest of this cell is cut: it is 120,0" in alone.text and "grep the notebook" in alone.text
    assert len(alone.text.encode()) < 52 * 1024


def test_pages_on_a_notebook_is_refused(nb: Path, session: Session) -> None:
    result = session.call("read", {"file_path": "analysis.ipynb", "pages": "1"})
    assert result.error is not None and result.error.code == "INVALID_ARGS" and "only a PDF has pages" in result.text


# --- notebook_edit: the three modes ---------------------------------------------------------------------


def test_replace_changes_only_that_cell_and_keeps_nbformats_layout(nb: Path, session: Session) -> None:
    before = nb.read_bytes()
    session.call("read", {"file_path": "analysis.ipynb"})
    result = edit(session, cell_id="last", new_source="x = 'ü'\ny = 2")
    assert not result.is_error, result.text
    assert result.text == "Replaced the source of cell 2 (code, id \"last\") in 'analysis.ipynb'."
    assert result.value["layout_kept"] is True and result.value["cells"] == 3
    after = nb.read_bytes()
    assert after == jupyter_bytes(reread(nb))  # exactly what Jupyter itself would write
    expected = json.loads(before)
    expected["cells"][2]["source"] = ["x = 'ü'\n", "y = 2"]
    assert json.loads(after) == expected
    assert after.replace('"x = \'ü\'\\n",\n    "y = 2"'.encode(), "\"x = 'é'\"".encode()) == before


def test_replace_by_index_keeps_outputs_and_says_so(nb: Path, session: Session) -> None:
    session.call("read", {"file_path": "analysis.ipynb"})
    result = edit(session, cell=1, new_source="print(math.e)")
    assert "Its outputs are still those of the old source" in result.text
    changed = reread(nb)["cells"][1]
    assert changed["source"] == ["print(math.e)"] and len(changed["outputs"]) == 3
    assert result.value["version"] == session.call("stat", {"path": "analysis.ipynb"}).value["version"]


def test_insert_goes_after_the_named_cell_or_at_the_top_with_a_fresh_id(nb: Path, session: Session) -> None:
    session.call("read", {"file_path": "analysis.ipynb"})
    after = edit(session, edit_mode="insert", cell_id="intro", cell_type="markdown", new_source="## Part 1\n")
    assert not after.is_error, after.text
    assert after.text.startswith('Inserted cell 1 (markdown, id "')
    assert after.text.endswith("after cell 0 in 'analysis.ipynb'; it has 4 cell(s) now.")
    top = edit(session, edit_mode="insert", cell_type="code", new_source="import os")
    assert top.value["cell"] == 0 and "at the top" in top.text
    cells = reread(nb)["cells"]
    assert [c.get("id") for c in cells][1:] == ["intro", after.value["cell_id"], "calc", "last"]
    for made in (cells[0], cells[2]):
        assert re.fullmatch(r"[0-9a-f]{8}", made["id"])
    assert cells[2] == {"cell_type": "markdown", "id": cells[2]["id"], "metadata": {}, "source": ["## Part 1\n"]}
    assert cells[0]["outputs"] == [] and cells[0]["execution_count"] is None
    assert nb.read_bytes() == jupyter_bytes(reread(nb))


def test_delete_needs_no_source_and_says_the_indexes_moved(nb: Path, session: Session) -> None:
    session.call("read", {"file_path": "analysis.ipynb"})
    result = edit(session, edit_mode="delete", cell=0)
    assert result.text == (
        "Deleted cell 0 (markdown, id \"intro\") from 'analysis.ipynb'; it has 2 cell(s) now, and the cells after "
        "it moved up one index."
    )
    assert [c["id"] for c in reread(nb)["cells"]] == ["calc", "last"]


def test_changing_a_cells_type_gives_it_the_keys_its_type_has(nb: Path, session: Session) -> None:
    session.call("read", {"file_path": "analysis.ipynb"})
    result = edit(session, cell_id="calc", cell_type="markdown", new_source="*math*")
    assert "(it was a code cell)" in result.text
    turned = reread(nb)["cells"][1]
    assert turned == {"cell_type": "markdown", "id": "calc", "metadata": {}, "source": ["*math*"]}
    back = edit(session, cell_id="calc", cell_type="code", new_source="1 + 1")
    assert not back.is_error
    assert reread(nb)["cells"][1]["outputs"] == [] and reread(nb)["cells"][1]["execution_count"] is None


# --- the gates ---------------------------------------------------------------------------------------


def test_notebook_edit_is_gated_like_edit(nb: Path, session: Session, workspace: Workspace) -> None:
    before = nb.read_bytes()
    unseen = edit(session, cell=0, new_source="x")
    assert unseen.error is not None and unseen.error.code == "FS_NOT_OBSERVED"
    session.call("read", {"file_path": "analysis.ipynb"})
    other = workspace.session("other")
    other.call("read", {"file_path": "analysis.ipynb"})
    assert not edit(other, cell=0, new_source="# theirs").is_error
    theirs = nb.read_bytes()
    stale = edit(session, cell=0, new_source="# mine")
    assert stale.error is not None and stale.error.code == "FS_STALE_VERSION"
    assert nb.read_bytes() == theirs != before


def test_a_read_only_workspace_refuses_it(nb: Path, root: Path) -> None:
    with Workspace(root, read_only=True) as ws:
        s = ws.session("s")
        s.call("read", {"file_path": "analysis.ipynb"})
        result = s.call("notebook_edit", {"notebook_path": "analysis.ipynb", "cell": 0, "new_source": "x"})
    assert result.error is not None and result.error.code == "FS_SANDBOX_DENIED"


# --- arguments that name no cell -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"new_source": "x"}, "/cell_id: required to replace a cell: give its id (cell_id) or its index (cell)"),
        ({"edit_mode": "insert", "new_source": "x"}, "/cell_type: required to insert a cell: code, markdown or raw"),
        ({"edit_mode": "delete"}, "/cell_id: required to delete a cell"),
        ({"cell": 0}, "/new_source: required to replace a cell"),
        ({"cell": 3, "new_source": "x"}, "/cell: 'analysis.ipynb' has 3 cell(s), indexed 0 to 2; got 3"),
        ({"cell": -1, "new_source": "x"}, "/cell: expected integer >= 0, got -1"),
        (
            {"cell_id": "nope", "new_source": "x"},
            "has no cell with id 'nope'; its cell ids are 'intro', 'calc', 'last'",
        ),
        ({"cell_id": "calc", "cell": 0, "new_source": "x"}, "/cell_id: names cell 1, but cell is 0; give only one"),
        ({"cell_id": "cell-1", "cell": 2, "new_source": "x"}, "/cell_id: names cell 1, but cell is 2; give only one"),
        ({"cell": 0, "new_source": "x", "cell_type": "heading"}, "/cell_type:"),
        ({"cell": 0, "new_source": "x", "edit_mode": "append"}, "/edit_mode:"),
    ],
)
def test_arguments_that_name_no_cell_are_invalid_args(
    nb: Path, session: Session, arguments: dict[str, Any], message: str
) -> None:
    before = nb.read_bytes()
    session.call("read", {"file_path": "analysis.ipynb"})
    result = edit(session, **arguments)
    assert result.error is not None and result.error.code == "INVALID_ARGS", result.text
    assert message in result.text, result.text
    assert nb.read_bytes() == before


def test_old_notebooks_without_ids_are_named_by_index(root: Path, session: Session) -> None:
    path = root / "analysis.ipynb"
    path.write_bytes(jupyter_bytes(notebook([cell("code", "a = 1"), cell("code", "b = 2")], minor=4)))
    session.call("read", {"file_path": "analysis.ipynb"})
    unknown = edit(session, cell_id="abc", new_source="x")
    assert "its cells have no ids (nbformat before 4.5): name the cell by its index, counted from 0 (cell=N)" in (
        unknown.text
    )
    assert not edit(session, cell_id="cell-1", new_source="b = 3").is_error
    inserted = edit(session, edit_mode="insert", cell=1, cell_type="raw", new_source="raw text")
    assert inserted.value["cell_id"] is None
    document = reread(path)
    assert [c["source"] for c in document["cells"]] == [["a = 1"], ["b = 3"], ["raw text"]]
    assert all("id" not in c for c in document["cells"])


# --- layouts -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("indent", "newline", "escaped"),
    [(2, "\n", False), (4, "\r\n", False), ("\t", "\n", True), (1, "\n", True)],
)
def test_another_writers_layout_is_kept_byte_for_byte(
    root: Path, session: Session, indent: Any, newline: str, escaped: bool
) -> None:
    document = {"nbformat": 4, "nbformat_minor": 5, "metadata": {"title": "café"}, "cells": SAMPLE["cells"]}
    text = json.dumps(document, indent=indent, ensure_ascii=escaped)  # keys unsorted, as some editors keep them
    data = text.replace("\n", newline).encode() + newline.encode()
    path = root / "analysis.ipynb"
    path.write_bytes(data)
    session.call("read", {"file_path": "analysis.ipynb"})
    result = edit(session, cell_id="intro", new_source="# New title")
    assert result.value["layout_kept"] is True, result.text
    document["cells"][0] = {**document["cells"][0], "source": ["# New title"]}
    expected = json.dumps(document, indent=indent, ensure_ascii=escaped).replace("\n", newline) + newline
    assert path.read_bytes() == expected.encode()


def test_a_layout_it_cannot_reproduce_is_written_in_nbformats_and_said(root: Path, session: Session) -> None:
    path = root / "analysis.ipynb"
    path.write_text(json.dumps(SAMPLE))  # one line, ", " between items: not a layout fs-tools reproduces
    session.call("read", {"file_path": "analysis.ipynb"})
    result = edit(session, cell_id="last", new_source="z = 0")
    assert result.value["layout_kept"] is False
    assert "written in nbformat's standard layout" in result.text
    expected = json.loads(json.dumps(SAMPLE))
    expected["cells"][2]["source"] = "z = 0"  # a source kept as one string stays one string
    assert path.read_bytes() == (json.dumps(expected, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode()
    reread(path)


def test_an_escaped_lone_surrogate_elsewhere_survives_an_edit(root: Path, session: Session) -> None:
    path = root / "analysis.ipynb"
    document = notebook([cell("markdown", ["odd \ud800"], "odd"), cell("code", "1", "one")])
    path.write_bytes((json.dumps(document, indent=1, sort_keys=True, ensure_ascii=True) + "\n").encode())
    session.call("read", {"file_path": "analysis.ipynb"})
    assert not edit(session, cell_id="one", new_source="2").is_error
    assert b'"odd \\ud800"' in path.read_bytes()


# --- what is not a notebook ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (b"just text\n", "it is not JSON"),
        (b'{"cells": [}', "its JSON does not parse (line 1, column 12)"),
        (b'{"nbformat": 3, "worksheets": []}', "it is nbformat 3; fs-tools changes nbformat 4 notebooks"),
        (b'{"nbformat": 4, "metadata": {}}', "it has no nbformat 4 'cells' list"),
    ],
)
def test_notebook_edit_of_a_file_that_is_not_a_notebook_says_why(
    root: Path, session: Session, content: bytes, why: str
) -> None:
    (root / "analysis.ipynb").write_bytes(content)
    session.call("read", {"file_path": "analysis.ipynb"})
    result = edit(session, cell=0, new_source="x")
    assert result.error is not None and result.error.code == "FS_NOT_TEXT", result.text
    assert f"'analysis.ipynb' is not a Jupyter notebook fs-tools can change: {why}" in result.text
    assert (root / "analysis.ipynb").read_bytes() == content


def test_edit_with_text_from_the_cell_view_points_to_notebook_edit(nb: Path, session: Session) -> None:
    session.call("read", {"file_path": "analysis.ipynb"})
    result = session.call(
        "edit", {"file_path": "analysis.ipynb", "old_string": "import math\nprint(math.pi)", "new_string": "pass"}
    )
    assert result.error is not None and result.error.code == "FS_EDIT_NOT_FOUND"
    assert "The file is a Jupyter notebook" in result.text and "change a cell with notebook_edit" in result.text


def test_placeholders_replacing_a_code_cell_are_refused_but_not_in_a_new_cell(nb: Path, session: Session) -> None:
    session.call("read", {"file_path": "analysis.ipynb"})
    result = edit(session, cell_id="calc", new_source="import math\n# ... rest of the code\n")
    assert result.error is not None and result.error.code == "FS_OMISSION_PLACEHOLDER", result.text
    assert "new_source is the cell's whole new source" in result.text and "old_string" not in result.text
    added = edit(session, edit_mode="insert", cell_type="code", new_source="# ... rest of the code\n")
    assert not added.is_error, added.text  # a new cell replaces no code


# --- the claude-code dialect ------------------------------------------------------------------------------


def test_claude_codes_notebook_edit_names_cells_by_id(nb: Path, root: Path) -> None:
    with Workspace(root, dialect="claude-code") as ws:
        s = ws.session("cc")
        s.call("Read", {"file_path": str(nb)})
        missing = s.call("NotebookEdit", {"notebook_path": str(nb), "new_source": "x"})
        assert "give its cell_id (or 'cell-N'" in missing.text and "(cell)" not in missing.text
        past = s.call("NotebookEdit", {"notebook_path": str(nb), "cell_id": "cell-5", "new_source": "x"})
        assert "has 3 cell(s), cell-0 to cell-2; got 'cell-5'" in past.text and "/cell_id: " in past.text, past.text
        done = s.call("NotebookEdit", {"notebook_path": str(nb), "cell_id": "cell-2", "new_source": "x = 0"})
        assert not done.is_error, done.text
        deleted = s.call("NotebookEdit", {"notebook_path": str(nb), "cell_id": "intro", "edit_mode": "delete"})
        assert not deleted.is_error, deleted.text
    assert [c["source"] for c in reread(nb)["cells"]][1] == ["x = 0"]
    assert os.path.getsize(nb) > 0


# --- found in review -------------------------------------------------------------------------------------


@pytest.mark.parametrize("kernelspec", [None, "python3", ["x"]])
def test_odd_metadata_is_read_without_a_language(root: Path, session: Session, kernelspec: Any) -> None:
    document = {**notebook([cell("code", "1", "a")]), "metadata": {"kernelspec": kernelspec, "language_info": None}}
    (root / "analysis.ipynb").write_text(json.dumps(document))
    result = session.call("read", {"file_path": "analysis.ipynb"})
    assert not result.is_error and result.text.startswith("'analysis.ipynb': Jupyter notebook, 1 cell (nbformat 4.5)")


def test_a_stale_notebook_is_not_told_json_line_numbers(nb: Path, session: Session) -> None:
    session.call("read", {"file_path": "analysis.ipynb"})
    document = json.loads(nb.read_bytes())
    document["cells"][2]["source"] = ["x = 2"]
    nb.write_bytes(jupyter_bytes(document))
    result = edit(session, cell=0, new_source="# mine")
    assert result.error is not None and result.error.code == "FS_STALE_VERSION"
    assert "line" not in result.text and "offset" not in result.text, result.text


def test_a_notebook_over_the_file_limit_says_what_to_do(nb: Path, root: Path) -> None:
    with Workspace(root, max_file_bytes=1024) as ws:
        s = ws.session("s")
        s.call("read", {"file_path": "analysis.ipynb"})
        result = s.call("notebook_edit", {"notebook_path": "analysis.ipynb", "cell": 0, "new_source": "x"})
    assert result.error is not None and result.error.code == "FS_TOO_LARGE"
    assert "clear its outputs" in result.text and "offset" not in result.text, result.text


def test_a_lone_surrogate_escaped_by_json_stringify_keeps_the_layout(root: Path, session: Session) -> None:
    document = notebook([cell("markdown", ["\ud83d Überschrift 日本"], "odd"), cell("code", "1", "one")])
    text = json.dumps(document, indent=1, ensure_ascii=False).replace("\ud83d", "\\ud83d")  # as VS Code writes
    (root / "analysis.ipynb").write_text(text + "\n", encoding="utf-8", errors="strict")
    session.call("read", {"file_path": "analysis.ipynb"})
    result = edit(session, cell_id="one", new_source="2")
    assert result.value["layout_kept"] is True, result.text
    expected = text.replace('"source": "1"', '"source": "2"')
    assert (root / "analysis.ipynb").read_text(encoding="utf-8") == expected + "\n"


def test_ids_that_are_not_strings_and_deep_metadata_are_not_internal_errors(root: Path, session: Session) -> None:
    document = notebook([cell("code", "1", None, id=["x"]), cell("code", "2", None, id={"a": 1})])
    (root / "analysis.ipynb").write_text(json.dumps(document))
    session.call("read", {"file_path": "analysis.ipynb"})
    assert "none is a string" in edit(session, cell_id="nope", new_source="x").text
    inserted = edit(session, edit_mode="insert", cell_type="code", new_source="0")
    assert not inserted.is_error, inserted.text
    for depth, why in ((100, "its JSON nests more than 64 levels deep"), (980, "nest")):
        deep = (
            '{"cells": [], "metadata": '
            + '{"a": ' * depth
            + "1"
            + "}" * depth
            + ', "nbformat": 4, "nbformat_minor": 5}'
        )
        (root / "deep.ipynb").write_text(deep)
        read = session.call("read", {"file_path": "deep.ipynb"})
        assert not read.is_error and read.value["kind"] == "text"
        arguments = {"notebook_path": "deep.ipynb", "edit_mode": "insert", "cell_type": "code", "new_source": "x"}
        changed = session.call("notebook_edit", arguments)
        assert changed.error is not None and changed.error.code == "FS_NOT_TEXT"
        assert why in changed.text and "fix it there with an edit" in changed.text


def test_without_notebook_edit_a_notebook_reads_as_its_json(nb: Path, root: Path) -> None:
    with Workspace(root, tools=["read", "edit"]) as ws:
        shown = ws.session("s").call("read", {"file_path": "analysis.ipynb"})
    assert shown.value["kind"] == "text" and '     2\t "cells": [' in shown.text
    with Workspace(root, dialect="anthropic") as ws:
        viewed = ws.session("s").call("str_replace_based_edit_tool", {"command": "view", "path": "analysis.ipynb"})
    assert '"cell_type": "markdown",' in viewed.text and "--- cell" not in viewed.text


def test_the_read_note_speaks_the_dialects_arguments(nb: Path, root: Path) -> None:
    with Workspace(root, dialect="claude-code") as ws:
        result = ws.session("s").call("Read", {"file_path": "analysis.ipynb", "limit": 1})
    assert "(indexes from 0; limit 1); continue with offset=2" in result.text


def test_changing_a_cells_type_in_jupyters_layout_keeps_its_key_order(nb: Path, session: Session) -> None:
    session.call("read", {"file_path": "analysis.ipynb"})
    assert not edit(session, cell_id="intro", cell_type="code", new_source="1").is_error
    assert nb.read_bytes() == jupyter_bytes(reread(nb))  # as Jupyter's next save would write it


def test_a_layout_of_no_indent_is_kept(root: Path, session: Session) -> None:
    text = json.dumps(SAMPLE, indent=0)
    (root / "analysis.ipynb").write_text(text)
    session.call("read", {"file_path": "analysis.ipynb"})
    assert edit(session, cell_id="last", new_source="y").value["layout_kept"] is True


def test_the_output_cap_holds_with_the_note(root: Path, session: Session) -> None:
    cells = [cell("code", f"x{n} = '" + "v" * 900 + "'", f"c{n}") for n in range(200)]
    (root / "analysis.ipynb").write_bytes(jupyter_bytes(notebook(cells)))
    result = session.call("read", {"file_path": "analysis.ipynb"})
    assert "continue with offset=" in result.text and len(result.text.encode()) <= 50 * 1024


# --- any edit of any notebook: exactly the change asked for, in the file's own layout ---------------------

_SOURCE = st.text(alphabet=st.sampled_from(list('ab \n\t#é😀\\"')), max_size=12)
_LAYOUTS = [
    {"indent": 1, "sort_keys": True, "ensure_ascii": False, "newline": "\n"},
    {"indent": 2, "sort_keys": False, "ensure_ascii": False, "newline": "\n"},
    {"indent": 4, "sort_keys": False, "ensure_ascii": True, "newline": "\r\n"},
    {"indent": "\t", "sort_keys": True, "ensure_ascii": False, "newline": "\n"},
]


@st.composite
def notebooks(draw: st.DrawFn) -> dict[str, Any]:
    count = draw(st.integers(min_value=0, max_value=4))
    cells = []
    for n in range(count):
        kind = draw(st.sampled_from(["code", "markdown", "raw"]))
        text = draw(_SOURCE)
        source: Any = text.splitlines(keepends=True) if draw(st.booleans()) else text
        cells.append(cell(kind, source, f"id{n}"))
    return notebook(cells)


def _dumped(document: dict[str, Any], layout: dict[str, Any]) -> bytes:
    text = json.dumps(
        document, indent=layout["indent"], sort_keys=layout["sort_keys"], ensure_ascii=layout["ensure_ascii"]
    )
    return (text + "\n").replace("\n", layout["newline"]).encode()


def _expected(document: dict[str, Any], arguments: dict[str, Any], result: Any) -> dict[str, Any]:
    """The document with the edit made, worked out here on its own."""
    expected = json.loads(json.dumps(document))
    cells = expected["cells"]
    mode = arguments.get("edit_mode", "replace")
    ids = [c["id"] for c in cells]
    index = arguments.get("cell", ids.index(arguments["cell_id"]) if "cell_id" in arguments else None)
    if mode == "delete":
        cells.pop(index)
        return expected
    source = arguments["new_source"]
    if mode == "insert":
        made = dict(
            sorted(cell(arguments["cell_type"], source.splitlines(keepends=True), result.value["cell_id"]).items())
        )
        cells.insert(0 if index is None else index + 1, made)
        return expected
    target = cells[index]
    kind = arguments.get("cell_type", target["cell_type"])
    if kind != target["cell_type"]:
        if kind == "code":
            target.update(execution_count=None, outputs=[])
        else:
            target.pop("execution_count", None)
            target.pop("outputs", None)
        target["cell_type"] = kind
    target["source"] = source if isinstance(target["source"], str) else source.splitlines(keepends=True)
    return expected


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(document=notebooks(), layout=st.sampled_from(_LAYOUTS), data=st.data())
def test_any_edit_of_any_notebook_makes_exactly_that_change_in_its_layout(
    tmp_path_factory: pytest.TempPathFactory, document: dict[str, Any], layout: dict[str, Any], data: st.DataObject
) -> None:
    root = tmp_path_factory.mktemp("nb")
    path = root / "analysis.ipynb"
    before = _dumped(document, layout)
    path.write_bytes(before)
    count = len(document["cells"])
    arguments: dict[str, Any] = {"edit_mode": data.draw(st.sampled_from(["replace", "insert", "delete"]))}
    if count and (arguments["edit_mode"] != "insert" or data.draw(st.booleans())):
        index = data.draw(st.integers(min_value=0, max_value=count - 1))
        arguments.update({"cell": index} if data.draw(st.booleans()) else {"cell_id": f"id{index}"})
    if arguments["edit_mode"] != "delete":
        arguments["new_source"] = data.draw(_SOURCE)
    if arguments["edit_mode"] == "insert" or data.draw(st.booleans()):
        arguments["cell_type"] = data.draw(st.sampled_from(["code", "markdown", "raw"]))
    with Workspace(root) as ws:
        s = ws.session("s")
        s.call("read", {"file_path": "analysis.ipynb"})
        result = s.call("notebook_edit", {"notebook_path": "analysis.ipynb", **arguments})
    if arguments["edit_mode"] != "insert" and not count:
        assert result.error is not None and result.error.code == "INVALID_ARGS", result.text
        assert path.read_bytes() == before
        return
    assert not result.is_error, (arguments, result.text)
    assert result.value["layout_kept"] is True
    # escaping is known from the file only when it holds something to escape; else nbformat's (none)
    escaping = layout["ensure_ascii"] and not json.dumps(document, ensure_ascii=False).isascii()
    assert path.read_bytes() == _dumped(_expected(document, arguments, result), {**layout, "ensure_ascii": escaping})
    reread(path)


# --- issue 31: what parsing a notebook may take is bounded before it is parsed --------------------------------


def test_a_notebook_of_millions_of_empty_objects_is_too_large_before_it_is_parsed(root: Path, session: Session) -> None:
    # found in review: 16 MB of "{}" in the metadata took ~780 MB and 10-19 s to read
    document = notebook([cell("code", "x = 1", "one")])
    text = json.dumps(document, indent=1).replace(
        '"metadata": {', '"metadata": {"junk": [' + ",".join(["{}"] * 5_333_333) + "],", 1
    )
    (root / "junk.ipynb").write_text(text)
    result = session.call("read", {"file_path": "junk.ipynb"})
    assert result.error is not None and result.error.code == "FS_TOO_LARGE", result.text[:300]
    assert result.text.startswith(
        "'junk.ipynb' is a notebook whose JSON holds about 10,666,700 values (in its cells, outputs and metadata), "
        "which would take about 386 MiB to parse, more than the 256 MiB fs-tools parses a notebook in — "
    ), result.text
    assert "ask the user to clear its outputs" in result.text
    assert result.exception is not None and isinstance(result.exception.__cause__, TooLarge)
    details = result.exception.__cause__.details
    assert details["subject"] == "notebook" and details["limit"] == 256 << 20 and details["need"] > 256 << 20
    refused = session.call("write", {"file_path": "junk.ipynb", "content": "{}"})  # nothing was shown
    assert refused.error is not None and refused.error.code == "FS_NOT_OBSERVED"
    changed = session.call("notebook_edit", {"notebook_path": "junk.ipynb", "cell": 0, "new_source": "x = 2"})
    assert changed.error is not None and changed.error.code in ("FS_TOO_LARGE", "FS_NOT_OBSERVED"), changed.text
    assert (root / "junk.ipynb").read_text() == text


def _figure_output(points: int) -> dict[str, Any]:
    """An output shaped as plotly's notebook renderer writes one: the figure as JSON (traces of number
    arrays, a layout template of a few hundred small objects) and as HTML with its script."""
    template = {f"axis{n}": {"gridcolor": "white", "ticks": "", "title": {"standoff": 15}} for n in range(100)}
    figure = {
        "data": [{"type": "scatter", "x": [n / 7 for n in range(points)], "y": [n % 13 for n in range(points)]}],
        "layout": {"template": {"layout": template}, "margin": {"t": 30}},
    }
    script = "Plotly.newPlot('fig', [{x: [1, 2, 3], y: [4, 5, 6]}], {a: {b: [1, 2]}}, {c: 1});" * 20_000
    data = {"application/vnd.plotly.v1+json": figure, "text/html": [f"<div><script>{script}</script></div>"]}
    return {"data": data, "metadata": {}, "output_type": "display_data"}


def test_a_real_notebook_whose_strings_hold_millions_of_commas_still_reads(
    root: Path, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fs_tools.provider import notebooks

    cells = [cell("code", f"fig{n}.show()", f"f{n}", outputs=[_figure_output(20_000)]) for n in range(8)]
    data = jupyter_bytes(notebook(cells))  # ~27 MB; ~3.8 million commas, braces and colons, most in strings
    monkeypatch.setattr(notebooks, "NOTEBOOK_PARSE_BYTES", 64 << 20)  # the first, rough count passes it
    assert 64 * sum(data.count(mark) for mark in (b"{", b"[", b",", b":")) > 64 << 20
    (root / "plots.ipynb").write_bytes(data)
    result = session.call("read", {"file_path": "plots.ipynb"})
    assert not result.is_error, result.text[:300]
    assert result.value["kind"] == "notebook" and result.value["cell_count"] == 8


def test_the_count_of_values_skips_strings_and_is_linear_on_any_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    from fs_tools.provider import notebooks

    monkeypatch.setattr(notebooks, "NOTEBOOK_PARSE_BYTES", 1 << 20)  # every count below is past the rough one
    text = json.dumps({"cells": [], "a": ["x, y: {z}" * 50_000, {"b": '[1, 2]\\" , :'}]})
    assert notebooks.parsed_size(text.encode())[0] == 10  # { : [ , : [ , { : outside the strings, and one
    # a string left open, of escaped quotes: a search that started again inside it would be quadratic
    assert notebooks.parsed_size(b'{"cells": "' + b'\\"' * 2_000_000)[0] == 3
    many = b"[" + b",".join([b'"ab"'] * 1_000_000) + b"]"
    monkeypatch.setattr(notebooks, "_STRING", None)  # refused by the count of strings, never taking them out
    values, need = notebooks.parsed_size(many)
    assert values == 1_000_001 and need >= len(many) + notebooks.SLOT_BYTES * 1_000_000 > 1 << 20


def _outputs_of(values: str, count: int) -> bytes:
    """A notebook of one cell whose output is a JSON list of ``count`` copies of ``values``."""
    data = {"application/json": ["<>"]}
    output = {"data": data, "metadata": {}, "output_type": "execute_result", "execution_count": 1}
    text = jupyter_bytes(notebook([cell("code", "x", "a", outputs=[output], execution_count=1)]))
    return text.replace(b'"<>"', ",".join([values] * count).encode(), 1)


def test_a_notebook_of_millions_of_small_numbers_reads(root: Path, session: Session) -> None:
    # found in review: 5 million small integers (9.5 MB) were taken for 5 million 64-byte values (314 MiB,
    # refused) where json.loads takes 51 MiB; they read before the estimate
    data = _outputs_of("1", 5_000_000)
    (root / "numbers.ipynb").write_bytes(data)
    result = session.call("read", {"file_path": "numbers.ipynb"})
    assert not result.is_error, result.text[:300]
    assert result.value["kind"] == "notebook" and result.value["cell_count"] == 1


_SHAPES = ["7", "-3", "300", "0.123456789", "1e300", "true", "{}", "[]", "[1, 2, 3]", "[{}, []]"]
_STRINGS = ['"ab"', '"a line of text\\n"', '"\u00e9t\u00e9"', '"\\ud83d\\ude00 and some text"', '"😀 and some text"']


@pytest.mark.parametrize("values", [*_SHAPES, *_STRINGS, '{"x": 1.5, "y": 2, "name": "point"}'])
def test_the_parse_estimate_is_within_twice_what_json_loads_takes(values: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import tracemalloc

    from fs_tools.provider import notebooks

    data = _outputs_of(values, 100_000)
    # past the rough count, short of what the text and a slot for each string take: counted one by one
    monkeypatch.setattr(notebooks, "NOTEBOOK_PARSE_BYTES", 4 * len(data) + 16 * 100_000)
    tracemalloc.start()
    try:
        json.loads(data)
        took = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    need = notebooks.parsed_size(data)[1]
    assert took <= need <= 2 * took, (took, need)
