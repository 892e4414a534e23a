"""The model-facing tools."""

from fs_tools.tools.base import Example, Tool, ToolContext, ToolOutput
from fs_tools.tools.copy import COPY
from fs_tools.tools.create_directory import CREATE_DIRECTORY
from fs_tools.tools.delete import DELETE
from fs_tools.tools.edit import EDIT, MULTI_EDIT
from fs_tools.tools.glob import GLOB
from fs_tools.tools.grep import GREP
from fs_tools.tools.list import LIST
from fs_tools.tools.move import MOVE
from fs_tools.tools.notebook_edit import NOTEBOOK_EDIT
from fs_tools.tools.read import READ, ReadMemory
from fs_tools.tools.read_many import READ_MANY
from fs_tools.tools.stat import STAT
from fs_tools.tools.write import WRITE

CORE_TOOLS: tuple[Tool, ...] = (READ, WRITE, EDIT, MULTI_EDIT)  # type: ignore[type-arg]
DISCOVERY_TOOLS: tuple[Tool, ...] = (LIST, GLOB, GREP)  # type: ignore[type-arg]
FILE_TOOLS: tuple[Tool, ...] = (READ_MANY, STAT, MOVE, COPY, DELETE, CREATE_DIRECTORY, NOTEBOOK_EDIT)  # type: ignore[type-arg]
ALL_TOOLS = CORE_TOOLS + DISCOVERY_TOOLS + FILE_TOOLS

__all__ = [
    "ALL_TOOLS",
    "COPY",
    "CORE_TOOLS",
    "CREATE_DIRECTORY",
    "DELETE",
    "DISCOVERY_TOOLS",
    "EDIT",
    "FILE_TOOLS",
    "GLOB",
    "GREP",
    "LIST",
    "MOVE",
    "MULTI_EDIT",
    "NOTEBOOK_EDIT",
    "READ",
    "READ_MANY",
    "STAT",
    "WRITE",
    "Example",
    "ReadMemory",
    "Tool",
    "ToolContext",
    "ToolOutput",
]
