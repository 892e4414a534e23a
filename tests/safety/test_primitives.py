"""The provider's kernel-specific primitives as a per-provider choice, and a Workspace built on a provider
it is given: the portable fallbacks keep every guarantee on a real disk, side by side with the native
ones in the same process."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from fs_tools import Workspace
from fs_tools.provider import FileProvider, Primitives, Provider
from fs_tools.result import ToolResult

TEMP = re.compile(r"\.fs-tools\.(?:tmp|dir)$")
CHOICES = {"native": Primitives.native(), "portable": Primitives.portable()}


def ok(result: ToolResult) -> ToolResult:
    assert not result.is_error, result.text
    return result


def code(result: ToolResult) -> str:
    assert result.error is not None, f"expected an error, got: {result.text}"
    return result.error.code


def leftovers(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if TEMP.search(p.name))


def test_portable_primitives_name_no_kernel_specific_call() -> None:
    portable = Primitives.portable()
    assert (portable.reopen_through_proc, portable.native_rename, portable.can_stage()) == (False, None, False)
    assert Primitives.native() is Primitives.native()  # detected once per process


@pytest.mark.parametrize("choice", sorted(CHOICES))
def test_every_mutation_keeps_its_guarantees_on_either_primitives(tmp_path: Path, choice: str) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "old.txt").write_text("one\n")
    with Workspace(FileProvider([root], primitives=CHOICES[choice])) as ws:
        s = ws.session("s")
        ok(s.call("write", {"file_path": "deep/new/file.txt", "content": "fresh\n"}))  # parents made
        assert code(s.call("write", {"file_path": "old.txt", "content": "x\n"})) == "FS_NOT_OBSERVED"
        ok(s.call("read", {"file_path": "old.txt"}))
        (root / "old.txt").write_text("changed outside\n")
        assert code(s.call("edit", {"file_path": "old.txt", "old_string": "one", "new_string": "two"})) == (
            "FS_STALE_VERSION"
        )
        ok(s.call("read", {"file_path": "old.txt"}))
        ok(s.call("edit", {"file_path": "old.txt", "old_string": "changed", "new_string": "edited"}))
        assert code(s.call("move", {"source": "old.txt", "destination": "deep/new/file.txt"})) == (
            "FS_ALREADY_EXISTS"
        )
        ok(s.call("move", {"source": "old.txt", "destination": "moved.txt"}))
        ok(s.call("delete", {"file_path": "moved.txt"}))
        fifo = root / "pipe"
        os.mkfifo(fifo)
        assert code(s.call("read", {"file_path": "pipe"})) == "FS_NOT_REGULAR_FILE"  # never opened
    assert (root / "deep" / "new" / "file.txt").read_text() == "fresh\n"
    assert not (root / "old.txt").exists() and not (root / "moved.txt").exists()
    assert leftovers(root) == []


def test_two_providers_on_different_primitives_work_side_by_side(tmp_path: Path) -> None:
    """The choice is the provider's, not the process's: a portable one does not switch the native one."""
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    with (
        Workspace(FileProvider([first], primitives=Primitives.portable())) as portable,
        Workspace(second) as native,
    ):
        for ws in (portable, native):
            ok(ws.session("s").call("write", {"file_path": "x/y.txt", "content": "hi\n"}))
    assert Primitives.native() == CHOICES["native"]
    assert (first / "x" / "y.txt").read_text() == (second / "x" / "y.txt").read_text() == "hi\n"


def test_a_workspace_on_a_given_provider_serves_through_it_and_closes_it(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("hello\n")
    provider = FileProvider([tmp_path], max_file_bytes=10)
    assert isinstance(provider, Provider)
    ws = Workspace(provider)
    assert ws.provider is provider
    assert ws.roots == [tmp_path]
    result = ws.session("s").call("write", {"file_path": "big.txt", "content": "more than ten bytes\n"})
    assert code(result) == "FS_TOO_LARGE"  # the provider's own limit
    ws.close()
    with pytest.raises(Exception, match="closed"):  # the provider went with the workspace
        provider.key_of("f.txt")


def test_limits_given_twice_are_refused_and_the_provider_stays_the_callers(tmp_path: Path) -> None:
    provider = FileProvider([tmp_path])
    with pytest.raises(ValueError, match="are the provider's"):
        Workspace(provider, max_file_bytes=1 << 10)
    with pytest.raises(ValueError, match="no tool to offer"):
        Workspace(provider, tools=[])
    (tmp_path / "f.txt").write_text("still usable\n")
    assert provider.key_of("f.txt")  # not closed by the failed constructions
    provider.close()
