"""What the tools on offer let a model do, as remedies speak of it.

A remedy never names a tool: it names an ability ("see a directory's entries"), and the workspace says
which tool on offer has it, as the model calls that tool ("fs_list", "Write", "str_replace_based_edit_tool
with command view"). A tool declares its abilities (``Tool.abilities``); a dialect's tool has those of the
fs-tools tools whose part it plays. An ability no tool on offer has is never suggested.
"""

from __future__ import annotations

OBSERVE = "observe"  # read a file, so that this session may change it
SEE_ENTRIES = "see_entries"  # list a directory's entries
CREATE = "create"  # make a new file with given content
SEARCH = "search"  # find lines in files by a pattern
CHANGE_LINES = "change_lines"  # replace some lines of a file, leaving the rest
CHANGE_CELLS = "change_cells"  # change a Jupyter notebook by its cells
