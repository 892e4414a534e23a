"""The ``codex`` dialect: Codex's ``apply_patch`` (its argument named ``input``, as Codex's own JSON
tool names it) beside fs-tools' ``read``, ``list``, ``glob`` and ``grep`` (SPEC §14).

Codex's own ``apply_patch`` overwrites a file an ``Add File`` or a ``Move to`` lands on and leaves the
hunks before a failing one applied; here both are gated, and a patch applies whole or not at all.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from fs_tools.arguments import Text, ToolArgs
from fs_tools.tools import GLOB, GREP, LIST, READ, Tool
from fs_tools.tools.apply_patch import APPLY_PATCH, ApplyPatchArgs, run_apply_patch
from fs_tools.tools.base import Example, ToolContext, ToolOutput
from fs_tools.tools.dialects.common import canonical, like


class CodexPatchArgs(ToolArgs):
    input: Text = Field(min_length=1, description="The entire contents of the apply_patch command.")


def _run(ctx: ToolContext, args: CodexPatchArgs) -> ToolOutput:
    return run_apply_patch(ctx, canonical(ApplyPatchArgs, {"patch": args.input}))


APPLY_PATCH_CODEX = like(
    APPLY_PATCH,
    arguments=CodexPatchArgs,
    run=_run,
    example=Example(
        {"input": "*** Begin Patch\n*** Update File: notes.txt\n@@\n one\n-two\n+2\n three\n*** End Patch\n"},
        setup=(("read", {"file_path": "notes.txt"}),),
    ),
    stands_for={"apply_patch": "{name}", "edit": "{name}", "write": "{name}"},
    terms={"patch": "input"},
)

TOOLS: tuple[Tool[Any], ...] = (APPLY_PATCH_CODEX, READ, LIST, GLOB, GREP)
