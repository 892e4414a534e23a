"""The documentation tells the truth: generated references are current, every example runs as a reader
would paste it (the agent loops against scripted clients, without network), the home page shows what
``fs-tools demo`` prints, and the built site passes a layout check in a real browser."""

from __future__ import annotations

import importlib
import json
import re
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fs_tools import reference
from fs_tools.boundary import remedy_for
from fs_tools.demo import run_demo
from fs_tools.errors import error_codes
from tests.support import (
    docs_screenshots,  # tests/support/docs_screenshots.py: the browser check, also a command of its own
)
from tests.support.frameworks import framework as required
from tests.support.pages import code_blocks, titled_block

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
INTEGRATIONS = DOCS / "integrations"


# --- the generated references ----------------------------------------------------------------------


def test_error_reference_lists_every_code_with_an_example_and_a_recovery() -> None:
    page = (DOCS / "reference" / "errors.md").read_text(encoding="utf-8")
    for code, cls in error_codes().items():
        assert f"| [`{code}`](#{code.lower()})<br>`{cls.__name__}` |" in page, code
        section = page.split(f"\n## {code}\n", 1)[1].split("\n## ", 1)[0]
        assert "```text\n" in section and f"**Recovery.** {remedy_for(cls).summary}" in section, code


def test_every_error_scenario_produces_its_own_code() -> None:
    examples = reference.error_examples()  # raises when a scenario produces another code
    assert [e.code for e in examples] == list(error_codes())
    assert all(e.message for e in examples)


def test_the_timeout_example_is_a_search_that_ran_long_not_a_zero_budget() -> None:
    timeout = next(e for e in reference.error_examples() if e.code == "TOOL_TIMEOUT")
    head = timeout.message.splitlines()[0]
    searched = int(re.search(r"after searching (\d+) file", head).group(1))  # type: ignore[union-attr]
    assert "its 10 s budget" in head and searched > 100, head
    assert timeout.message.splitlines()[1:] == ["src/app.py:1: def greet(name):", 'src/app.py:5: print(greet("world"))']
    assert timeout.remedy == "narrow path or glob, or make the pattern more specific"  # not the rows after it


def test_the_generated_references_are_up_to_date() -> None:
    """The committed pages are what the code generates now: regenerate with
    ``python -m fs_tools.reference docs`` after changing a tool, a schema or a message."""
    stale = [path for path, text in reference.all_pages().items() if (DOCS / path).read_text(encoding="utf-8") != text]
    assert stale == [], f"regenerate with: python -m fs_tools.reference docs ({stale})"


# --- the pages' examples -------------------------------------------------------------------------------


def test_readme_opens_with_the_two_quick_start_commands() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("```bash\n", 1)[1].split("```", 1)[0].strip().splitlines()
    assert block == ["pip install . && fs-tools demo", "pip install -e '.[dev]' && pytest"]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "pip install -e '.[dev]' && pytest" in ci


@pytest.mark.parametrize("page", ["README.md", "docs/quickstart.md", "docs/dialects.md"])
def test_the_library_example_runs(page: str, tmp_path: Path) -> None:
    """The ten-line example, as a reader would paste it, with the project path pointed at a real one."""
    text = (ROOT / page).read_text(encoding="utf-8")
    code = text.split("```python\n", 1)[1].split("```", 1)[0]
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("x = 1\n")
    exec(compile(code.replace("/path/to/project", str(tmp_path)), page, "exec"), {"__name__": "example"})
    assert (tmp_path / "src" / "app.py").read_text() == "x = 2\n"


def test_the_home_page_shows_what_fs_tools_demo_prints() -> None:
    printed: list[str] = []
    assert run_demo(printed.append) == 0
    shown = [code for info, code in code_blocks(DOCS / "index.md") if info == "text"][-1]
    assert shown == "\n".join(printed) + "\n", "paste the output of `fs-tools demo` into docs/index.md"


def test_the_home_page_example_prints_what_the_page_says(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocks = code_blocks(DOCS / "index.md")
    code = next(code for info, code in blocks if info == "python")
    output = next(code for info, code in blocks if info == "text")
    (tmp_path / "app.py").write_text("x = 1\n")
    exec(compile(code.replace("/path/to/project", str(tmp_path)), "index.md", "exec"), {"__name__": "example"})
    assert capsys.readouterr().out == output
    assert (tmp_path / "app.py").read_text() == "x = 2\n"


# --- the integration pages' agent loops ----------------------------------------------------------------
#
# Each page's "agent.py" block is the loop a user copies, with the real SDK client. Here it runs as
# written against a scripted model: the same four turns for every framework (an edit before the read,
# the read, the edit, the final answer), each reply in the shape that framework's SDK returns. The test
# then checks what the loop sent back to the model, and the file on disk.

EDIT = {"file_path": "app.py", "old_string": "DEBUG = True", "new_string": "DEBUG = False"}
READ = {"file_path": "app.py"}
SCRIPT: list[tuple[str, dict[str, Any]]] = [("edit", EDIT), ("read", READ), ("edit", EDIT)]
STRICT_NULLS = {"edit": {"replace_all": None}, "read": {"offset": None, "limit": None}}  # what strict mode sends
ANSWER = "DEBUG is off in app.py."


def _openai_reply(turn: int) -> dict[str, Any]:
    """A Chat Completions response, as the API returns it."""
    message: dict[str, Any] = {"role": "assistant", "content": ANSWER, "refusal": None, "tool_calls": None}
    if turn < len(SCRIPT):
        name, args = SCRIPT[turn]
        arguments = json.dumps({**args, **STRICT_NULLS[name]})
        call = {"id": f"call_{turn}", "type": "function", "function": {"name": name, "arguments": arguments}}
        message = {"role": "assistant", "content": None, "refusal": None, "tool_calls": [call]}
    finish = "tool_calls" if turn < len(SCRIPT) else "stop"
    return {
        "id": f"chatcmpl-{turn}",
        "object": "chat.completion",
        "created": 1767225600,
        "model": "gpt-4.1",
        "choices": [{"index": 0, "finish_reason": finish, "logprobs": None, "message": message}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
    }


def _anthropic_reply(turn: int) -> dict[str, Any]:
    """A Messages API response, as the API returns it."""
    content: list[dict[str, Any]] = [{"type": "text", "text": ANSWER}]
    if turn < len(SCRIPT):
        name, args = SCRIPT[turn]
        content = [{"type": "tool_use", "id": f"toolu_{turn}", "name": name, "input": args}]
    return {
        "id": f"msg_{turn}",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": content,
        "stop_reason": "tool_use" if turn < len(SCRIPT) else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 100, "output_tokens": 20},
    }


def _sdk_object(value: Any) -> Any:
    """A JSON reply as the SDKs' models read: objects with attributes, except a tool_use block's ``input``,
    which the Anthropic SDK keeps a plain dict."""
    if isinstance(value, list):
        return [_sdk_object(item) for item in value]
    if isinstance(value, dict):
        return types.SimpleNamespace(**{k: v if k == "input" else _sdk_object(v) for k, v in value.items()})
    return value


def _field(item: Any, name: str) -> Any:
    return item.get(name) if isinstance(item, dict) else getattr(item, name, None)


def _openai_tool_contents(messages: list[Any]) -> list[str]:
    return [m["content"] for m in messages if _field(m, "role") == "tool"]


def _anthropic_tool_contents(messages: list[Any]) -> list[str]:
    answers = [m["content"] for m in messages if _field(m, "role") == "user" and isinstance(m["content"], list)]
    return [block["content"] for blocks in answers for block in blocks if _field(block, "type") == "tool_result"]


class _ScriptedClient:
    """``client.chat.completions.create`` / ``client.messages.create`` answering from a script and keeping
    every request's messages."""

    def __init__(self, reply: Callable[[int], dict[str, Any]]) -> None:
        self.requests: list[dict[str, Any]] = []
        self._reply = reply
        self.chat = types.SimpleNamespace(completions=types.SimpleNamespace(create=self._create))
        self.messages = types.SimpleNamespace(create=self._create)

    def _create(self, **request: Any) -> Any:
        assert {"model", "messages", "tools"} <= set(request)
        self.requests.append({**request, "messages": list(request["messages"])})
        return _sdk_object(self._reply(len(self.requests) - 1))

    def sent(self, contents: Callable[[list[Any]], list[str]]) -> list[str]:
        return contents(self.requests[-1]["messages"])


def _fake_module(monkeypatch: pytest.MonkeyPatch, name: str, **attributes: Any) -> None:
    module = types.ModuleType(name)
    module.__dict__.update(attributes)
    monkeypatch.setitem(sys.modules, name, module)


def _scripted_openai(monkeypatch: pytest.MonkeyPatch) -> Callable[[], list[str]]:
    client = _ScriptedClient(_openai_reply)
    _fake_module(monkeypatch, "openai", OpenAI=lambda **options: client)
    return lambda: client.sent(_openai_tool_contents)


def _scripted_anthropic(monkeypatch: pytest.MonkeyPatch) -> Callable[[], list[str]]:
    client = _ScriptedClient(_anthropic_reply)
    _fake_module(monkeypatch, "anthropic", Anthropic=lambda **options: client)
    return lambda: client.sent(_anthropic_tool_contents)


def _scripted_pydantic_ai(monkeypatch: pytest.MonkeyPatch) -> Callable[[], list[str]]:
    pydantic_models = pytest.importorskip("pydantic_ai.models")
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    sent: list[str] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        sent.extend(str(part.content) for part in messages[-1].parts if isinstance(part, ToolReturnPart))
        turn = sum(isinstance(message, ModelResponse) for message in messages)
        if turn < len(SCRIPT):
            name, args = SCRIPT[turn]
            return ModelResponse(parts=[ToolCallPart(tool_name=name, args=args, tool_call_id=f"call_{turn}")])
        return ModelResponse(parts=[TextPart(ANSWER)])

    def infer_model(name: object, *args: Any, **kwargs: Any) -> Any:
        assert name == "anthropic:claude-sonnet-4-5", name
        return FunctionModel(respond)

    monkeypatch.setattr(pydantic_models, "infer_model", infer_model)  # the page's model name, scripted
    return lambda: sent


def _scripted_langchain(monkeypatch: pytest.MonkeyPatch) -> Callable[[], list[str]]:
    pytest.importorskip("langchain_core")
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.utils.function_calling import convert_to_openai_tool

    requests: list[list[BaseMessage]] = []

    class ScriptedChatModel(BaseChatModel):
        """Stands in for ``ChatOpenAI``: binds tools the same way and answers from the script."""

        model: str

        @property
        def _llm_type(self) -> str:
            return "scripted"

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self.bind(tools=[convert_to_openai_tool(tool) for tool in tools], **kwargs)

        def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
            assert [tool["function"]["name"] for tool in kwargs["tools"]][:2] == ["read", "write"]
            requests.append(list(messages))
            turn = len(requests) - 1
            reply = AIMessage(ANSWER)
            if turn < len(SCRIPT):
                name, args = SCRIPT[turn]
                call = {"name": name, "args": args, "id": f"call_{turn}", "type": "tool_call"}
                reply = AIMessage("", tool_calls=[call])
            return ChatResult(generations=[ChatGeneration(message=reply)])

    _fake_module(monkeypatch, "langchain_openai", ChatOpenAI=ScriptedChatModel)
    return lambda: [str(m.content) for m in requests[-1] if isinstance(m, ToolMessage)]


def _scripted_gemini(monkeypatch: pytest.MonkeyPatch) -> Callable[[], list[str]]:
    """``genai.Client`` answering from the script with the SDK's own response objects."""
    genai = pytest.importorskip("google.genai", reason="pip install google-genai: runs the Gemini loop")
    from google.genai import types as genai_types

    requests: list[list[Any]] = []

    def generate_content(*, model: str, contents: list[Any], config: Any) -> Any:
        assert model and [d.name for d in config.tools[0].function_declarations][:2] == ["read", "write"]
        requests.append(list(contents))
        turn = len(requests) - 1
        part = genai_types.Part(text=ANSWER)
        if turn < len(SCRIPT):
            name, args = SCRIPT[turn]
            part = genai_types.Part(function_call=genai_types.FunctionCall(name=name, args=args, id=f"call_{turn}"))
        content = genai_types.Content(role="model", parts=[part])
        return genai_types.GenerateContentResponse(candidates=[genai_types.Candidate(content=content)])

    client = types.SimpleNamespace(models=types.SimpleNamespace(generate_content=generate_content))
    monkeypatch.setattr(genai, "Client", lambda **options: client)

    def sent() -> list[str]:
        answers = []
        for content in requests[-1]:
            for part in content.parts or []:
                if content.role == "user" and part.function_response is not None:
                    response = part.function_response.response or {}
                    answers.append(str(response.get("output", response.get("error"))))
        return answers

    return sent


SCRIPTED = {
    "openai.md": _scripted_openai,
    "gemini.md": _scripted_gemini,
    "anthropic.md": _scripted_anthropic,
    "pydantic-ai.md": _scripted_pydantic_ai,
    "langchain.md": _scripted_langchain,
}


@pytest.mark.parametrize(
    ("title", "framework"),
    [
        ("agents_offline.py", "agents"),
        ("autogen_offline.py", "autogen_ext"),
        ("llamaindex_offline.py", "llama_index"),
        ("smolagents_offline.py", "smolagents"),
        ("haystack_offline.py", "haystack"),
        ("dspy_offline.py", "dspy"),
        ("agent_framework_offline.py", "agent_framework"),
        ("semantic_kernel_offline.py", "semantic_kernel"),
        ("minisweagent_offline.py", "minisweagent"),
        ("adk_offline.py", "google.adk"),  # ADK, CrewAI and Strands: in their own environments in .ci/run
        ("crewai_offline.py", "crewai"),
        ("strands_offline.py", "strands"),
    ],
)
def test_each_offline_framework_example_runs_as_written(
    title: str, framework: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The frameworks page's offline variants, pasted as they are: each framework's own scripted model,
    no key, no network; they print what the page says they print."""
    for name in ("CREWAI_DISABLE_TELEMETRY", "OTEL_SDK_DISABLED"):
        monkeypatch.setenv(name, "true")
    monkeypatch.setenv("CREWAI_TRACING_ENABLED", "false")
    monkeypatch.setenv("HAYSTACK_TELEMETRY_ENABLED", "False")
    monkeypatch.setenv("MSWEA_GLOBAL_CONFIG_DIR", str(tmp_path))  # mini-swe-agent makes its config folder on import
    monkeypatch.setenv("MSWEA_SILENT_STARTUP", "1")  # and prints a banner, as its page says, here on the import below
    required(framework)
    page = INTEGRATIONS / "frameworks.md"
    code = titled_block(page, title)
    script = types.ModuleType(title.removesuffix(".py"))  # a module of its own, as a script runs: pydantic
    monkeypatch.setitem(sys.modules, script.__name__, script)  # resolves a model's annotations through it
    exec(compile(code, str(page), "exec"), script.__dict__)
    shown = page.read_text(encoding="utf-8").split(f'```python title="{title}"', 1)[1]
    expected = shown.split("```text\n", 1)[1].split("```", 1)[0]
    assert capsys.readouterr().out == expected


def _run_agent_loop(
    page: str, project: Path, capsys: pytest.CaptureFixture[str], sent: Callable[[], list[str]]
) -> None:
    (project / "app.py").write_text("DEBUG = True\n")
    code = titled_block(INTEGRATIONS / page, "agent.py")
    assert "/path/to/project" in code
    code = code.replace("/path/to/project", str(project))
    exec(compile(code, str(INTEGRATIONS / page), "exec"), {"__name__": "agent"})
    answers = sent()
    assert len(answers) == 3, answers
    assert answers[0].startswith("ERROR FS_NOT_OBSERVED: 'app.py' has not been read"), answers[0]  # the gate
    assert answers[1] == "     1\tDEBUG = True"
    assert answers[2].startswith("Edited 'app.py': 1 replacement(s)."), answers[2]
    assert (project / "app.py").read_text() == "DEBUG = False\n"
    assert capsys.readouterr().out == ANSWER + "\n"


@pytest.mark.parametrize("page", list(SCRIPTED))
def test_the_agent_loop_runs_against_a_scripted_model(
    page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _run_agent_loop(page, tmp_path, capsys, SCRIPTED[page](monkeypatch))


def _sdk_client(sdk: str, reply: Callable[[int], dict[str, Any]], requests: list[dict[str, Any]]) -> Any:
    """The SDK's own client, its HTTP answered from the script: the replies parse as the SDK's models and
    the loop's messages serialize as the SDK sends them."""
    module = pytest.importorskip(sdk, reason=f"pip install {sdk}: runs the {sdk} loop through the SDK's client too")
    # The HTTP package the SDK is built on (httpx, or httpx2 in newer releases), for its mock transport.
    base = next(cls for cls in module.DefaultHttpxClient.__mro__[1:] if cls.__name__ == "Client")
    http = importlib.import_module(base.__module__.partition(".")[0])

    def answer(request: Any) -> Any:
        requests.append(json.loads(request.content))
        return http.Response(200, json=reply(len(requests) - 1))

    client = module.DefaultHttpxClient(transport=http.MockTransport(answer))
    options = {"api_key": "test-key", "base_url": "http://sdk.invalid/v1", "http_client": client, "max_retries": 0}
    return module.OpenAI(**options) if sdk == "openai" else module.Anthropic(**options)


@pytest.mark.parametrize("sdk", ["openai", "anthropic"])
def test_the_agent_loop_runs_through_the_sdk_client(
    sdk: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    requests: list[dict[str, Any]] = []
    openai = sdk == "openai"
    reply, contents = (_openai_reply, _openai_tool_contents) if openai else (_anthropic_reply, _anthropic_tool_contents)
    client = _sdk_client(sdk, reply, requests)
    monkeypatch.setattr(sys.modules[sdk], "OpenAI" if openai else "Anthropic", lambda **options: client)
    _run_agent_loop(f"{sdk}.md", tmp_path, capsys, lambda: contents(requests[-1]["messages"]))


# --- the built site ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("material", reason="the site needs the docs extra: pip install -e '.[docs]'")
    built = tmp_path_factory.mktemp("site")
    docs_screenshots.build_site(built)  # mkdocs build --strict, as CI runs it
    return built


def test_a_tool_description_is_shown_as_text_not_as_html(site: Path) -> None:
    """read's description shows its line format as ``'   12<TAB>text'``: a raw ``<TAB>`` was an HTML tag
    the browser dropped, and the page read ``' 12text'``."""
    page = (site / "reference" / "tools" / "read" / "index.html").read_text(encoding="utf-8")
    assert "12&lt;TAB&gt;text" in page and "<TAB>" not in page


def test_the_header_shows_the_package_version(site: Path) -> None:
    version = re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.MULTILINE)
    assert version is not None
    assert f'--fs-tools-release: "v{version.group(1)}"' in (site / "index.html").read_text(encoding="utf-8")


def test_a_long_name_in_a_table_wraps_only_between_its_words(site: Path) -> None:
    page = (site / "security" / "index.html").read_text(encoding="utf-8")
    assert '<code class="fs-long-name"><span>test_</span><wbr><span>hardening_</span>' in page
    assert "<code>FS_BUSY</code>" in page  # short names are left whole


def _chromium() -> str:
    chromium = docs_screenshots.find_chromium()
    if chromium is None:
        pytest.skip("the layout check needs headless Chromium: apt-get install -y chromium")
    return chromium


def test_the_site_has_no_layout_regressions(site: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Every page at 1366 and 390 px, through the command CI and people run: nothing scrolls sideways, no
    name is cut mid-word, no text under a copy button. The screenshots stay in the test's directory."""
    _chromium()
    status = docs_screenshots.main(["--site", str(site), "--out", str(tmp_path)])
    assert status == 0, capsys.readouterr().out
    assert (tmp_path / "index-390.png").read_bytes().startswith(b"\x89PNG")


def test_the_layout_check_sees_each_kind_of_breakage(tmp_path: Path) -> None:
    """The control: a page breaking each rule is reported for each."""
    (tmp_path / "index.html").write_text(
        """<!doctype html><meta name="viewport" content="width=device-width">
        <style>body { margin: 0; font: 16px monospace } td { width: 3em } pre { position: relative }
        .md-code__nav { position: absolute; top: 0; right: 0; width: 2em; height: 2em }</style>
        <div class="md-content">
          <table><tr><td><code style="word-break: break-all">ToolArgsError</code></td></tr></table>
          <div style="width: 2000px">wide</div>
          <pre><nav class="md-code__nav"></nav><code>"""
        + "x" * 300
        + """</code></pre>
        </div>""",
        encoding="utf-8",
    )
    findings = docs_screenshots.check_site(tmp_path, None, _chromium(), pages=[""])
    for rule in ("scrolls sideways", 'code "ToolArgsError" breaks mid-word', "text runs under the copy button"):
        assert any(rule in finding for finding in findings), (rule, findings)
