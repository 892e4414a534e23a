"""The MCP server driven by real MCP clients: over stdio (a subprocess), in memory, and over streamable
HTTP on loopback. Codes are asserted in ``structuredContent``."""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

mcp = pytest.importorskip("mcp")

import httpx2  # noqa: E402
from mcp import Client, ClientSession, StdioServerParameters, stdio_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from fs_tools import Workspace  # noqa: E402
from fs_tools.mcp.server import build_server, stdio_sessions  # noqa: E402
from tests.support.http_server import http_server  # noqa: E402

Call = Callable[[str, dict[str, Any]], Awaitable[Any]]
APP = "def greet(name):\n    return 'hi ' + name\n"


def _code(result: Any) -> str | None:
    """The error code; and every error's text is ``ERROR <code>: <message>``, as the adapters give it."""
    if not result.is_error:
        return None
    error = result.structured_content["error"]
    assert result.content[0].text == f"ERROR {error['code']}: {error['message']}"
    return str(error["code"])


async def _check_tool_list(tools: list[Any], root: Path) -> None:
    with Workspace(root) as ws:
        expected = {s["name"]: s for s in ws.tool_schemas()}
    assert {t.name for t in tools} == set(expected)
    for tool in tools:
        assert tool.input_schema == expected[tool.name]["input_schema"]
        assert tool.description == expected[tool.name]["description"]
        read_only = tool.name in {"read", "list", "glob", "grep", "read_many", "stat"}
        assert tool.annotations.read_only_hint is read_only
        assert tool.annotations.destructive_hint is (not read_only and tool.name != "create_directory")
        assert tool.annotations.idempotent_hint is (read_only or tool.name == "create_directory")


async def _scenario(call: Call, root: Path) -> None:
    """read → edit → stale after an outside change → re-read → edit; plus the failures a model makes."""
    (root / "app.py").write_text(APP)
    unseen = await call("edit", {"file_path": "app.py", "old_string": "hi", "new_string": "hello"})
    assert _code(unseen) == "FS_NOT_OBSERVED"

    read = await call("read", {"file_path": "app.py"})
    assert _code(read) is None and read.structured_content["total_lines"] == 2
    assert "     1\tdef greet(name):" in read.content[0].text

    edit = await call("edit", {"file_path": "app.py", "old_string": "'hi '", "new_string": "'hello '"})
    assert _code(edit) is None, edit.content[0].text
    assert edit.structured_content["replacements"] == 1

    (root / "app.py").write_text(APP.replace("greet", "welcome"))  # someone else edits the file
    stale = await call("edit", {"file_path": "app.py", "old_string": "'hello '", "new_string": "'hey '"})
    assert _code(stale) == "FS_STALE_VERSION"
    assert stale.content[0].text.endswith("re-read the file, then retry")
    assert stale.structured_content["error"]["name"] == "StaleVersion"

    assert _code(await call("read", {"file_path": "app.py"})) is None
    retry = await call("edit", {"file_path": "app.py", "old_string": "'hi '", "new_string": "'hey '"})
    assert _code(retry) is None, retry.content[0].text
    assert (root / "app.py").read_text() == "def welcome(name):\n    return 'hey ' + name\n"

    bad = await call("read", {"file_path": 3, "offset": "2", "bogus": True})
    assert _code(bad) == "INVALID_ARGS"
    assert bad.content[0].text == (
        "ERROR INVALID_ARGS: invalid arguments: /file_path: expected string, got number; "
        "/offset: expected integer, got string; /bogus: unknown property; "
        "expected one of: file_path, offset, limit, pages"
    )
    unknown = await call("raed", {"file_path": "app.py"})
    assert _code(unknown) == "UNKNOWN_TOOL" and 'did you mean "read"' in unknown.content[0].text
    escape = await call("read", {"file_path": "../outside/secret.txt"})
    assert _code(escape) == "FS_SANDBOX_DENIED"
    assert "TOP-SECRET" not in escape.content[0].text


# --- stdio: a real subprocess -------------------------------------------------------------------------


def _stdio_params(root: Path, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "fs_tools.cli", "serve", "--root", str(root), *extra]
    )


def test_stdio_subprocess_serves_the_whole_scenario(root: Path, tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"

    async def run() -> None:
        async with stdio_client(_stdio_params(root, "--audit-log", str(audit))) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            await _check_tool_list((await s.list_tools()).tools, root)
            await _scenario(s.call_tool, root)

    asyncio.run(run())
    lines = audit.read_text().splitlines()
    assert len(lines) == 9 and '"code": "FS_STALE_VERSION"' in lines[3]
    replay = subprocess.run(
        [sys.executable, "-m", "fs_tools.cli", "replay", str(audit)], capture_output=True, text=True, check=True
    )
    assert "edit app.py: replace" in replay.stdout and "→ FS_STALE_VERSION" in replay.stdout
    rejected = replay.stdout.splitlines()[6]  # sent with a number for a path: shown as sent, not as a read
    assert 'read(file_path=3, offset="2", bogus=true)  → INVALID_ARGS' in rejected


def test_stdio_read_only_server_refuses_writes(root: Path) -> None:
    async def run() -> None:
        async with stdio_client(_stdio_params(root, "--read-only")) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            result = await s.call_tool("write", {"file_path": "new.txt", "content": "x"})
            assert _code(result) == "FS_SANDBOX_DENIED" and "read-only" in result.content[0].text

    asyncio.run(run())
    assert not (root / "new.txt").exists()


def test_stdio_server_offers_only_the_tools_asked_for(root: Path) -> None:
    (root / "app.py").write_text(APP)

    async def run() -> None:
        async with stdio_client(_stdio_params(root, "--tools", "read,edit")) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            assert [tool.name for tool in (await s.list_tools()).tools] == ["read", "edit"]
            assert _code(await s.call_tool("read", {"file_path": "app.py"})) is None
            assert _code(await s.call_tool("write", {"file_path": "new.txt", "content": "x"})) == "UNKNOWN_TOOL"

    asyncio.run(run())
    assert not (root / "new.txt").exists()


def test_a_stdio_client_rewinds_only_when_the_host_names_the_history_tools(root: Path) -> None:
    (root / "app.py").write_text(APP)
    tools = "read,edit,checkpoint,history,diff,rewind"

    async def run() -> None:
        async with stdio_client(_stdio_params(root)) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            assert not {"checkpoint", "rewind"} & {tool.name for tool in (await s.list_tools()).tools}
        async with stdio_client(_stdio_params(root, "--tools", tools)) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            listed = {tool.name: tool for tool in (await s.list_tools()).tools}
            assert set(listed) == set(tools.split(","))
            assert "force" not in listed["rewind"].input_schema["properties"]  # the host's decision only
            mark = (await s.call_tool("checkpoint", {"label": "start"})).structured_content["mark"]  # type: ignore[index]
            assert _code(await s.call_tool("read", {"file_path": "app.py"})) is None
            assert (
                _code(await s.call_tool("edit", {"file_path": "app.py", "old_string": "hi ", "new_string": "yo "}))
                is None
            )
            diff = await s.call_tool("diff", {"since": mark})
            assert "-" in diff.content[0].text and "+++ b/app.py" in diff.content[0].text  # type: ignore[union-attr]
            rewound = await s.call_tool("rewind", {"mark": mark})
            assert _code(rewound) is None and "Restored 1 path" in rewound.content[0].text  # type: ignore[union-attr]
            assert _code(await s.call_tool("rewind", {"mark": "m1"})) == "INVALID_ARGS"

    asyncio.run(run())
    assert (root / "app.py").read_text() == APP


def test_serve_prefix_publishes_and_answers_the_prefixed_names(root: Path) -> None:
    (root / "app.py").write_text(APP)

    async def run() -> None:
        async with stdio_client(_stdio_params(root, "--prefix", "fs_")) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            assert [tool.name for tool in (await s.list_tools()).tools][:2] == ["fs_read", "fs_write"]
            assert _code(await s.call_tool("fs_read", {"file_path": "app.py"})) is None  # the inline fast path
            edit = {"file_path": "app.py", "old_string": "hi ", "new_string": "hello "}
            assert _code(await s.call_tool("fs_edit", edit)) is None
            assert _code(await s.call_tool("read", {"file_path": "app.py"})) == "UNKNOWN_TOOL"

    asyncio.run(run())
    assert "hello " in (root / "app.py").read_text()


@pytest.mark.parametrize(
    ("dialect", "names", "read", "edit"),
    [
        (
            "claude-code",
            ["Read", "Write", "Edit", "MultiEdit", "Glob", "Grep", "LS", "NotebookEdit"],
            ("Read", {"file_path": "app.py"}),
            ("Edit", {"file_path": "app.py", "old_string": "hi ", "new_string": "hello "}),
        ),
        (
            "anthropic",
            ["str_replace_based_edit_tool"],
            ("str_replace_based_edit_tool", {"command": "view", "path": "app.py"}),
            (
                "str_replace_based_edit_tool",
                {"command": "str_replace", "path": "app.py", "old_str": "hi ", "new_str": "hello "},
            ),
        ),
        (
            "codex",
            ["apply_patch", "read", "list", "glob", "grep"],
            ("read", {"file_path": "app.py"}),
            (
                "apply_patch",
                {
                    "input": "*** Begin Patch\n*** Update File: app.py\n@@\n-    return 'hi ' + name\n"
                    "+    return 'hello ' + name\n*** End Patch\n"
                },
            ),
        ),
        (
            "gemini",
            ["read_file", "write_file", "replace", "glob", "grep_search", "list_directory", "read_many_files"],
            ("read_file", {"file_path": "app.py"}),
            ("replace", {"file_path": "app.py", "old_string": "hi ", "new_string": "hello ", "instruction": "greet"}),
        ),
    ],
)
def test_serve_dialect_speaks_its_own_tools_on_the_same_gates(
    root: Path, dialect: str, names: list[str], read: tuple[str, dict[str, Any]], edit: tuple[str, dict[str, Any]]
) -> None:
    (root / "app.py").write_text(APP)

    async def run() -> None:
        async with stdio_client(_stdio_params(root, "--dialect", dialect)) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            assert [tool.name for tool in (await s.list_tools()).tools] == names
            assert _code(await s.call_tool(*edit)) == "FS_NOT_OBSERVED"  # the gate, not the dialect's rules
            assert _code(await s.call_tool(*read)) is None
            assert _code(await s.call_tool(*edit)) is None
            assert _code(await s.call_tool("edit" if dialect != "codex" else "write", {})) == "UNKNOWN_TOOL"

    asyncio.run(run())
    assert "hello " in (root / "app.py").read_text()


# --- in memory ----------------------------------------------------------------------------------------


def test_in_memory_client_serves_the_whole_scenario(root: Path) -> None:
    async def run() -> None:
        with Workspace(root) as ws:
            async with Client(build_server(ws, stdio_sessions())) as client:
                await _check_tool_list((await client.list_tools()).tools, root)
                await _scenario(client.call_tool, root)

    asyncio.run(run())


def test_a_tool_that_crashes_is_a_result_not_a_protocol_error(root: Path) -> None:
    async def run() -> None:
        with Workspace(root) as ws:
            ws.dispatch = lambda *a, **k: 1 / 0  # type: ignore[method-assign]
            async with Client(build_server(ws, stdio_sessions())) as client:
                result = await client.call_tool("read", {"file_path": "x"})
                assert _code(result) == "INTERNAL_ERROR"
                assert "ZeroDivisionError" in result.content[0].text and "Traceback" not in result.content[0].text

    asyncio.run(run())


# --- streamable HTTP on loopback ----------------------------------------------------------------------


@contextlib.asynccontextmanager
async def _http_client(
    url: str,
    mode: str = "legacy",
    token: str | None = None,
    headers: dict[str, str] | None = None,
    issued: list[str] | None = None,
) -> AsyncIterator[Any]:
    """An SDK client; ``issued`` collects the MCP session ids the server hands it."""
    sent = {**({"Authorization": f"Bearer {token}"} if token else {}), **(headers or {})}

    async def note(response: Any) -> None:
        if issued is not None and response.headers.get("mcp-session-id"):
            issued.append(response.headers["mcp-session-id"])

    async with (
        httpx2.AsyncClient(headers=sent, event_hooks={"response": [note]}) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode) as client,  # type: ignore[arg-type]
    ):
        yield client


def test_http_serves_the_scenario_and_keeps_clients_apart(root: Path) -> None:
    """The handshake era: each client's MCP session is its own fs-tools session."""

    async def run(url: str) -> None:
        async with _http_client(url) as first:
            await _check_tool_list((await first.list_tools()).tools, root)
            await _scenario(first.call_tool, root)
            async with _http_client(url) as second:  # another client: another session
                result = await second.call_tool(
                    "edit", {"file_path": "app.py", "old_string": "hey", "new_string": "yo"}
                )
                assert _code(result) == "FS_NOT_OBSERVED"

    with http_server(root) as url:
        asyncio.run(run(url))


MODERN = "2026-07-28"


def test_a_stateless_client_reads_then_edits_and_tokens_keep_agents_apart(root: Path) -> None:
    """The 2026-07-28 era over HTTP (no initialize, no Mcp-Session-Id): a request's session is its bearer
    token's, so an agent reads then edits, and an agent with another token has not read."""

    async def run(url: str) -> None:
        async with _http_client(url, MODERN, "token-a") as agent:
            listed = (await agent.list_tools()).tools
            await _check_tool_list(listed, root)
            assert all(tool.title and tool.output_schema for tool in listed)
            await _scenario(agent.call_tool, root)
        async with _http_client(url, MODERN, "token-b") as other:
            change = {"file_path": "app.py", "old_string": "hey", "new_string": "yo"}
            assert _code(await other.call_tool("edit", change)) == "FS_NOT_OBSERVED"
        async with _http_client(url, MODERN, "token-a") as again:  # a new connection, the same agent
            assert _code(await again.call_tool("edit", change)) is None
        async with _http_client(url, "legacy", "token-a") as legacy:  # the other era, on the same endpoint
            assert _code(await legacy.call_tool("edit", {**change, "old_string": "yo"})) == "FS_NOT_OBSERVED"
            assert _code(await legacy.call_tool("read", {"file_path": "app.py"})) is None

    with http_server(root, tokens="token-a token-b") as url:
        asyncio.run(run(url))


def test_a_stateless_request_names_its_session_by_header_or_meta_within_its_token(root: Path) -> None:
    """A name (the fs-tools-session header, or the fs-tools/session key of _meta) keeps a session across
    connections; it is the token's own, so an agent with another token that picks the same name does not
    share it; and a stateless request cannot claim a handshake-era session by sending its id."""
    (root / "a.txt").write_text("one\n")
    change = {"file_path": "a.txt", "old_string": "one", "new_string": "two"}
    back = {"file_path": "a.txt", "old_string": "two", "new_string": "three"}

    async def run(url: str) -> None:
        named = {"fs-tools-session": "work"}
        async with _http_client(url, MODERN, "token-a", named) as first:
            assert _code(await first.call_tool("read", {"file_path": "a.txt"})) is None
        async with _http_client(url, MODERN, "token-b", named) as other:  # the same name, another agent
            assert _code(await other.call_tool("edit", change)) == "FS_NOT_OBSERVED"
        async with _http_client(url, MODERN, "token-a", named) as again:  # the same name and agent
            assert _code(await again.call_tool("edit", change)) is None
        meta = {"fs-tools/session": "by-meta"}
        async with _http_client(url, MODERN, "token-a") as first:
            assert _code(await first.call_tool("read", {"file_path": "a.txt"}, meta=meta)) is None  # type: ignore[arg-type]
            assert _code(await first.call_tool("edit", back)) == "FS_NOT_OBSERVED"  # token-a's unnamed session
            assert _code(await first.call_tool("edit", back, meta=meta)) is None  # type: ignore[arg-type]
        issued: list[str] = []
        async with _http_client(url, "legacy", "token-a", issued=issued) as legacy:
            assert _code(await legacy.call_tool("read", {"file_path": "a.txt"})) is None
            assert issued, "the handshake-era client was issued no session id"
            async with _http_client(url, MODERN, "token-b", {"mcp-session-id": issued[0]}) as intruder:
                undo = {"file_path": "a.txt", "old_string": "three", "new_string": "four"}
                assert _code(await intruder.call_tool("edit", undo)) == "FS_NOT_OBSERVED"

    with http_server(root, tokens="token-a token-b") as url:
        asyncio.run(run(url))
    assert (root / "a.txt").read_text() == "three\n"


@pytest.mark.parametrize("mode", [MODERN, "legacy", "auto"])
def test_stdio_serves_both_eras(root: Path, mode: str) -> None:
    async def run() -> None:
        async with Client(_stdio_params(root), mode=mode) as client:  # type: ignore[arg-type]
            await _check_tool_list((await client.list_tools()).tools, root)
            await _scenario(client.call_tool, root)

    asyncio.run(run())


# --- fs-tools call ------------------------------------------------------------------------------------


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fs_tools.cli", *args], capture_output=True, text=True, check=False)


def test_call_keeps_observations_across_processes(root: Path, tmp_path: Path) -> None:
    state = str(tmp_path / "state" / "obs.sqlite")
    (root / "a.txt").write_text("one\n")
    base = ("call", "--root", str(root), "--state", state)

    refused = _cli(*base, "--session", "s1", "edit", '{"file_path": "a.txt", "old_string": "one", "new_string": "1"}')
    assert refused.returncode == 1 and "error: FS_NOT_OBSERVED" in refused.stderr

    read = _cli(*base, "--session", "s1", "read", '{"file_path": "a.txt"}')
    assert read.returncode == 0 and "     1\tone" in read.stdout

    edit = _cli(*base, "--session", "s1", "edit", '{"file_path": "a.txt", "old_string": "one", "new_string": "1"}')
    assert edit.returncode == 0, edit.stdout + edit.stderr
    assert (root / "a.txt").read_text() == "1\n"

    fresh = _cli(
        *base, "--session", "s2", "--json", "edit", '{"file_path": "a.txt", "old_string": "1", "new_string": "2"}'
    )
    assert fresh.returncode == 1
    assert '"code": "FS_NOT_OBSERVED"' in fresh.stdout and '"isError": true' in fresh.stdout
    assert (root / "a.txt").read_text() == "1\n"
    assert not any(p.suffix == ".sqlite" for p in root.rglob("*"))


def test_call_reports_non_json_arguments_as_invalid_args(root: Path, tmp_path: Path) -> None:
    result = _cli("call", "--root", str(root), "--state", str(tmp_path / "o.sqlite"), "--session", "s", "read", "{oops")
    assert result.returncode == 1 and "not valid JSON" in result.stdout and "INVALID_ARGS" in result.stderr


def test_replay_never_raises_on_old_or_garbage_entries(tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    log.write_text(
        '{"tool": "read", "arguments": {"path": "old-schema.py"}, "code": null}\n'
        "not json\n"
        "[1, 2]\n"
        '{"tool": 5, "arguments": "x", "code": "FS_NOT_FOUND", "duration_ms": "slow"}\n'
    )
    result = _cli("replay", str(log))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].endswith('read(path="old-schema.py")  → ok')
    assert lines[1].endswith("not JSON (unreadable entry)")
    assert lines[2].endswith("a JSON list, not an object (unreadable entry)")
    assert lines[3].endswith("(no tool name recorded)  → FS_NOT_FOUND")


def test_raw_wire_garbage_never_crashes_the_server_or_becomes_an_internal_error(root: Path) -> None:
    """Every stdout line is JSON-RPC; odd requests get answers; the server keeps serving."""
    (root / "a.txt").write_text("one\n")
    requests: list[dict[str, Any] | str] = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        "this is not json",
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "read", "arguments": [1, 2]}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "read"}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": 7, "arguments": {}}},
        {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "tools/call",
            "params": {"name": "read", "arguments": {"file_path": "a.txt", "limit": 1e400}},
        },
        {
            "jsonrpc": "2.0",
            "id": 6,
            "method": "tools/call",
            "params": {"name": "read", "arguments": {"file_path": "a.txt"}},
        },
    ]
    process = subprocess.Popen(
        [sys.executable, "-m", "fs_tools.cli", "serve", "--root", str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None
    answers: dict[int, dict[str, Any]] = {}
    try:
        for request in requests:
            line = request if isinstance(request, str) else json.dumps(request)
            process.stdin.write(line.encode() + b"\n")
            process.stdin.flush()
            if isinstance(request, dict) and "id" in request:
                while request["id"] not in answers:  # skip anything the server says unprompted
                    message = json.loads(process.stdout.readline())  # every line must be JSON
                    if "id" in message:
                        answers[message["id"]] = message
    finally:
        process.stdin.close()
        process.wait(timeout=10)
    assert all(answer.get("error", {}).get("code") != -32603 for answer in answers.values()), answers
    missing = answers[3]["result"]
    assert missing["isError"] and missing["structuredContent"]["error"]["code"] == "INVALID_ARGS"
    huge = answers[5]["result"]
    assert huge["isError"] and huge["structuredContent"]["error"]["code"] == "INVALID_ARGS"
    assert answers[6]["result"]["isError"] is False
    assert answers[6]["result"]["content"][0]["text"] == "     1\tone"


def test_stdio_pipes_carry_messages_of_megabytes(root: Path) -> None:
    """The event-loop transport reads lines far over asyncio's default 64 KiB limit."""
    content = "".join(f"line {n:07d} of a big file\n" for n in range(120_000))  # ~3 MB, one JSON line

    async def run() -> None:
        async with stdio_client(_stdio_params(root)) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            written = await s.call_tool("write", {"file_path": "big.txt", "content": content})
            assert not written.is_error, written.content[0].text
            page = await s.call_tool("read", {"file_path": "big.txt", "offset": 119_999})
            assert page.content[0].text == "119999\tline 0119998 of a big file\n120000\tline 0119999 of a big file"

    asyncio.run(run())
    assert (root / "big.txt").read_text() == content


def test_stdio_to_a_regular_file_uses_the_threaded_streams(root: Path, tmp_path: Path) -> None:
    """stdout that is not a pipe (here a file) cannot join the event loop: the SDK's own streams serve."""
    (root / "a.txt").write_text("one\n")
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "file", "version": "0"}}
    read = {"name": "read", "arguments": {"file_path": "a.txt"}}
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": read},
    ]
    out = tmp_path / "answers.jsonl"
    with out.open("wb") as stdout:
        process = subprocess.Popen(
            [sys.executable, "-m", "fs_tools.cli", "serve", "--root", str(root)], stdin=subprocess.PIPE, stdout=stdout
        )
        assert process.stdin is not None
        process.stdin.write("".join(json.dumps(line) + "\n" for line in lines).encode())
        process.stdin.flush()
        deadline = time.monotonic() + 60
        while '"id":2' not in out.read_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        process.stdin.close()
        process.wait(timeout=10)
    answers = {m["id"]: m for m in map(json.loads, out.read_text().splitlines()) if "id" in m}
    assert answers[2]["result"]["content"][0]["text"] == "     1\tone"


def test_every_reply_written_before_shutdown_reaches_the_client_whole(root: Path) -> None:
    """Requests sent, stdin closed at once: each line that comes out is complete JSON (replies larger
    than a pipe buffer are flushed before the server exits)."""
    (root / "big.txt").write_text("".join(f"line {n} " + "x" * 40 + "\n" for n in range(6000)))  # ~300 KB
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "batch", "version": "0"}}
    lines = [{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}]
    lines.append({"jsonrpc": "2.0", "method": "notifications/initialized"})
    read = {"name": "read", "arguments": {"file_path": "big.txt"}}
    lines += [{"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": read} for n in (1, 2, 3)]
    process = subprocess.Popen(
        [sys.executable, "-m", "fs_tools.cli", "serve", "--root", str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write("".join(json.dumps(line) + "\n" for line in lines).encode())
    process.stdin.close()
    time.sleep(1.5)  # a slow reader: the replies fill the pipe while the server is shutting down
    out = process.stdout.read().decode()
    process.wait(timeout=30)
    assert out.endswith("\n")
    answers = [json.loads(line) for line in out.splitlines()]  # every line parses
    assert answers[0]["id"] == 0


def test_the_pipes_get_their_blocking_mode_back(root: Path, tmp_path: Path) -> None:
    """The event loop makes the pipes non-blocking; a script that goes on using them after the server
    exits must find them as they were."""
    probe = "import os; print(os.get_blocking(0), os.get_blocking(1))"
    script = f"{sys.executable} -m fs_tools.cli serve --root {root} </dev/stdin; {sys.executable} -c '{probe}'"
    done = subprocess.run(["sh", "-c", script], input=b"", capture_output=True, timeout=60, check=False)
    assert done.stdout.decode().split() == ["True", "True"], done.stderr.decode()[-2000:]


def test_an_over_long_line_is_dropped_whole() -> None:
    """The tail of a line over the limit is never read as a message of its own."""
    from fs_tools.mcp.stdio import _LineReader

    async def run() -> list[str]:
        reader = asyncio.StreamReader(limit=64)
        reader.feed_data(b'{"padding": "' + b"x" * 300 + b'"}, {"smuggled": true}\n{"ok": 1}\n' + b"y" * 200)
        reader.feed_data(b'\n{"last": 2}')
        reader.feed_eof()
        return [line async for line in _LineReader(reader)]

    assert asyncio.run(run()) == ['{"ok": 1}\n', '{"last": 2}']


# --- the command line prints what the server sends -----------------------------------------------------------


def _wire(model: Any) -> Any:
    return json.loads(model.model_dump_json(by_alias=True, exclude_none=True))


def test_schema_prints_what_tools_list_sends(root: Path) -> None:
    async def listed() -> list[Any]:
        with Workspace(root) as ws:
            async with Client(build_server(ws, stdio_sessions())) as client:
                return [_wire(tool) for tool in (await client.list_tools()).tools]

    printed = json.loads(_cli("schema", "--root", str(root), "--format", "mcp").stdout)
    assert printed == asyncio.run(listed())


def test_call_json_prints_what_the_server_returns_for_the_same_calls(root: Path, tmp_path: Path) -> None:
    """read, an outside change, a stale edit, a rejected call: the same JSON from both, the stale error's
    "line 2 changed" included (the CLI's provider finds the content the earlier call read in the store)."""
    calls: list[tuple[str, dict[str, Any]]] = [
        ("read", {"file_path": "app.py"}),
        ("edit", {"file_path": "app.py", "old_string": "greet", "new_string": "welcome"}),
        ("edit", {"file_path": "app.py", "old_string": "x", "new_string": "x"}),
        ("raed", {"file_path": "app.py"}),
    ]

    def outside_change() -> None:
        (root / "app.py").write_text(APP.replace("'hi '", "'hello '"))

    async def served() -> list[Any]:
        (root / "app.py").write_text(APP)
        out = []
        with Workspace(root) as ws:
            async with Client(build_server(ws, stdio_sessions())) as client:
                for n, (tool, arguments) in enumerate(calls):
                    out.append(_wire(await client.call_tool(tool, arguments)))
                    if n == 0:
                        outside_change()
        return out

    from_server = asyncio.run(served())
    (root / "app.py").write_text(APP)
    state = str(tmp_path / "state" / "o.sqlite")
    from_cli = []
    base = ("call", "--root", str(root), "--state", state, "--session", "s", "--json")
    for n, (tool, arguments) in enumerate(calls):
        done = _cli(*base, tool, json.dumps(arguments))
        from_cli.append(json.loads(done.stdout))
        if n == 0:
            outside_change()
    assert "line 2 changed" in from_server[1]["content"][0]["text"]
    for served_result, printed in zip(from_server, from_cli, strict=True):
        served_result.pop("resultType", None)  # the SDK's default for a complete result
        served_result.pop("_meta", None)  # the SDK's envelope (serverInfo), not the tool's result
        assert printed == served_result


def test_over_stdio_a_read_of_an_image_pdf_or_notebook_leaves_the_event_loop(root: Path) -> None:
    """Small reads run on the event loop (a thread hand-off is a quarter of their cost); a read that
    decodes an image, starts the PDF reader or parses a notebook runs in a worker thread."""
    from fs_tools.mcp.server import stdio_inline_tools

    for name in ("app.py", "shot.png", "paper.pdf", "analysis.ipynb"):
        (root / name).write_text(APP)
    ran_on: dict[str, bool] = {}

    async def run() -> None:
        loop_thread = threading.get_ident()
        with Workspace(root) as ws:
            dispatch = ws.dispatch

            def spy(session: str, tool: object, arguments: Any, *more: Any, **named: Any) -> Any:
                path = arguments.get("file_path") if isinstance(arguments, dict) else str(arguments)
                ran_on[str(path)] = threading.get_ident() == loop_thread
                return dispatch(session, tool, arguments, *more, **named)

            ws.dispatch = spy  # type: ignore[method-assign]
            async with Client(build_server(ws, stdio_sessions(), inline=stdio_inline_tools(ws))) as client:
                for name in ("app.py", "shot.png", "paper.pdf", "analysis.ipynb"):
                    await client.call_tool("read", {"file_path": name})

    asyncio.run(run())
    assert ran_on == {"app.py": True, "shot.png": False, "paper.pdf": False, "analysis.ipynb": False}
