"""The Pydantic AI and LangChain adapters, driven the way each framework drives a tool (a scripted model,
recorded tool calls; no network): the model's arguments reach our validator, failures reach the model as
our code and message, and a successful edit changes the file on disk."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fs_tools import Session, Workspace

DOCS = Path(__file__).resolve().parents[2] / "docs" / "integrations"


def _run_docs_example(page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code = (DOCS / page).read_text(encoding="utf-8").split("```python\n", 1)[1].split("```", 1)[0]
    exec(compile(code, str(DOCS / page), "exec"), {"__name__": "docs_example"})


def test_importing_the_adapters_imports_no_framework() -> None:
    code = (
        "import sys, fs_tools.adapters, fs_tools.adapters.openai, fs_tools.adapters.anthropic, "
        "fs_tools.adapters.pydantic_ai\n"
        "print(sorted(m for m in ('pydantic_ai', 'langchain_core') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# --- Pydantic AI ---------------------------------------------------------------------------------------

Returned = tuple[str, str, Any]  # (tool name, outcome, content) of a tool result the model was sent


def _replay(
    session: Session,
    calls: list[tuple[str, Any]],
    *,
    before_turn: dict[int, Callable[[], None]] | None = None,
    retries: int | None = None,
) -> tuple[list[Returned], list[Any]]:
    """Run an agent whose model makes ``calls`` (tool name, raw arguments), one per turn, then answers
    "done". ``before_turn[n]`` runs just before the model's n-th turn (a change from outside). Returns
    the tool results the model was sent, in order, and the tool definitions it was given."""
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from fs_tools.adapters.pydantic_ai import toolset

    returned: list[Returned] = []
    definitions: list[Any] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        definitions[:] = info.function_tools
        parts = messages[-1].parts
        returned.extend((p.tool_name, p.outcome, p.content) for p in parts if isinstance(p, ToolReturnPart))
        turn = sum(isinstance(message, ModelResponse) for message in messages)
        if before_turn and turn in before_turn:
            before_turn[turn]()
        if turn == len(calls):
            return ModelResponse(parts=[TextPart("done")])
        name, args = calls[turn]
        return ModelResponse(parts=[ToolCallPart(tool_name=name, args=args, tool_call_id=f"call_{turn}")])

    agent = Agent(FunctionModel(model), toolsets=[toolset(session)], retries=retries)
    assert agent.run_sync("go").output == "done"
    return returned, definitions


class TestPydanticAI:
    @pytest.fixture(autouse=True)
    def _installed(self) -> None:
        pytest.importorskip("pydantic_ai")

    @pytest.mark.parametrize(
        ("args", "facts"),
        [
            ('{"file_path": 3}', ["/file_path: expected string, got number"]),
            ({"file_path": "a.txt", "limit": "3"}, ["/limit: expected integer, got string"]),
            ({"file_path": "a.txt", "colour": "red"}, ["/colour: unknown property", "file_path, offset, limit"]),
            ("[1, 2]", ["expected object, got array"]),
        ],
    )
    def test_the_model_reads_our_invalid_args_message(
        self, root: Path, session: Session, args: Any, facts: list[str]
    ) -> None:
        (root / "a.txt").write_text("one\n")
        returned, _ = _replay(session, [("read", args)])
        assert len(returned) == 1
        name, outcome, content = returned[0]
        assert (name, outcome) == ("read", "retried")
        assert content.startswith("ERROR INVALID_ARGS: invalid arguments:")
        assert all(fact in content for fact in facts), content
        assert "Input should be" not in content  # pydantic's own wording never reaches the model

    def test_edit_before_read_is_refused_then_read_and_edit_change_the_file(self, root: Path, session: Session) -> None:
        (root / "a.txt").write_text("x = 1\n")
        edit = {"file_path": "a.txt", "old_string": "x = 1", "new_string": "x = 2"}
        returned, _ = _replay(session, [("edit", edit), ("read", '{"file_path": "a.txt"}'), ("edit", edit)])
        assert [(name, outcome) for name, outcome, _ in returned] == [
            ("edit", "failed"),
            ("read", "success"),
            ("edit", "success"),
        ]
        assert (
            returned[0][2]
            == "ERROR FS_NOT_OBSERVED: 'a.txt' has not been read in this session — read the file, then retry"
        )
        assert returned[1][2] == "     1\tx = 1"
        assert (root / "a.txt").read_text() == "x = 2\n"

    def test_state_errors_do_not_spend_the_retry_budget(self, root: Path, session: Session) -> None:
        """Two failed edits (unread, then stale) under the default budget of one retry: the run goes on."""
        path = root / "a.txt"
        path.write_text("x = 1\n")
        read = ("read", {"file_path": "a.txt"})
        edit = ("edit", {"file_path": "a.txt", "old_string": "x = ", "new_string": "y = "})
        returned, _ = _replay(
            session, [edit, read, edit, read, edit], before_turn={2: lambda: path.write_text("x = 3\n")}
        )
        failures = [content.split(":", 1)[0] for _, outcome, content in returned if outcome == "failed"]
        assert failures == ["ERROR FS_NOT_OBSERVED", "ERROR FS_STALE_VERSION"]
        assert path.read_text() == "y = 3\n"

    def test_invalid_args_spend_the_retry_budget(self, session: Session) -> None:
        from pydantic_ai.exceptions import UnexpectedModelBehavior

        with pytest.raises(UnexpectedModelBehavior, match="exceeded max retries count of 1"):
            _replay(session, [("read", {"file_path": 1}), ("read", {"file_path": 2})])

    def test_the_model_is_given_our_schemas(self, workspace: Workspace, session: Session) -> None:
        from pydantic_ai import Tool

        from fs_tools.adapters.pydantic_ai import tools

        assert all(isinstance(tool, Tool) for tool in tools(session))
        _, definitions = _replay(session, [])
        schemas = workspace.tool_schemas()
        assert [(d.name, d.description) for d in definitions] == [(s["name"], s["description"]) for s in schemas]
        assert [d.parameters_json_schema for d in definitions] == [s["input_schema"] for s in schemas]

    def test_the_docs_example_runs(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        _run_docs_example("pydantic-ai.md", tmp_path, monkeypatch)

    def test_strict_tools_carry_the_strict_form_and_nulls_mean_the_defaults(self, root: Path) -> None:
        from fs_tools.adapters.openai import strict_schema
        from fs_tools.adapters.pydantic_ai import tools

        (root / "a.txt").write_text("one\n")
        with Workspace(root, tools=["read"], prefix="fs_") as workspace:
            session = workspace.session("s")
            (tool,) = tools(session, strict=True)
            assert (tool.name, tool.strict) == ("fs_read", True)
            assert tool.tool_def.parameters_json_schema == strict_schema(workspace.tool_schemas()[0]["input_schema"])
            strict_call = {"file_path": "a.txt", "offset": None, "limit": None}  # what strict mode makes it send
            returned, definitions = _replay(session, [("fs_read", strict_call)])
            assert [(name, outcome) for name, outcome, _ in returned] == [("fs_read", "success")]
            assert [d.name for d in definitions] == ["fs_read"]


# --- LangChain -----------------------------------------------------------------------------------------


def _langchain_tools(session: Session) -> dict[str, Any]:
    from fs_tools.adapters.langchain import tools

    return {tool.name: tool for tool in tools(session)}


def _tool_call(name: str, args: dict[str, Any], call_id: str = "call_1") -> dict[str, Any]:
    return {"type": "tool_call", "id": call_id, "name": name, "args": args}


class TestLangChain:
    @pytest.fixture(autouse=True)
    def _installed(self) -> None:
        pytest.importorskip("langchain_core")

    def test_success_is_a_tool_message_with_the_text_and_the_value_as_artifact(
        self, root: Path, session: Session
    ) -> None:
        from langchain_core.messages import ToolMessage

        (root / "a.txt").write_text("one\ntwo\n")
        message = _langchain_tools(session)["read"].invoke(_tool_call("read", {"file_path": "a.txt", "limit": 1}))
        assert isinstance(message, ToolMessage)
        assert (message.status, message.tool_call_id, message.name) == ("success", "call_1", "read")
        assert message.content.startswith("     1\tone\n") and "continue with offset=2" in message.content
        assert message.artifact["total_lines"] == 2 and message.artifact["lines_shown"] == 1

    @pytest.mark.parametrize(
        ("args", "facts"),
        [
            ({"file_path": 3}, ["/file_path: expected string, got number"]),
            ({"file_path": "a.txt", "limit": "3"}, ["/limit: expected integer, got string"]),
            ({"file_path": "a.txt", "colour": "red"}, ["/colour: unknown property"]),
            # names LangChain passes to its own _run: they still reach our validator
            ({"file_path": "a.txt", "config": {}, "run_manager": 1}, ["/config: unknown", "/run_manager: unknown"]),
        ],
    )
    def test_invalid_args_are_an_error_message_with_our_text(
        self, root: Path, session: Session, args: dict[str, Any], facts: list[str]
    ) -> None:
        (root / "a.txt").write_text("one\n")
        message = _langchain_tools(session)["read"].invoke(_tool_call("read", args))
        assert message.status == "error"
        assert message.content.startswith("ERROR INVALID_ARGS: invalid arguments:")
        assert all(fact in message.content for fact in facts), message.content
        assert message.artifact is None

    def test_a_stale_edit_is_an_error_message_and_leaves_the_file(self, root: Path, session: Session) -> None:
        path = root / "a.txt"
        path.write_text("x = 1\n")
        by_name = _langchain_tools(session)
        edit = _tool_call("edit", {"file_path": "a.txt", "old_string": "x = ", "new_string": "y = "}, "call_2")
        refused = by_name["edit"].invoke(edit)
        assert refused.status == "error" and refused.content.startswith("ERROR FS_NOT_OBSERVED:")
        assert by_name["read"].invoke(_tool_call("read", {"file_path": "a.txt"})).status == "success"
        path.write_text("x = 2\n")
        stale = by_name["edit"].invoke(edit)
        assert (stale.status, stale.tool_call_id) == ("error", "call_2")
        assert stale.content.startswith("ERROR FS_STALE_VERSION: 'a.txt'")
        assert path.read_text() == "x = 2\n"
        by_name["read"].invoke(_tool_call("read", {"file_path": "a.txt"}))
        assert by_name["edit"].invoke(edit).status == "success"
        assert path.read_text() == "y = 2\n"

    def test_async_invocation_answers_the_same_way(self, root: Path, session: Session) -> None:
        import asyncio

        (root / "a.txt").write_text("one\n")
        tool = _langchain_tools(session)["read"]
        ok = asyncio.run(tool.ainvoke(_tool_call("read", {"file_path": "a.txt"})))
        assert (ok.status, ok.content) == ("success", "     1\tone")
        bad = asyncio.run(tool.ainvoke(_tool_call("read", {"file_path": "a.txt", "offset": 0})))
        assert bad.status == "error" and bad.content.startswith("ERROR INVALID_ARGS:") and "/offset" in bad.content

    def test_the_model_is_given_our_schemas(self, workspace: Workspace, session: Session) -> None:
        from langchain_core.utils.function_calling import convert_to_openai_tool

        functions = [convert_to_openai_tool(tool)["function"] for tool in _langchain_tools(session).values()]
        schemas = workspace.tool_schemas()
        assert [(f["name"], f["description"]) for f in functions] == [(s["name"], s["description"]) for s in schemas]
        assert [f["parameters"] for f in functions] == [s["input_schema"] for s in schemas]

    def test_the_docs_example_runs(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        _run_docs_example("langchain.md", tmp_path, monkeypatch)

    def test_strict_tools_give_bind_tools_the_strict_form(self, root: Path) -> None:
        from langchain_core.utils.function_calling import convert_to_openai_tool

        from fs_tools.adapters.langchain import tools
        from fs_tools.adapters.openai import strict_schema

        (root / "a.txt").write_text("one\n")
        with Workspace(root, prefix="fs_") as workspace:
            session = workspace.session("s")
            by_name = {tool.name: tool for tool in tools(session, strict=True)}
            for schema in workspace.tool_schemas():
                function = convert_to_openai_tool(by_name[schema["name"]], strict=True)["function"]
                assert function["parameters"] == strict_schema(schema["input_schema"])
            nulls = {"file_path": "a.txt", "offset": None, "limit": None}
            message = by_name["fs_read"].invoke(_tool_call("fs_read", nulls))
            assert (message.status, message.name, message.content) == ("success", "fs_read", "     1\tone")
