"""The DSPy adapter through whole offline agent loops on DSPy's own test model: ``dspy.ReAct`` on
``dspy.utils.DummyLM`` (sync and async), and the experimental ``dspy.ReActV2`` with native function calling
on a scripted engine (``dspy.LM(engine=...)``, DSPy's interface for a custom model). The model's malformed
call comes back as our INVALID_ARGS message (not DSPy's validation error), an edit before a read is
refused by our gate, and after a read the edit lands on disk."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.support.frameworks import (
    BAD,
    EDIT,
    OURS,
    PARAMETER_NAMES,
    PARAMETER_NAMES_REFUSED,
    READ,
    edited,
    framework,
)

dspy = framework("dspy")

from dspy.lm15 import Message, Response, TextPart, ToolCallPart, Usage  # noqa: E402
from dspy.utils import DummyLM  # noqa: E402

from fs_tools import Workspace  # noqa: E402
from fs_tools.adapters.dspy import tools  # noqa: E402

CALLS = [("read", BAD), ("edit", EDIT), ("read", READ), ("edit", EDIT)]


# --- dspy.ReAct on DummyLM (text: ChatAdapter fields) ----------------------------------------------


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_react_loop_on_the_dummy_lm(ws: Workspace, root: Path, mode: str) -> None:
    steps: list[dict[str, Any]] = [
        {"next_thought": "act", "next_tool_name": name, "next_tool_args": args} for name, args in CALLS
    ]
    steps.append({"next_thought": "finished", "next_tool_name": "finish", "next_tool_args": {}})
    steps.append({"reasoning": "edited", "answer": "done"})  # ReAct's extract step
    lm = DummyLM(steps)
    react = dspy.ReAct("task -> answer", tools=tools(ws.session("s")), max_iters=8)
    with dspy.context(lm=lm, adapter=dspy.ChatAdapter()):
        prediction = react(task="edit app.py") if mode == "sync" else asyncio.run(react.acall(task="edit app.py"))

    observations = [prediction.trajectory[f"observation_{i}"] for i in range(4)]
    assert observations[0].startswith(OURS) and observations[0].is_error
    assert observations[1].startswith("ERROR FS_NOT_OBSERVED:") and observations[1].is_error
    assert not observations[2].is_error and "def greet" in observations[2]
    assert observations[3].startswith("Edited 'app.py'") and not observations[3].is_error
    assert prediction.answer == "done" and edited(root)
    # what the model was fed back: the trajectory in the next request carries our text as observation_0
    fed = lm.history[1]["messages"][-1]["content"]
    assert f"[[ ## observation_0 ## ]]\n{OURS}" in fed
    # the tool as the prompt shows it: the published schema, whole, as JSON
    system = lm.history[0]["messages"][0]["content"]
    assert '"additionalProperties": false' in system and '"required": ["file_path"]' in system


# --- dspy.ReActV2, native function calling, on a scripted engine ---------------------------------


class ScriptedEngine:
    """A custom DSPy engine (``complete(Request) -> Response``) that makes native tool calls in order."""

    supports_function_calling = True

    def __init__(self, turns: list[tuple[str, dict[str, Any]]]) -> None:
        self.turns = list(turns)
        self.requests: list[Any] = []

    def complete(self, request: Any) -> Response:
        self.requests.append(request)
        name, args = self.turns.pop(0)
        call = ToolCallPart(id=f"c{len(self.requests)}", name=name, input=args)
        return Response(
            id=None,
            model="scripted",
            message=Message.assistant([TextPart("[[ ## next_thought ## ]]\nact"), call]),
            finish_reason="tool_call",
            usage=Usage(input_tokens=0, output_tokens=0, total_tokens=0),
        )


def test_react_v2_native_function_calling_on_a_scripted_engine(ws: Workspace, root: Path) -> None:
    engine = ScriptedEngine([*CALLS, ("submit", {"answer": "done"})])
    lm = dspy.LM("scripted/model", engine=engine, cache=False)
    react = dspy.ReActV2("task -> answer", tools=tools(ws.session("s")), max_iters=8)
    with dspy.context(lm=lm, adapter=dspy.ChatAdapter(use_native_function_calling=True)):
        prediction = react(task="edit app.py")

    assert prediction.answer == "done" and prediction.termination_reason == "submit" and edited(root)
    # what the model was fed back: the tool result message of the next request
    fed = [part for message in engine.requests[1].messages for part in message.parts if part.type == "tool_result"]
    assert fed[-1].content[0].text.startswith(OURS)
    # the schema the model was offered: the published one, whole
    offered = {tool.name: tool.parameters for tool in engine.requests[0].tools}
    assert offered["read"] == ws.tool_schemas()[0]["input_schema"]
    assert offered["read"]["additionalProperties"] is False


def test_a_copied_program_keeps_its_session_bound_tools(ws: Workspace) -> None:
    react = dspy.ReAct("task -> answer", tools=tools(ws.session("s")))
    copied = react.deepcopy()  # what optimizers do to a student program; a Session cannot be deep-copied
    assert copied.tools["read"] is react.tools["read"] and copied.tools["read"].session is react.tools["read"].session


def test_keys_named_like_python_parameters_reach_our_validator(ws: Workspace) -> None:
    seen: list[Any] = []

    class Recorder(dspy.utils.callback.BaseCallback):  # type: ignore[misc]
        def on_tool_start(self, call_id: str, instance: Any, inputs: dict[str, Any]) -> None:
            seen.append(inputs)

    read = tools(ws.session("s"))[0]
    with dspy.context(callbacks=[Recorder()]):
        answers = [read(**PARAMETER_NAMES), asyncio.run(read.acall(**PARAMETER_NAMES))]
    assert all(answer.is_error and answer.startswith(PARAMETER_NAMES_REFUSED) for answer in answers), answers
    assert seen == [{"arguments": PARAMETER_NAMES}] * 2  # DSPy's callbacks see each call, as the model wrote it
