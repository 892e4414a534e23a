"""The Claude Agent SDK for Python (``claude-agent-sdk``): fs-tools' gates on Claude Code's own file tools
as in-process hook callbacks, and fs-tools' own tools as an in-process MCP server — the server
``fs-tools serve`` runs, so the model gets fs-tools' messages, never the SDK's ``@tool`` validation.

```python
from claude_agent_sdk import ClaudeAgentOptions, query
from fs_tools import Workspace
from fs_tools.adapters.claude_agent_sdk import ClaudeAgentTools

with Workspace("/path/to/project") as workspace:
    fs = ClaudeAgentTools(workspace)
    options = ClaudeAgentOptions(cwd="/path/to/project", hooks=fs.hooks(), mcp_servers=fs.mcp_servers(),
                                 allowed_tools=fs.allowed_tools())
    async for message in query(prompt="...", options=options): ...
```

Both halves share the workspace's files, store and history, and one session: the SDK session's id, as
its hook events name it (a read through ``mcp__fs__read`` counts for Claude Code's ``Edit``, and the
other way round). One ``ClaudeAgentTools`` serves one conversation at a time.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from fs_tools.hooks.engine import HookGates

if TYPE_CHECKING:
    from fs_tools.workspace import Workspace

# Claude Code's file tools the gates judge, and the events they are judged at.
_CHANGES = "Write|Edit|MultiEdit|NotebookEdit"
_EVENTS = {
    "PreToolUse": None,  # every tool: an MCP call's event names the session its call belongs to
    "PostToolUse": f"Read|{_CHANGES}",
    "PostToolUseFailure": _CHANGES,
}


class ClaudeAgentTools:
    """fs-tools for one ``claude_agent_sdk`` conversation on ``workspace`` (which stays the caller's to
    close). ``name`` is the MCP server's key in ``mcp_servers``: its tools are ``mcp__<name>__<tool>``."""

    def __init__(self, workspace: Workspace, *, name: str = "fs") -> None:
        self.workspace = workspace
        self.name = name
        self._gates = HookGates("claude-code", workspace=workspace)
        self._session = "claude-agent"  # until the first event names the SDK's session

    def hooks(self) -> dict[str, list[Any]]:
        """``ClaudeAgentOptions(hooks=...)``: the gates before Claude Code's changes, the observations and
        history after its reads and changes."""
        from claude_agent_sdk import HookMatcher

        callback: Any = self._callback  # the SDK's input types are TypedDicts of the same fields
        return {event: [HookMatcher(matcher=matcher, hooks=[callback])] for event, matcher in _EVENTS.items()}

    async def _callback(self, input_data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        session = input_data.get("session_id") if isinstance(input_data, dict) else None
        if isinstance(session, str) and session:
            self._session = session
        reply = await asyncio.to_thread(self._gates.handle, input_data)
        if not reply.deny:
            return {}  # no opinion
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": reply.reason,
            }
        }

    def mcp_servers(self) -> dict[str, Any]:
        """``ClaudeAgentOptions(mcp_servers=...)``: fs-tools' MCP server, in process. Its results carry no
        ``structuredContent``: Claude Code would show the model only that, never a read's lines."""
        from fs_tools.mcp.server import build_server

        server = build_server(self.workspace, lambda ctx: self._session, structured=False)
        return {self.name: {"type": "sdk", "name": self.name, "instance": server}}

    def allowed_tools(self) -> list[str]:
        """``ClaudeAgentOptions(allowed_tools=...)``: fs-tools' tools, without a permission prompt each."""
        return [f"mcp__{self.name}"]

    def close(self) -> None:
        self._gates.close()
