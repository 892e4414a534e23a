"""mini-swe-agent: a whole offline run of ``DefaultAgent`` on mini's own deterministic models (the text-based
one, whose replies go through mini's regex action parser, and the tool-calling one, whose ``bash`` calls
go through mini's tool-call parser) with a ``WorkspaceEnvironment``: the malformed call comes back as our
INVALID_ARGS message, an edit before a read is refused by our gate, and after a read the edit lands."""

from __future__ import annotations

import copy
import json
import os
import shlex
import tempfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from fs_tools import Workspace
from tests.support.frameworks import APP, BAD, EDIT, OURS, READ, edited, framework

os.environ.setdefault("MSWEA_SILENT_STARTUP", "1")  # minisweagent prints a banner on import otherwise
os.environ.setdefault("MSWEA_GLOBAL_CONFIG_DIR", tempfile.mkdtemp(prefix="mswea-"))  # and makes this directory
framework("minisweagent")

from minisweagent.agents.default import DefaultAgent  # noqa: E402
from minisweagent.environments.local import LocalEnvironment  # noqa: E402
from minisweagent.models.test_models import (  # noqa: E402
    DeterministicModel,
    DeterministicToolcallModel,
    make_output,
    make_toolcall_output,
)
from minisweagent.models.utils.actions_text import parse_regex_actions  # noqa: E402
from minisweagent.models.utils.actions_toolcall import parse_toolcall_actions  # noqa: E402

from fs_tools.adapters.minisweagent import SPLIT_BYTES, WorkspaceEnvironment  # noqa: E402

SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
TEXT_REGEX = r"```mswea_bash_command\s*\n(.*?)\n```"  # mini_textbased.yaml's action_regex

SYSTEM = "You edit code.\n{{fs_tools}}"
INSTANCE = "{{task}}"


def one_line(tool: str, arguments: dict[str, Any]) -> str:
    return f"fs-tools call {tool} {shlex.quote(json.dumps(arguments))}"  # EDIT's quotes become '"'"'


def heredoc(tool: str, arguments: dict[str, Any]) -> str:
    return f"fs-tools call {tool} - <<'EOF'\n{json.dumps(arguments)}\nEOF"


COMMANDS = [one_line("read", BAD), heredoc("edit", EDIT), one_line("read", READ), one_line("edit", EDIT), SUBMIT]


class TextModel(DeterministicModel):
    """mini's text-based deterministic model, keeping a copy of every request it is queried with."""

    seen: list[list[dict[str, Any]]]

    def query(self, messages: list[dict[str, Any]], **kwargs: Any) -> dict[str, Any]:
        self.seen.append(copy.deepcopy(messages))
        reply: dict[str, Any] = super().query(messages, **kwargs)
        return reply


class ToolcallModel(DeterministicToolcallModel):
    """mini's tool-calling deterministic model, keeping a copy of every request it is queried with."""

    seen: list[list[dict[str, Any]]]

    def query(self, messages: list[dict[str, Any]], **kwargs: Any) -> dict[str, Any]:
        self.seen.append(copy.deepcopy(messages))
        reply: dict[str, Any] = super().query(messages, **kwargs)
        return reply


Recording = TextModel | ToolcallModel


def text_turn(command: str) -> dict[str, Any]:
    """A text-based model's reply, parsed by mini's own regex action parser."""
    content = f"Next.\n```mswea_bash_command\n{command}\n```"
    actions = parse_regex_actions(content, action_regex=TEXT_REGEX, format_error_template="{{error}}")
    return make_output(content, actions, cost=0.0)


def toolcall_turn(n: int, command: str) -> dict[str, Any]:
    """A tool-calling model's reply: one call of mini's ``bash`` tool, parsed by mini's own tool-call parser."""
    function = {"name": "bash", "arguments": json.dumps({"command": command})}
    call = {"id": f"c{n}", "type": "function", "function": function}
    parsed = SimpleNamespace(id=f"c{n}", function=SimpleNamespace(**function))
    actions = parse_toolcall_actions([parsed], format_error_template="{{error}}")
    return make_toolcall_output(None, [call], actions)


def _run(model: Recording, env: WorkspaceEnvironment) -> dict[str, Any]:
    model.seen = []
    agent = DefaultAgent(model, env, system_template=SYSTEM, instance_template=INSTANCE, cost_limit=0, step_limit=10)
    return agent.run("rename hi to hello in app.py")


def _fed(model: Recording, turn: int) -> dict[str, Any]:
    """The observation of turn ``turn`` as the model got it: the last message of the next request."""
    message: dict[str, Any] = model.seen[turn + 1][-1]
    return message


def test_text_based_model_gets_our_messages_without_a_shell(ws: Workspace, root: Path) -> None:
    model = TextModel(outputs=[text_turn(command) for command in COMMANDS])  # type: ignore[no-untyped-call]
    result = _run(model, WorkspaceEnvironment(ws.session("s")))
    published = json.dumps(ws.tool_schemas()[0]["input_schema"], ensure_ascii=False)
    assert result == {"exit_status": "Submitted", "submission": ""}
    system = model.seen[0][0]["content"]
    assert published in system and '"additionalProperties": false' in system  # the schema the model saw, whole
    bad, early, read, edit = (_fed(model, turn) for turn in range(4))
    assert bad["role"] == "user" and f"<returncode>1</returncode>\n<output>\n{OURS}" in bad["content"]
    assert bad["extra"]["fs_tools_error"] == "INVALID_ARGS"
    assert "<output>\nERROR FS_NOT_OBSERVED:" in early["content"] and early["extra"]["returncode"] == 1
    assert "<returncode>0</returncode>" in read["content"] and "return 'hi ' + name" in read["content"]
    assert "<returncode>0</returncode>\n<output>\nEdited 'app.py'" in edit["content"]
    assert edit["extra"]["fs_tools_error"] is None and edited(root)


def test_tool_calling_model_gets_our_messages_as_its_bash_results(ws: Workspace, root: Path) -> None:
    model = ToolcallModel(outputs=[toolcall_turn(n, command) for n, command in enumerate(COMMANDS)])  # type: ignore[no-untyped-call]
    result = _run(model, WorkspaceEnvironment(ws.session("s")))
    assert result["exit_status"] == "Submitted"
    bad, early, _, edit = (_fed(model, turn) for turn in range(4))
    assert bad["role"] == "tool" and bad["tool_call_id"] == "c0" and f"<output>\n{OURS}" in bad["content"]
    assert early["tool_call_id"] == "c1" and "<output>\nERROR FS_NOT_OBSERVED:" in early["content"]
    assert "Edited 'app.py'" in edit["content"] and edited(root)


def test_with_a_shell_other_commands_run_there_and_fs_tools_among_them_is_refused(ws: Workspace, root: Path) -> None:
    commands = [
        "cat app.py",  # the shell's
        f"cd . && {one_line('read', READ)}",  # would run the real CLI in another session: refused
        one_line("read", READ),
        heredoc("edit", EDIT),
        f"{SUBMIT} && echo shipped",  # the shell ends the run, as mini's LocalEnvironment does
    ]
    model = TextModel(outputs=[text_turn(command) for command in commands])  # type: ignore[no-untyped-call]
    env = WorkspaceEnvironment(ws.session("s"), shell=LocalEnvironment(cwd=str(root)))
    result = _run(model, env)
    assert result == {"exit_status": "Submitted", "submission": "shipped\n"}
    cat, mixed, _, edit = (_fed(model, turn) for turn in range(4))
    assert "<returncode>0</returncode>\n<output>\ndef greet(name):" in cat["content"]
    assert "<returncode>2</returncode>\n<output>\nfs-tools: error: run one call alone" in mixed["content"]
    assert "Edited 'app.py'" in edit["content"] and edited(root)
    saved = env.serialize()["info"]["config"]
    assert saved["fs_tools"]["shell"].endswith("LocalEnvironment") and "environment" in saved


def test_without_a_shell_other_commands_are_refused_and_broken_quoting_is_said(ws: Workspace, root: Path) -> None:
    env = WorkspaceEnvironment(ws.session("s"))
    refused = env.execute({"command": "sed -i s/hi/hello/ app.py"})
    unclosed = env.execute({"command": 'fs-tools call read \'{"file_path": '})
    broken_json = env.execute({"command": "fs-tools call read '{\"file_path\": '"})
    two = env.execute({"command": one_line("read", READ) + "\n" + one_line("read", READ)})
    undashed = env.execute({"command": heredoc("edit", EDIT).replace(" - <<", " <<")})  # the CLI would call with {}
    no_heredoc = env.execute({"command": "fs-tools call read -"})
    long = env.execute({"command": 'fs-tools call write "' + "z" * (SPLIT_BYTES + 1) + '"'})  # not split by shlex
    commented = env.execute({"command": "fs-tools call read '{}'#x"})  # '#' inside a word is the word's
    assert refused["returncode"] == 127 and refused["output"].startswith("this environment has no shell")
    assert unclosed["returncode"] == 2 and "No closing quotation" in unclosed["output"]
    assert broken_json["returncode"] == 1 and broken_json["output"].startswith(
        "ERROR INVALID_ARGS: invalid arguments: not valid JSON"
    )
    assert two["returncode"] == 2 and "one command per action" in two["output"]
    assert (
        undashed["returncode"] == 2 and "give `-` as the arguments (fs-tools call edit - <<'EOF')" in undashed["output"]
    )
    assert (
        no_heredoc["returncode"] == 2
        and "`-` reads the arguments from a heredoc, and none follows" in no_heredoc["output"]
    )
    assert long["returncode"] == 2 and f"a command of {SPLIT_BYTES + 23} characters runs only as" in long["output"]
    assert "with the JSON in a heredoc, `fs-tools call TOOL - <<'EOF'`" in long["output"]
    assert commented["returncode"] == 1 and "not valid JSON" in commented["output"]
    assert (root / "app.py").read_text() == APP


def test_a_long_call_in_single_quotes_runs_in_linear_time(root: Path) -> None:
    """The common form is split without a shell lexer, whose cost grows with the square of a word's length
    (a 10 MB write took minutes): here it writes 4 MB at once."""
    content = "y" * (4 << 20)
    with Workspace(root) as workspace:
        env = WorkspaceEnvironment(workspace.session("s"))
        done = env.execute({"command": one_line("write", {"file_path": "big.txt", "content": content})})
    assert done["returncode"] == 0, done["output"][:200]
    assert (root / "big.txt").read_text() == content
