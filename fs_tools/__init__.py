"""fs-tools: safe, instructive read / write / edit tools for LLM agents.

from fs_tools import Workspace
ws = Workspace("/path/to/project")
session = ws.session("conversation-1")
result = session.call("read", {"file_path": "src/app.py"})

The names below are imported on first use, so that importing a submodule (the pytest plugin
``fs_tools.testing`` is loaded in every pytest run where fs-tools is installed) stays cheap.
"""

from __future__ import annotations

from fs_tools import lazy

TYPE_CHECKING = False  # not typing's: importing typing costs the hook command ~4 ms (fs_tools.hooks.relay)
if TYPE_CHECKING:
    from fs_tools.errors import ErrorInfo, FsError, HarnessError, ToolArgsError
    from fs_tools.result import ToolResult
    from fs_tools.workspace import Session, Workspace

_HOMES = {
    "ErrorInfo": "fs_tools.errors",
    "FsError": "fs_tools.errors",
    "HarnessError": "fs_tools.errors",
    "ToolArgsError": "fs_tools.errors",
    "ToolResult": "fs_tools.result",
    "Session": "fs_tools.workspace",
    "Workspace": "fs_tools.workspace",
}

__all__ = ["ErrorInfo", "FsError", "HarnessError", "Session", "ToolArgsError", "ToolResult", "Workspace"]
__version__ = "0.1.0"


__getattr__ = lazy.exports(__name__, _HOMES)
