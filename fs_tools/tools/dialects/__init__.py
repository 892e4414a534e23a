"""Dialects (SPEC §14): each model family's own tool names, argument names and output conventions,
every one on the same provider, gates, codes and boundary.

A dialect is a list of tools offered by default and, apart, tools offered only when a host names them
(``Workspace(tools=[...])``). Its tools are ordinary ``Tool`` declarations whose bodies call fs-tools'
own; each says which fs-tools tools it stands for (so a remedy names it) and what fs-tools' argument
names are called in it (so a message does).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fs_tools.tools import ALL_TOOLS, Tool
from fs_tools.tools.apply_patch import APPLY_PATCH
from fs_tools.tools.checkpoints import CHECKPOINT, DIFF, HISTORY, REWIND
from fs_tools.tools.dialects import anthropic, claude_code, codex, gemini


@dataclass(frozen=True)
class Dialect:
    name: str
    summary: str
    tools: tuple[Tool[Any], ...]
    extras: tuple[Tool[Any], ...] = ()  # offered only when named in tools=


FS_TOOLS = Dialect(
    "fs-tools", "fs-tools' own tools (SPEC §7 and §13)", ALL_TOOLS, (APPLY_PATCH, CHECKPOINT, HISTORY, DIFF, REWIND)
)
CLAUDE_CODE = Dialect(
    "claude-code", "Claude Code's Read, Write, Edit, MultiEdit, Glob, Grep, LS and NotebookEdit", claude_code.TOOLS
)

ANTHROPIC = Dialect("anthropic", "Anthropic's text editor tool, str_replace_based_edit_tool", anthropic.TOOLS)
CODEX = Dialect("codex", "Codex's apply_patch, with read, list, glob and grep", codex.TOOLS)
GEMINI = Dialect(
    "gemini",
    "Gemini CLI's read_file, write_file, replace, glob, grep_search, list_directory and read_many_files",
    gemini.TOOLS,
)

DIALECTS: dict[str, Dialect] = {dialect.name: dialect for dialect in (FS_TOOLS, CLAUDE_CODE, ANTHROPIC, CODEX, GEMINI)}

__all__ = ["ANTHROPIC", "CLAUDE_CODE", "CODEX", "DIALECTS", "FS_TOOLS", "GEMINI", "Dialect"]
