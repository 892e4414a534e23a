"""The Claude Agent SDK adapter: hook callbacks running the gates on Claude Code's tools, and fs-tools' own
MCP server in process, sharing one session. The callbacks and the server are driven here as the SDK
drives them (an async callback with the CLI's hook input; the server through mcp's in-memory client)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

mcp = pytest.importorskip("mcp")

from mcp import Client  # noqa: E402

from fs_tools import Workspace  # noqa: E402
from fs_tools.adapters.claude_agent_sdk import ClaudeAgentTools  # noqa: E402


def _event(root: Path, event: str, tool: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    return {
        "session_id": "sdk-1",
        "transcript_path": "/tmp/t.jsonl",
        "cwd": str(root),
        "permission_mode": "acceptEdits",
        "hook_event_name": event,
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": "toolu_1",
    }


def test_the_callbacks_deny_in_the_sdks_form(root: Path) -> None:
    (root / "a.py").write_text("x = 1\n")
    edit = {"file_path": str(root / "a.py"), "old_string": "x = 1", "new_string": "x = 2", "replace_all": False}
    with Workspace(root) as workspace:
        fs = ClaudeAgentTools(workspace)
        denied = asyncio.run(fs._callback(_event(root, "PreToolUse", "Edit", edit), "toolu_1", {"signal": None}))
        output = denied["hookSpecificOutput"]
        assert (output["hookEventName"], output["permissionDecision"]) == ("PreToolUse", "deny")
        assert "has not been read in this session" in output["permissionDecisionReason"]
        read = _event(root, "PostToolUse", "Read", {"file_path": str(root / "a.py")})
        assert asyncio.run(fs._callback(read, "toolu_2", {"signal": None})) == {}
        assert asyncio.run(fs._callback(_event(root, "PreToolUse", "Edit", edit), "toolu_3", {})) == {}
        fs.close()


def test_a_read_through_fs_tools_counts_for_claude_codes_edit(root: Path) -> None:
    (root / "a.py").write_text("x = 1\n")
    edit = {"file_path": str(root / "a.py"), "old_string": "x = 1", "new_string": "x = 2", "replace_all": False}

    async def run(fs: ClaudeAgentTools) -> dict[str, Any]:
        # the SDK fires PreToolUse for the MCP call first: it names the session the server's calls belong to
        await fs._callback(_event(root, "PreToolUse", "mcp__fs__read", {"file_path": "a.py"}), "t1", {})
        server = fs.mcp_servers()["fs"]
        assert server["type"] == "sdk" and server["name"] == "fs"
        async with Client(server["instance"]) as client:
            result = await client.call_tool("read", {"file_path": "a.py"})
        assert not result.is_error
        assert result.structured_content is None  # Claude Code would show the model only that
        assert "x = 1" in result.content[0].text
        return await fs._callback(_event(root, "PreToolUse", "Edit", edit), "t2", {})

    with Workspace(root) as workspace:
        fs = ClaudeAgentTools(workspace)
        assert asyncio.run(run(fs)) == {}
        assert fs.allowed_tools() == ["mcp__fs"]
        fs.close()
        assert not workspace.closed  # the caller's workspace stays open


def test_changes_through_either_share_one_history(root: Path) -> None:
    (root / "a.py").write_text("x = 1\n")
    with Workspace(root) as workspace:
        fs = ClaudeAgentTools(workspace)
        mark = workspace.session("sdk-1").checkpoint()
        asyncio.run(fs._callback(_event(root, "PostToolUse", "Read", {"file_path": str(root / "a.py")}), "t", {}))
        (root / "a.py").write_text("x = 2\n")  # Claude Code's Edit
        edit = {"file_path": str(root / "a.py"), "old_string": "x = 1", "new_string": "x = 2"}
        asyncio.run(fs._callback(_event(root, "PostToolUse", "Edit", edit), "t", {}))
        assert "+x = 2" in workspace.session("sdk-1").diff(mark)
        fs.close()
