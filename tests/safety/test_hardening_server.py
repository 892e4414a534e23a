"""The server and the CLI against hostile or broken input, as real processes (issue 12, items 7, 14, 16
and the stdio stall of item 5): every stdio request gets an answer, a write waiting for another
process's lock leaves the stdio server answering (and can be cancelled), the HTTP transport demands its
bearer token, and a bad observation store is the host's one-line error, never a traceback."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import pty
import queue
import secrets
import select
import sqlite3
import stat
import subprocess
import sys
import threading
import tty
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

mcp = pytest.importorskip("mcp")

import httpx  # noqa: E402
import httpx2  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared.message import SessionMessage  # noqa: E402

from fs_tools import Workspace, cli  # noqa: E402
from fs_tools.mcp import http as mcp_http  # noqa: E402
from fs_tools.mcp import server as mcp_server  # noqa: E402
from fs_tools.mcp import wire as mcp_wire  # noqa: E402
from fs_tools.stores.sqlite import SqliteStore  # noqa: E402
from policy import Present  # noqa: E402

WAIT = 60.0  # the longest a test waits for an answer or a process; reached only when something is broken
SERVE = [sys.executable, "-m", "fs_tools.cli", "serve"]
HELLO = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
PARSE_ERROR, INVALID_REQUEST = -32700, -32600


def _call_line(request_id: int, tool: str, arguments: str) -> str:
    """A tools/call line with ``arguments`` pasted in as JSON text (so it can hold what json.dumps
    would never write)."""
    return (
        f'{{"jsonrpc": "2.0", "id": {request_id}, "method": "tools/call", '
        f'"params": {{"name": "{tool}", "arguments": {arguments}}}}}'
    )


def _library_text(root: Path, tool: str, arguments: str) -> str:
    """What the library itself answers for the same JSON arguments, as a model reads it over MCP."""
    with Workspace(root) as ws:
        result = ws.session("library").call(tool, arguments)
    assert result.error is not None and result.error.code == "INVALID_ARGS", result.text
    return f"ERROR INVALID_ARGS: {result.text}"


class RawStdio:
    """``fs-tools serve`` spoken to line by line over a pipe; a thread collects what it writes to its
    stdout (a pipe, or with ``stdout_tty`` a raw pseudo-terminal, which takes the server's threaded path)."""

    def __init__(self, root: Path, *extra: str, stdout_tty: bool = False) -> None:
        if stdout_tty:
            reading, writing = pty.openpty()
            tty.setraw(writing)  # no newline translation
        else:
            reading, writing = os.pipe()
        try:
            self.process = subprocess.Popen(
                [*SERVE, "--root", str(root), *extra], stdin=subprocess.PIPE, stdout=writing, stderr=subprocess.PIPE
            )
        finally:
            os.close(writing)
        self._out = os.fdopen(reading, "rb")
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._answers: dict[Any, list[dict[str, Any]]] = {}
        self.arrived: list[Any] = []  # the ids of the replies read so far, in the order they came
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        with contextlib.suppress(OSError):  # a pseudo-terminal says EIO once the server has exited
            for line in self._out:
                self._lines.put(line)
        self._lines.put(None)

    def send(self, message: dict[str, Any] | str) -> None:
        assert self.process.stdin is not None
        line = message if isinstance(message, str) else json.dumps(message)
        self.process.stdin.write(line.encode("utf-8", "surrogatepass") + b"\n")
        self.process.stdin.flush()

    def answer(self, request_id: Any) -> dict[str, Any]:
        """The reply to ``request_id`` (None: the next reply with a null id), waiting at most WAIT."""
        while not self._answers.get(request_id):
            try:
                line = self._lines.get(timeout=WAIT)
            except queue.Empty:
                raise AssertionError(f"no answer to request {request_id!r} within {WAIT:.0f} s") from None
            if line is None:
                raise AssertionError(f"the server exited without answering request {request_id!r}")
            message = json.loads(line)  # every line the server writes is JSON
            if "id" in message:
                self._answers.setdefault(message["id"], []).append(message)
                self.arrived.append(message["id"])
        return self._answers[request_id].pop(0)

    def initialize(self) -> None:
        self.send({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": HELLO})
        assert "result" in self.answer("init")
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def finish(self) -> list[dict[str, Any]]:
        """Close stdin, wait for the server to exit, and return what it wrote that nobody asked for."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=WAIT)
        rest: list[dict[str, Any]] = [m for ms in self._answers.values() for m in ms]
        while (line := self._lines.get(timeout=WAIT)) is not None:
            rest.append(json.loads(line))
        return rest

    def __enter__(self) -> RawStdio:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=WAIT)


# --- item 7: every stdio request gets an answer ---------------------------------------------------------

SURROGATE_PATH = r'{"file_path": "\ud800"}'
HUGE_LIMIT = '{"file_path": "a.txt", "limit": ' + "9" * 5000 + "}"
SURROGATE_CONTENT = r'{"file_path": "new.txt", "content": "x\udc00y"}'


def test_stdio_answers_every_request_the_sdk_parser_refuses(root: Path) -> None:
    (root / "a.txt").write_text("one\n")
    expected = {
        2: _library_text(root, "read", SURROGATE_PATH),
        3: _library_text(root, "read", HUGE_LIMIT),
        4: _library_text(root, "write", SURROGATE_CONTENT),
    }
    assert "/file_path" in expected[2] and "/content" in expected[4]
    with RawStdio(root) as server:
        server.initialize()
        server.send(_call_line(2, "read", SURROGATE_PATH))
        server.send(_call_line(3, "read", HUGE_LIMIT))
        server.send(_call_line(4, "write", SURROGATE_CONTENT))
        server.send(r'{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "re\ud800d"}}')
        server.send('{"jsonrpc": "2.0", "id": 6, "method": 6}')  # JSON, but not JSON-RPC
        server.send('{"jsonrpc": "2.0", "id": ' + "7" * 5000 + ', "method": "ping"}')  # an id nobody can read
        server.send("this is not json")
        server.send(_call_line(8, "read", '{"file_path": "a.txt"}'))

        for request_id, text in expected.items():  # the library's own INVALID_ARGS, word for word
            result = server.answer(request_id)["result"]
            assert result["isError"] is True
            assert result["structuredContent"]["error"]["code"] == "INVALID_ARGS"
            assert result["content"][0]["text"] == text
        for request_id in (5, 6):
            assert server.answer(request_id)["error"]["code"] == INVALID_REQUEST
        assert server.answer(None)["error"]["code"] == INVALID_REQUEST  # the unreadable id
        assert server.answer(None)["error"]["code"] == PARSE_ERROR
        assert server.answer(8)["result"]["content"][0]["text"] == "     1\tone"  # and it goes on serving
        server.finish()
    assert server.process.returncode == 0
    assert sorted(os.listdir(root)) == ["a.txt"]


def test_stdio_to_a_terminal_answers_them_too(root: Path) -> None:
    """The threaded path (stdout a terminal, not a pipe) goes through the same reader."""
    (root / "a.txt").write_text("one\n")
    with RawStdio(root, stdout_tty=True) as server:
        server.initialize()
        server.send(_call_line(2, "read", SURROGATE_PATH))
        server.send(_call_line(3, "read", HUGE_LIMIT))
        server.send("this is not json")
        server.send(_call_line(4, "read", '{"file_path": "a.txt"}'))
        assert server.answer(2)["result"]["content"][0]["text"] == _library_text(root, "read", SURROGATE_PATH)
        assert server.answer(3)["result"]["content"][0]["text"] == _library_text(root, "read", HUGE_LIMIT)
        assert server.answer(None)["error"]["code"] == PARSE_ERROR
        assert server.answer(4)["result"]["content"][0]["text"] == "     1\tone"
        server.finish()
    assert server.process.returncode == 0


@pytest.mark.parametrize(
    ("line", "code"),
    [
        ("{oops", PARSE_ERROR),
        ('{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": NaN}', PARSE_ERROR),  # not JSON
        ("[" * 100_000 + "]" * 100_000, PARSE_ERROR),  # nested past any parser's limit
        ('{"jsonrpc": "2.0", "id": ' + "1" * 5000 + ', "method": "ping"}', INVALID_REQUEST),
        ('["a", "batch"]', INVALID_REQUEST),
    ],
)
def test_a_line_with_no_readable_id_is_answered_with_a_null_id(line: str, code: int) -> None:
    reply = mcp_wire.inbound_message(line)
    assert reply is not None and not isinstance(reply, SessionMessage)
    assert reply.id is None and reply.error.code == code


@pytest.mark.parametrize(
    "line",
    [
        "   \n",
        r'{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"reason": "\ud800"}}',
        r'{"jsonrpc": "2.0", "id": 3, "result": {"roots": [{"uri": "file:///\ud800"}]}}',
    ],
)
def test_blank_lines_notifications_and_responses_are_never_answered(line: str) -> None:
    assert mcp_wire.inbound_message(line) is None  # JSON-RPC has no way to answer them


def test_a_repaired_call_keeps_its_id_and_name_and_defers_the_arguments_to_the_library() -> None:
    message = mcp_wire.inbound_message(_call_line(7, "grep", '{"pattern": "\\ud800", "n": ' + "5" * 5000 + "}"))
    assert isinstance(message, SessionMessage)
    request = message.message
    assert request.id == 7 and request.params is not None and request.params["name"] == "grep"  # type: ignore[union-attr]
    text = request.params["arguments"].text  # type: ignore[union-attr]
    assert text == '{"pattern": "\\ud800", "n": ' + "5" * 5000 + "}"


def test_a_reply_holding_a_lone_surrogate_is_still_written_as_json() -> None:
    import mcp_types as types

    reply = types.JSONRPCResponse(jsonrpc="2.0", id=9, result={"content": [{"type": "text", "text": "a\ud800b"}]})
    assert json.loads(mcp_wire.wire_text(reply))["result"]["content"][0]["text"] == "a\ud800b"


def test_a_client_that_stops_reading_ends_the_server_quietly(root: Path) -> None:
    """The spec's "quiet exit when its output pipe closes", for the stdio server."""
    (root / "a.txt").write_text("one\n")
    process = subprocess.Popen(
        [*SERVE, "--root", str(root)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    try:
        process.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": HELLO}).encode())
        process.stdin.write(b"\n")
        process.stdin.flush()
        assert select.select([process.stdout], [], [], WAIT)[0], "no answer to initialize"
        assert json.loads(process.stdout.readline())["id"] == 1
        process.stdout.close()  # the client stops reading; the next replies meet a closed pipe
        with contextlib.suppress(BrokenPipeError):  # the server may be gone already
            for request_id in range(2, 6):
                process.stdin.write(json.dumps(_read_call(request_id, "a.txt")).encode() + b"\n")
                process.stdin.flush()
            process.stdin.close()
        process.wait(timeout=WAIT)
        stderr = process.stderr.read().decode()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=WAIT)
    assert process.returncode == 0 and "Traceback" not in stderr, stderr[-2000:]


def _http_post(url: str, body: str | bytes, session: str | None = None, **headers: str) -> httpx.Response:
    sent = {"accept": "application/json, text/event-stream", "content-type": "application/json", **headers}
    if session is not None:
        sent |= {"mcp-session-id": session, "mcp-protocol-version": HELLO["protocolVersion"]}  # type: ignore[dict-item]
    return httpx.post(url, content=body, headers=sent, timeout=WAIT)


def _sse_result(response: httpx.Response) -> dict[str, Any]:
    data = [line[len("data: ") :] for line in response.text.splitlines() if line.startswith("data: ")]
    return dict(json.loads(data[-1]))


def test_http_answers_what_its_parser_refuses_and_goes_on_serving(root: Path) -> None:
    """Over HTTP every POST gets its own answer: the SDK answers a body it cannot parse with 400 and a
    JSON-RPC parse error (id null, as JSON-RPC says for a parse error), so no client waits forever."""
    (root / "a.txt").write_text("one\n")
    with _http_server(root, "--no-token") as url:
        hello = _http_post(url, json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": HELLO}))
        assert hello.status_code == 200, hello.text
        session = hello.headers["mcp-session-id"]
        initialized = _http_post(url, json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}), session)
        assert initialized.status_code == 202
        for arguments in (SURROGATE_PATH, HUGE_LIMIT):
            refused = _http_post(url, _call_line(2, "read", arguments), session)
            assert refused.status_code == 400
            assert refused.json()["error"]["code"] == PARSE_ERROR
        fine = _http_post(url, _call_line(3, "read", '{"file_path": "a.txt"}'), session)
        assert _sse_result(fine)["result"]["content"][0]["text"] == "     1\tone"


# --- item 14: the HTTP transport's bearer token -----------------------------------------------------------


@contextlib.contextmanager
def _http_server(root: Path, *extra: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """``serve --transport http --port 0``; yields the URL it prints once it listens. Always stopped."""
    environment = {k: v for k, v in os.environ.items() if k != "FS_TOOLS_TOKEN"} | (env or {})
    process = subprocess.Popen(
        [*SERVE, "--root", str(root), "--transport", "http", "--port", "0", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=environment,
    )
    lines: queue.Queue[bytes] = queue.Queue()
    assert process.stdout is not None
    threading.Thread(target=lambda: lines.put(process.stdout.readline()), daemon=True).start()  # type: ignore[union-attr]
    try:
        try:
            first = lines.get(timeout=WAIT).decode()
        except queue.Empty:
            first = ""
        if not first.startswith("fs-tools: serving MCP on http://"):
            process.kill()
            stderr = process.stderr.read().decode() if process.stderr else ""
            raise AssertionError(f"the server did not start: {first!r} {stderr[-2000:]}")
        yield first.split(" on ", 1)[1].strip()
    finally:
        process.terminate()
        try:
            process.wait(timeout=WAIT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=WAIT)


MCP_ACCEPT = [("accept", "application/json, text/event-stream"), ("content-type", "application/json")]
INITIALIZE = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": HELLO})


@pytest.mark.parametrize("given_by", ["--token", "FS_TOOLS_TOKEN"])
def test_http_demands_the_token_on_every_request(root: Path, given_by: str) -> None:
    secret = root / "secret.txt"
    secret.write_text("TOP-SECRET\n")
    secret.chmod(0o600)
    token = secrets.token_urlsafe(32)
    flag = [f"--token={token}"] if given_by == "--token" else []  # = : a token may begin with "-"
    env = {"FS_TOOLS_TOKEN": token} if given_by == "FS_TOOLS_TOKEN" else None
    refused_headers: list[list[tuple[str, str]]] = [
        [],
        [("authorization", f"Bearer {token}x")],
        [("authorization", f"Bearer {token[:-1]}")],
        [("authorization", "Bearer")],
        [("authorization", f"Basic {token}")],
        [("authorization", token)],
        [("authorization", f"Bearer {token}"), ("authorization", "Bearer other")],  # which one? neither
    ]

    async def use_the_tools(url: str) -> str:
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            result = await client.call_tool("read", {"file_path": "secret.txt"})
            return str(result.content[0].text)

    with _http_server(root, *flag, env=env) as url:
        base = url.removesuffix("/mcp")
        for headers in refused_headers:
            for method, target in (("POST", url), ("GET", url), ("DELETE", url), ("GET", base + "/")):
                response = httpx.request(
                    method,
                    target,
                    headers=[*MCP_ACCEPT, *headers],
                    content=INITIALIZE if method == "POST" else None,
                    timeout=WAIT,
                )
                assert response.status_code == 401, (method, target, headers, response.text)
                assert response.headers["www-authenticate"].startswith("Bearer")
                assert "TOP-SECRET" not in response.text and token not in response.text
        # the scheme's name is case-insensitive, as HTTP says
        assert _http_post(url, INITIALIZE, authorization=f"bearer {token}").status_code == 200
        # the DNS-rebinding checks still hold for a client that has the token
        with_token = {"authorization": f"Bearer {token}"}
        assert _http_post(url, INITIALIZE, host="evil.example", **with_token).status_code == 421
        assert _http_post(url, INITIALIZE, origin="http://evil.example", **with_token).status_code == 403
        assert asyncio.run(use_the_tools(url)) == "     1\tTOP-SECRET"


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.7"])
def test_serve_refuses_a_non_loopback_address_without_a_token(root: Path, host: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "FS_TOOLS_TOKEN"}
    done = subprocess.run(
        [*SERVE, "--root", str(root), "--transport", "http", "--host", host, "--port", "0"],
        capture_output=True,
        text=True,
        env=env,
        timeout=WAIT,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert f"--host {host!r} is not a loopback address" in done.stderr and "--token" in done.stderr


@pytest.mark.parametrize("token", ["", "two words", "tab\there", "naïve"])
def test_serve_refuses_a_token_no_header_can_carry(root: Path, token: str) -> None:
    done = subprocess.run(
        [*SERVE, "--root", str(root), "--transport", "http", "--port", "0", "--token", token],
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "--token" in done.stderr and "printable ASCII" in done.stderr and "Traceback" not in done.stderr


def test_http_on_loopback_without_a_token_makes_one_only_the_user_can_read(root: Path, tmp_path: Path) -> None:
    """Issue 31: HTTP on loopback without a token let every local user read and write the workspace with
    the server user's rights. Given none, the server now makes one, writes it where only its user can
    read it, demands it on every request, and removes the file when it stops."""
    (root / "secret.txt").write_text("TOP-SECRET\n")
    state = tmp_path / "state"
    with _http_server(root, env={"XDG_STATE_HOME": str(state)}) as url:
        port = int(url.rsplit(":", 1)[1].removesuffix("/mcp"))
        made = state / "fs-tools" / f"http-{port}.token"
        assert made.exists(), sorted(map(str, state.rglob("*")))
        info = made.stat()
        assert stat.S_IMODE(info.st_mode) == 0o600 and info.st_uid == os.getuid()
        assert stat.S_IMODE((state / "fs-tools").stat().st_mode) == 0o700
        token = made.read_text()
        assert len(token) >= 43 and mcp_http.check_token(token) is None  # 32 random bytes, URL-safe
        assert list((state / "fs-tools").iterdir()) == [made]  # no temp left beside it
        refused = _http_post(url, INITIALIZE)
        assert refused.status_code == 401 and "TOP-SECRET" not in refused.text
        assert _http_post(url, INITIALIZE, authorization=f"Bearer {token}").status_code == 200

        async def read_the_secret() -> str:
            async with (
                httpx2.AsyncClient(headers={"Authorization": f"Bearer {made.read_text()}"}) as http,
                Client(streamable_http_client(url, http_client=http)) as client,
            ):
                return str((await client.call_tool("read", {"file_path": "secret.txt"})).content[0].text)

        assert asyncio.run(read_the_secret()) == "     1\tTOP-SECRET"
    assert not made.exists()  # stopped by SIGTERM, as a service manager stops it: the file goes with it


def test_no_token_opts_out_on_loopback_only(root: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    with _http_server(root, "--no-token", env={"XDG_STATE_HOME": str(state), "FS_TOOLS_TOKEN": "ignored"}) as url:
        assert _http_post(url, INITIALIZE).status_code == 200  # the flag wins over the variable, as flags do
    assert not state.exists()  # no token made, none written
    env = {k: v for k, v in os.environ.items() if k != "FS_TOOLS_TOKEN"}
    for extra, says in (
        (["--host", "0.0.0.0", "--no-token"], "--no-token serves only on a loopback address, and --host '0.0.0.0'"),
        (["--no-token", "--token", "abc"], "--no-token and --token contradict each other"),
    ):
        done = subprocess.run(
            [*SERVE, "--root", str(root), "--transport", "http", "--port", "0", *extra],
            capture_output=True,
            text=True,
            env=env,
            timeout=WAIT,
            check=False,
        )
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        assert done.stderr.startswith("fs-tools: error: ") and says in done.stderr and "Traceback" not in done.stderr
    stdio = subprocess.run(  # no port to protect: said, and served
        [*SERVE, "--root", str(root), "--no-token"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        timeout=WAIT,
        check=False,
    )
    assert stdio.returncode == 0, stdio.stderr
    assert "fs-tools: warning: --no-token applies to --transport http only; stdio ignores it" in stdio.stderr


def _http_refused_to_make_a_token(root: Path, state: Path) -> subprocess.CompletedProcess[str]:
    """serve --transport http given no token, its state directory ``state``: refused in one line, exit 2."""
    env = {k: v for k, v in os.environ.items() if k != "FS_TOOLS_TOKEN"} | {"XDG_STATE_HOME": str(state)}
    done = subprocess.run(
        [*SERVE, "--root", str(root), "--transport", "http", "--port", "0"],
        capture_output=True,
        text=True,
        env=env,
        timeout=WAIT,
        check=False,
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    return done


def test_a_token_file_that_cannot_be_written_is_one_line(root: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    done = _http_refused_to_make_a_token(root, blocker)
    assert f"cannot write the HTTP token to '{blocker}/fs-tools/http-" in done.stderr
    assert "Not a directory" in done.stderr and "give --token or $FS_TOOLS_TOKEN (or --no-token)" in done.stderr
    assert "serving MCP" not in done.stdout  # refused before it said it serves


def test_a_token_file_inside_a_root_is_refused(root: Path) -> None:
    """serve --root ~ with the state directory under it: the model could read the token, or delete it."""
    done = _http_refused_to_make_a_token(root, root / ".state")
    assert (
        f"the HTTP token file '{root}/.state/fs-tools/http-" in done.stderr
        and "lies inside the workspace root" in done.stderr
    )
    assert "give --token or $FS_TOOLS_TOKEN, or set $XDG_STATE_HOME outside the roots" in done.stderr
    assert not (root / ".state").exists() and "serving MCP" not in done.stdout


def test_the_made_token_is_said_on_stderr(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    with cli._made_token(8765, [tmp_path / "elsewhere"]) as token:
        said = capsys.readouterr().err
        assert (tmp_path / "fs-tools" / "http-8765.token").read_text() == token
    assert said.count("\n") == 1 and "'Authorization: Bearer <token>'" in said
    assert f"'{tmp_path}/fs-tools/http-8765.token'" in said and "--no-token" in said and token not in said
    assert not (tmp_path / "fs-tools" / "http-8765.token").exists()


def test_loopback_means_this_machine_only() -> None:
    assert all(map(mcp_http.is_loopback, ["127.0.0.1", "127.8.9.10", "::1", "[::1]", "localhost", "LOCALHOST"]))
    assert not any(map(mcp_http.is_loopback, ["0.0.0.0", "::", "", "192.168.1.2", "example.com", "localhost.evil"]))


# --- item 5, over stdio: a write waiting for a lock leaves the server answering -----------------------------


@contextlib.contextmanager
def _directory_locked(directory: Path) -> Iterator[None]:
    """Hold the directory's OS lock, as another fs-tools process in its commit would."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _write_call(request_id: int, path: str, content: str) -> dict[str, Any]:
    params = {"name": "write", "arguments": {"file_path": path, "content": content}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def _read_call(request_id: int, path: str) -> dict[str, Any]:
    params = {"name": "read", "arguments": {"file_path": path}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def test_stdio_answers_while_a_write_waits_for_another_processs_lock(root: Path) -> None:
    (root / "sub").mkdir()
    (root / "other.txt").write_text("other\n")
    with RawStdio(root) as server:
        server.initialize()
        with _directory_locked(root / "sub"):
            server.send(_write_call(2, "sub/new.txt", "hello"))
            server.send(_read_call(3, "other.txt"))
            assert server.answer(3)["result"]["content"][0]["text"] == "     1\tother"
            assert 2 not in server.arrived  # answered while the write still waits
        written = server.answer(2)["result"]
        server.finish()
    if written["isError"]:  # the lock was held past the host's lock timeout: refused, nothing written
        assert written["structuredContent"]["error"]["code"] == "FS_BUSY"
        assert os.listdir(root / "sub") == []
    else:
        assert os.listdir(root / "sub") == ["new.txt"]
        assert (root / "sub" / "new.txt").read_text() == "hello"


def test_a_cancelled_write_waiting_for_a_lock_writes_nothing(root: Path) -> None:
    (root / "sub").mkdir()
    (root / "other.txt").write_text("other\n")
    with RawStdio(root) as server:
        server.initialize()
        with _directory_locked(root / "sub"):
            server.send(_write_call(2, "sub/new.txt", "hello"))
            cancel = {"requestId": 2, "reason": "the user changed their mind"}
            server.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel})
            server.send(_read_call(3, "other.txt"))  # answered: the cancellation was read before it
            assert server.answer(3)["result"]["content"][0]["text"] == "     1\tother"
            assert 2 not in server.arrived
        rest = server.finish()  # the server waits for the cancelled write's thread before it exits
    assert server.process.returncode == 0
    assert not any(m.get("id") == 2 and not m.get("result", {}).get("isError", True) for m in rest)
    assert os.listdir(root / "sub") == []  # no file, no temp


# --- item 16: a bad observation store is the host's one-line error ------------------------------------------


def _real_store(path: Path, rows: int = 3000) -> None:
    store = SqliteStore(path)
    with contextlib.closing(store):
        for n in range(rows):
            store.put(f"s{n % 5}", f"/a/fairly/long/path/to/file/{n}.py", Present(f"{n:032x}"))


def _garbage(path: Path) -> None:
    path.write_bytes(b"this is not a database\n" * 100)


def _truncated(path: Path) -> None:
    _real_store(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _torn_page(path: Path) -> None:
    _real_store(path)
    with path.open("r+b") as f:  # a b-tree page in the middle overwritten (header and schema intact)
        f.seek(4096 * 3)
        f.write(b"\xff" * 4096)


def _directory(path: Path) -> None:
    path.mkdir()


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _someone_elses(path: Path) -> None:
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute("CREATE TABLE accounts (id INTEGER PRIMARY KEY, owner TEXT)")
        db.commit()


def _other_columns(path: Path) -> None:
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute("CREATE TABLE observations (who TEXT, what TEXT)")
        db.commit()


BAD_STORES = {
    "garbage": (_garbage, "not a usable SQLite database"),
    "truncated": (_truncated, "not a usable SQLite database"),
    "torn page": (_torn_page, "is corrupt"),
    "directory": (_directory, "is a directory"),
    "fifo": (_fifo, "not a regular file"),
    "someone else's database": (_someone_elses, "no observations table"),
    "other columns": (_other_columns, "has an observations table with columns"),
}


@pytest.mark.parametrize("kind", list(BAD_STORES))
def test_a_bad_store_fails_the_workspace_at_construction(root: Path, tmp_path: Path, kind: str) -> None:
    make, says = BAD_STORES[kind]
    path = tmp_path / "obs.sqlite"
    make(path)
    with pytest.raises(ValueError) as raised:
        Workspace(root, store=path)
    message = str(raised.value)
    assert "\n" not in message and f"observation store {str(path)!r}" in message and says in message


READ_A = ["--session", "s", "read", '{"file_path": "a.txt"}']


@pytest.mark.parametrize("kind", ["garbage", "truncated", "torn page", "directory", "someone else's database"])
def test_call_reports_a_bad_state_file_in_one_line(root: Path, tmp_path: Path, kind: str) -> None:
    make, says = BAD_STORES[kind]
    path = tmp_path / "obs.sqlite"
    make(path)
    (root / "a.txt").write_text("one\n")
    done = subprocess.run(
        [sys.executable, "-m", "fs_tools.cli", "call", "--root", str(root), "--state", str(path), *READ_A],
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("fs-tools: error: observation store ") and done.stderr.count("\n") == 1
    assert str(path) in done.stderr and says in done.stderr and "Traceback" not in done.stderr


def test_a_new_or_empty_store_file_is_fine(root: Path, tmp_path: Path) -> None:
    (root / "a.txt").write_text("one\n")
    empty = tmp_path / "empty.sqlite"
    empty.touch()
    for path in (empty, tmp_path / "new" / "dir" / "obs.sqlite"):
        with Workspace(root, store=path) as ws:
            assert not ws.session("s").call("read", {"file_path": "a.txt"}).is_error
        with Workspace(root, store=path) as ws:  # and the observation is still there
            edit = ws.session("s").call("edit", {"file_path": "a.txt", "old_string": "one", "new_string": "two"})
            assert not edit.is_error, edit.text
        (root / "a.txt").write_text("one\n")


@contextlib.contextmanager
def _store_locked_by_another_process(path: Path) -> Iterator[None]:
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sqlite3, sys\n"
            f"db = sqlite3.connect({str(path)!r}, isolation_level=None)\n"
            "db.execute('BEGIN IMMEDIATE')\n"
            "print('held', flush=True)\n"
            "sys.stdin.read()\n",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        yield
    finally:
        holder.communicate(timeout=WAIT)


def test_a_store_locked_mid_session_is_store_unavailable(root: Path, tmp_path: Path) -> None:
    (root / "a.txt").write_text("one\n")
    path = tmp_path / "state" / "obs.sqlite"
    with Workspace(root, store=SqliteStore(path, busy_timeout=0)) as ws:
        session = ws.session("s")
        with _store_locked_by_another_process(path):
            result = session.call("read", {"file_path": "a.txt"})
        assert result.error is not None and result.error.code == "STORE_UNAVAILABLE", result.text
        assert "database is locked" in result.text and "retry" in result.text
        assert str(tmp_path) not in result.text  # the store's path is the host's, not the model's
        assert result.exception is not None and isinstance(result.exception.__cause__, sqlite3.OperationalError)
        assert session.call("read", {"file_path": "a.txt"}).error is None  # the lock is gone: it recovers
        edit = session.call("edit", {"file_path": "a.txt", "old_string": "one", "new_string": "two"})
    assert edit.error is None, edit.text
    assert (root / "a.txt").read_text() == "two\n"


def test_a_full_disk_under_the_store_is_store_unavailable(root: Path, tmp_path: Path) -> None:
    small = tmp_path / "small"
    small.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(small)], capture_output=True)
    if mounted.returncode != 0 or not os.path.ismount(small):
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        (root / "a.txt").write_text("one\n")
        with Workspace(root, store=small / "obs.sqlite") as ws:
            filler = os.open(small / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
            with contextlib.suppress(OSError):
                while True:  # fill the filesystem to the last block
                    os.write(filler, b"\0" * 4096)
            os.close(filler)
            session = ws.session("s")
            results = [session.call("read", {"file_path": "a.txt"})]
            names = [f"{n:04d}-" + "x" * 200 + ".txt" for n in range(200)]
            for name in names:  # enough new observations to need a new page of the log
                (root / name).write_text("x\n")
                results.append(session.call("read", {"file_path": name}))
                if results[-1].is_error:
                    break
        codes = {r.error.code for r in results if r.error is not None}
        assert codes == {"STORE_UNAVAILABLE"}, [r.text for r in results if r.is_error]
        assert "full" in results[-1].text
    finally:
        if subprocess.run(["umount", str(small)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(small)], capture_output=True)


# --- issue 31: an ended HTTP session takes its observations with it ------------------------------------------


def _audited_session(audit: Path) -> str:
    """The fs-tools session of the last call the audit log recorded."""
    return str(json.loads(audit.read_text().splitlines()[-1])["session"])


def test_an_ended_http_session_takes_its_observations_with_it(root: Path, tmp_path: Path) -> None:
    """The memory store kept an ended HTTP session's observations for the life of the server (one set per
    client that ever connected). A session keyed by its MCP session id can never be asked for again
    once the id is over: its client's DELETE now forgets them, before the client hears the answer."""
    from tests.support.in_process_http import serving

    (root / "a.txt").write_text("one\n")
    audit = tmp_path / "audit.jsonl"
    log = mcp_server.AuditLog(audit)
    with Workspace(root) as ws, serving(mcp_http.http_app(ws, host="127.0.0.1", audit=log)) as url:

        async def read_then_leave() -> tuple[str, dict[str, Any]]:
            async with Client(url, mode="legacy") as client:  # leaving it sends DELETE, as the SDK's client does
                assert not (await client.call_tool("read", {"file_path": "a.txt"})).is_error
                key = _audited_session(audit)
                return key, dict(ws.store.observed(key))

        key, during = asyncio.run(read_then_leave())
        assert key.startswith("http-") and list(during) == [str((root / "a.txt").resolve())]
        assert ws.store.observed(key) == {}

        async def stray_404_then_write() -> None:  # a 404 off the MCP endpoint says nothing of the session
            async with Client(url, mode="legacy") as client:
                assert not (await client.call_tool("read", {"file_path": "a.txt"})).is_error
                session_id = _audited_session(audit).removeprefix("http-")
                async with httpx2.AsyncClient() as plain:
                    stray = await plain.get(
                        url.rsplit("/mcp", 1)[0] + "/favicon.ico", headers={"mcp-session-id": session_id}
                    )
                assert stray.status_code == 404
                wrote = await client.call_tool("write", {"file_path": "a.txt", "content": "two\n"})
                assert not wrote.is_error, wrote.content

        asyncio.run(stray_404_then_write())
        assert (root / "a.txt").read_text() == "two\n"

        async def keep_by_header() -> str:  # a session the client names itself is the client's to keep
            async with Client(
                streamable_http_client(url, http_client=httpx2.AsyncClient(headers={"fs-tools-session": "mine"}))
            ) as client:
                assert not (await client.call_tool("read", {"file_path": "a.txt"})).is_error
                return _audited_session(audit)

        kept = asyncio.run(keep_by_header())
        assert kept == "http-header-mine" and list(ws.store.observed(kept)) == [str((root / "a.txt").resolve())]
    log.close()


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_an_idle_or_crashed_http_session_is_forgotten_once() -> None:
    """The ends the SDK keeps to itself — its idle timeout, a session it no longer knows (404) — are read
    on the wire: each ended id is told once, and never one still serving a request."""
    ended: list[str] = []
    clock = _Clock()
    known = {"a", "b"}
    issued = iter(["a", "b", "c", "d"])

    held = anyio.Event()  # a GET stream the client keeps open

    async def sdk(scope: dict[str, Any], receive: Any, send: Any) -> None:  # the SDK's stateful app, reduced
        given = dict(scope["headers"]).get(b"mcp-session-id", b"").decode()
        if scope["method"] == "GET":
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await held.wait()
            await send({"type": "http.response.body", "body": b""})
            return
        if not given:
            headers = [(b"mcp-session-id", next(issued).encode())]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
        else:
            await send({"type": "http.response.start", "status": 200 if given in known else 404, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    app = mcp_http.EndedSessions(sdk, path="/mcp", idle_seconds=100, ended=ended.append, clock=clock)

    async def request(session: str | None = None, method: str = "POST") -> None:
        headers = [(b"mcp-session-id", session.encode())] if session else []

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            pass

        await app({"type": "http", "method": method, "path": "/mcp", "headers": headers}, receive, send)

    async def run() -> None:
        await request()  # opens "a"
        await request()  # opens "b"
        clock.now = 60
        await request("b")  # b used at 60, a last at 0
        clock.now = 150
        await request("b")  # the sweep: a idle for 150 s > 100 s
        assert ended == ["a"]
        known.discard("b")  # the SDK lost b (a crash): it answers 404
        await request("b")
        assert ended == ["a", "b"]
        await request("b")  # told once
        await request("nobody")  # an id the SDK never issued: nothing to forget
        clock.now = 10_000
        await request()  # opens "c"
        assert ended == ["a", "b"]
        async with anyio.create_task_group() as streams:
            streams.start_soon(request, "c", "GET")
            await anyio.wait_all_tasks_blocked()
            clock.now = 20_000
            await request("nobody")  # the sweep: c idle for 10,000 s, but its stream is open
            assert ended == ["a", "b"]
            held.set()
        clock.now = 20_050
        await request("nobody")  # its idle time began when the stream ended
        clock.now = 20_101
        await request("nobody")
        assert ended == ["a", "b", "c"]

    asyncio.run(run())


def test_a_stateless_request_naming_a_live_session_neither_uses_nor_ends_it() -> None:
    """A 2026-07-28 request is no MCP session's: an id it carries is not counted as the session's use,
    and the SDK's 404 to it (it knows no stateless sessions) does not end the session."""
    ended: list[str] = []
    clock = _Clock()

    async def sdk(scope: dict[str, Any], receive: Any, send: Any) -> None:
        headers = dict(scope["headers"])
        if b"mcp-session-id" not in headers:  # an initialize: issues "a"
            await send({"type": "http.response.start", "status": 200, "headers": [(b"mcp-session-id", b"a")]})
        else:  # a stateless request naming "a": the SDK does not look it up
            await send({"type": "http.response.start", "status": 404, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    app = mcp_http.EndedSessions(sdk, path="/mcp", idle_seconds=100, ended=ended.append, clock=clock)

    async def request(headers: list[tuple[bytes, bytes]]) -> None:
        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            pass

        await app({"type": "http", "method": "POST", "path": "/mcp", "headers": headers}, receive, send)

    async def run() -> None:
        await request([])  # opens "a" at 0
        stateless = [(b"mcp-protocol-version", b"2026-07-28"), (b"mcp-session-id", b"a")]
        clock.now = 90
        await request(stateless)  # neither a use of "a" nor its end
        assert ended == []
        clock.now = 101
        await request(stateless)  # the sweep: "a" idle since 0
        assert ended == ["a"]

    asyncio.run(run())


def test_a_handshake_session_serves_only_the_token_that_opened_it(root: Path) -> None:
    """With a token per agent, agent B sending agent A's Mcp-Session-Id is told the session does not
    exist (the SDK compares the credential that opened it), and A's observations stay A's."""
    (root / "a.txt").write_text("one\n")
    issued: list[str] = []

    async def run(url: str) -> None:
        async def note(response: Any) -> None:
            if response.headers.get("mcp-session-id"):
                issued.append(response.headers["mcp-session-id"])

        async with (
            httpx2.AsyncClient(
                headers={"Authorization": "Bearer agent-a-token"}, event_hooks={"response": [note]}
            ) as a,
            Client(streamable_http_client(url, http_client=a), mode="legacy") as client,
        ):
            assert not (await client.call_tool("read", {"file_path": "a.txt"})).is_error
            call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                    "params": {"name": "edit", "arguments": {"file_path": "a.txt", "old_string": "one",
                                                             "new_string": "two"}}}  # fmt: skip
            async with httpx2.AsyncClient() as b:
                claimed = await b.post(
                    url,
                    json=call,
                    headers={
                        "Authorization": "Bearer agent-b-token",
                        "mcp-session-id": issued[0],
                        "mcp-protocol-version": "2025-11-25",
                        "accept": "application/json, text/event-stream",
                    },
                )
            assert claimed.status_code == 404, claimed.text

    with _http_server(root, env={"FS_TOOLS_TOKEN": "agent-a-token agent-b-token"}) as url:
        asyncio.run(run(url))
    assert (root / "a.txt").read_text() == "one\n"
