"""fs-tools' gates on a harness's own file tools, through its hooks (SPEC §19): Claude Code, Gemini CLI and
Codex run a command (or, in the Claude Agent SDK, a callback) around each built-in tool call, with the
call as JSON. This adapter turns each such event into calls of the same gates every fs-tools tool takes —
``Session.check`` before a change, ``Session.observe`` after a read, ``Session.adopt`` after a change — and
answers in the harness's own protocol. It holds no rules of its own.

A hook never breaks its harness: anything it cannot judge (bad input, an unknown tool or event, a store
that is down, a bug here) is "no opinion" with one line for stderr; only a gate's clear verdict denies.
"""

from __future__ import annotations

from fs_tools import lazy

TYPE_CHECKING = False  # not typing's: the hook command imports this package first (fs_tools.hooks.relay)
if TYPE_CHECKING:
    from fs_tools.hooks.engine import HOOK_HARNESSES, HookGates, hook_event
    from fs_tools.hooks.harnesses import Reply

# Imported on first use: the hook command's first step (fs_tools.hooks.relay) stays a few modules small.
_HOMES = {
    "HOOK_HARNESSES": "fs_tools.hooks.engine",
    "HookGates": "fs_tools.hooks.engine",
    "hook_event": "fs_tools.hooks.engine",
    "Reply": "fs_tools.hooks.harnesses",
}

__all__ = ["HOOK_HARNESSES", "HookGates", "Reply", "hook_event"]


__getattr__ = lazy.exports(__name__, _HOMES)
