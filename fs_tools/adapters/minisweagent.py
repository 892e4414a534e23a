"""mini-swe-agent (``mini-swe-agent`` 2.x): the workspace's tools as a command of an ``Environment``, since
a mini agent has one action only, a shell command.

    env = WorkspaceEnvironment(session, shell=LocalEnvironment(cwd=str(root)))  # shell=None: no shell at all
    agent = DefaultAgent(LitellmModel(model_name=...), env, system_template=..., instance_template=...)
    agent.run("rename greet to welcome in src/app.py")  # put {{fs_tools}} in one of the templates

The model runs a tool as it would run the ``fs-tools call`` command: ``fs-tools call read '{"file_path":
"app.py"}'``, or with the JSON in a heredoc, which the CLI reads after ``-`` (``fs-tools call edit - <<'EOF'``
... ``EOF``). Such a command is answered by ``session.call`` in this process (the host's session, its
observations and history); every other command goes to ``shell`` (any mini environment), or, without one,
is refused — then the tools are the only way to touch the files, and their gates hold. A command that plainly
runs ``fs-tools`` among other commands (``cd x && fs-tools call ...``, a pipe, a second line) is refused too:
the shell would run the real CLI, in another session (with a shell, a command that hides it — ``bash -c``,
``X=1 fs-tools`` — reaches the shell, as any command may: the gates hold only without one). The
``fs_tools`` template variable tells the model the command and each tool's schema.

Validation: none by mini-swe-agent. Its tool-calling models check only their own ``bash`` call (the name,
a ``command`` string). The command is split like a shell command (quotes, backslashes), never expanded:
``$VAR``, globs and ``$(...)`` stay as written; the argument after the tool's name (or the heredoc's body)
is handed to ``session.call`` as that JSON text, unparsed here, so broken JSON, a wrong type or an invented
key is our INVALID_ARGS message.

Schema: mini-swe-agent offers the model one tool, ``bash``; our schemas reach it as text, through the
``fs_tools`` template variable: each tool's name, description and published ``input_schema``, whole.

Errors: a mini observation has a return code and no other flag; a failure is exit status 1 (the CLI's) and
the output ``ERROR <code>: <message>``, and the observation's ``extra`` carries ``fs_tools_error`` (the code,
or ``None``) for the host. A command this environment cannot run is status 2 (``fs-tools: error: ...``);
with no shell, any other command is status 127. With no shell, ``echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT``
still ends the run, as mini's environments end it.
"""

from __future__ import annotations

import json
import platform
import re
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from minisweagent.exceptions import Submitted
from pydantic import BaseModel

from fs_tools.adapters import render
from fs_tools.workspace import Session

if TYPE_CHECKING:
    from minisweagent import Environment

COMMAND = "fs-tools call"
SUBMIT = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"  # what mini's environments look for to end a run
TOOL_ERROR, BAD_USAGE, NO_SUCH_COMMAND = 1, 2, 127  # the CLI's statuses, and a shell's "command not found"

# fs-tools where a shell would run it as a command: at the start, after an operator or a line break, in $(...)
_MENTIONED = re.compile(r"(?:^|[;&|(`\n])\s*+(?:[^\s/;&|(`\n]*+/)*+fs-tools(?=\s|$)")  # possessive: linear
# The common form, split without a shell lexer (whose cost grows with the square of a word's length): the tool's
# name, then the JSON in single quotes (which it cannot contain), and nothing else.
_QUOTED = re.compile(r"fs-tools\s+call\s+(?P<tool>[A-Za-z0-9_.-]+)\s+'(?P<json>[^']*)'")
SPLIT_BYTES = 64 << 10  # a longer command in any other form is refused: the heredoc form has no such cost
_HEREDOC = re.compile(
    r"fs-tools\s+call\s+(?P<tool>[^\s<>|&;()'\"]+)\s+(?P<stdin>-\s*)?<<(?P<dash>-?)\s*(?P<q>['\"]?)(?P<end>\w+)(?P=q)\s*"
)


class WorkspaceEnvironmentConfig(BaseModel):
    """What mini-swe-agent records of the environment (``serialize``)."""

    session: str
    tools: list[str]
    shell: str | None


@dataclass
class _Call:
    tool: str
    arguments: Any  # the JSON text as the model wrote it, or {} when it gave none


class WorkspaceEnvironment:
    """A mini-swe-agent ``Environment``: ``fs-tools call`` commands go to ``session``, the rest to ``shell``."""

    def __init__(self, session: Session, *, shell: Environment | None = None) -> None:
        self.session = session
        self.shell = shell
        self.schemas = session.workspace.tool_schemas()
        self.config = WorkspaceEnvironmentConfig(
            session=session.key,
            tools=[schema["name"] for schema in self.schemas],
            shell=None if shell is None else f"{type(shell).__module__}.{type(shell).__name__}",
        )

    def execute(self, action: dict[str, Any], cwd: str = "", **kwargs: Any) -> dict[str, Any]:
        command = str(action.get("command", ""))
        call = _parse(command)
        if isinstance(call, _Call):
            result = self.session.call(call.tool, call.arguments)
            code = result.error.code if result.error is not None else None
            return _output(render(result), TOOL_ERROR if result.is_error else 0, fs_tools_error=code)
        if call is not None:
            return _output(f"fs-tools: error: {call}", BAD_USAGE, fs_tools_error=None)
        if self.shell is not None:
            answer: dict[str, Any] = self.shell.execute(action, cwd, **kwargs)
            return answer
        if command.strip() == f"echo {SUBMIT}":
            raise Submitted({"role": "exit", "content": "", "extra": {"exit_status": "Submitted", "submission": ""}})
        first = command.strip().splitlines()[0][:200] if command.strip() else ""  # the model wrote it: a reminder
        return _output(
            f"this environment has no shell: it runs `{COMMAND} TOOL 'JSON'` commands only "
            f"(and `echo {SUBMIT}` to finish), not {first!r}",
            NO_SUCH_COMMAND,
            fs_tools_error=None,
        )

    def get_template_vars(self, **kwargs: Any) -> dict[str, Any]:
        shells = self.shell.get_template_vars() if self.shell is not None else platform.uname()._asdict()
        return {**shells, "fs_tools": self.prompt(), **kwargs}

    def prompt(self) -> str:
        """How to run the tools, and each tool's name, description and published schema, for the model."""
        lines = [
            "File tools: run one as a command of its own (not combined with other commands, one per command):",
            f"    {COMMAND} TOOL '{{...the arguments as one JSON object...}}'",
            "or, when the JSON holds single quotes or is long, with the JSON in a heredoc:",
            f"    {COMMAND} TOOL - <<'EOF'",
            "    {...the arguments as one JSON object...}",
            "    EOF",
            "The JSON is taken as written: no $VAR, glob or $(...) in it is expanded.",
            "A call that fails exits with status 1 and says why: ERROR <CODE>: <message>.",
            "",
            "The tools:",
        ]
        for schema in self.schemas:
            lines.append(f"## {schema['name']}\n{schema['description']}")
            lines.append(f"Arguments (JSON schema): {json.dumps(schema['input_schema'], ensure_ascii=False)}\n")
        return "\n".join(lines)

    def serialize(self) -> dict[str, Any]:
        inner = self.shell.serialize() if self.shell is not None else {}
        return {
            **inner,
            "info": {
                **inner.get("info", {}),
                "config": {
                    **inner.get("info", {}).get("config", {}),
                    "fs_tools": self.config.model_dump(mode="json"),
                    "environment_type": f"{type(self).__module__}.{type(self).__name__}",
                },
            },
        }


def _output(text: str, status: int, **extra: Any) -> dict[str, Any]:
    return {"output": text, "returncode": status, "exception_info": "", "extra": extra}


def _parse(command: str) -> _Call | str | None:
    """The ``fs-tools call`` in ``command``; a string saying why it cannot be run; or None: not ours."""
    text = command.strip()
    if not _MENTIONED.search(text):
        return None
    first, _, rest = text.partition("\n")
    heredoc = _HEREDOC.fullmatch(first.strip())
    if heredoc:
        return _heredoc(heredoc, rest)
    quoted = _QUOTED.fullmatch(text)
    if quoted:
        return _Call(quoted["tool"], quoted["json"])
    usage = f"run one call alone, as `{COMMAND} TOOL 'JSON'` (or `{COMMAND} TOOL - <<'EOF'` with the JSON in a heredoc)"
    if rest:
        return f"one command per action: {usage}; this one has {len(text.splitlines())} lines"
    if len(text) > SPLIT_BYTES:
        return (
            f"a command of {len(text)} characters runs only as `{COMMAND} TOOL 'JSON'` (no single quote in the "
            f"JSON) or with the JSON in a heredoc, `{COMMAND} TOOL - <<'EOF'`"
        )
    try:
        lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        lexer.commenters = ""  # a '#' inside a word is the word's, as a shell keeps it
        words = list(lexer)
    except ValueError as exc:  # an unclosed quote
        return f"the command cannot be split like a shell command ({exc}): {usage}"
    if words[:2] != ["fs-tools", "call"]:
        return f"{usage}, not combined with other commands or options"
    if len(words) == 4 and words[3] == "-":
        heredoc_form = f"`{COMMAND} {words[2]} - <<'EOF'`, the JSON, `EOF`"
        return f"`-` reads the arguments from a heredoc, and none follows: {heredoc_form}"
    if len(words) < 3 or len(words) > 4 or words[2].startswith("-"):
        return f"{usage}: the tool's name, then its arguments as one quoted word (options are the host's)"
    return _Call(words[2], words[3] if len(words) == 4 else {})


def _heredoc(match: re.Match[str], body: str) -> _Call | str:
    if not match["stdin"]:  # the CLI would not read it, and call the tool with {}
        tool = match["tool"]
        return (
            f"`{COMMAND} {tool} <<` does not read the heredoc: give `-` as the arguments ({COMMAND} {tool} - <<'EOF')"
        )
    lines = body.split("\n")
    if match["dash"]:
        lines = [line.lstrip("\t") for line in lines]
    end = match["end"]
    if end in lines:  # as a shell does, a heredoc left open runs to the end of the command
        at = lines.index(end)
        if any(line.strip() for line in lines[at + 1 :]):
            return f"one command per action: nothing may follow the heredoc's closing {end}"
        lines = lines[:at]
    return _Call(match["tool"], "\n".join(lines))
