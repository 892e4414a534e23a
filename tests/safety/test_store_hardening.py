"""Stores a host names, and rows a store gives back (issue 31): an unknown ``scheme://`` is a one-line
host error, never a directory named after the scheme; a store file inside a root is refused by the
library as by the CLI, however the path is spelled; a history row tampered with outside fs-tools (nested
deep, a time that is no time) is the damaged-row error, never a RecursionError or a traceback."""

from __future__ import annotations

import importlib.util
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fs_tools import Workspace
from fs_tools.errors import HarnessError
from fs_tools.history.model import encode_steps, load_entry, load_json
from fs_tools.stores.sqlite import SqliteStore
from tests.support.cli import assert_host_error, cli_env, run_cli
from tests.support.redis_server import RedisServer

# --- D: an unknown scheme:// -------------------------------------------------------------------------------


UNKNOWN = "nosuchscheme://127.0.0.1:1/0"


def test_serve_refuses_an_unknown_store_scheme_and_makes_nothing(root: Path, tmp_path: Path) -> None:
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    done = run_cli("serve", "--root", str(root), "--store", UNKNOWN, cwd=cwd)
    assert_host_error(done, repr(UNKNOWN), "unknown scheme 'nosuchscheme://'", "redis://")
    assert list(cwd.iterdir()) == []  # was: a directory 'nosuchscheme:' holding a SQLite file


def test_call_refuses_an_unknown_state_scheme_without_showing_its_password(root: Path, tmp_path: Path) -> None:
    (root / "a.txt").write_text("one\n")
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    done = run_cli(
        "call", "--root", str(root), "--session", "k", "--state", "nosuch://me:hunter2@127.0.0.1:1/0",
        "read", '{"file_path": "a.txt"}', cwd=cwd,
    )  # fmt: skip
    assert_host_error(done, "'nosuch://me:***@127.0.0.1:1/0'", "unknown scheme 'nosuch://'")
    assert "hunter2" not in done.stderr
    assert list(cwd.iterdir()) == []


@pytest.mark.parametrize(
    ("store", "facts"),
    [
        (UNKNOWN, ("unknown scheme 'nosuchscheme://'", "sqlite:///")),
        ("HTTP://example.com/x.db", ("unknown scheme 'HTTP://'",)),
        ("sqlite://host/x.db", ("a sqlite:// URL names a file by its absolute path",)),
        ("state\0.db", ("is not a file name (it holds a NUL byte)",)),
        (" redis://127.0.0.1:1/0", ("unknown scheme before ' redis://'",)),  # a space from a config file
        ("1abc://x/s.db", ("unknown scheme before '1abc://'",)),
        ("sqlite:///tmp/x.db?mode=ro", ("by its absolute path alone",)),
    ],
)
def test_the_library_refuses_an_unknown_store_scheme(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store: str, facts: tuple[str, ...]
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError) as raised:
        Workspace(root, store=store)
    message = str(raised.value)
    assert "\n" not in message and repr(store) in message
    for fact in facts:
        assert fact in message, message
    assert sorted(path.name for path in tmp_path.iterdir()) == ["outside", "root"]  # nothing made


@pytest.mark.parametrize("store", [b"redis://127.0.0.1:1/0", 123, object()])
def test_a_store_that_is_no_store_is_refused_at_construction(root: Path, store: object) -> None:
    with pytest.raises(ValueError, match=r"^Workspace\(store=\.\.\.\) takes a SQLite file's path, a redis:// URL"):
        Workspace(root, store=store)  # type: ignore[arg-type]


def test_a_sqlite_url_names_the_file_and_a_path_object_is_always_a_file(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (root / "a.txt").write_text("one\n")
    state = tmp_path / "state" / "o.db"
    with Workspace(root, store=f"sqlite://{state}") as ws:
        assert not ws.session("k").call("read", {"file_path": "a.txt"}).is_error
        assert isinstance(ws.store, SqliteStore) and ws.store.path == state
    spaced = tmp_path / "state" / "a b.db"
    with Workspace(root, store=f"sqlite://{str(spaced).replace(' ', '%20')}") as ws:  # a URL is percent-decoded
        assert isinstance(ws.store, SqliteStore) and ws.store.path == spaced
    with Workspace(root, store=Path("odd:") / "x.db") as ws:  # Path folds '//': never a URL
        assert isinstance(ws.store, SqliteStore)
    assert (tmp_path / "odd:" / "x.db").is_file()


HAS_REDIS_PY = importlib.util.find_spec("redis") is not None


@pytest.mark.parametrize(
    "refused",
    [
        pytest.param(
            r"^observation store redis://127\.0\.0\.1:1/0 cannot be reached",
            marks=pytest.mark.skipif(not HAS_REDIS_PY, reason="with redis-py (the redis extra)"),
            id="redis-py",
        ),
        pytest.param(
            r"^a Redis store needs redis-py",
            marks=pytest.mark.skipif(HAS_REDIS_PY, reason="without redis-py (the core alone)"),
            id="core-alone",
        ),
    ],
)
def test_redis_urls_still_go_to_redis(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refused: str
) -> None:
    # Port 1 refuses at once: the store is Redis's to open (and fails as Redis), never a file; without
    # redis-py (the core alone) it is Redis's still, and the message says what to install.
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=refused):
        Workspace(root, store="redis://127.0.0.1:1/0")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["outside", "root"]  # no file made for it


# --- C: a store file inside a root -------------------------------------------------------------------------


def _refused_inside(root: Path | str | list[Path], store: Any, shown: str) -> None:
    with pytest.raises(ValueError) as raised:
        Workspace(root, store=store)
    message = str(raised.value)
    assert message.startswith(f"the observation store {shown!r} lies inside the workspace root")
    assert "\n" not in message and "keep it outside the roots" in message


def test_the_library_refuses_a_store_file_inside_a_root(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "into-root").symlink_to(root)
    (root / "sub").mkdir()
    (root / "sub" / "back").symlink_to(tmp_path / "elsewhere")
    cases: list[tuple[Path | str, Any, str]] = [
        (root, root / "state.db", str(root / "state.db")),
        (root, str(root / "new" / "dir" / "state.db"), str(root / "new" / "dir" / "state.db")),
        ("root", "root/state.db", "root/state.db"),  # a relative root and store
        ("root", tmp_path / "root" / "s.db", str(tmp_path / "root" / "s.db")),  # a relative root only
        (root, "into-root/state.db", "into-root/state.db"),  # through a symlink to the root
        (tmp_path / "into-root", root / "s.db", str(root / "s.db")),  # the root given through a symlink
        (root, f"sqlite://{root / 's.db'}", str(root / "s.db")),
        (root, tmp_path / "outside" / ".." / "root" / "s.db", str(tmp_path / "outside" / ".." / "root" / "s.db")),
    ]
    for given_root, store, shown in cases:
        _refused_inside(given_root, store, shown)
    # the rule also holds for a SqliteStore the host made itself, and for a second root
    made = SqliteStore(root / "made.db")
    try:
        _refused_inside(root, made, str(root / "made.db"))
    finally:
        made.close()
    (tmp_path / "second").mkdir()
    _refused_inside([root, tmp_path / "second"], tmp_path / "second" / "s.db", str(tmp_path / "second" / "s.db"))
    # nothing was made inside the root, and a store beside it is fine
    assert sorted(p.name for p in root.iterdir()) == ["made.db", "sub"]
    with Workspace(root, store=root / "sub" / "back" / "ok.db") as ws:  # a symlink leading out of the root
        assert ws.session("k").call("write", {"file_path": "n.txt", "content": "x\n"}).error is None
    assert (tmp_path / "elsewhere" / "ok.db").is_file()


def test_call_still_refuses_a_store_inside_a_root_with_exit_2(root: Path, tmp_path: Path) -> None:
    (root / "a.txt").write_text("one\n")
    (tmp_path / "link").symlink_to(root)
    done = run_cli(
        "call", "--root", "root", "--state", "link/s.db", "--session", "k", "read", '{"file_path": "a.txt"}',
        cwd=tmp_path,
    )  # fmt: skip
    assert_host_error(done, "the observation store 'link/s.db' lies inside the workspace root 'root'", "the default is")
    assert not (root / "s.db").exists()


# --- B: a history row tampered with outside fs-tools -------------------------------------------------------

HISTORY_TOOLS = ["read", "write", "checkpoint", "history", "diff", "rewind"]
DEEP = "[" * 100_000 + "]" * 100_000  # deeper than json's parser recurses: it raised RecursionError
# SQLite keeps a REAL infinity as one; NaN it turns into NULL, so a tamperer stores it as text
TAMPERED = {
    "deep": ("steps", DEEP, "nested deeper than any row fs-tools writes"),
    "deep-in-a-row": ("steps", '[["e", ' + DEEP + ", null, null]]", "nested deeper than any row fs-tools writes"),
    "nested-path": ("steps", '[["e", [[["a"]]], null, null]]', "a path is a list, not a string"),
    "infinite-time": ("at", float("inf"), "its time is inf"),
    "nan-time": ("at", "NaN", "its time is 'NaN'"),
    "huge-time": ("at", 1e300, "its time is 1e+300"),
    "nul-in-a-path": ("steps", '[["e", "/r/a\\u0000b", null, null]]', "a path holds a NUL character"),
    "long-number": ("steps", '[["e", "/r/a", null, null, ' + "9" * 5000 + "]]", "a number longer than any"),
}


def _recorded(root: Path, store: Path | str) -> str:
    """A store holding one recorded change of ``a.txt`` by session ``agent``, and the mark before it."""
    (root / "a.txt").write_text("one\n")
    with Workspace(root, store=store) as ws:
        s = ws.session("agent")
        mark = s.checkpoint()
        assert s.call("read", {"file_path": "a.txt"}).error is None
        assert s.call("write", {"file_path": "a.txt", "content": "two\n"}).error is None
    return mark


def _refused_everywhere(root: Path, store: Path | str, mark: str, fact: str) -> None:
    """history, diff and rewind: the damaged-row STORE_UNAVAILABLE naming what is wrong; a write still
    works (the change stands, logged unrecorded) and nothing is touched by the refused rewind."""
    with Workspace(root, store=store, tools=HISTORY_TOOLS) as ws:
        s = ws.session("agent")
        for tool, arguments in (("history", {}), ("diff", {}), ("rewind", {"mark": mark})):
            result = s.call(tool, arguments)
            assert result.error is not None and result.error.code == "STORE_UNAVAILABLE", (tool, result.text)
            assert "entry 2 is damaged" in result.text and fact in result.text, result.text
            assert "\n" not in result.error.message and len(result.error.message) < 400
        for method in (s.history, s.diff, lambda: s.rewind(mark)):
            with pytest.raises(HarnessError) as raised:
                method()
            assert raised.value.code == "STORE_UNAVAILABLE" and fact in raised.value.message
            assert isinstance(raised.value.__cause__, ValueError)  # the row's own fault, chained
        assert (root / "a.txt").read_text() == "two\n"
        assert s.call("write", {"file_path": "a.txt", "content": "three\n"}).error is None
    assert (root / "a.txt").read_text() == "three\n"


@pytest.mark.parametrize("case", sorted(TAMPERED))
def test_a_tampered_sqlite_history_row_is_the_damaged_row_error(root: Path, tmp_path: Path, case: str) -> None:
    column, value, fact = TAMPERED[case]
    store = tmp_path / "state.db"
    mark = _recorded(root, store)
    with sqlite3.connect(store) as db:
        assert db.execute(f"UPDATE history SET {column} = ? WHERE tool = 'write'", (value,)).rowcount == 1
    _refused_everywhere(root, store, mark, fact)


@pytest.mark.parametrize("case", ["deep", "nan-time"])
def test_fs_tools_history_prints_one_line_for_a_tampered_row(root: Path, tmp_path: Path, case: str) -> None:
    column, value, fact = TAMPERED[case]
    store = tmp_path / "state.db"
    _recorded(root, store)
    with sqlite3.connect(store) as db:
        db.execute(f"UPDATE history SET {column} = ? WHERE tool = 'write'", (value,))
    for command in (["history"], ["diff"]):
        done = run_cli(*command, "--root", str(root), "--state", str(store), "--session", "agent", cwd=tmp_path)
        assert done.returncode == 1, (done.returncode, done.stderr)  # the command line was fine: not 2
        assert done.stderr.startswith("fs-tools: error: STORE_UNAVAILABLE: the history store's entry 2 is damaged")
        assert done.stderr.count("\n") == 1 and fact in done.stderr and "Traceback" not in done.stderr
        assert done.stdout == ""


def test_a_row_made_before_move_identities_still_loads(root: Path, tmp_path: Path) -> None:
    store = tmp_path / "state.db"
    (root / "a.txt").write_text("one\n")
    with Workspace(root, store=store) as ws:
        s = ws.session("agent")
        mark = s.checkpoint()
        assert s.call("read", {"file_path": "a.txt"}).error is None
        assert s.call("move", {"source": "a.txt", "destination": "b.txt"}).error is None
    with sqlite3.connect(store) as db:  # the six-field move row of an older fs-tools
        (steps,) = db.execute("SELECT steps FROM history WHERE tool = 'move'").fetchone()
        row = json.loads(steps)
        db.execute("UPDATE history SET steps = ? WHERE tool = 'move'", (json.dumps([row[0][:6]]),))
    with Workspace(root, store=store) as ws:
        assert not ws.session("agent").rewind(mark).is_error
    assert (root / "a.txt").read_text() == "one\n" and not (root / "b.txt").exists()


@pytest.mark.parametrize(
    ("body", "fact"),
    [
        (lambda kept: DEEP, "nested deeper than any row fs-tools writes"),
        (lambda kept: json.dumps({**kept, "steps": json.loads("[" * 500 + "]" * 500)}), "its step 1 is not a step"),
        (lambda kept: json.dumps({**kept, "at": float("nan")}), "its time is nan"),
        (lambda kept: json.dumps({**kept, "at": float("-inf")}), "its time is -inf"),
        (lambda kept: json.dumps({**kept, "tool": ["write"]}), "its tool is a list"),
        (lambda kept: json.dumps([kept]), "not an entry such as fs-tools writes"),
    ],
    ids=["deep", "nested-steps", "nan-time", "minus-infinite-time", "list-tool", "not-an-object"],
)
def test_a_tampered_redis_history_row_is_the_damaged_row_error(
    root: Path, redis_server: RedisServer, body: Callable[[dict[str, Any]], str], fact: str
) -> None:
    import redis

    redis_server.flush()
    mark = _recorded(root, redis_server.url)
    client = redis.Redis.from_url(redis_server.url)
    try:
        [name] = [key for key in client.keys(b"*") if key.endswith(b"\0entry")]
        kept = json.loads(client.hget(name, b"2"))
        assert kept["tool"] == "write"
        client.hset(name, b"2", body(kept))
    finally:
        client.close()
    _refused_everywhere(root, redis_server.url, mark, fact)


def test_a_tampered_trimmed_record_is_the_damaged_row_error(root: Path, tmp_path: Path) -> None:
    store = tmp_path / "state.db"
    mark = _recorded(root, store)
    with sqlite3.connect(store) as db:  # SQLite keeps what it is given in an INTEGER column that is no integer
        db.execute("INSERT INTO history_trimmed (session, through) VALUES ('agent', 'x')")
    with Workspace(root, store=store, tools=HISTORY_TOOLS) as ws:
        s = ws.session("agent")
        for tool, arguments in (("diff", {}), ("rewind", {"mark": mark})):
            result = s.call(tool, arguments)
            assert result.error is not None and result.error.code == "STORE_UNAVAILABLE", result.text
            assert "record of trimmed entries is damaged ('x' is not a count)" in result.text
    assert (root / "a.txt").read_text() == "two\n"


def test_tampered_redis_counters_are_the_damaged_row_error(root: Path, redis_server: RedisServer) -> None:
    import redis

    redis_server.flush()
    mark = _recorded(root, redis_server.url)
    client = redis.Redis.from_url(redis_server.url)
    try:
        [base] = [key[: -len(b"entry")] for key in client.keys(b"*") if key.endswith(b"\0entry")]
        client.hset(base + b"trimmed", b"agent", b"-1")
        with Workspace(root, store=redis_server.url, tools=HISTORY_TOOLS) as ws:
            result = ws.session("agent").call("rewind", {"mark": mark})
        assert result.error is not None and result.error.code == "STORE_UNAVAILABLE", result.text
        assert "record of trimmed entries is damaged (b'-1' is not a count)" in result.text
        client.hdel(base + b"trimmed", b"agent")
        client.set(base + b"seq", b"1e3")
        with Workspace(root, store=redis_server.url, tools=HISTORY_TOOLS) as ws:
            result = ws.session("agent").call("rewind", {"mark": mark})
        assert result.error is not None and result.error.code == "STORE_UNAVAILABLE", result.text
        assert "sequence is damaged (b'1e3' is not a count)" in result.text
    finally:
        client.close()
    assert (root / "a.txt").read_text() == "two\n"


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8) | st.sampled_from(["e", "m"]),
    lambda inner: st.lists(inner, max_size=8) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=40,
)


@settings(max_examples=300, deadline=None)
@given(at=_JSON, tool=_JSON, steps=_JSON)
def test_any_stored_row_loads_or_is_a_value_error(at: object, tool: object, steps: object) -> None:
    """Whatever a row holds: an entry, or the ValueError the stores turn into the damaged-row error."""
    for parsed in (steps, [steps], [["e", "/r/a", None, steps]], [["m", "/r/a", "/r/b", "file", None, steps]]):
        try:
            entry = load_entry(1, "s", at, tool, None, None, load_json(json.dumps(parsed)))
        except ValueError:
            continue
        assert encode_steps(entry.steps) == load_json(json.dumps(encode_steps(entry.steps)))


def test_the_latest_time_a_row_may_carry_shows_in_every_time_zone(root: Path, tmp_path: Path) -> None:
    store = tmp_path / "state.db"
    _recorded(root, store)
    east = cli_env(TZ="Pacific/Kiritimati")  # UTC+14: the end of year 9999 UTC is year 10000 there
    for at, shown in ((253_370_764_800, "9999-01-01 14:00:00"), (253_402_300_799, None)):
        with sqlite3.connect(store) as db:
            db.execute("UPDATE history SET at = ? WHERE tool = 'write'", (at,))
        done = run_cli("history", "--root", str(root), "--state", str(store), "--session", "agent", env=east)
        if shown is not None:
            assert done.returncode == 0 and shown in done.stdout, done.stderr
        else:
            assert done.returncode == 1 and "Traceback" not in done.stderr and done.stderr.count("\n") == 1
            assert "its time is 253402300799.0, not a time a clock gives" in done.stderr


def test_a_host_store_with_a_bind_of_its_own_is_bound_and_taken_for_shared(root: Path) -> None:
    """A host's observation store that binds to the roots (its own shared backend) is bound, and brief
    re-reads are off with it (the session may have read the file elsewhere since)."""
    from policy import MemoryStore

    class Shared(MemoryStore):
        bound: tuple[str, ...] = ()

        def bind(self, roots: Any) -> None:
            self.bound = tuple(roots)

    (root / "a.txt").write_text("one\n")
    store = Shared()
    with Workspace(root, store=store) as ws:
        session = ws.session("s")
        assert store.bound == (str(root.resolve()),)
        first = session.call("read", {"file_path": "a.txt"})
        again = session.call("read", {"file_path": "a.txt"})
        assert "1\tone" in first.text and "1\tone" in again.text  # the whole text again, not "unchanged"
        assert ws.store.observed("s") == store.observed("s") != {}


def test_a_hosts_own_complete_store_is_taken_as_it_is(root: Path) -> None:
    """A host's store with everything ``Store`` asks (and no registry of MCP sessions) is used as given:
    its remembered contents stay its own, and an HTTP server on it keeps sessions in the process."""
    from fs_tools.provider import VersionCache
    from fs_tools.stores import MemoryHistory, Store, mcp_sessions_of
    from policy import MemoryStore

    class Mine(MemoryStore):
        shared = False

        def __init__(self) -> None:
            super().__init__()
            self.history = MemoryHistory()
            self.contents = VersionCache()

        def bind(self, roots: Any) -> None:
            pass

        def close(self) -> None:
            pass

    mine = Mine()
    assert isinstance(mine, Store)
    with Workspace(root, store=mine) as ws:
        assert ws.store is mine and mcp_sessions_of(ws.store) is None
