"""The agent-framework adapters, each driven through a whole offline agent loop on the framework's own
test model: the model's malformed call comes back as our INVALID_ARGS message (not the framework's
validation error), an edit before a read is refused by our gate, and after a read the edit lands on disk.
Each framework's tests skip where it is not installed (CrewAI and Google ADK run in environments of their
own in .ci/run: neither installs beside the other integrations)."""

from __future__ import annotations

import asyncio
import importlib
import json
import os
from pathlib import Path
from typing import Any

import pytest
from pydantic import Field

from fs_tools import Workspace
from tests.support.frameworks import APP, BAD, EDIT, OURS, READ, edited, framework

# --- OpenAI Agents SDK ---------------------------------------------------------------------------


def test_openai_agents_loop_on_the_scripted_model(ws: Workspace, root: Path) -> None:
    agents = framework("agents")
    from agents.testing import ScriptedModel, assistant_message, function_call

    from fs_tools.adapters.openai_agents import tools

    model = ScriptedModel(
        [
            [function_call("read", BAD, call_id="c1")],
            [function_call("edit", EDIT, call_id="c2")],
            [function_call("read", READ, call_id="c3")],
            [function_call("edit", EDIT, call_id="c4")],
            [assistant_message("done")],
        ]
    )
    agent = agents.Agent(name="coder", instructions="edit", model=model, tools=tools(ws.session("s")))
    result = asyncio.run(agents.Runner.run(agent, "go", run_config=agents.RunConfig(tracing_disabled=True)))
    outputs = [item.raw_item["output"] for item in result.new_items if item.type == "tool_call_output_item"]
    assert outputs[0].startswith(OURS)
    assert outputs[1].startswith("ERROR FS_NOT_OBSERVED:")
    assert outputs[3].startswith("Edited 'app.py'") and result.final_output == "done" and edited(root)
    fed = [i for i in model.calls[1].input if isinstance(i, dict) and i.get("type") == "function_call_output"]
    assert fed[0]["output"].startswith(OURS)  # what the model was given back
    model.assert_complete()


def test_openai_agents_hosted_apply_patch_goes_through_the_gates(root: Path) -> None:
    agents = framework("agents")
    from agents.testing import ScriptedModel, assistant_message, function_call

    from fs_tools.adapters.openai_agents import tools

    (root / "app.py").write_text(APP)
    diff = "@@\n-    return 'hi ' + name\n+    return 'hello ' + name\n"
    call = {"type": "apply_patch_call", "call_id": "p1", "status": "completed"}
    model = ScriptedModel(
        [
            [{**call, "operation": {"type": "update_file", "path": "app.py", "diff": diff}}],
            [function_call("read", READ, call_id="c1")],
            [{**call, "call_id": "p2", "operation": {"type": "update_file", "path": "app.py", "diff": diff}}],
            [{**call, "call_id": "p3", "operation": {"type": "update_file", "path": "app.py", "diff": diff}}],
            [assistant_message("done")],
        ]
    )
    with Workspace(root, dialect="codex") as workspace:
        offered = tools(workspace.session("s"), hosted_apply_patch=True)
        assert isinstance(offered[0], agents.ApplyPatchTool)
        agent = agents.Agent(name="coder", instructions="edit", model=model, tools=offered)
        result = asyncio.run(agents.Runner.run(agent, "go", run_config=agents.RunConfig(tracing_disabled=True)))
    patched = [
        item.raw_item
        for item in result.new_items
        if getattr(item.raw_item, "get", None) and item.raw_item.get("type") == "apply_patch_call_output"
    ]
    assert [p["status"] for p in patched] == ["failed", "completed", "failed"]
    assert patched[0]["output"].startswith("ERROR FS_NOT_OBSERVED:")
    assert patched[2]["output"].startswith("ERROR FS_EDIT_NOT_FOUND: /operation/diff: hunk 1 of 'app.py' (diff line 1)")
    assert edited(root)


# --- smolagents ----------------------------------------------------------------------------------


def test_smolagents_loop_gets_our_messages_not_its_validator(ws: Workspace, root: Path) -> None:
    framework("smolagents")
    from smolagents.models import ChatMessage, ChatMessageToolCall, ChatMessageToolCallFunction, MessageRole, Model

    from fs_tools.adapters.smolagents import ToolText, WorkspaceAgent, tools

    class Scripted(Model):  # type: ignore[misc]
        def __init__(self, turns: list[tuple[str, Any]]) -> None:
            super().__init__(model_id="scripted")
            self.turns = turns

        def generate(
            self,
            messages: Any,
            stop_sequences: Any = None,
            response_format: Any = None,
            tools_to_call_from: Any = None,
            **kw: Any,
        ) -> Any:
            name, args = self.turns.pop(0)
            call = ChatMessageToolCallFunction(name=name, arguments=args)
            return ChatMessage(
                role=MessageRole.ASSISTANT,
                content="",
                tool_calls=[ChatMessageToolCall(id=name, type="function", function=call)],
            )

    model = Scripted(
        [("read", BAD), ("edit", EDIT), ("read", READ), ("edit", EDIT), ("final_answer", {"answer": "done"})]
    )
    agent = WorkspaceAgent(tools=tools(ws.session("s")), model=model, max_steps=8, verbosity_level=0)
    assert agent.run("go") == "done"
    steps = [step for step in agent.memory.steps if type(step).__name__ == "ActionStep"]
    assert steps[0].error is None and steps[0].observations.startswith(OURS)
    assert steps[1].observations.startswith("ERROR FS_NOT_OBSERVED:")
    assert edited(root)
    flagged = tools(ws.session("t"))[0].forward(**BAD)
    assert isinstance(flagged, ToolText) and flagged.is_error


# --- LlamaIndex ----------------------------------------------------------------------------------


# LlamaIndex walks its tools with inspect.getmembers, which touches pydantic's deprecated attributes
@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # pydantic's own classes vary by release
def test_llamaindex_function_agent_loop_keeps_our_schema_and_flags_errors(ws: Workspace, root: Path) -> None:
    framework("llama_index.core")
    from llama_index.core.agent.workflow import FunctionAgent, ToolCallResult
    from llama_index.core.base.llms.types import ToolCallBlock
    from llama_index.core.llms import ChatMessage, MessageRole
    from llama_index.core.llms.mock import MockFunctionCallingLLM

    from fs_tools.adapters.llamaindex import tools

    script: list[tuple[str, dict[str, Any]] | None] = [
        ("read", BAD),
        ("edit", EDIT),
        ("read", READ),
        ("edit", EDIT),
        None,
    ]

    def respond(messages: Any, **kw: Any) -> Any:
        step = script.pop(0)
        if step is None:
            return ChatMessage(role=MessageRole.ASSISTANT, content="done")
        block = ToolCallBlock(tool_call_id=f"c{len(script)}", tool_name=step[0], tool_kwargs=step[1])
        return ChatMessage(role=MessageRole.ASSISTANT, blocks=[block])

    offered = tools(ws.session("s"))
    assert offered[0].metadata.to_openai_tool()["function"]["parameters"]["additionalProperties"] is False
    agent = FunctionAgent(tools=offered, llm=MockFunctionCallingLLM(response_generator=respond), system_prompt="edit")

    async def run() -> list[Any]:
        handler = agent.run(user_msg="go")
        found = [event async for event in handler.stream_events() if isinstance(event, ToolCallResult)]
        await handler
        return found

    results = asyncio.run(run())
    assert results[0].tool_output.is_error and results[0].tool_output.content.startswith(OURS)
    assert results[1].tool_output.is_error and "FS_NOT_OBSERVED" in results[1].tool_output.content
    assert not results[3].tool_output.is_error and edited(root)


# --- Google: google-genai and ADK ----------------------------------------------------------------


def test_google_genai_declarations_with_parameters_json_schema_through_the_real_client(
    ws: Workspace, root: Path
) -> None:
    genai = framework("google.genai")
    from google.genai import types

    from fs_tools.adapters.gemini import function_responses, tool_definitions

    # google-genai 3 takes an httpx2 client, earlier releases an httpx one (either may be installed beside)
    transport_module: Any = importlib.import_module("httpx2" if int(genai.__version__.split(".")[0]) >= 3 else "httpx")

    def turn(name: str, args: dict[str, Any]) -> dict[str, Any]:
        part = {"functionCall": {"id": name, "name": name, "args": args}}
        return {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP"}]}

    script = [turn("read", BAD), turn("read", READ), turn("edit", EDIT)]
    script.append({"candidates": [{"content": {"role": "model", "parts": [{"text": "done"}]}, "finishReason": "STOP"}]})
    sent: list[dict[str, Any]] = []

    def handler(request: Any) -> Any:
        sent.append(json.loads(request.content))
        return transport_module.Response(200, json=script.pop(0))

    http = transport_module.Client(transport=transport_module.MockTransport(handler))
    client = genai.Client(api_key="test", http_options=types.HttpOptions(httpx_client=http))
    declarations = [types.FunctionDeclaration(**d) for d in tool_definitions(ws, json_schema=True)]
    config = types.GenerateContentConfig(
        tools=[types.Tool(function_declarations=declarations)],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )
    session = ws.session("s")
    contents: list[Any] = [types.Content(role="user", parts=[types.Part(text="go")])]
    for _ in range(6):
        reply = client.models.generate_content(model="gemini-test", contents=contents, config=config)
        contents.append(reply.candidates[0].content)
        if not reply.function_calls:
            break
        contents.append(
            types.Content(role="user", parts=function_responses(session, reply.candidates[0].content.parts))
        )
    declared = sent[0]["tools"][0]["functionDeclarations"][0]
    schema = declared.get("parametersJsonSchema") or declared["parameters_json_schema"]
    assert schema["additionalProperties"] is False
    answered = sent[1]["contents"][-1]["parts"][0]
    answer = answered.get("functionResponse") or answered["function_response"]
    assert answer["response"]["error"].startswith(OURS)
    assert reply.text == "done" and edited(root)


def test_google_adk_runner_loop_on_a_scripted_model(ws: Workspace, root: Path) -> None:
    framework("google.adk")
    from google.adk.agents import LlmAgent
    from google.adk.models.base_llm import BaseLlm
    from google.adk.models.llm_response import LlmResponse
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService
    from google.genai import types

    from fs_tools.adapters.google_adk import tools

    def call(name: str, args: dict[str, Any]) -> Any:
        return types.Content(
            role="model", parts=[types.Part(function_call=types.FunctionCall(id=name, name=name, args=args))]
        )

    class Scripted(BaseLlm):  # type: ignore[misc]
        model: str = "scripted"
        turns: list[Any] = Field(default_factory=list)
        requests: list[Any] = Field(default_factory=list)

        async def generate_content_async(self, llm_request: Any, stream: bool = False) -> Any:
            self.requests.append(llm_request)
            yield LlmResponse(content=self.turns.pop(0))

    done = types.Content(role="model", parts=[types.Part(text="done")])
    llm = Scripted(turns=[call("read", BAD), call("edit", EDIT), call("read", READ), call("edit", EDIT), done])
    agent = LlmAgent(name="coder", model=llm, instruction="edit", tools=tools(ws.session("s")))

    async def run() -> list[Any]:
        sessions = InMemorySessionService()
        runner = Runner(agent=agent, app_name="t", session_service=sessions)
        chat = await sessions.create_session(app_name="t", user_id="u")
        message = types.Content(role="user", parts=[types.Part(text="go")])
        return [event async for event in runner.run_async(user_id="u", session_id=chat.id, new_message=message)]

    answers = [response.response for event in asyncio.run(run()) for response in event.get_function_responses()]
    assert answers[0]["error"].startswith(OURS) and answers[1]["error"].startswith("ERROR FS_NOT_OBSERVED:")
    declared = llm.requests[0].config.tools[0].function_declarations[0]
    assert declared.parameters_json_schema["additionalProperties"] is False
    assert "output" in answers[3] and edited(root)


# --- AutoGen -------------------------------------------------------------------------------------


def test_autogen_assistant_loop_on_the_replay_client(ws: Workspace, root: Path) -> None:
    framework("autogen_agentchat")
    framework("autogen_ext")
    from autogen_agentchat.agents import AssistantAgent
    from autogen_agentchat.messages import ToolCallExecutionEvent
    from autogen_core import FunctionCall
    from autogen_core.models import CreateResult, ModelFamily, ModelInfo, RequestUsage
    from autogen_ext.models.replay import ReplayChatCompletionClient

    from fs_tools.adapters.autogen import tools

    def turn(name: str, args: dict[str, Any]) -> Any:
        return CreateResult(
            finish_reason="function_calls",
            usage=RequestUsage(prompt_tokens=0, completion_tokens=0),
            cached=False,
            content=[FunctionCall(id=name, name=name, arguments=json.dumps(args))],
        )

    info = ModelInfo(
        vision=False, function_calling=True, json_output=False, family=ModelFamily.UNKNOWN, structured_output=False
    )
    client = ReplayChatCompletionClient(
        [turn("read", BAD), turn("edit", EDIT), turn("read", READ), turn("edit", EDIT), "done"], model_info=info
    )
    agent = AssistantAgent("coder", model_client=client, tools=tools(ws.session("s")), max_tool_iterations=6)
    result = asyncio.run(agent.run(task="go"))
    executed = [r for m in result.messages if isinstance(m, ToolCallExecutionEvent) for r in m.content]
    assert executed[0].is_error and executed[0].content.startswith(OURS)
    assert executed[1].is_error and executed[1].content.startswith("ERROR FS_NOT_OBSERVED:")
    assert not executed[3].is_error and edited(root)
    assert client.create_calls[0]["tools"][0]["parameters"]["additionalProperties"] is False


# --- CrewAI --------------------------------------------------------------------------------------


def test_crewai_crew_loop_on_a_scripted_llm(ws: Workspace, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CREWAI_DISABLE_TELEMETRY", "OTEL_SDK_DISABLED"):
        monkeypatch.setenv(name, "true")
    monkeypatch.setenv("CREWAI_TRACING_ENABLED", "false")
    crewai = framework("crewai")
    from crewai.llms.base_llm import BaseLLM

    from fs_tools.adapters.crewai import tools

    class Scripted(BaseLLM):  # type: ignore[misc]
        turns: list[Any] = Field(default_factory=list)
        seen: list[Any] = Field(default_factory=list)

        def call(
            self,
            messages: Any,
            tools: Any = None,
            callbacks: Any = None,
            available_functions: Any = None,
            from_task: Any = None,
            from_agent: Any = None,
            response_model: Any = None,
            **kw: Any,
        ) -> Any:
            self.seen.append((json.loads(json.dumps(messages, default=str)), tools))
            step = self.turns.pop(0)
            if isinstance(step, str):
                return step
            name, args = step
            return [{"id": name, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]

        def supports_function_calling(self) -> bool:
            return True

        def supports_stop_words(self) -> bool:
            return False

        def get_context_window_size(self) -> int:
            return 100_000

    llm = Scripted(model="scripted", turns=[("read", BAD), ("edit", EDIT), ("read", READ), ("edit", EDIT), "done"])
    agent = crewai.Agent(
        role="coder", goal="edit", backstory="tests", llm=llm, tools=tools(ws.session("s")), verbose=False
    )
    task = crewai.Task(description="edit app.py", expected_output="done", agent=agent)
    out = crewai.Crew(agents=[agent], tasks=[task], verbose=False).kickoff()
    fed = [m["content"] for m in llm.seen[1][0] if m.get("role") == "tool"]
    assert fed[0].startswith(OURS)
    assert out.raw == "done" and edited(root)
    assert len(out.tasks_output[0].tool_failures) == 2


def test_no_adapter_imports_its_framework_until_used() -> None:
    import subprocess
    import sys

    code = (
        "import sys, fs_tools, fs_tools.adapters, fs_tools.adapters.openai, fs_tools.adapters.gemini;"
        "banned = ['agents', 'smolagents', 'llama_index', 'autogen_core', 'crewai', 'google.adk', 'haystack', 'dspy',"
        "'agent_framework', 'semantic_kernel', 'minisweagent', 'strands'];"
        "print([m for m in banned if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env={**os.environ})
    assert out.stdout.strip() == "[]"
