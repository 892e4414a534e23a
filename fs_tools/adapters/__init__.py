"""Thin adapters from a ``Session`` to the tool-calling formats agent frameworks use.

Each submodule imports its framework only when used: ``openai``, ``anthropic`` and ``gemini`` need no
SDK at all (they build and read plain dicts); ``pydantic_ai``, ``langchain``, ``openai_agents``,
``smolagents``, ``llamaindex``, ``google_adk``, ``autogen``, ``crewai``, ``haystack``, ``dspy``,
``agent_framework``, ``semantic_kernel``, ``minisweagent`` and ``strands`` import those frameworks. Every
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


NOT_SHOWN = "\n\n[the image is not shown: this integration passes the model text only]"


def render(result: ToolResult, *, images_shown: bool = False) -> str:
    """What a model reads from a result: the text, prefixed with ``ERROR <code>:`` on a failure. A result
    with images (a ``read`` of one) says the image is not shown, unless the caller shows it
    (``images_shown``: MCP, the Anthropic adapter, OpenAI's Responses API)."""
    if result.error is not None:
        return f"ERROR {result.error.code}: {result.text}"
    return result.text if images_shown or not result.media else result.text + NOT_SHOWN


def field_of(item: Any, name: str) -> Any:
    """A field of a dict, or of an SDK's object (the ``openai`` and ``anthropic`` packages' models)."""
    return item.get(name) if isinstance(item, Mapping) else getattr(item, name, None)


class ToolText(str):
    """A tool's text for the model (``render``), with ``is_error`` for the host: for a framework whose tool
    output is a string and has no error flag (smolagents, DSPy)."""

    is_error: bool

    def __new__(cls, result: ToolResult) -> ToolText:
        text = super().__new__(cls, render(result))
        text.is_error = result.is_error
        return text
