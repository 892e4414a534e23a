"""Thin adapters from a ``Session`` to the tool-calling formats agent frameworks use.

Each submodule imports its framework only when used: ``openai``, ``anthropic`` and ``gemini`` need no
SDK at all (they build and read plain dicts); ``pydantic_ai``, ``langchain``, ``openai_agents``,
``smolagents``, ``llamaindex``, ``google_adk``, ``autogen`` and ``crewai`` import those frameworks. Every
adapter passes the model's arguments to fs-tools unvalidated by the framework, so the model gets our
codes and teaching messages, never a framework's generic validation error.

Options mean the same in every adapter: ``strict=True`` gives the provider's strict form of each schema
(``schemas`` shapes them) and sets its strict flag where it has one. Names, the tool selection and a
name prefix are the Workspace's (``Workspace(root, tools=[...], prefix="fs_")``), so every adapter, the
MCP server and the dispatch of a call see the same names.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fs_tools.result import ToolResult


def render(result: ToolResult) -> str:
    """What a model reads from a result: the text, prefixed with ``ERROR <code>:`` on a failure."""
    return f"ERROR {result.error.code}: {result.text}" if result.error is not None else result.text


def field_of(item: Any, name: str) -> Any:
    """A field of a dict, or of an SDK's object (the ``openai`` and ``anthropic`` packages' models)."""
    return item.get(name) if isinstance(item, Mapping) else getattr(item, name, None)
