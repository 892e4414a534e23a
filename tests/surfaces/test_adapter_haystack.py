"""The Haystack adapter through a whole offline Agent loop on Haystack's own ``MockChatGenerator``: the
model's malformed call comes back as our INVALID_ARGS message (flagged ``error``), an edit before a read is
refused by our gate, and after a read the edit lands on disk. Sync (``Agent.run``) and async
(``Agent.run_async``) loops both run."""

from __future__ import annotations

import asyncio
import os
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

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")  # read when haystack is first imported
framework("haystack")

from haystack.components.agents import Agent  # noqa: E402
from haystack.components.generators.chat import MockChatGenerator  # noqa: E402
from haystack.dataclasses import ChatMessage, ChatRole, ToolCall  # noqa: E402

from fs_tools import Workspace  # noqa: E402
from fs_tools.adapters.haystack import ToolFailed, tools  # noqa: E402


class Scripted:
    """The model's turns, in order; records every request (messages and tools) the Agent sent."""

    def __init__(self) -> None:
        self.turns: list[Any] = [("read", BAD), ("edit", EDIT), ("read", READ), ("edit", EDIT), "done"]
        self.requests: list[tuple[list[ChatMessage], list[Any]]] = []

    def __call__(self, messages: list[ChatMessage], tools: Any) -> str | ChatMessage:
        self.requests.append((list(messages), list(tools or [])))
        step = self.turns.pop(0)
        if isinstance(step, str):
            return step
        call = ToolCall(tool_name=step[0], arguments=step[1], id=f"c{len(self.requests)}")
        return ChatMessage.from_assistant(tool_calls=[call])


def _fed_back(request: tuple[list[ChatMessage], list[Any]]) -> Any:
    """The tool result in a request: the last message the model is given."""
    last = request[0][-1]
    assert last.is_from(ChatRole.TOOL)
    return last.tool_call_result


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_haystack_agent_loop_on_the_mock_generator(ws: Workspace, root: Path, mode: str) -> None:
    script = Scripted()
    agent = Agent(chat_generator=MockChatGenerator(response_fn=script), tools=tools(ws.session("s")))
    go = [ChatMessage.from_user("go")]
    result = agent.run(messages=go) if mode == "sync" else asyncio.run(agent.run_async(messages=go))

    assert not script.turns and len(script.requests) == 5
    # what the model was given back, request by request
    fed = [_fed_back(request) for request in script.requests[1:]]
    assert fed[0].error and fed[0].result.startswith(OURS)
    assert fed[1].error and fed[1].result.startswith("ERROR FS_NOT_OBSERVED:")
    assert not fed[2].error and "def greet" in fed[2].result
    assert not fed[3].error and fed[3].result.startswith("Edited 'app.py'")
    assert result["last_message"].text == "done" and result["exit_reason"] == "text" and edited(root)
    # the schema the generator was handed is the published one, whole
    offered = {tool.name: tool.tool_spec["parameters"] for tool in script.requests[0][1]}
    assert offered["read"] == ws.tool_schemas()[0]["input_schema"] and offered["read"]["additionalProperties"] is False


def test_failure_is_a_tool_invocation_error_with_our_text(ws: Workspace) -> None:
    read = tools(ws.session("t"))[0]
    with pytest.raises(ToolFailed) as failed:
        read.invoke(**BAD)
    assert str(failed.value).startswith(OURS) and failed.value.result.error is not None
    for invoked in (lambda: read.invoke(**PARAMETER_NAMES), lambda: asyncio.run(read.invoke_async(**PARAMETER_NAMES))):
        with pytest.raises(ToolFailed) as named:  # a key named like a Python parameter is the model's, refused by us
            invoked()
        assert str(named.value).startswith(PARAMETER_NAMES_REFUSED)
    strict = tools(ws.session("t"), strict=True)[0].tool_spec["parameters"]
    assert set(strict["required"]) == set(strict["properties"]) and strict["additionalProperties"] is False
