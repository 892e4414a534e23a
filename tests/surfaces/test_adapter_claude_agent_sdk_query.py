"""The Claude Agent SDK adapter in a real ``query()``: the SDK's bundled Claude Code, run against the scripted
Messages API of tests/support/harness_fakes.py, with fs-tools' hook callbacks and its MCP server in process. Needs
``claude-agent-sdk`` (the ``claude-agent-sdk`` extra; .ci/run tests it in an environment of its own, where a
missing SDK fails instead of skipping)."""

from __future__ import annotations

import asyncio
import importlib
import os
from pathlib import Path
from typing import Any

import pytest

from tests.support.harness_fakes import FakeAnthropic, call

REQUIRED = set(os.environ.get("REQUIRE_FRAMEWORKS", "").split(","))
sdk: Any = (
    importlib.import_module("claude_agent_sdk")
    if "claude_agent_sdk" in REQUIRED
    else pytest.importorskip("claude_agent_sdk")
)
pytest.importorskip("mcp")

from fs_tools import Workspace  # noqa: E402
from fs_tools.adapters.claude_agent_sdk import ClaudeAgentTools  # noqa: E402


def _text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content or [] if isinstance(part, dict))


def test_a_query_meets_the_gates_and_fs_tools_own_tools(root: Path, tmp_path: Path) -> None:
    (root / "a.py").write_text("x = 1\n")
    edit = {"file_path": str(root / "a.py"), "old_string": "x = 1", "new_string": "x = 2"}
    script = [
        call("Edit", **edit),  # never read: denied by fs-tools' gate
        call("mcp__fs__read", file_path="a.py"),  # read through fs-tools' own tool
        call("Edit", **edit),  # now allowed: the read counts for Claude Code's Edit
    ]
    home = tmp_path / "home"
    home.mkdir()

    async def run(fs: ClaudeAgentTools, api: FakeAnthropic) -> list[Any]:
        options = sdk.ClaudeAgentOptions(
            cwd=str(root),
            hooks=fs.hooks(),
            mcp_servers=fs.mcp_servers(),
            allowed_tools=fs.allowed_tools(),
            permission_mode="acceptEdits",
            setting_sources=[],
            env={
                "ANTHROPIC_BASE_URL": api.url,
                "ANTHROPIC_API_KEY": "sk-test",
                "HOME": str(home),
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                "DISABLE_AUTOUPDATER": "1",
                "ENABLE_TOOL_SEARCH": "false",  # fs-tools' tools in the request, not found by a search
            },
        )
        return [message async for message in sdk.query(prompt="change x", options=options)]

    with Workspace(root) as workspace, FakeAnthropic(script) as api:
        fs = ClaudeAgentTools(workspace)
        messages = asyncio.run(asyncio.wait_for(run(fs, api), 240))
        fs.close()
        assert not api.errors, api.errors
        denied = api.tool_results(1)[-1]
        assert denied.get("is_error") and "has not been read in this session" in _text(denied)
        shown = api.tool_results(2)[-1]
        assert not shown.get("is_error") and "x = 1" in _text(shown)  # the lines, not only a summary
        assert not api.tool_results(3)[-1].get("is_error")
        assert (root / "a.py").read_text() == "x = 2\n"
        session = next(m.session_id for m in messages if getattr(m, "session_id", None))
        assert "+x = 2" in workspace.session(session).diff()
