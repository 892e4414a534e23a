"""The Semantic Kernel adapter driven through whole offline loops on a scripted chat completion service (a
``ChatCompletionClientBase`` with function calling, as Semantic Kernel's own connectors are built): a
``ChatCompletionAgent`` on a ``WorkspaceKernel`` and a bare auto-invoke loop. The model's malformed call
comes back as our INVALID_ARGS message (not the kernel's), an edit before a read is refused by our gate,
after a read the edit lands on disk, and what the model is fed back on the next request is our text."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field

from tests.support.frameworks import BAD, EDIT, OURS, READ, edited, framework

framework("semantic_kernel")

from semantic_kernel import Kernel  # noqa: E402
from semantic_kernel.agents import ChatCompletionAgent  # noqa: E402
from semantic_kernel.connectors.ai.chat_completion_client_base import ChatCompletionClientBase  # noqa: E402
from semantic_kernel.connectors.ai.function_calling_utils import update_settings_from_function_call_configuration  # noqa: E402
from semantic_kernel.connectors.ai.function_choice_behavior import FunctionChoiceBehavior  # noqa: E402
from semantic_kernel.connectors.ai.prompt_execution_settings import PromptExecutionSettings  # noqa: E402
from semantic_kernel.contents import (  # noqa: E402
    AuthorRole,
    ChatHistory,
    ChatMessageContent,
    FunctionCallContent,
    FunctionResultContent,
)

from fs_tools import Workspace  # noqa: E402


class ScriptedSettings(PromptExecutionSettings):
    """Settings with the ``tools`` and ``tool_choice`` a function-calling connector fills in."""

    tools: list[dict[str, Any]] | None = None
    tool_choice: str | None = None


class ScriptedChatCompletion(ChatCompletionClientBase):
    """A chat completion service that answers each request with the next scripted turn: ``(tool,
    arguments)`` is a function call (arguments as the JSON text a provider sends, or a string sent as it
    is), a ``str`` the final answer. The tools are offered as Semantic Kernel's OpenAI connector offers
    them; each request's tools and last message (what the model was fed back) are recorded."""

    SUPPORTS_FUNCTION_CALLING: ClassVar[bool] = True
    turns: list[Any] = Field(default_factory=list)
    offered: list[list[dict[str, Any]]] = Field(default_factory=list)
    fed: list[ChatMessageContent] = Field(default_factory=list)

    def get_prompt_execution_settings_class(self) -> type[PromptExecutionSettings]:
        return ScriptedSettings

    def _update_function_choice_settings_callback(self) -> Callable[..., None]:
        return update_settings_from_function_call_configuration

    async def _inner_get_chat_message_contents(
        self, chat_history: ChatHistory, settings: PromptExecutionSettings
    ) -> list[ChatMessageContent]:
        assert isinstance(settings, ScriptedSettings)
        self.offered.append(settings.tools or [])
        self.fed.append(chat_history.messages[-1].model_copy(deep=True))
        turn = self.turns.pop(0)
        if isinstance(turn, str):
            return [ChatMessageContent(role=AuthorRole.ASSISTANT, content=turn)]
        name, arguments = turn
        sent = arguments if isinstance(arguments, str) else json.dumps(arguments)
        call = FunctionCallContent(id=f"c{len(self.fed)}", name=name, arguments=sent)
        return [ChatMessageContent(role=AuthorRole.ASSISTANT, items=[call])]


def _result(message: ChatMessageContent) -> FunctionResultContent:
    assert message.role == AuthorRole.TOOL
    (item,) = message.items
    assert isinstance(item, FunctionResultContent)
    return item


def test_chat_completion_agent_loop_feeds_the_model_our_messages(ws: Workspace, root: Path) -> None:
    from fs_tools.adapters.semantic_kernel import kernel

    service = ScriptedChatCompletion(
        ai_model_id="scripted",
        turns=[("fs-read", BAD), ("fs-edit", EDIT), ("fs-read", READ), ("fs-edit", EDIT), "done"],
    )
    agent = ChatCompletionAgent(
        service=service,
        kernel=kernel(ws.session("s")),
        instructions="edit",
        function_choice_behavior=FunctionChoiceBehavior.Auto(),
    )

    async def run() -> Any:
        return await agent.get_response(messages="go")

    response = asyncio.run(run())
    assert str(response.content) == "done" and edited(root)
    # what the model was given back, on the request after each call
    fed = [_result(message) for message in service.fed[1:]]
    assert fed[0].id == "c1" and fed[0].result.startswith(OURS)
    assert fed[0].metadata["is_error"] is True and fed[0].metadata["error_code"] == "INVALID_ARGS"
    assert fed[1].result.startswith("ERROR FS_NOT_OBSERVED:") and fed[1].metadata["is_error"] is True
    assert fed[2].result.startswith("     1\tdef greet(name):") and fed[2].metadata["is_error"] is False
    assert fed[3].result.startswith("Edited 'app.py'") and fed[3].metadata["is_error"] is False
    # what the model is offered: each property's published schema, whole; additionalProperties is dropped
    offered = {tool["function"]["name"]: tool["function"]["parameters"] for tool in service.offered[0]}
    published = {f"fs-{schema['name']}": schema["input_schema"] for schema in ws.tool_schemas()}
    assert offered.keys() == published.keys()
    for name, parameters in offered.items():
        assert parameters["properties"] == published[name]["properties"]
        assert parameters["required"] == published[name].get("required", [])
        assert "additionalProperties" not in parameters and published[name]["additionalProperties"] is False


def test_auto_invoke_loop_passes_arguments_that_are_not_an_object_to_our_validator(ws: Workspace) -> None:
    from fs_tools.adapters.semantic_kernel import WorkspaceKernel, kernel

    service = ScriptedChatCompletion(
        ai_model_id="scripted", turns=[("fs-read", '{"file_path": '), ("fs-read", "5"), ("fs-read", ""), "done"]
    )
    workspace_kernel = kernel(ws.session("s")).clone()  # a clone (as the handoff orchestration makes) too
    assert isinstance(workspace_kernel, WorkspaceKernel)
    settings = ScriptedSettings(function_choice_behavior=FunctionChoiceBehavior.Auto())
    history = ChatHistory()
    history.add_user_message("go")

    async def run() -> Any:
        return await service.get_chat_message_content(history, settings, kernel=workspace_kernel)

    assert str(asyncio.run(run())) == "done"
    broken, bare, empty = (_result(message).result for message in service.fed[1:])
    assert broken.startswith("ERROR INVALID_ARGS: invalid arguments: not valid JSON")
    assert bare == "ERROR INVALID_ARGS: invalid arguments: /: expected object, got number"
    assert empty.startswith("ERROR INVALID_ARGS: invalid arguments: /file_path: required")


def test_on_a_plain_kernel_our_functions_still_work(ws: Workspace) -> None:
    """Without ``WorkspaceKernel`` the kernel checks the call itself (what the model then reads is Semantic
    Kernel's, not asserted here: its wording is the framework's); a call it lets through reaches us."""
    from fs_tools.adapters.semantic_kernel import plugin

    service = ScriptedChatCompletion(ai_model_id="scripted", turns=[("fs-read", READ), "done"])
    settings = ScriptedSettings(function_choice_behavior=FunctionChoiceBehavior.Auto())
    history = ChatHistory()
    history.add_user_message("go")

    async def run() -> Any:
        return await service.get_chat_message_content(
            history, settings, kernel=Kernel(plugins=[plugin(ws.session("s"))])
        )

    asyncio.run(run())
    (read,) = (_result(message).result for message in service.fed[1:])
    assert read.startswith("     1\tdef greet(name):")


def test_a_direct_invoke_passes_its_arguments(ws: Workspace) -> None:
    from fs_tools.adapters.semantic_kernel import kernel

    workspace_kernel = kernel(ws.session("s"))

    async def run() -> Any:
        return await workspace_kernel.invoke(plugin_name="fs", function_name="read", file_path=5)

    result = asyncio.run(run())
    assert result is not None and str(result.value).startswith("ERROR INVALID_ARGS: invalid arguments: /file_path")
    assert result.metadata["is_error"] is True
