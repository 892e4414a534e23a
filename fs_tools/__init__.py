"""fs-tools: safe, instructive read / write / edit tools for LLM agents.

from fs_tools import Workspace
ws = Workspace("/path/to/project")
session = ws.session("conversation-1")
result = session.call("read", {"file_path": "src/app.py"})
"""

from fs_tools.errors import ErrorInfo, FsError, HarnessError, ToolArgsError
from fs_tools.result import ToolResult
from fs_tools.workspace import Session, Workspace

__all__ = ["ErrorInfo", "FsError", "HarnessError", "Session", "ToolArgsError", "ToolResult", "Workspace"]
__version__ = "0.1.0"
