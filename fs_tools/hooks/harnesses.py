"""What each harness's hook events look like: which field is the session, which event is before and which
after a tool call, which of its tools read and which change files (and under which argument), and how it
wants to be told "no". The tools themselves are fs-tools' dialect of that harness (SPEC §14)."""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Reply:
    """The hook's answer: ``deny`` with the ``reason`` the model reads, or no opinion (``deny`` False);
    ``note`` is the one line a hook prints on stderr when it could not judge."""

    deny: bool = False
    reason: str = ""
    note: str = ""


@dataclass(frozen=True)
class Answer:
    """A reply in the harness's protocol: the command's exit status, stdout and stderr."""

    status: int
    stdout: str = ""
    stderr: str = ""


def _exit_two(reply: Reply) -> Answer:
    """Claude Code's protocol: exit 2 blocks the call, and stderr is the reason the model reads."""
    if reply.deny:
        return Answer(2, stderr=reply.reason)
    return Answer(0, stderr=reply.note)


@dataclass(frozen=True)
class Call:
    """One tool call of an event, as the gates take it."""

    session: str
    phase: str  # "pre": before the tool runs; "post": after it succeeded; "failed": after it failed
    tool: str  # the harness's name for it
    arguments: dict[str, Any]
    paths: tuple[str, ...]  # the files it reads or changes
    read: bool = False  # a read (observed after), else a change (checked before, adopted after)
    check: str | None = None  # the dialect tool whose check judges it
    creates: tuple[str, ...] = ()  # the paths it may create: observed (absent) once it is allowed
    shown: tuple[int, str] | None = None  # a read's first line and the text it showed, when the event says
    leased: bool = True  # a change whose post event comes: leased from its check to that event


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _one(name: str) -> Callable[[dict[str, Any], str | None], tuple[str, ...] | None]:
    """The path in argument ``name``; a relative one is made absolute against the event's ``cwd`` (in the
    arguments too), as the harness resolves it."""

    def paths(arguments: dict[str, Any], cwd: str | None) -> tuple[str, ...] | None:
        path = _text(arguments.get(name))
        if path is None:
            return None
        if cwd is not None and not os.path.isabs(path):
            path = arguments[name] = os.path.join(cwd, path)
        return (path,)

    return paths


def _patch_paths(arguments: dict[str, Any], cwd: str | None, key: str = "input") -> tuple[str, ...] | None:
    """Every path a patch names (a move's source and destination both), in patch order."""
    from fs_tools.errors import ToolArgsError
    from fs_tools.tools.patch import parse_patch

    text = _text(arguments.get(key))
    if text is None:
        return None
    try:
        changes = parse_patch(text)
    except ToolArgsError:
        return ()  # malformed: the check says so
    found: list[str] = []
    for change in changes:
        found += [path for path in (change.path, change.move_to) if path is not None and path not in found]
    return tuple(found)


@dataclass(frozen=True)
class Tool:
    """One of the harness's own tools: the argument naming its file(s), and the dialect tool whose
    check judges a change (None: a read)."""

    paths: Callable[[dict[str, Any], str | None], tuple[str, ...] | None]
    check: str | None = None
    creates: bool = False  # it may create the files it names
    leased: bool = True  # the harness sends a post event after it (which gives the lease back)


@dataclass(frozen=True)
class Harness:
    name: str
    dialect: str
    session_field: str
    pre: frozenset[str]  # the events before a tool runs
    post: frozenset[str]  # ... after it succeeded
    failed: frozenset[str]  # ... after it failed
    tools: Mapping[str, Tool]
    project_variables: tuple[str, ...] = ()  # the environment variables naming the project's directory
    adjust: Callable[[str, dict[str, Any]], tuple[str, dict[str, Any]]] | None = None
    failed_when: Callable[[Mapping[str, Any]], bool] | None = None  # a post event of a call that failed
    shown_by: Callable[[Mapping[str, Any]], tuple[int, str] | None] | None = None  # what a read showed
    answer: Callable[[Reply], Answer] = _exit_two
    settings: str | None = None  # the settings file, relative to the project (or the user's home)
    entries: Mapping[str, str] = field(default_factory=dict)  # event -> the matcher of fs-tools' entry
    enable: Mapping[str, Any] = field(default_factory=dict)  # settings the hooks need on

    def entry(self, matcher: str, command: str) -> dict[str, Any]:
        """One matcher group of fs-tools' hook in the settings file."""
        return {"matcher": matcher, "hooks": [{"type": "command", "command": command, "timeout": 30}]}

    def call_of(self, event: Mapping[str, Any]) -> Call | str:
        """The tool call of ``event``, or why it is not one fs-tools judges ("" when it simply is not:
        another event, another tool; a reason when it is malformed)."""
        name = event.get("hook_event_name")
        phase = "pre" if name in self.pre else "post" if name in self.post else "failed" if name in self.failed else ""
        if not phase:
            return ""
        tool_name = event.get("tool_name")
        arguments = event.get("tool_input")
        if not isinstance(tool_name, str):
            return f"{name} event without a tool_name"
        if not isinstance(arguments, Mapping):
            return f"{name} event for {tool_name} without a tool_input object"
        arguments = dict(arguments)
        if self.adjust is not None:
            tool_name, arguments = self.adjust(tool_name, arguments)
        tool = self.tools.get(tool_name)
        if tool is None:
            return ""
        session = event.get(self.session_field)
        if not isinstance(session, str) or not session:
            return f"{name} event without a {self.session_field}"
        cwd = event.get("cwd")
        paths = tool.paths(arguments, cwd if isinstance(cwd, str) and os.path.isabs(cwd) else None)
        if paths is None:
            return f"{name} event for {tool_name} without the path it acts on"
        if phase == "pre" and tool.check is None:
            return ""  # a read is judged after it happened
        if phase == "post" and self.failed_when is not None and self.failed_when(event):
            phase = "failed"
        return Call(
            session=session,
            phase=phase,
            tool=tool_name,
            arguments=arguments,
            paths=paths,
            read=tool.check is None,
            check=tool.check,
            creates=paths if tool.creates else (),
            leased=tool.leased,
            shown=self.shown_by(event) if self.shown_by is not None and tool.check is None else None,
        )

    def project_of(self, event: Mapping[str, Any]) -> str:
        for variable in self.project_variables:
            value = os.environ.get(variable, "")
            if os.path.isabs(value):
                return value
        cwd = event.get("cwd")
        if isinstance(cwd, str) and os.path.isabs(cwd):
            return cwd
        raise ValueError("the event names no absolute cwd, and no --root was given")


def _claude_shown(event: Mapping[str, Any]) -> tuple[int, str] | None:
    """What Claude Code's ``Read`` of a text file showed (``tool_response.file``: ``startLine``, ``content``)."""
    response = event.get("tool_response")
    file = response.get("file") if isinstance(response, Mapping) and response.get("type") == "text" else None
    if not isinstance(file, Mapping):
        return None
    start, content = file.get("startLine"), file.get("content")
    if isinstance(start, int) and not isinstance(start, bool) and isinstance(content, str):
        return start, content
    return None


CLAUDE_CODE = Harness(
    name="claude-code",
    dialect="claude-code",
    session_field="session_id",
    pre=frozenset({"PreToolUse"}),
    post=frozenset({"PostToolUse"}),
    failed=frozenset({"PostToolUseFailure"}),
    tools={
        "Read": Tool(_one("file_path")),
        "Write": Tool(_one("file_path"), check="Write", creates=True),
        "Edit": Tool(_one("file_path"), check="Edit"),
        "MultiEdit": Tool(_one("file_path"), check="MultiEdit"),
        "NotebookEdit": Tool(_one("notebook_path"), check="NotebookEdit"),
    },
    project_variables=("CLAUDE_PROJECT_DIR",),
    shown_by=_claude_shown,
    settings=".claude/settings.json",
    entries={
        "PreToolUse": "Write|Edit|MultiEdit|NotebookEdit",
        "PostToolUse": "Read|Write|Edit|MultiEdit|NotebookEdit",
        "PostToolUseFailure": "Write|Edit|MultiEdit|NotebookEdit",
    },
)


def _decision(reply: Reply) -> Answer:
    """Gemini CLI's protocol: a JSON decision on stdout (exit 2 would also log a hook failure)."""
    if reply.deny:
        return Answer(0, stdout=json.dumps({"decision": "deny", "reason": reply.reason}))
    return Answer(0, stderr=reply.note)


def _gemini_failed(event: Mapping[str, Any]) -> bool:
    response = event.get("tool_response")
    return isinstance(response, Mapping) and bool(response.get("error"))


class _GeminiHarness(Harness):
    def entry(self, matcher: str, command: str) -> dict[str, Any]:
        return {"matcher": matcher, "hooks": [{"type": "command", "command": command, "timeout": 30_000}]}


GEMINI = _GeminiHarness(
    name="gemini",
    dialect="gemini",
    session_field="session_id",
    pre=frozenset({"BeforeTool"}),
    post=frozenset({"AfterTool"}),
    failed=frozenset(),
    tools={
        "read_file": Tool(_one("file_path")),
        "write_file": Tool(_one("file_path"), check="write_file", creates=True),
        "replace": Tool(_one("file_path"), check="replace"),
    },
    project_variables=("GEMINI_PROJECT_DIR",),
    failed_when=_gemini_failed,
    answer=_decision,
    settings=".gemini/settings.json",
    entries={"BeforeTool": "^(write_file|replace)$", "AfterTool": "^(read_file|write_file|replace)$"},
)


# --- Codex: apply_patch (a tool, or a heredoc in a shell command), and reads only through the shell ---------

_HEREDOC = re.compile(r"\s*apply_patch\s*<<-?\s*(['\"]?)(\w+)\1[ \t]*\n(.*)\n\2\s*", re.DOTALL)
_SHELL_SYNTAX = re.compile(r"[|;&<>`$(){}\n*?\[\]]")
_READERS = frozenset({"cat", "head", "tail", "nl", "sed"})
_VALUED = frozenset({"-n", "-c", "--lines", "--bytes"})  # head's and tail's options that take a value


def _shell_read(command: str) -> tuple[str, ...] | None:
    """The files a plain read command shows (``cat a b``, ``sed -n '1,80p' f``, ``head -n 40 f``), or None
    for anything else: only a single command without shell syntax is understood."""
    if _SHELL_SYNTAX.search(command.replace("'", "").replace('"', "")):
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if not words or words[0] not in _READERS:
        return None
    program, rest = words[0], words[1:]
    if program == "sed":
        if not rest or rest[0] != "-n" or len(rest) < 3 or _SHELL_SYNTAX.search(" ".join(rest[2:])):
            return None
        return tuple(rest[2:])
    paths: list[str] = []
    skip = False
    for word in rest:
        if skip:
            skip = False
        elif word in _VALUED:
            skip = True
        elif not word.startswith("-"):
            paths.append(word)
    return tuple(paths) or None


def _codex_adjust(tool: str, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    command = arguments.get("command")
    if not isinstance(command, str):
        return tool, arguments
    if tool == "apply_patch":
        return "apply_patch", {"input": command}
    if tool == "Bash":
        heredoc = _HEREDOC.fullmatch(command)
        if heredoc is not None:  # Codex sends no PostToolUse after it: checked, but neither leased nor adopted
            return "shell apply_patch", {"input": heredoc.group(3) + "\n"}
        read = _shell_read(command)
        if read is not None:
            return "shell read", {"paths": list(read)}
    return tool, arguments


def _listed(arguments: dict[str, Any], cwd: str | None) -> tuple[str, ...] | None:
    paths = arguments.get("paths")
    if not isinstance(paths, list):
        return None
    return tuple(os.path.join(cwd, path) if cwd is not None else path for path in paths if isinstance(path, str))


def _absolute_patch_paths(arguments: dict[str, Any], cwd: str | None) -> tuple[str, ...] | None:
    found = _patch_paths(arguments, cwd)
    if found is None or cwd is None:
        return found
    return tuple(os.path.join(cwd, path) for path in found)


def _codex_failed(event: Mapping[str, Any]) -> bool:
    response = event.get("tool_response")
    return (
        isinstance(response, str) and response.startswith("Exit code: ") and not response.startswith("Exit code: 0\n")
    )


CODEX = Harness(
    name="codex",
    dialect="codex",
    session_field="session_id",
    pre=frozenset({"PreToolUse"}),
    post=frozenset({"PostToolUse"}),
    failed=frozenset(),
    tools={
        "apply_patch": Tool(_absolute_patch_paths, check="apply_patch", creates=True),
        "shell apply_patch": Tool(_absolute_patch_paths, check="apply_patch", creates=True, leased=False),
        "shell read": Tool(_listed),
    },
    adjust=_codex_adjust,
    failed_when=_codex_failed,
    settings=".codex/hooks.json",
    entries={"PreToolUse": "apply_patch|Bash", "PostToolUse": "apply_patch|Bash"},
)

HARNESSES: dict[str, Harness] = {harness.name: harness for harness in (CLAUDE_CODE, GEMINI, CODEX)}
