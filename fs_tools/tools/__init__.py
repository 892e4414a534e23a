"""The model-facing tools."""

from fs_tools.tools.base import Example, Tool, ToolContext, ToolOutput
from fs_tools.tools.edit import EDIT, MULTI_EDIT
from fs_tools.tools.globbing import GLOB
from fs_tools.tools.grep import GREP
from fs_tools.tools.listing import LIST
from fs_tools.tools.read import READ
from fs_tools.tools.write import WRITE

CORE_TOOLS: tuple[Tool, ...] = (READ, WRITE, EDIT, MULTI_EDIT)  # type: ignore[type-arg]
DISCOVERY_TOOLS: tuple[Tool, ...] = (LIST, GLOB, GREP)  # type: ignore[type-arg]
ALL_TOOLS = CORE_TOOLS + DISCOVERY_TOOLS

__all__ = [
    "ALL_TOOLS",
    "CORE_TOOLS",
    "DISCOVERY_TOOLS",
    "EDIT",
    "GLOB",
    "GREP",
    "LIST",
    "MULTI_EDIT",
    "READ",
    "WRITE",
    "Example",
    "Tool",
    "ToolContext",
    "ToolOutput",
]
