"""Strands Agents: a whole offline run of ``Agent`` on a scripted ``strands.models.Model`` that streams the
events a provider would (a tool use whose input arrives as JSON text): the malformed call comes back as
our INVALID_ARGS message with the error status, an edit before a read is refused by our gate, and after a
read the edit lands. What the model was fed back is read from the next request it got."""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import AsyncGenerator, AsyncIterable
from pathlib import Path
from typing import Any

from tests.support.frameworks import BAD, EDIT, OURS, READ, edited, framework

framework("strands")

from strands import Agent  # noqa: E402
from strands.models import Model  # noqa: E402
from strands.types.streaming import StreamEvent  # noqa: E402

from fs_tools import Workspace  # noqa: E402
from fs_tools.adapters.strands import WorkspaceTool, tools  # noqa: E402


class Scripted(Model):
    """Streams one scripted turn per request: ``(tool name, the input as JSON text)`` or a final text."""

    def __init__(self, turns: list[tuple[str, str] | str]) -> None:
        self.turns = turns
        self.requests: list[dict[str, Any]] = []

    def update_config(self, **model_config: Any) -> None:
        pass

    def get_config(self) -> dict[str, Any]:
        return {}

    def structured_output(self, output_model: Any, prompt: Any, system_prompt: Any = None, **kwargs: Any) -> Any:
        raise NotImplementedError

    async def stream(
        self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kwargs: Any
    ) -> AsyncIterable[StreamEvent]:
        self.requests.append({"messages": copy.deepcopy(messages), "tool_specs": copy.deepcopy(tool_specs)})
        turn = self.turns.pop(0)
        yield {"messageStart": {"role": "assistant"}}
        if isinstance(turn, str):
            yield {"contentBlockDelta": {"delta": {"text": turn}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "end_turn"}}
            return
        name, arguments = turn
        tool_use_id = f"t{len(self.requests)}"
        yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": tool_use_id, "name": name}}}}
        yield {"contentBlockDelta": {"delta": {"toolUse": {"input": arguments}}}}
        yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "tool_use"}}


def _fed(model: Scripted, request: int) -> dict[str, Any]:
    """The tool result the model got back in request ``request``: the last message's toolResult block."""
    last = model.requests[request]["messages"][-1]
    assert last["role"] == "user"
    (block,) = [content["toolResult"] for content in last["content"] if "toolResult" in content]
    result: dict[str, Any] = block
    return result


def _run(model: Scripted, offered: list[Any]) -> Any:
    agent = Agent(model=model, tools=offered, callback_handler=None)

    async def run() -> Any:
        return await agent.invoke_async("rename hi to hello in app.py")

    return asyncio.run(run())


def test_strands_agent_loop_on_a_scripted_model(ws: Workspace, root: Path) -> None:
    model = Scripted(
        [
            ("read", json.dumps(BAD)),
            ("edit", json.dumps(EDIT)),
            ("read", json.dumps(READ)),
            ("edit", json.dumps(EDIT)),
            "done",
        ]
    )
    result = _run(model, tools(ws.session("s")))
    published = {schema["name"]: schema["input_schema"] for schema in ws.tool_schemas()}
    assert str(result).strip() == "done" and result.stop_reason == "end_turn"
    offered = {spec["name"]: spec["inputSchema"]["json"] for spec in model.requests[0]["tool_specs"]}
    assert offered == published and offered["read"]["additionalProperties"] is False  # whole, unchanged
    bad, early, read, edit = (_fed(model, request) for request in range(1, 5))
    assert bad["toolUseId"] == "t1" and bad["status"] == "error" and bad["content"][0]["text"].startswith(OURS)
    assert early["status"] == "error" and early["content"][0]["text"].startswith("ERROR FS_NOT_OBSERVED:")
    assert read["status"] == "success" and "return 'hi ' + name" in read["content"][0]["text"]
    assert edit["status"] == "success" and edit["content"][0]["text"].startswith("Edited 'app.py'")
    assert edited(root)


def test_input_that_is_not_json_gets_our_message(ws: Workspace, root: Path) -> None:
    """Strands parses the streamed input before any tool runs (1.62 replaces broken JSON with {}, logged):
    whatever reaches the tool, the model's answer is ours, flagged as an error."""
    model = Scripted([("read", '{"file_path": '), "done"])
    _run(model, tools(ws.session("s")))
    fed = _fed(model, 1)
    assert fed["status"] == "error" and fed["content"][0]["text"].startswith("ERROR INVALID_ARGS: invalid arguments: ")


def test_direct_tool_calls_get_the_same_results(ws: Workspace, root: Path) -> None:
    agent = Agent(model=Scripted([]), tools=tools(ws.session("s")), callback_handler=None)
    bad = agent.tool.read(**BAD, record_direct_tool_call=False)
    early = agent.tool.edit(**EDIT, record_direct_tool_call=False)
    agent.tool.read(**READ, record_direct_tool_call=False)
    edit = agent.tool.edit(**EDIT, record_direct_tool_call=False)
    assert bad["status"] == "error" and bad["content"][0]["text"].startswith(OURS)
    assert early["content"][0]["text"].startswith("ERROR FS_NOT_OBSERVED:")
    assert edit["status"] == "success" and edited(root)


def test_an_image_read_is_shown_as_an_image_block(root: Path) -> None:
    png = (
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"
        b"\x00\x00\x00\rIDATx\x9cc\xf8\xcf\xc0\xf0\x1f\x00\x05\x00\x01\xff\x89\x99=\x1d\x00\x00\x00\x00IEND\xaeB`\x82"
    )
    (root / "dot.png").write_bytes(png)
    with Workspace(root, tools=["read"]) as ws:
        shown = asyncio.run(_one(tools(ws.session("s"))[0], {"file_path": "dot.png"}))
        hidden = asyncio.run(_one(tools(ws.session("t"), images=False)[0], {"file_path": "dot.png"}))
    assert shown["status"] == "success" and shown["content"][1]["image"]["format"] == "png"
    assert "not shown" not in shown["content"][0]["text"]
    assert len(hidden["content"]) == 1 and "the image is not shown" in hidden["content"][0]["text"]


async def _one(tool: WorkspaceTool, arguments: dict[str, Any]) -> dict[str, Any]:
    events: AsyncGenerator[Any, None] = tool.stream({"toolUseId": "x", "name": tool.tool_name, "input": arguments}, {})
    last: Any = None
    async for event in events:
        last = event
    result: dict[str, Any] = last.tool_result
    return result
