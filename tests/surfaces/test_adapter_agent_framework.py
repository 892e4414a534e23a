"""The Agent Framework adapter driven through a whole offline ``Agent`` loop on a scripted chat client (a
``BaseChatClient`` with the framework's function-invocation and chat-middleware layers, as its own
clients are built): the model's malformed call comes back as our INVALID_ARGS message, an edit before a
read is refused by our gate, after a read the edit lands on disk, and what the model is fed back on the
next request is our text, flagged as an error by ``ErrorFlags``."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tests.support.frameworks import BAD, EDIT, OURS, READ, edited, framework

framework("agent_framework")

from agent_framework import (  # noqa: E402
    Agent,
    AgentResponse,
    BaseChatClient,
    ChatMiddlewareLayer,
    ChatResponse,
    Content,
    FunctionInvocationLayer,
    Message,
)

from fs_tools import Workspace  # noqa: E402


def _run(agent: Agent[Any]) -> AgentResponse[Any]:
    async def run() -> AgentResponse[Any]:
        return await agent.run("go")

    return asyncio.run(run())


class ScriptedChatClient(FunctionInvocationLayer[Any], ChatMiddlewareLayer[Any], BaseChatClient[Any]):
    """A chat client that answers each request with the next scripted turn: ``(tool, arguments)`` is a
    function call (arguments as the JSON text a provider sends, or a string sent as it is), a ``str``
    the final answer. It records, per request, the tools offered and the function results it was fed."""

    def __init__(self, turns: list[tuple[str, Any] | str]) -> None:
        super().__init__()
        self.turns = turns
        self.offered: list[list[Any]] = []
        self.fed: list[list[tuple[str, str | None, str | None]]] = []

    def _inner_get_response(
        self, *, messages: Sequence[Message], stream: bool, options: Mapping[str, Any], **kwargs: Any
    ) -> Any:
        assert not stream
        self.offered.append(list(options.get("tools") or []))
        self.fed.append(
            [
                (c.call_id or "", c.result, c.exception)
                for m in messages
                for c in m.contents
                if c.type == "function_result"
            ]
        )
        turn = self.turns.pop(0)

        async def respond() -> ChatResponse:
            if isinstance(turn, str):
                return ChatResponse(messages=[Message(role="assistant", contents=[turn])])
            name, arguments = turn
            sent = arguments if isinstance(arguments, str) else json.dumps(arguments)
            call = Content.from_function_call(call_id=f"c{len(self.fed)}", name=name, arguments=sent)
            return ChatResponse(messages=[Message(role="assistant", contents=[call])])

        return respond()


def test_agent_loop_on_a_scripted_client_feeds_the_model_our_messages(ws: Workspace, root: Path) -> None:
    from fs_tools.adapters.agent_framework import ErrorFlags, tools

    client = ScriptedChatClient([("read", BAD), ("edit", EDIT), ("read", READ), ("edit", EDIT), "done"])
    agent = Agent(client, "edit", tools=tools(ws.session("s")), middleware=[ErrorFlags()])
    response = _run(agent)

    assert response.text == "done" and edited(root)
    # what the model was given back, on the request after each call: our text, failures flagged
    last = [fed[-1] for fed in client.fed[1:]]
    assert last[0][0] == "c1" and last[0][1] is not None and last[0][1].startswith(OURS)
    assert last[0][2] == last[0][1]  # the framework's error flag, set by ErrorFlags
    assert last[1][1] is not None and last[1][1].startswith("ERROR FS_NOT_OBSERVED:") and last[1][2] is not None
    assert last[2][1] is not None and last[2][1].startswith("     1\tdef greet(name):") and last[2][2] is None
    assert last[3][1] is not None and last[3][1].startswith("Edited 'app.py'") and last[3][2] is None
    # the schema the model is offered is the published one, whole
    offered = {tool.name: tool.parameters() for tool in client.offered[0]}
    published = {schema["name"]: schema["input_schema"] for schema in ws.tool_schemas()}
    assert offered == published and offered["read"]["additionalProperties"] is False


def test_without_error_flags_the_text_is_the_same_and_nothing_is_flagged(ws: Workspace) -> None:
    from fs_tools.adapters.agent_framework import ERROR_KEY, failed, tools

    client = ScriptedChatClient([("read", BAD), "done"])
    response = _run(Agent(client, "edit", tools=tools(ws.session("s"))))
    _, text, exception = client.fed[1][-1]
    assert text is not None and text.startswith(OURS) and exception is None
    results = [c for m in response.messages for c in m.contents if c.type == "function_result"]
    assert failed(results[0]) == "INVALID_ARGS"  # the host can still tell
    assert results[0].items is not None and results[0].items[0].additional_properties[ERROR_KEY] == "INVALID_ARGS"


def test_arguments_that_are_not_a_json_object_reach_our_validator(ws: Workspace) -> None:
    from fs_tools.adapters.agent_framework import ErrorFlags, tools

    client = ScriptedChatClient([("read", '{"file_path": '), ("read", "5"), "done"])
    _run(Agent(client, "edit", tools=tools(ws.session("s")), middleware=[ErrorFlags()]))
    broken, bare = client.fed[1][-1][1], client.fed[2][-1][1]
    assert broken is not None and broken.startswith("ERROR INVALID_ARGS: invalid arguments: not valid JSON")
    assert bare == "ERROR INVALID_ARGS: invalid arguments: /: expected object, got number"
