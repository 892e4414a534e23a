"""The shared ledger on Redis (SPEC §17), against a real redis-server: sessions shared by workspaces and
processes, keys agreed by hosts that mount the workspace at different paths, history in Redis, and a
store that fails closed when Redis stops and recovers by reading again when it comes back empty."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import multiprocessing
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.harness import read_line
from fs_tools import Workspace
from fs_tools.stores.location import shown_url
from fs_tools.stores.redis import RedisStore, SharedKeys
from policy import ABSENT, Present
from tests.support.redis_server import RedisServer


@pytest.fixture(scope="module")
def server(redis_server: RedisServer) -> RedisServer:
    return redis_server


@pytest.fixture
def redis_url(server: RedisServer) -> str:
    server.flush()
    return server.url


@pytest.fixture
def own_server(tmp_path: Path) -> Iterator[RedisServer]:
    """A server this test may stop and start again."""
    running = RedisServer(tmp_path / "own")
    (tmp_path / "own").mkdir()
    running.start()
    yield running
    running.stop()


def ok(result: object) -> str:
    assert not result.is_error, result.text  # type: ignore[attr-defined]
    return str(result.text)  # type: ignore[attr-defined]


# --- the store -----------------------------------------------------------------------------------------


def test_observations_round_trip_through_redis(root: Path, redis_url: str) -> None:
    store = RedisStore(redis_url)
    store.bind([str(root)])
    key = str(root / "a.txt")
    odd = str(root / "caf\udce9.txt")  # a non-UTF-8 name, as Python spells it
    assert store.get("s", key) is None
    store.put("s", key, Present("0" * 32))
    store.put("s", odd, ABSENT)
    store.put("s\udcff", key, ABSENT)  # a session key with a lone surrogate is its own session
    assert store.get("s", key) == Present("0" * 32)
    assert store.observed("s") == {key: Present("0" * 32), odd: ABSENT}
    assert store.observed("s\udcff") == {key: ABSENT}
    store.forget("s", key)
    assert store.observed("s") == {odd: ABSENT}
    store.forget("s")
    assert store.observed("s") == {}
    store.close()


def test_a_session_expires_after_its_last_observation(root: Path, redis_url: str, server: RedisServer) -> None:
    import redis

    store = RedisStore(redis_url, session_seconds=60)
    store.bind([str(root)])
    store.put("s", str(root / "a"), ABSENT)
    store.close()
    with redis.Redis.from_url(redis_url) as client:
        ttls = [client.ttl(name) for name in client.keys(b"*\0o\0s")]
    assert len(ttls) == 1 and 0 < ttls[0] <= 60


def test_keys_are_relative_to_the_root_that_holds_them() -> None:
    keys = SharedKeys(["/srv/ws", "/srv/ws/vendor", "/data"])
    assert keys.shared("/srv/ws/a/b.py") == "0:a/b.py"
    assert keys.shared("/srv/ws/vendor/x.py") == "1:x.py"  # the innermost root: one key per file
    assert keys.shared("/srv/ws") == "0:"
    assert keys.shared("/srv/wsx/a") == "/" + "/srv/wsx/a"
    other = SharedKeys(["/mnt/build/ws", "/mnt/build/ws/vendor", "/mnt/data"])
    for key in ("/srv/ws/a/b.py", "/srv/ws/vendor/x.py", "/data/d", "/srv/ws"):
        assert SharedKeys(["/srv/ws", "/srv/ws/vendor", "/data"]).local(keys.shared(key)) == key
    assert other.local(keys.shared("/srv/ws/a/b.py")) == "/mnt/build/ws/a/b.py"


def test_an_unreachable_server_is_a_one_line_error_that_hides_the_password(tmp_path: Path) -> None:
    pytest.importorskip("redis", reason="redis-py is not installed (the redis extra)")
    from tests.support.redis_server import _free_port

    url = f"redis://:hunter2@127.0.0.1:{_free_port()}/0"
    with pytest.raises(ValueError) as caught:
        Workspace(tmp_path, store=url)
    message = str(caught.value)
    assert "\n" not in message and "hunter2" not in message
    assert message.startswith("observation store redis://:***@127.0.0.1:") and "cannot be reached" in message
    assert shown_url("redis://user:pw@h:1/0") == "redis://user:***@h:1/0"


@pytest.mark.parametrize(
    "options",
    [{"workspace_id": ""}, {"key_prefix": 3}, {"session_seconds": 0}, {"session_seconds": True}],
)
def test_bad_options_are_one_line_value_errors(redis_url: str, options: dict[str, object]) -> None:
    with pytest.raises(ValueError, match=next(iter(options))):
        RedisStore(redis_url, **options)  # type: ignore[arg-type]


# --- workspaces sharing sessions -------------------------------------------------------------------------


def test_two_workspaces_on_one_redis_share_a_sessions_gates(root: Path, redis_url: str) -> None:
    (root / "a.txt").write_text("one\n")
    with Workspace(root, store=redis_url) as first, Workspace(root, store=redis_url) as second:
        ok(first.session("agent").call("read", {"file_path": "a.txt"}))
        edited = second.session("agent").call("edit", {"file_path": "a.txt", "old_string": "one", "new_string": "two"})
        ok(edited)
        stranger = second.session("someone-else").call(
            "edit", {"file_path": "a.txt", "old_string": "two", "new_string": "three"}
        )
        assert stranger.error is not None and stranger.error.code == "FS_NOT_OBSERVED"
        # the first workspace's session sees the second's edit as its own: no stale refusal
        ok(first.session("agent").call("edit", {"file_path": "a.txt", "old_string": "two", "new_string": "three"}))
    assert (root / "a.txt").read_text() == "three\n"


def test_hosts_mounting_the_workspace_at_different_paths_agree_on_keys(tmp_path: Path, redis_url: str) -> None:
    # two "mounts" of one workspace: the same files at two paths, given the same workspace id
    here, there = tmp_path / "here", tmp_path / "there"
    for mount in (here, there):
        (mount / "src").mkdir(parents=True)
        (mount / "src" / "a.py").write_text("x = 1\n")
    with (
        Workspace(here, store=redis_url, workspace_id="project") as a,
        Workspace(there, store=redis_url, workspace_id="project") as b,
        Workspace(there, store=redis_url) as c,  # its own id (its path): shares nothing with a
    ):
        ok(a.session("s").call("read", {"file_path": "src/a.py"}))
        ok(b.session("s").call("edit", {"file_path": "src/a.py", "old_string": "1", "new_string": "2"}))
        refused = c.session("s").call("edit", {"file_path": "src/a.py", "old_string": "2", "new_string": "3"})
        assert refused.error is not None and refused.error.code == "FS_NOT_OBSERVED"


def test_workspace_id_and_key_prefix_need_a_redis_store(root: Path) -> None:
    with pytest.raises(ValueError, match="workspace_id"):
        Workspace(root, workspace_id="x")
    with pytest.raises(ValueError, match="key_prefix"):
        Workspace(root, store=str(root.parent / "state.db"), key_prefix="x")


def test_key_prefixes_keep_deployments_apart(root: Path, redis_url: str) -> None:
    (root / "a.txt").write_text("one\n")
    with (
        Workspace(root, store=redis_url, key_prefix="blue") as blue,
        Workspace(root, store=redis_url, key_prefix="green") as green,
    ):
        ok(blue.session("s").call("read", {"file_path": "a.txt"}))
        refused = green.session("s").call("edit", {"file_path": "a.txt", "old_string": "one", "new_string": "two"})
        assert refused.error is not None and refused.error.code == "FS_NOT_OBSERVED"


# --- history in Redis ----------------------------------------------------------------------------------


def test_history_in_redis_rewinds_from_another_workspace(root: Path, redis_url: str) -> None:
    (root / "a.txt").write_text("one\n")
    with Workspace(root, store=redis_url) as first:
        s = first.session("agent")
        mark = s.checkpoint("before")
        ok(s.call("read", {"file_path": "a.txt"}))
        ok(s.call("edit", {"file_path": "a.txt", "old_string": "one", "new_string": "two"}))
        ok(s.call("write", {"file_path": "new/b.txt", "content": "b\n"}))
    assert (root / "a.txt").read_text() == "two\n"
    with Workspace(root, store=redis_url) as second:  # a new workspace (another replica) on the same store
        s = second.session("agent")
        assert [entry.kind for entry in s.history()] == ["mark", "change", "change"]
        assert "-one\n+two" in s.diff(since=mark)
        report = s.rewind(mark)
        assert not report.is_error, report
    assert (root / "a.txt").read_text() == "one\n"
    assert not (root / "new").exists()


def test_history_in_redis_keeps_within_its_budget(root: Path, redis_url: str) -> None:
    (root / "a.txt").write_text("0" * 1000)
    with Workspace(root, store=redis_url, max_history_bytes=6_000) as ws:
        s = ws.session("agent")
        mark = s.checkpoint()
        ok(s.call("read", {"file_path": "a.txt"}))
        for n in range(1, 12):
            ok(s.call("write", {"file_path": "a.txt", "content": str(n % 10) * 1000}))
        assert ws.history.kept_bytes <= 6_000  # type: ignore[attr-defined]
        report = s.rewind(mark)
        assert report.code == "HISTORY_TRIMMED"
        assert len(s.history()) < 12


# --- processes ---------------------------------------------------------------------------------------------


def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fs_tools", *argv], capture_output=True, text=True, timeout=60, check=False
    )


def test_two_processes_share_a_session_through_redis(root: Path, redis_url: str) -> None:
    (root / "a.txt").write_text("one\n")
    common = ["--root", str(root), "--session", "agent", "--state", redis_url]
    read = _cli("call", *common, "read", '{"file_path": "a.txt"}')
    assert read.returncode == 0, read.stderr
    edit = _cli("call", *common, "edit", '{"file_path": "a.txt", "old_string": "one", "new_string": "two"}')
    assert edit.returncode == 0, edit.stderr + edit.stdout
    other = _cli(
        "call", "--root", str(root), "--session", "other", "--state", redis_url,
        "edit", '{"file_path": "a.txt", "old_string": "two", "new_string": "x"}',
    )  # fmt: skip
    assert other.returncode != 0 and "FS_NOT_OBSERVED" in other.stderr
    assert (root / "a.txt").read_text() == "two\n"


def _append_line(root: str, url: str, name: str) -> int:
    """Read and edit until this worker's line is in: every refusal is a stale read, retried."""
    with Workspace(root, store=url) as ws:
        s = ws.session(name)
        for attempt in range(1, 400):
            text = s.call("read", {"file_path": "shared.txt"})
            if text.is_error:
                continue
            result = s.call("edit", {"file_path": "shared.txt", "old_string": "END\n", "new_string": f"{name}\nEND\n"})
            if not result.is_error:
                return attempt
            assert result.error is not None and result.error.code == "FS_STALE_VERSION", result.text
    raise AssertionError(f"{name} never got its line in")


def test_processes_racing_one_file_lose_no_update(root: Path, redis_url: str) -> None:
    (root / "shared.txt").write_text("END\n")
    names = [f"worker-{n}" for n in range(6)]
    with multiprocessing.get_context("spawn").Pool(len(names)) as pool:
        attempts = pool.starmap(_append_line, [(str(root), redis_url, name) for name in names])
    lines = (root / "shared.txt").read_text().splitlines()
    assert sorted(lines[:-1]) == names and lines[-1] == "END"
    assert len(attempts) == len(names)


# --- Redis stopping and coming back ------------------------------------------------------------------------


def test_redis_stopping_fails_calls_closed_and_an_empty_restart_asks_for_a_read(
    root: Path, own_server: RedisServer
) -> None:
    (root / "a.txt").write_text("one\n")
    with Workspace(root, store=own_server.url) as ws:
        s = ws.session("agent")
        ok(s.call("read", {"file_path": "a.txt"}))
        own_server.stop()
        for tool, arguments in (
            ("edit", {"file_path": "a.txt", "old_string": "one", "new_string": "two"}),
            ("write", {"file_path": "a.txt", "content": "two\n"}),
            ("delete", {"file_path": "a.txt"}),
            ("read", {"file_path": "a.txt"}),
        ):
            result = s.call(tool, arguments)
            assert result.error is not None and result.error.code == "STORE_UNAVAILABLE", (tool, result.text)
            assert "retry" in result.text and "127.0.0.1" not in result.text
        assert (root / "a.txt").read_text() == "one\n"  # nothing written without its gate
        own_server.start()  # back, empty (no persistence): the session has seen nothing
        refused = s.call("edit", {"file_path": "a.txt", "old_string": "one", "new_string": "two"})
        assert refused.error is not None and refused.error.code == "FS_NOT_OBSERVED", refused.text
        ok(s.call("read", {"file_path": "a.txt"}))
        ok(s.call("edit", {"file_path": "a.txt", "old_string": "one", "new_string": "two"}))
    assert (root / "a.txt").read_text() == "two\n"


# --- replicas over HTTP ------------------------------------------------------------------------------------


@contextlib.contextmanager
def _replica(root: Path, url: str) -> Iterator[int]:
    """``fs-tools serve --transport http --store URL`` on a free loopback port, until the block ends."""
    from tests.support.redis_server import _free_port

    port = _free_port()
    argv = [sys.executable, "-m", "fs_tools", "serve", "--root", str(root), "--transport", "http", "--no-token"]
    with tempfile.TemporaryFile() as said:  # its stderr, read only if it fails to start
        process = subprocess.Popen([*argv, "--port", str(port), "--store", url], stdout=subprocess.PIPE, stderr=said)
        try:
            assert process.stdout is not None  # it says "serving MCP on ..." once it listens: our port, not another's
            line = read_line(process.stdout, 60, "the replica's start")
            if f":{port}/mcp" not in line:
                said.seek(0)
                raise AssertionError(f"the replica did not start: {line!r} {said.read()[-2000:]!r}")
            yield port
        finally:
            process.terminate()
            process.wait(timeout=10)


def _round_robin(ports: list[int]) -> tuple[Any, Counter[int]]:
    """An HTTP client that sends each request to the next replica in turn: a load balancer with no
    stickiness. The counter says how many requests each replica got."""
    import httpx2

    served: Counter[int] = Counter()
    turns = itertools.cycle(ports)

    class RoundRobin(httpx2.AsyncBaseTransport):
        def __init__(self) -> None:
            self.inner = httpx2.AsyncHTTPTransport()

        async def handle_async_request(self, request: Any) -> Any:
            port = next(turns)
            served[port] += 1
            request.url = request.url.copy_with(port=port)
            return await self.inner.handle_async_request(request)

        async def aclose(self) -> None:
            await self.inner.aclose()

    return httpx2.AsyncClient(transport=RoundRobin(), timeout=30), served


async def _one_session_across(ports: list[int], root: Path) -> Counter[int]:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    http, served = _round_robin(ports)
    async with (
        http,
        streamable_http_client(f"http://127.0.0.1:{ports[0]}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        for n in range(3):  # each read and each edit lands on a replica in turn
            result = await session.call_tool("read", {"file_path": "a.txt"})
            assert not result.is_error, result.content
            old, new = f"v{n}", f"v{n + 1}"
            result = await session.call_tool("edit", {"file_path": "a.txt", "old_string": old, "new_string": new})
            assert not result.is_error, result.content
        # a write without a read of the new content is still refused: the gate holds across replicas
        (root / "a.txt").write_text("changed outside\n")
        result = await session.call_tool("write", {"file_path": "a.txt", "content": "mine\n"})
        assert result.is_error and "FS_STALE_VERSION" in str(result.structured_content), result.content
    return served


def test_one_mcp_session_spread_over_two_replicas_keeps_its_gates(root: Path, redis_url: str) -> None:
    (root / "a.txt").write_text("v0\n")
    with _replica(root, redis_url) as first, _replica(root, redis_url) as second:
        served = asyncio.run(_one_session_across([first, second], root))
    assert served[first] >= 4 and served[second] >= 4, served
    assert (root / "a.txt").read_text() == "changed outside\n"


def test_a_replica_refuses_an_unknown_session_id_and_a_session_less_call(root: Path, redis_url: str) -> None:
    import httpx

    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    with _replica(root, redis_url) as port:
        url = f"http://127.0.0.1:{port}/mcp"
        unknown = httpx.post(url, json=call, headers={**headers, "mcp-session-id": "f" * 32}, timeout=10)
        assert unknown.status_code == 404 and unknown.json()["error"]["message"] == "Session not found"
        bare = httpx.post(url, json=call, headers=headers, timeout=10)
        assert bare.status_code == 400 and "Missing session ID" in bare.json()["error"]["message"]


def test_a_hung_server_fails_the_call_within_the_timeout_instead_of_hanging_it(
    root: Path, own_server: RedisServer
) -> None:
    import os
    import signal

    (root / "a.txt").write_text("one\n")
    store = RedisStore(own_server.url, timeout=0.5)
    with Workspace(root, store=store) as ws:
        s = ws.session("agent")
        ok(s.call("read", {"file_path": "a.txt"}))
        assert own_server.process is not None
        os.kill(own_server.process.pid, signal.SIGSTOP)  # alive, listening, answering nothing
        try:
            result = s.call("edit", {"file_path": "a.txt", "old_string": "one", "new_string": "two"})
        finally:
            os.kill(own_server.process.pid, signal.SIGCONT)
        assert result.error is not None and result.error.code == "STORE_UNAVAILABLE", result.text
        assert (root / "a.txt").read_text() == "one\n"
        ok(s.call("edit", {"file_path": "a.txt", "old_string": "one", "new_string": "two"}))  # it answers again


def test_the_cli_refuses_key_options_without_a_redis_store(root: Path, tmp_path: Path) -> None:
    state = str(tmp_path / "state.db")
    done = _cli("call", "--root", str(root), "--session", "s", "--state", state, "--workspace-id", "x", "list", "{}")
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "workspace_id" in done.stderr and "redis://" in done.stderr


# --- found in review ---------------------------------------------------------------------------------------


def test_a_history_append_sent_twice_is_recorded_once(root: Path, redis_url: str) -> None:
    """A retry after a dropped reply (the script ran, the answer was lost) must not record the change twice."""
    with Workspace(root, store=redis_url) as ws:
        history = ws.history
        base = history._base()  # type: ignore[attr-defined]
        args = ["agent", '{"at": 0, "tool": "write", "call": null, "label": null, "steps": []}', 480, 1 << 20, 1]
        args += ["same-token", 0]
        first = history._append(keys=[base], args=args)  # type: ignore[attr-defined]
        again = history._append(keys=[base], args=args)  # type: ignore[attr-defined]
        assert first == again == history.latest()
        assert [entry.seq for entry in history.entries("agent")] == [first]


def test_a_mark_from_before_redis_came_back_empty_is_refused(root: Path, own_server: RedisServer) -> None:
    (root / "a.txt").write_text("one\n")
    with Workspace(root, store=own_server.url) as ws:
        s = ws.session("agent")
        mark = s.checkpoint()
        ok(s.call("read", {"file_path": "a.txt"}))
        ok(s.call("edit", {"file_path": "a.txt", "old_string": "one", "new_string": "two"}))
        own_server.flush()  # history gone; its counter starts again
        ok(s.call("read", {"file_path": "a.txt"}))
        ok(s.call("edit", {"file_path": "a.txt", "old_string": "two", "new_string": "three"}))
        ok(s.call("edit", {"file_path": "a.txt", "old_string": "three", "new_string": "four"}))
        with pytest.raises(ValueError, match="not a mark of session"):
            s.rewind(mark)  # the same seq exists again, in another history: never taken for it
    assert (root / "a.txt").read_text() == "four\n"


def test_workspaces_with_other_roots_share_no_keys(tmp_path: Path, redis_url: str) -> None:
    ws_root, vendor = tmp_path / "ws", tmp_path / "vendor"
    for directory in (ws_root, vendor):
        directory.mkdir()
        (directory / "a.txt").write_text("one\n")
    with Workspace([ws_root, vendor], store=redis_url) as both, Workspace(ws_root, store=redis_url) as one:
        ok(both.session("s").call("read", {"file_path": str(vendor / "a.txt")}))
        ok(both.session("s").call("read", {"file_path": "a.txt"}))
        assert one.session("s").changed() == []  # nothing it can see: no crash on the other's keys
        refused = one.session("s").call("edit", {"file_path": "a.txt", "old_string": "one", "new_string": "x"})
        assert refused.error is not None and refused.error.code == "FS_NOT_OBSERVED"


def test_a_key_of_a_root_this_workspace_lacks_is_unseen_not_a_crash(root: Path, redis_url: str) -> None:
    import redis

    (root / "a.txt").write_text("one\n")
    with Workspace(root, store=redis_url, workspace_id="shared") as ws:
        s = ws.session("s")
        ok(s.call("read", {"file_path": "a.txt"}))
        with redis.Redis.from_url(redis_url) as client:  # what a workspace with two roots would write
            (name,) = client.keys(b"*\0o\0s")
            client.hset(name, mapping={b"1:b.txt": b"0" * 32, b"bogus": b"0" * 32})
        assert s.changed() == []
        ok(s.call("edit", {"file_path": "a.txt", "old_string": "one", "new_string": "two"}))


def test_a_reread_through_another_replica_shows_the_text_again(root: Path, redis_url: str) -> None:
    (root / "a.txt").write_text("one\n")
    with Workspace(root, store=redis_url) as a, Workspace(root, store=redis_url) as b:
        ok(a.session("s").call("read", {"file_path": "a.txt"}))
        (root / "a.txt").write_text("two\n")
        ok(b.session("s").call("read", {"file_path": "a.txt"}))
        (root / "a.txt").write_text("one\n")
        again = ok(a.session("s").call("read", {"file_path": "a.txt"}))
    assert "one" in again and "unchanged" not in again  # its last view was "two", through b


def test_a_replica_answers_a_get_stream_with_405_and_deep_json_with_400(root: Path, redis_url: str) -> None:
    import httpx

    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    with _replica(root, redis_url) as port:
        url = f"http://127.0.0.1:{port}/mcp"
        deep = httpx.post(url, content=b"[" * 200_000, headers=headers, timeout=10)
        assert deep.status_code == 400
        opened = httpx.post(
            url,
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            },
            headers=headers,
            timeout=10,
        )
        assert opened.status_code == 200, opened.text
        session_id = opened.headers["mcp-session-id"]
        stream = httpx.get(url, headers={**headers, "mcp-session-id": session_id}, timeout=10)
        assert stream.status_code == 405 and stream.headers["allow"] == "POST, DELETE"
        ended = httpx.delete(url, headers={**headers, "mcp-session-id": session_id}, timeout=10)
        assert ended.status_code == 200
        after = httpx.post(
            url,
            json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
            headers={**headers, "mcp-session-id": session_id},
        )
        assert after.status_code == 404


# --- issue 31: MCP session ids are bounded in number and expire when idle --------------------------------


def test_mcp_session_ids_are_capped_least_recently_used_first_and_expire_when_idle(root: Path, redis_url: str) -> None:
    """Session ids had no cap (thousands a second, each kept a week): now at most ``max_mcp_sessions``
    per workspace, the least recently used ended first, each forgotten 30 minutes after its last use."""
    import redis

    store = RedisStore(redis_url, max_mcp_sessions=3)
    db = redis.Redis.from_url(redis_url)
    with Workspace(root, store=store):
        for n in range(3):
            assert store.open_mcp_session(f"s{n}") == []
        assert store.mcp_session_open("s0")  # used: now the most recently used
        assert store.open_mcp_session("s3") == ["s1"]  # the least recently used goes, not the oldest opened
        assert not store.mcp_session_open("s1")
        assert all(store.mcp_session_open(f"s{n}") for n in (0, 2, 3))
        assert 0 < db.ttl(store.name("mcp", "s0")) <= 30 * 60  # idle expiry, not a week
        for kept in ("mcp-live", "mcp-used"):  # an abandoned workspace's order goes as its observations do
            assert 0 < db.ttl(store.name(kept)) <= store.session_seconds
        for n in range(2_000):  # a flood of initializes
            store.open_mcp_session(f"flood{n}")
        assert db.zcard(store.name("mcp-live")) == 3
        assert sorted(db.keys(store.name("mcp", b"") + b"*")) == [
            store.name("mcp", f"flood{n}") for n in (1997, 1998, 1999)
        ]
        assert store.close_mcp_session("flood1999") and not store.mcp_session_open("flood1999")
        assert db.zcard(store.name("mcp-live")) == 2
        lowered = RedisStore(redis_url, max_mcp_sessions=1)
        with Workspace(root, store=lowered):
            assert lowered.open_mcp_session("last") == ["flood1997", "flood1998"]


@pytest.mark.parametrize("option", ["max_mcp_sessions", "mcp_idle_seconds"])
@pytest.mark.parametrize("value", [0, True, 2.0**60, "10"])
def test_mcp_session_limits_must_be_positive_numbers(redis_url: str, option: str, value: object) -> None:
    with pytest.raises(ValueError, match=rf"RedisStore\({option}=\.\.\.\) must be a number of .* of at least 1"):
        RedisStore(redis_url, **{option: value})


def test_a_replica_session_crowded_out_takes_its_observations_with_it(
    root: Path, redis_url: str, tmp_path: Path
) -> None:
    """Over HTTP with the real SDK client, in the handshake era (MCP sessions): the least recently used
    session gives way when the cap is reached, answers 404 from then on, and its observations are
    forgotten before the new session's client hears it is open; a DELETE forgets them as well."""
    mcp = pytest.importorskip("mcp")
    from fs_tools.mcp import http as mcp_http
    from fs_tools.mcp import server as mcp_server
    from tests.support.in_process_http import serving

    (root / "a.txt").write_text("one\n")
    audit = tmp_path / "audit.jsonl"
    log = mcp_server.AuditLog(audit)
    seen = [str((root / "a.txt").resolve())]

    def last_session() -> str:
        return str(json.loads(audit.read_text().splitlines()[-1])["session"])

    with (
        Workspace(root, store=RedisStore(redis_url, max_mcp_sessions=2)) as ws,
        serving(mcp_http.http_app(ws, host="127.0.0.1", audit=log)) as url,
    ):

        async def run() -> None:
            async with contextlib.AsyncExitStack() as stack:
                first = await stack.enter_async_context(mcp.Client(url, mode="legacy"))
                assert not (await first.call_tool("read", {"file_path": "a.txt"})).is_error
                crowded = last_session()
                assert list(ws.store.observed(crowded)) == seen
                async with mcp.Client(url, mode="legacy") as second:
                    assert not (await second.call_tool("read", {"file_path": "a.txt"})).is_error
                    deleted = last_session()
                    async with mcp.Client(url, mode="legacy"):  # the third: the first, least recently used, gives way
                        assert ws.store.observed(crowded) == {}
                        assert list(ws.store.observed(deleted)) == seen
                assert ws.store.observed(deleted) == {}  # the second left: its DELETE forgot them
                with pytest.raises(Exception, match=r"(?i)session"):
                    await first.call_tool("read", {"file_path": "a.txt"})
                stack.pop_all()  # the first's session is over: leaving it would only be told 404

        asyncio.run(run())
    log.close()


def test_history_in_redis_lists_the_recent_entries_of_every_session(root: Path, redis_url: str) -> None:
    from tests.support.histories import recent_entries_of_every_session

    with Workspace(root, store=redis_url) as ws:
        assert ws.history is not None
        recent_entries_of_every_session(ws.history)


def test_a_stateless_client_reads_on_one_replica_and_edits_on_another(root: Path, redis_url: str) -> None:
    """SPEC §20: a 2026-07-28 client (no initialize, no Mcp-Session-Id) is known by its token on every
    replica, so its read on one lets its edit on another through; another agent's token has not read."""
    mcp = pytest.importorskip("mcp")
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    from fs_tools.mcp import http as mcp_http
    from tests.support.in_process_http import serving

    (root / "a.txt").write_text("one\n")
    change = {"file_path": "a.txt", "old_string": "one", "new_string": "two"}
    with (
        Workspace(root, store=redis_url) as first,
        Workspace(root, store=redis_url) as second,
        serving(mcp_http.http_app(first, host="127.0.0.1", token=["agent-a", "agent-b"])) as one,
        serving(mcp_http.http_app(second, host="127.0.0.1", token=["agent-a", "agent-b"])) as two,
    ):

        async def call(url: str, token: str, tool: str, arguments: dict[str, Any]) -> Any:
            async with (
                httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http,
                mcp.Client(streamable_http_client(url, http_client=http), mode="2026-07-28") as client,
            ):
                return await client.call_tool(tool, arguments)

        async def run() -> None:
            assert not (await call(one, "agent-a", "read", {"file_path": "a.txt"})).is_error
            refused = await call(two, "agent-b", "edit", change)
            assert refused.is_error and refused.structured_content["error"]["code"] == "FS_NOT_OBSERVED"
            done = await call(two, "agent-a", "edit", change)
            assert not done.is_error, done.content[0].text

        asyncio.run(run())
    assert (root / "a.txt").read_text() == "two\n"
