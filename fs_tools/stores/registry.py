"""The MCP sessions a store may keep for the replicas of a server (streamable HTTP)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class SessionRegistry(Protocol):
    """Where the replicas of an MCP server keep the session ids they issued, so that any replica serves
    any session (``RedisStore`` is one)."""

    def open_mcp_session(self, session_id: str) -> list[str]:
        """Record ``session_id``; the ids ended to make room for it."""
        ...

    def mcp_session_open(self, session_id: str) -> bool: ...

    def close_mcp_session(self, session_id: str) -> bool: ...
