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


def unjudged(why: str) -> Reply:
    """No opinion, with the one line that says why (on one line, at most 300 characters of it)."""
    return Reply(note=f"fs-tools hook: {' '.join(why.split())[:300]} (no opinion: the harness goes on)")


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
    from fs_tools.patches import parse_patch

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
    adjust: Callable[[str, dict[str, Any], str | None], tuple[str, dict[str, Any]]] | None = None
    failed_when: Callable[[Mapping[str, Any]], bool] | None = None  # a post event of a call that failed
    shown_by: Callable[[Mapping[str, Any]], tuple[int, str] | None] | None = None  # what a read showed
    answer: Callable[[Reply], Answer] = _exit_two
    settings: str | None = None  # the settings file, relative to the project (or the user's home)
    entries: Mapping[str, str] = field(default_factory=dict)  # event -> the matcher of fs-tools' entry
    timeout: int = 30  # of fs-tools' entry, in the unit the harness reads (Gemini CLI: milliseconds)
    # The harness's own directory (an environment variable naming it, else its place in the home): its
    # files (Claude Code's plans, settings) are not the project's, and the user's settings file is there.
    home: tuple[str, str] = ("", "")
    # Check errors that are no verdict here: the harness has judged them itself already (Claude Code matches
    # an Edit's old_string before its hook runs, forgiving what fs-tools does not, such as curly quotes)
    not_verdicts: frozenset[str] = frozenset()
    hint: str = ""  # added to a "read it first" or "it changed" denial: what counts as a read here

    def own_directory(self) -> str | None:
        variable, default = self.home
        if not default:
            return None
        value = os.environ.get(variable, "") if variable else ""
        return value if os.path.isabs(value) else os.path.join(os.path.expanduser("~"), default)

    def owns(self, path: str) -> bool:
        own = self.own_directory()
        if own is None or not os.path.isabs(path):
            return False
        real = os.path.realpath(path)
        return any(
            candidate == base or candidate.startswith(base.rstrip(os.sep) + os.sep)
            for base in {own, os.path.realpath(own)}
            for candidate in (os.path.normpath(path), real)
        )

    def entry(self, matcher: str, command: str) -> dict[str, Any]:
        """One matcher group of fs-tools' hook in the settings file."""
        return {"matcher": matcher, "hooks": [{"type": "command", "command": command, "timeout": self.timeout}]}

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
        cwd = event.get("cwd")
        cwd = cwd if isinstance(cwd, str) and os.path.isabs(cwd) else None
        if self.adjust is not None:
            tool_name, arguments = self.adjust(tool_name, arguments, cwd)
        tool = self.tools.get(tool_name)
        if tool is None:
            return ""
        session = event.get(self.session_field)
        if not isinstance(session, str) or not session:
            return f"{name} event without a {self.session_field}"
        paths = tool.paths(arguments, cwd)
        if paths is None:
            return f"{name} event for {tool_name} without the path it acts on"
        if paths and all(self.owns(path) for path in paths):
            return ""  # the harness's own files (Claude Code's plans, its settings): not the project's
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
        "PostToolUseFailure": "Read|Write|Edit|MultiEdit|NotebookEdit",
    },
    home=("CLAUDE_CONFIG_DIR", ".claude"),
    not_verdicts=frozenset({"FS_EDIT_NOT_FOUND", "FS_AMBIGUOUS_EDIT"}),
)


def _decision(reply: Reply) -> Answer:
    """Gemini CLI's protocol: a JSON decision on stdout (exit 2 would also log a hook failure)."""
    if reply.deny:
        return Answer(0, stdout=json.dumps({"decision": "deny", "reason": reply.reason}))
    return Answer(0, stderr=reply.note)


def _gemini_failed(event: Mapping[str, Any]) -> bool:
    response = event.get("tool_response")
    return isinstance(response, Mapping) and bool(response.get("error"))


def _gemini_shown(event: Mapping[str, Any]) -> tuple[int, str] | None:
    """What Gemini CLI's ``read_file`` showed, when it showed the whole file as it is (``llmContent``; a
    window or a cut read starts with a notice instead, and is not compared)."""
    arguments, response = event.get("tool_input"), event.get("tool_response")
    if not isinstance(arguments, Mapping) or not isinstance(response, Mapping) or response.get("error"):
        return None
    if any(arguments.get(name) is not None for name in ("start_line", "end_line", "offset", "limit")):
        return None
    content = response.get("llmContent")
    if not isinstance(content, str) or content.startswith("IMPORTANT:"):
        return None
    return 1, content


GEMINI = Harness(
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
    shown_by=_gemini_shown,
    answer=_decision,
    home=("", ".gemini"),
    timeout=30_000,
    settings=".gemini/settings.json",
    entries={"BeforeTool": "^(write_file|replace)$", "AfterTool": "^(read_file|write_file|replace)$"},
)


# --- Codex: apply_patch (a tool, or a heredoc in a shell command), and reads only through the shell ---------

_HEREDOC = re.compile(r"(?:apply_patch|applypatch)[ \t]*<<-?[ \t]*(['\"]?)(\w+)\1[ \t]*\n(.*?)\n\2[ \t]*$", re.S | re.M)
_CD = re.compile(r"\s*cd[ \t]+('[^']*'|\"[^\"]*\"|[^\s;&|<>]+)[ \t]*&&\s*")
_PATCH_HEADER = re.compile(r"^(\*\*\* (?:Add File|Delete File|Update File|Move to): )(.+)$", re.M)
_SHELL_SYNTAX = re.compile(r"[;&<>`$(){}\n*?\[\]]|\|\|")
_SED_PRINT = re.compile(r"\d+(?:,\d+)?p")
_VALUED = {"head": {"-n", "-c", "--lines", "--bytes"}, "tail": {"-n", "-c", "--lines", "--bytes"}}
_FILTERS = frozenset({"head", "tail", "nl", "cat", "sed"})  # what may follow a read in a pipe, without files


def _files_of(words: list[str]) -> list[str] | None:
    """The files one reading command shows (``cat -n a b``, ``sed -n '1,80p' f``, ``head -n 40 f``,
    ``nl -ba f``): [] for a filter without files, None for any other command."""
    if not words or words[0] not in _FILTERS:
        return None
    program, rest = words[0], words[1:]
    if program == "sed":  # only "sed -n 'A,Bp' [files]": any other option may write (-i) or run commands
        if len(rest) < 2 or rest[0] != "-n" or not _SED_PRINT.fullmatch(rest[1]):
            return None
        files = rest[2:]
        return None if any(word.startswith("-") for word in files) else files
    files, skip = [], False
    for word in rest:
        if skip:
            skip = False
        elif word in _VALUED.get(program, ()):
            skip = True
        elif not word.startswith("-"):
            files.append(word)
    return files


def _shell_read(command: str) -> tuple[str, ...] | None:
    """The files a plain read shows: one reading command, or a pipe of them (``nl -ba f | sed -n '1,80p'``)
    where only the first names files; None for anything else (redirections, substitutions, ``;``, ``&&``)."""
    if _SHELL_SYNTAX.search(command.replace("'", "").replace('"', "")):
        return None
    try:
        words = shlex.split(command, posix=True)
    except ValueError:
        return None
    stages: list[list[str]] = [[]]
    for word in words:
        if word == "|":
            stages.append([])
        else:
            stages[-1].append(word)
    found = [_files_of(stage) for stage in stages]
    if any(files is None for files in found) or any(found[1:]) or not found[0]:
        return None
    return tuple(found[0] or ())


def _absolute_headers(patch: str, cwd: str | None) -> str:
    """The patch with every file header's path made absolute against ``cwd``, as Codex resolves it (the
    check then judges the files Codex will change, whatever the workspace's roots)."""
    if cwd is None:
        return patch

    def absolute(match: re.Match[str]) -> str:
        return match.group(1) + os.path.join(cwd, match.group(2).strip())

    return _PATCH_HEADER.sub(absolute, patch)


def _codex_adjust(tool: str, arguments: dict[str, Any], cwd: str | None) -> tuple[str, dict[str, Any]]:
    command = arguments.get("command")
    if not isinstance(command, str):
        return tool, arguments
    if tool == "apply_patch":
        return "apply_patch", {"input": _absolute_headers(command, cwd)}
    if tool != "Bash":
        return tool, arguments
    where = cwd
    moved = _CD.match(command)  # "cd sub && ...": the rest runs there
    if moved is not None:
        directory = moved.group(1).strip("'\"")
        where = os.path.join(cwd, directory) if cwd is not None else None
        command = command[moved.end() :]
    heredoc = _HEREDOC.match(command.lstrip())
    if heredoc is not None:  # Codex sends no PostToolUse after it: checked, but neither leased nor adopted
        return "shell apply_patch", {"input": _absolute_headers(heredoc.group(3) + "\n", where)}
    read = _shell_read(command)
    if read is not None:
        return "shell read", {"paths": [os.path.join(where, path) if where else path for path in read]}
    return tool, arguments


_COMPARED_OUTPUT = 8 << 10  # Codex cuts long outputs for the model: only shorter ones are compared


def _codex_shown(event: Mapping[str, Any]) -> tuple[int, str] | None:
    """What a plain shell read of one file showed (``cat F``, ``head [-n N] F``, ``sed -n 'A,Bp' F``): its
    first line and the output, which PostToolUse carries; None for any other command, or a long output."""
    arguments, output = event.get("tool_input"), event.get("tool_response")
    command = arguments.get("command") if isinstance(arguments, Mapping) else None
    if not isinstance(command, str) or not isinstance(output, str) or len(output) > _COMPARED_OUTPUT:
        return None
    moved = _CD.match(command)
    try:
        words = shlex.split(command[moved.end() :] if moved is not None else command)
    except ValueError:
        return None
    if len(words) == 2 and words[0] in ("cat", "head"):
        return 1, output
    if len(words) == 4 and words[:2] == ["head", "-n"]:
        return 1, output
    if len(words) == 4 and words[:2] == ["sed", "-n"] and _SED_PRINT.fullmatch(words[2]):
        return int(words[2].split(",")[0].removesuffix("p")), output
    return None


def _listed(arguments: dict[str, Any], cwd: str | None) -> tuple[str, ...] | None:
    paths = arguments.get("paths")
    if not isinstance(paths, list):
        return None
    return tuple(os.path.join(cwd, path) if cwd is not None else path for path in paths if isinstance(path, str))


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
        "apply_patch": Tool(_patch_paths, check="apply_patch", creates=True),
        "shell apply_patch": Tool(_patch_paths, check="apply_patch", creates=True, leased=False),
        "shell read": Tool(_listed),
    },
    adjust=_codex_adjust,
    failed_when=_codex_failed,
    shown_by=_codex_shown,
    home=("CODEX_HOME", ".codex"),
    hint=" (a read is a plain `cat FILE`, `sed -n 'A,Bp' FILE`, `head`/`tail`/`nl FILE`, or a pipe of them)",
    settings=".codex/hooks.json",
    entries={"PreToolUse": "apply_patch|Bash", "PostToolUse": "apply_patch|Bash"},
)

HARNESSES: dict[str, Harness] = {harness.name: harness for harness in (CLAUDE_CODE, GEMINI, CODEX)}
