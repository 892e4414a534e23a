"""The model-facing tools."""

from fs_tools.tools.base import Tool, ToolContext, ToolOutput
from fs_tools.tools.edit import EDIT, MULTI_EDIT
from fs_tools.tools.read import READ
from fs_tools.tools.write import WRITE

CORE_TOOLS: tuple[Tool, ...] = (READ, WRITE, EDIT, MULTI_EDIT)  # type: ignore[type-arg]

__all__ = ["CORE_TOOLS", "EDIT", "MULTI_EDIT", "READ", "WRITE", "Tool", "ToolContext", "ToolOutput"]
