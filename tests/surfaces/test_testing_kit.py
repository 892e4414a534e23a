"""The pytest kit: the concurrent writer reproduces each stale scenario deterministically and fails a
test whose arrangement never fired, the fixtures can be configured, and the plugin's fixtures work when
fs-tools is installed (the docs' examples in a pytest subprocess, through the entry point; teardown
failures through ``pytester``)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fs_tools import Session, Workspace
from fs_tools.testing import FAKE_ROOT, ConcurrentWriter, WorkspaceFactory, assert_error, assert_ok

pytest_plugins = ["pytester"]

BACKENDS = ["real", "fake"]  # a real temporary directory; pyfakefs's in-memory filesystem


@pytest.fixture(params=BACKENDS)
def root(request: pytest.FixtureRequest) -> Path:
    return request.getfixturevalue("fst_root" if request.param == "real" else "fst_fake_root")  # type: ignore[no-any-return]


@pytest.fixture
def workspace(request: pytest.FixtureRequest, root: Path) -> Workspace:
    name = "fst_fake_workspace" if root == FAKE_ROOT else "fst_workspace"
    return request.getfixturevalue(name)  # type: ignore[no-any-return]


@pytest.fixture
def session(workspace: Workspace) -> Session:
    return workspace.session("kit")


@pytest.fixture
def writer(workspace: Workspace) -> Iterator[ConcurrentWriter]:
    kit = ConcurrentWriter(workspace)
    yield kit
    kit.close()


def _edit(session: Session, old: str, new: str) -> object:
    return session.call("edit", {"file_path": "a.txt", "old_string": old, "new_string": new})


def test_a_change_right_after_the_read_makes_the_edit_stale(
    root: Path, session: Session, writer: ConcurrentWriter
) -> None:
    (root / "a.txt").write_text("one\ntwo\n")
    writer.after_read("a.txt", "one\nTWO\n")
    assert_ok(session.call("read", {"file_path": "a.txt"}))
    stale = assert_error(_edit(session, "one", "1"), "FS_STALE_VERSION")  # type: ignore[arg-type]
    assert "line 2 changed" in stale.text
    assert (root / "a.txt").read_text() == "one\nTWO\n"
    assert_ok(session.call("read", {"file_path": "a.txt"}))
    assert_ok(_edit(session, "one", "1"))  # type: ignore[arg-type]
    assert (root / "a.txt").read_text() == "1\nTWO\n"
    assert writer.fired == ["after read: a.txt"]  # the path as the test wrote it


def test_after_read_waits_for_a_read_not_an_edits_own_look_at_the_file(
    root: Path, session: Session, writer: ConcurrentWriter
) -> None:
    """An edit scans the file it changes, and so does ``session.changed()``: neither is the read the
    arrangement names, so the change lands after the next read, not inside the edit."""
    (root / "a.txt").write_text("one\ntwo\n")
    assert_ok(session.call("read", {"file_path": "a.txt"}))
    writer.after_read("a.txt", "one\nTWO\n")
    assert session.changed() == []
    assert_ok(_edit(session, "one", "1"))  # type: ignore[arg-type]
    assert writer.fired == []
    assert_ok(session.call("read", {"file_path": "a.txt"}))
    assert writer.fired == ["after read: a.txt"] and (root / "a.txt").read_text() == "one\nTWO\n"


def test_a_change_between_the_check_and_the_commit_is_caught_by_the_commit(
    root: Path, session: Session, writer: ConcurrentWriter
) -> None:
    (root / "a.txt").write_text("one\n")
    assert_ok(session.call("read", {"file_path": "a.txt"}))
    writer.before_commit("a.txt", "outside\n")
    assert_error(_edit(session, "one", "1"), "FS_STALE_VERSION")  # type: ignore[arg-type]
    assert (root / "a.txt").read_text() == "outside\n"  # the outside write survives
    assert len(writer.fired) == 1 and writer.fired[0].startswith("before commit")


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("write", {"file_path": "a.txt", "content": "mine\n"}),
        ("edit", {"file_path": "a.txt", "old_string": "one", "new_string": "1"}),
        ("multi_edit", {"file_path": "a.txt", "edits": [{"old_string": "one", "new_string": "1"}]}),
    ],
)
def test_a_deletion_before_the_commit_is_stale_for_every_writing_tool(
    root: Path, session: Session, writer: ConcurrentWriter, tool: str, args: dict[str, object]
) -> None:
    (root / "a.txt").write_text("one\n")
    assert_ok(session.call("read", {"file_path": "a.txt"}))
    writer.before_commit("a.txt", lambda path: path.unlink())
    assert_error(session.call(tool, args), "FS_STALE_VERSION")
    assert not (root / "a.txt").exists()


def test_a_racing_creator_is_never_clobbered(root: Path, session: Session, writer: ConcurrentWriter) -> None:
    writer.before_commit("a.txt", "theirs\n")
    assert_error(session.call("write", {"file_path": "a.txt", "content": "mine\n"}), "FS_NOT_OBSERVED")
    assert (root / "a.txt").read_text() == "theirs\n"


def test_a_change_on_the_nth_provider_operation(root: Path, session: Session, writer: ConcurrentWriter) -> None:
    (root / "a.txt").write_text("one\n")
    writer.on_operation(2, "a.txt", "changed\n")  # 1: the read's scan; 2: the edit's first look
    assert_ok(session.call("read", {"file_path": "a.txt"}))
    assert_error(_edit(session, "one", "1"), "FS_STALE_VERSION")  # type: ignore[arg-type]
    assert writer.fired == ["on operation 2: a.txt"]


def test_an_editor_style_atomic_save_after_the_read(root: Path, session: Session, writer: ConcurrentWriter) -> None:
    def save(path: Path) -> None:
        temp = path.with_name(".a.txt.swp")
        temp.write_text("saved by an editor\n")
        os.replace(temp, path)

    (root / "a.txt").write_text("one\n")
    writer.after_read("a.txt", save)
    assert_ok(session.call("read", {"file_path": "a.txt"}))
    assert_error(_edit(session, "one", "1"), "FS_STALE_VERSION")  # type: ignore[arg-type]


def test_a_closed_writer_stops_listening(root: Path, workspace: Workspace) -> None:
    (root / "a.txt").write_text("one\n")
    kit = ConcurrentWriter(workspace)
    assert _listening(workspace)
    kit.after_read("a.txt", "two\n")
    kit.close()
    assert not _listening(workspace)
    assert_ok(workspace.session("kit").call("read", {"file_path": "a.txt"}))
    assert kit.fired == [] and (root / "a.txt").read_text() == "one\n"
    assert len(kit.unfired()) == 1


def _listening(workspace: Workspace) -> bool:
    """Whether any listener is attached to the workspace's provider (white-box: its own seam)."""
    return bool(workspace.provider.disk.listeners)


def test_the_assertion_helpers_say_what_they_got(root: Path, session: Session) -> None:
    missing = session.call("read", {"file_path": "nope.txt"})
    with pytest.raises(AssertionError, match="expected success, got FS_NOT_FOUND"):
        assert_ok(missing)
    with pytest.raises(AssertionError, match="expected FS_STALE_VERSION, got FS_NOT_FOUND"):
        assert_error(missing, "FS_STALE_VERSION")


# -- the writer as a context manager, and arrangements that never fire ----------------------------------


def test_the_writer_is_a_context_manager_that_restores_the_provider(root: Path, workspace: Workspace) -> None:
    (root / "a.txt").write_text("one\n")
    with ConcurrentWriter(workspace) as kit:
        assert _listening(workspace)
        kit.after_read("a.txt", "two\n")
        assert_ok(workspace.session("kit").call("read", {"file_path": "a.txt"}))
    assert not _listening(workspace)
    assert kit.fired == ["after read: a.txt"] and kit.unfired() == []


def test_an_arrangement_that_never_fired_fails_the_context_exit(workspace: Workspace) -> None:
    with pytest.raises(pytest.fail.Exception) as failed:  # noqa: SIM117 - the exit is what raises
        with ConcurrentWriter(workspace) as kit:
            kit.after_read("a.txt", "changed\n")
            kit.before_commit("b.txt", "changed\n")
            kit.on_operation(3, "a.txt", "changed\n")
    assert str(failed.value).splitlines() == [
        "after_read of 'a.txt' never happened: nothing read 'a.txt' after it was arranged",
        "before_commit of 'b.txt' never happened: no write or edit of 'b.txt' reached its commit after it was arranged",
        "on_operation(3, 'a.txt') never happened: the workspace ran 0 read(s) and commit(s)",
        "(what fired: nothing)",
    ]
    assert not _listening(workspace)  # closed before it failed


def test_a_body_that_raised_keeps_its_own_exception_with_a_note(workspace: Workspace) -> None:
    with pytest.raises(ValueError) as raised:  # noqa: SIM117
        with ConcurrentWriter(workspace) as kit:
            kit.after_read("a.txt", "changed\n")
            raise ValueError("the harness broke")
    assert str(raised.value) == "the harness broke"
    assert raised.value.__notes__ == [
        "ConcurrentWriter: after_read of 'a.txt' never happened: nothing read 'a.txt' after it was arranged"
    ]
    assert not _listening(workspace)


def test_two_arrangements_of_one_moment_fire_on_successive_reads(root: Path, session: Session) -> None:
    (root / "a.txt").write_text("zero\n")
    with ConcurrentWriter(session.workspace) as kit:
        kit.after_read("a.txt", "one\n")
        kit.after_read("./a.txt", "two\n")  # another spelling of the same file
        assert_ok(session.call("read", {"file_path": "a.txt"}))
        assert (root / "a.txt").read_text() == "one\n"
        assert_ok(session.call("read", {"file_path": "a.txt"}))
    assert (root / "a.txt").read_text() == "two\n"
    assert kit.fired == ["after read: a.txt", "after read: ./a.txt"]


def test_a_nested_writer_puts_the_outer_ones_hooks_back(root: Path, session: Session, writer: ConcurrentWriter) -> None:
    (root / "a.txt").write_text("one\n")
    with ConcurrentWriter(session.workspace) as inner:
        inner.on_operation(1, "a.txt", "inner\n")
        assert_ok(session.call("read", {"file_path": "a.txt"}))
    writer.after_read("a.txt", "outer\n")
    assert_ok(session.call("read", {"file_path": "a.txt"}))
    assert writer.fired == ["after read: a.txt"] and inner.fired == ["on operation 1: a.txt"]
    assert (root / "a.txt").read_text() == "outer\n"


def test_writers_closed_out_of_order_leave_each_other_working(root: Path, workspace: Workspace) -> None:
    (root / "a.txt").write_text("one\n")
    session = workspace.session("s")
    outer = ConcurrentWriter(workspace)
    inner = ConcurrentWriter(workspace)
    outer.close()  # before the writer installed over it: it must not take the inner one's hooks away
    inner.after_read("a.txt", "inner\n")
    assert_ok(session.call("read", {"file_path": "a.txt"}))
    assert inner.fired == ["after read: a.txt"] and outer.fired == []
    inner.close()
    with ConcurrentWriter(workspace) as later:  # and a writer made afterwards works as the first did
        later.after_read("a.txt", "later\n")
        assert_ok(session.call("read", {"file_path": "a.txt"}))
    assert (root / "a.txt").read_text() == "later\n" and inner.fired == ["after read: a.txt"]


def test_arranging_on_a_closed_writer_is_refused(workspace: Workspace) -> None:
    kit = ConcurrentWriter(workspace)
    kit.close()
    kit.close()  # idempotent
    with pytest.raises(RuntimeError, match=r"after_read\('a.txt'\) on a closed ConcurrentWriter"):
        kit.after_read("a.txt", "x")


UNFIRED = """
import pytest

@pytest.mark.parametrize("backend", ["fst_writer", "fst_fake_writer"])
def test_passes_but_never_reads(request, backend):
    request.getfixturevalue(backend).after_read("a.txt", "changed")

@pytest.mark.parametrize("backend", ["fst_writer", "fst_fake_writer"])
def test_fails_on_its_own(request, backend):
    request.getfixturevalue(backend).after_read("a.txt", "changed")
    assert False, "the test's own failure"

def test_everything_fired(fst_root, fst_session, fst_writer):
    (fst_root / "a.txt").write_text("one")
    fst_writer.after_read("a.txt", "two")
    fst_session.call("read", {"file_path": "a.txt"})
"""


def test_the_writer_fixtures_fail_a_passing_test_at_teardown_when_an_arrangement_never_fired(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(UNFIRED)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=3, failed=2, errors=2)
    for backend in ("fst_writer", "fst_fake_writer"):
        result.stdout.fnmatch_lines([f"*ERROR at teardown of test_passes_but_never_reads[[]{backend}[]]*"])
    result.stdout.fnmatch_lines(["*after_read of 'a.txt' never happened: nothing read 'a.txt' after it was arranged"])
    assert "ERROR at teardown of test_fails_on_its_own" not in result.stdout.str()  # its own failure stands alone


# -- configuring the workspaces ------------------------------------------------------------------------


@pytest.mark.fs_tools(read_only=True, protected=["*.lock"])
@pytest.mark.parametrize("name", ["fst_workspace", "fst_fake_workspace"])
def test_the_marker_configures_the_default_workspaces(request: pytest.FixtureRequest, name: str) -> None:
    configured: Workspace = request.getfixturevalue(name)
    assert configured.read_only and configured.protected.patterns == ("*.lock",)
    written = configured.session("s").call("write", {"file_path": "a.txt", "content": "x"})
    assert "read-only" in assert_error(written, "FS_SANDBOX_DENIED").text


@pytest.mark.fs_tools(read_only=True, protected=["*.lock"])
class TestTheClosestMarkerWins:
    @pytest.mark.fs_tools(read_only=False)
    def test_the_tests_own_marker_updates_the_class_one(self, fst_workspace: Workspace) -> None:
        assert not fst_workspace.read_only and fst_workspace.protected.patterns == ("*.lock",)


class TestTheOptionsFixtureCanBeOverridden:
    @pytest.fixture
    def fst_workspace_options(self) -> dict[str, Any]:
        return {"protected": ["secret/**"], "max_file_bytes": 100}

    @pytest.mark.fs_tools(max_file_bytes=10)
    def test_the_marker_updates_the_overridden_options(self, fst_session: Session) -> None:
        too_large = fst_session.call("write", {"file_path": "big.txt", "content": "x" * 20})
        assert_error(too_large, "FS_TOO_LARGE")
        protected = fst_session.call("write", {"file_path": "secret/a.txt", "content": "x"})
        assert "protected" in assert_error(protected, "FS_SANDBOX_DENIED").text


@pytest.mark.fs_tools("read_only")
def test_a_positional_marker_argument_is_refused(request: pytest.FixtureRequest) -> None:
    with pytest.raises(TypeError, match=re.escape("@pytest.mark.fs_tools takes Workspace keyword options only")):
        request.getfixturevalue("fst_workspace")


def test_the_marker_is_registered(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("import pytest\n\n@pytest.mark.fs_tools(read_only=True)\ndef test_x(): pass\n")
    pytester.runpytest("--strict-markers", "-p", "no:cacheprovider").assert_outcomes(passed=1)
    pytester.runpytest("--markers").stdout.fnmatch_lines(["@pytest.mark.fs_tools(**options): Workspace keyword *"])


def test_the_factory_makes_workspaces_on_fresh_roots(fst_make_workspace: WorkspaceFactory, fst_root: Path) -> None:
    first = fst_make_workspace("app", "lib", protected=["*.lock"])
    second = fst_make_workspace()
    app, lib = first.roots
    assert (app.name, lib.name, second.roots[0].name) == ("app", "lib", "workspace")
    assert app.parent == lib.parent != second.roots[0].parent != fst_root.parent
    assert [list(path.iterdir()) for path in (app, lib, second.roots[0])] == [[], [], []]
    session = first.session("s")
    assert_ok(session.call("write", {"file_path": str(lib / "b.txt"), "content": "in the second root\n"}))
    assert (lib / "b.txt").read_text() == "in the second root\n"
    assert_error(session.call("write", {"file_path": "poetry.lock", "content": ""}), "FS_SANDBOX_DENIED")
    assert_ok(second.session("s").call("write", {"file_path": "poetry.lock", "content": ""}))


def test_the_factory_closes_its_workspaces_at_teardown(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        made = []

        def test_make(fst_make_workspace):
            made.extend([fst_make_workspace(), fst_make_workspace("a", "b")])
            assert not any(workspace.closed for workspace in made)

        def test_they_are_closed():
            assert len(made) == 2 and all(workspace.closed for workspace in made)
        """
    )
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)


def test_every_fixture_has_a_docstring(pytester: pytest.Pytester) -> None:
    lines = pytester.runpytest("--fixtures", "-p", "no:cacheprovider").stdout.lines
    described = {
        line.split(" -- ")[0]: lines[number + 1].strip()
        for number, line in enumerate(lines)
        if line.startswith("fst_") and " -- " in line
    }
    assert set(described) == {
        "fst_root",
        "fst_workspace",
        "fst_workspace_options",
        "fst_make_workspace",
        "fst_session",
        "fst_writer",
        "fst_fake_root",
        "fst_fake_workspace",
        "fst_fake_session",
        "fst_fake_writer",
    }
    assert [name for name, doc in described.items() if doc == "no docstring available"] == []


# -- the framework's own test model --------------------------------------------------------------------


def test_pydantic_ais_test_model_on_the_full_toolset_ends_in_edits_retries(session: Session) -> None:
    """What docs/testing.md explains: TestModel calls ``edit`` with ``old_string == new_string``, ``move``
    with ``destination == source`` (INVALID_ARGS, so ModelRetry) and answers the retry with the same call
    until the budget is gone."""
    pytest.importorskip("pydantic_ai")
    from pydantic_ai import Agent
    from pydantic_ai.exceptions import UnexpectedModelBehavior
    from pydantic_ai.models.test import TestModel

    from fs_tools.adapters.pydantic_ai import toolset

    # which tool spends the budget first depends on the framework's version (notebook_edit in 2.60)
    pattern = r"Tool '(multi_edit|edit|move|notebook_edit)' exceeded max retries count of 1"
    with pytest.raises(UnexpectedModelBehavior, match=pattern):
        Agent(TestModel(), toolsets=[toolset(session)]).run_sync("Look around")


# -- the docs' examples --------------------------------------------------------------------------------

DOCS = Path(__file__).resolve().parents[2] / "docs" / "testing.md"


def _docs_blocks() -> list[str]:
    blocks = [block.split("```", 1)[0] for block in DOCS.read_text(encoding="utf-8").split("```python\n")[1:]]
    assert len(blocks) == 4
    return blocks


def _all_pass(blocks: list[str], tmp_path: Path) -> None:
    """Each block a test file; every test in them passes."""
    for number, block in enumerate(blocks):
        (tmp_path / f"test_example_{number}.py").write_text(block)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--strict-markers", str(tmp_path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    tests = sum(block.count("\ndef test_") for block in blocks)
    assert tests and f"{tests} passed" in result.stdout, result.stdout


def test_the_docs_examples_run_through_the_installed_entry_point(tmp_path: Path) -> None:
    """Every Python block of docs/testing.md is a test file; all of its tests pass."""
    _all_pass([block for block in _docs_blocks() if "from pydantic_ai" not in block], tmp_path)


def test_the_docs_pydantic_ai_example_runs_through_the_installed_entry_point(tmp_path: Path) -> None:
    pytest.importorskip("pydantic_ai")  # an optional framework: its example needs it
    _all_pass([block for block in _docs_blocks() if "from pydantic_ai" in block], tmp_path)


def test_the_fake_workspace_never_touches_the_disk(fst_fake_root: Path, fst_fake_session: Session) -> None:
    assert_ok(fst_fake_session.call("write", {"file_path": "made/here.txt", "content": "in memory\n"}))
    assert (fst_fake_root / "made" / "here.txt").read_text() == "in memory\n"
    assert_error(fst_fake_session.call("read", {"file_path": "../etc/passwd"}), "FS_SANDBOX_DENIED")
    (fst_fake_root / "out").symlink_to("/etc")
    assert_error(fst_fake_session.call("read", {"file_path": "out/passwd"}), "FS_SANDBOX_DENIED")
    fst_fake_root.joinpath("made", "here.txt").write_text("changed outside\n")
    assert [change.path for change in fst_fake_session.changed()] == [str(fst_fake_root / "made" / "here.txt")]
    real = subprocess.run(["test", "-e", str(FAKE_ROOT)], check=False).returncode  # a real process, real disk
    assert real != 0


def test_importing_the_plugin_stays_light() -> None:
    heavy = "('pydantic', 'watchdog', 'fs_tools.workspace')"
    code = f"import sys, fs_tools.testing; print(sorted(m for m in {heavy} if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
