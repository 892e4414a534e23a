"""The ``fs-tools`` command as command-line users expect it (SPEC section 11): ``--version``, ``python -m
fs_tools``, one-line host errors with exit status 2, a quiet exit when the output pipe closes, ``schema``,
settings from the environment, ``--log-level`` everywhere, ``call --json`` and ``replay``."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import select
import socket
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import fs_tools
from fs_tools import Workspace, cli
from fs_tools.mcp import shapes
from fs_tools.mcp.shapes import call_result
from fs_tools.stores.sqlite import SqliteStore
from policy import Present
from tests.support.cli import WAIT, assert_host_error, cli_env, run_cli

MUTATING = {"write", "edit", "multi_edit"}
# serve needs the MCP SDK (the mcp extra); the suite also runs with the test extra alone
NEEDS_MCP = pytest.mark.skipif(importlib.util.find_spec("mcp") is None, reason="needs the MCP SDK (the mcp extra)")
SERVE = pytest.param("serve", marks=NEEDS_MCP)


# --- --version and python -m fs_tools ------------------------------------------------------------------------


def test_version_is_printed_by_the_command_and_by_python_m() -> None:
    assert fs_tools.__version__ == "0.1.0"
    for done in (run_cli("--version"), subprocess.run(["fs-tools", "--version"], capture_output=True, text=True)):
        assert done.returncode == 0 and done.stdout == f"fs-tools {fs_tools.__version__}\n", done.stderr


def test_python_m_fs_tools_runs_a_call_like_the_command(root: Path, tmp_path: Path) -> None:
    (root / "a.txt").write_text("one\n")
    done = run_cli("call", "--root", str(root), "--state", str(tmp_path / "o.sqlite"), "--session", "s", "read",
                '{"file_path": "a.txt"}')  # fmt: skip
    assert done.returncode == 0 and done.stdout == "     1\tone\n", done.stderr


# --- host mistakes: one line, exit status 2 ------------------------------------------------------------------

README_ROOT = "/path/to/project"  # the README's literal placeholder


@pytest.mark.parametrize("command", [SERVE, "schema", "call"])
def test_a_root_that_does_not_exist_is_one_line(command: str, tmp_path: Path) -> None:
    tail = ["--session", "s", "--state", str(tmp_path / "o.sqlite"), "read"] if command == "call" else []
    assert_host_error(run_cli(command, "--root", README_ROOT, *tail), f"workspace root {README_ROOT!r}")


@pytest.mark.parametrize("command", [SERVE, "schema", "call"])
def test_a_root_that_is_a_file_is_one_line(command: str, tmp_path: Path) -> None:
    file = tmp_path / "notes.txt"
    file.write_text("x\n")
    tail = ["--session", "s", "--state", str(tmp_path / "o.sqlite"), "read"] if command == "call" else []
    assert_host_error(run_cli(command, "--root", str(file), *tail), str(file), "Not a directory")


@pytest.mark.parametrize(
    "args",
    [
        ["call", "--bogus"],  # an unknown option: argparse's own message, on one line
        ["call", "--root", "."],  # a missing positional
        ["frobnicate"],  # an unknown subcommand
        [],  # no subcommand at all
        ["serve", "--port", "99999"],  # a port no socket can have (was an OverflowError traceback)
        ["serve", "--port", "http"],
        ["serve", "--transport", "carrier-pigeon"],
        ["replay", "--log-level", "loud", "x.log"],
    ],
)
def test_a_usage_mistake_is_one_line_naming_the_help(args: list[str]) -> None:
    done = run_cli(*args)
    assert_host_error(done, "--help")


def test_a_state_file_that_cannot_be_created_is_one_line(root: Path, tmp_path: Path) -> None:
    file = tmp_path / "plain-file"
    file.write_text("")
    for state in (file / "obs.sqlite", Path("/proc/fs-tools-test/obs.sqlite")):  # under a file; unwritable
        done = run_cli("call", "--root", str(root), "--state", str(state), "--session", "s", "read", "{}")
        assert_host_error(done, f"observation store {str(state)!r} cannot be opened")


def test_a_state_file_in_a_new_directory_is_created_private(root: Path, tmp_path: Path) -> None:
    (root / "a.txt").write_text("one\n")
    state = tmp_path / "new" / "deeper" / "obs.sqlite"
    read = '{"file_path": "a.txt"}'
    done = run_cli("call", "--root", str(root), "--state", str(state), "--session", "s", "read", read)
    assert done.returncode == 0, done.stderr
    assert state.stat().st_mode & 0o777 == 0o600  # it holds contents of the files read
    assert state.parent.stat().st_mode & 0o777 == 0o700


def test_a_store_someone_else_could_read_or_owns_keeps_no_contents(tmp_path: Path) -> None:
    readable = tmp_path / "readable.sqlite"
    readable.write_bytes(b"")
    readable.chmod(0o644)
    foreign = tmp_path / "foreign.sqlite"
    foreign.write_bytes(b"")
    foreign.chmod(0o600)
    if os.geteuid() != 0:
        pytest.skip("giving a file to another user needs root")
    os.chown(foreign, os.geteuid() + 1, -1)
    for path in (readable, foreign):
        store = SqliteStore(path)
        try:
            store.contents.put("v", b"secret\n")
            assert store.contents.max_stored == 0
        finally:
            store.close()
        assert b"secret" not in path.read_bytes(), path


def test_a_corrupt_contents_row_is_forgotten_not_an_error(root: Path, tmp_path: Path) -> None:
    (root / "a.txt").write_text("one\ntwo\n")
    base = ("call", "--root", str(root), "--state", str(tmp_path / "o.sqlite"), "--session", "s")
    assert run_cli(*base, "read", '{"file_path": "a.txt"}').returncode == 0
    for bad in ("'some text'", "99999999999", "x'00ff'"):  # text, a huge int (bytes(int) allocates), wrong bytes
        with contextlib.closing(sqlite3.connect(tmp_path / "o.sqlite")) as db, db:
            assert db.execute(f"UPDATE contents SET data = {bad}").rowcount >= 1
        (root / "a.txt").write_text("one\nTWO\n")
        done = run_cli(*base, "edit", '{"file_path": "a.txt", "old_string": "one", "new_string": "1"}')
        assert done.returncode == 1 and "FS_STALE_VERSION" in done.stdout, done.stdout + done.stderr
        assert run_cli(*base, "read", '{"file_path": "a.txt"}').returncode == 0
        (root / "a.txt").write_text("one\ntwo\n")
        assert run_cli(*base, "read", '{"file_path": "a.txt"}').returncode == 0


@NEEDS_MCP
def test_an_audit_log_or_replay_file_that_cannot_be_opened_is_one_line(root: Path, tmp_path: Path) -> None:
    missing = tmp_path / "no-such-dir" / "audit.jsonl"
    assert_host_error(run_cli("serve", "--root", str(root), "--audit-log", str(missing)), "--audit-log", str(missing))
    assert_host_error(run_cli("replay", str(missing)), f"audit log {str(missing)!r} cannot be read")  # was exit 1
    assert_host_error(run_cli("replay", str(tmp_path)), "Is a directory")


@NEEDS_MCP
def test_a_port_in_use_is_one_line(root: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = run_cli("serve", "--root", str(root), "--transport", "http", "--port", str(port))
    assert_host_error(done, f"cannot listen on 127.0.0.1:{port}", "Address already in use")


def test_serve_without_the_mcp_sdk_is_one_line(root: Path) -> None:
    script = "import sys; sys.modules['mcp'] = None\nfrom fs_tools.cli import main\nsys.exit(main(sys.argv[1:]))"
    done = subprocess.run(
        [sys.executable, "-c", script, "serve", "--root", str(root)],
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
        env=cli_env(),
    )
    assert_host_error(done, "fs-tools serve needs the MCP SDK", "pip install 'mcp")
    assert "pip install 'fs-tools" not in done.stderr  # that name on PyPI is another project (SPEC section 2)


@pytest.mark.parametrize(
    ("variable", "value", "says"),
    [
        ("FS_TOOLS_READ_ONLY", "maybe", "$FS_TOOLS_READ_ONLY='maybe' is not a switch"),
        ("FS_TOOLS_LOG_LEVEL", "loud", "$FS_TOOLS_LOG_LEVEL='loud' is not one of debug, info, warning, error"),
    ],
)
def test_a_bad_environment_value_is_one_line_naming_the_variable(
    root: Path, tmp_path: Path, variable: str, value: str, says: str
) -> None:
    assert_host_error(run_cli("schema", "--root", str(root), env=cli_env(**{variable: value})), says)


def test_a_missing_root_or_session_names_the_flag_and_the_variable(root: Path, tmp_path: Path) -> None:
    assert_host_error(run_cli("serve"), "give --root DIR or set $FS_TOOLS_ROOT")
    assert_host_error(run_cli("call", "--root", str(root), "read"), "give --session KEY or set $FS_TOOLS_SESSION")


@pytest.mark.parametrize(
    ("words", "said"),
    [
        (["--verion"], "unknown option '--verion'; did you mean '--version'?"),
        (["--log-level", "debug", "--hlep"], "unknown option '--hlep'; did you mean '--help'?"),
        (["--log-lvl=info", "demo"], "unknown option '--log-lvl'; did you mean '--log-level'?"),
        (["-x", "demo"], "unknown option '-x' (see"),
    ],
)
def test_an_unknown_option_before_the_command_is_named(words: list[str], said: str) -> None:
    assert_host_error(run_cli(*words), said)


@pytest.mark.parametrize("words", [["--vers"], ["--v"], ["--l", "info", "--version"], ["--log-level=info", "--v"]])
def test_an_abbreviated_option_before_the_command_still_works(words: list[str]) -> None:
    done = run_cli(*words)
    assert done.returncode == 0 and done.stdout == f"fs-tools {fs_tools.__version__}\n", done.stderr


def test_the_token_variable_holds_tokens_not_a_header(root: Path) -> None:
    env = cli_env(FS_TOOLS_TOKEN="Bearer secret-token-1")
    done = run_cli("serve", "--root", str(root), "--transport", "http", "--port", "0", env=env)
    assert_host_error(done, "$FS_TOOLS_TOKEN holds 'Bearer': give the token alone")


def test_a_call_with_bad_json_and_no_session_says_both_at_once(root: Path) -> None:
    done = run_cli("call", "--root", str(root), "read", '{"file_path": ')
    assert_host_error(done, "give --session KEY or set $FS_TOOLS_SESSION; and the arguments are not valid JSON (")
    assert_host_error(run_cli("call", "read", "[1]"), "$FS_TOOLS_ROOT; and the arguments are JSON list, not an object")
    alone = run_cli("call", "--root", str(root), "read", "{}")
    assert_host_error(alone, "give --session KEY or set $FS_TOOLS_SESSION")
    assert "JSON" not in alone.stderr


def test_a_call_reads_its_arguments_from_stdin_after_a_dash(root: Path, tmp_path: Path) -> None:
    """``fs-tools call edit - <<'EOF'``: JSON holding single quotes needs no shell quoting."""
    (root / "app.py").write_text("x = 'hi'\n")
    env = cli_env(FS_TOOLS_ROOT=str(root), FS_TOOLS_SESSION="s", FS_TOOLS_STATE=str(tmp_path / "state.db"))
    read = run_cli("call", "read", "-", env=env, input='\ufeff{"file_path": "app.py"}')  # with a byte-order mark
    edit = run_cli(
        "call", "edit", "-", env=env, input='{"file_path": "app.py", "old_string": "\'hi\'", "new_string": "\'yo\'"}\n'
    )
    assert read.returncode == 0 and edit.returncode == 0, (read.stderr, edit.stdout, edit.stderr)
    assert (root / "app.py").read_text() == "x = 'yo'\n"
    raw = subprocess.run(
        [sys.executable, "-m", "fs_tools", "call", "read", "-"], input=b"\xff", capture_output=True, env=env
    )
    assert raw.returncode == 2 and raw.stderr.decode() == (
        "fs-tools: error: the arguments on stdin are not UTF-8 (byte 0): send the JSON as UTF-8 text\n"
    )


def test_stdin_arguments_are_bounded_and_a_terminal_or_no_stdin_is_said(
    root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import io

    import fs_tools.workspace

    monkeypatch.setattr(fs_tools.workspace, "DEFAULT_MAX_FILE_BYTES", 1)  # the bound: 12 bytes and 1 MiB
    words = ["call", "--root", str(root), "--session", "s", "read", "-"]

    def given(data: bytes | None, *, tty: bool = False) -> str:
        stdin = None if data is None else io.TextIOWrapper(io.BytesIO(data))
        if stdin is not None and tty:
            monkeypatch.setattr(stdin, "isatty", lambda: True)
        monkeypatch.setattr(sys, "stdin", stdin)
        assert cli.main(words) == 2
        return capsys.readouterr().err

    assert given(b" " * ((1 << 20) + 13)) == (
        f"fs-tools: error: the arguments on stdin pass {(1 << 20) + 12} bytes, more than any call takes (a file's "
        "limit is 1 bytes): check what is piped in, or write the file in parts\n"
    )
    said = "fs-tools: error: `-` reads the arguments from stdin, which is {}: pipe the JSON in or use a heredoc\n"
    assert given(b"{}", tty=True) == said.format("a terminal") and given(None) == said.format("closed")


@NEEDS_MCP
def test_serve_on_a_terminal_says_what_it_is_doing(root: Path) -> None:
    """A person who runs `fs-tools serve` by hand learns it is running, on what, and how it is used."""
    import pty

    primary, secondary = pty.openpty()
    with subprocess.Popen(
        [sys.executable, "-m", "fs_tools", "serve", "--root", str(root)],
        stdin=secondary,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=cli_env(),
    ) as server:
        os.close(secondary)
        try:
            assert server.stderr is not None
            ready, _, _ = select.select([server.stderr], [], [], WAIT)
            assert ready, "serve printed nothing on a terminal"
            line = server.stderr.readline().decode()
        finally:
            server.terminate()
            server.wait(WAIT)
            os.close(primary)
    assert line.startswith(f"fs-tools: serving MCP on stdio for {root}"), line
    assert "an MCP client starts this command" in line and "Ctrl-C" in line


@NEEDS_MCP
def test_serve_over_http_prints_the_url_it_listens_on(root: Path) -> None:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "fs_tools",
            "serve",
            "--root",
            str(root),
            "--transport",
            "http",
            "--port",
            "0",
            "--no-token",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(),
    )
    try:
        assert process.stdout is not None
        assert select.select([process.stdout], [], [], WAIT)[0], "the server printed nothing"
        line = process.stdout.readline()
        assert line.startswith("fs-tools: serving MCP on http://127.0.0.1:") and line.endswith("/mcp\n"), line
        port = int(line.rsplit(":", 1)[1].removesuffix("/mcp\n"))
        assert port != 0
        with socket.create_connection(("127.0.0.1", port), timeout=WAIT):
            pass  # it listens where it says
    finally:
        process.terminate()
        process.wait(timeout=WAIT)


# --- a closed output pipe: a quiet exit ------------------------------------------------------------------------


@contextlib.contextmanager
def _closed_pipe() -> Iterator[int]:
    """A pipe whose reader has gone away: the first write to it fails with EPIPE."""
    reader, writer = os.pipe()
    os.close(reader)
    try:
        yield writer
    finally:
        os.close(writer)


def test_replay_into_a_closed_pipe_exits_quietly(tmp_path: Path) -> None:
    log = tmp_path / "big.jsonl"
    entry = {"ts": 1.0, "session": "s", "tool": "read", "arguments": {"file_path": "a.py"}, "code": None}
    log.write_text((json.dumps(entry) + "\n") * 20_000)
    with _closed_pipe() as stdout:
        done = subprocess.run(
            [sys.executable, "-m", "fs_tools", "replay", str(log)],
            stdout=stdout,
            stderr=subprocess.PIPE,
            text=True,
            timeout=WAIT,
            check=False,
        )
    assert done.returncode == cli.OUTPUT_CLOSED == 141 and done.stderr == ""


@pytest.mark.parametrize("command", ["call", "schema", "help"])
def test_other_output_into_a_closed_pipe_exits_quietly(root: Path, tmp_path: Path, command: str) -> None:
    (root / "a.txt").write_text("one\n" * 1000)
    args = {
        "call": ["call", "--root", str(root), "--state", str(tmp_path / "o.sqlite"), "--session", "s", "read",
                 '{"file_path": "a.txt"}'],
        "schema": ["schema", "--root", str(root)],
        "help": ["--help"],
    }[command]  # fmt: skip
    with _closed_pipe() as stdout:
        done = subprocess.run(
            [sys.executable, "-m", "fs_tools", *args],
            stdout=stdout,
            stderr=subprocess.PIPE,
            text=True,
            timeout=WAIT,
            check=False,
            env=cli_env(),
        )
    # argparse itself ignores a failed write of the help, and exits 0
    assert done.returncode == (0 if command == "help" else 141) and done.stderr == "", done.stderr


def test_the_pipe_recipe_in_process(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def closed(*args: object, **kwargs: object) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(cli, "_run", closed)
    assert cli.main(["demo"]) == 141  # a stdout without a descriptor (capsys) is left alone


# --- schema ------------------------------------------------------------------------------------------------


def _schema(*args: str, env: dict[str, str] | None = None) -> list[dict[str, Any]]:
    done = run_cli("schema", *args, env=env)
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout))


def test_schema_prints_each_format_from_the_adapters(root: Path) -> None:
    from fs_tools.adapters import anthropic, gemini, openai

    with Workspace(root) as ws:
        expected = {
            "mcp": shapes.tool_definitions(ws),
            "openai": openai.tool_definitions(ws),
            "anthropic": anthropic.tool_definitions(ws),
            "gemini": gemini.tool_definitions(ws),
        }
    assert _schema("--root", str(root)) == expected["mcp"]  # mcp is the default
    for format, definitions in expected.items():
        assert _schema("--root", str(root), "--format", format) == definitions
    first = expected["mcp"][0]
    assert set(first) == {"name", "title", "description", "inputSchema", "outputSchema", "annotations"}
    assert first["annotations"]["readOnlyHint"] is True


def test_schema_needs_no_root_and_honours_read_only(tmp_path: Path) -> None:
    names = {d["name"] for d in _schema()}  # the current directory
    assert names >= MUTATING
    read_only = {d["name"] for d in _schema("--read-only")}
    assert read_only and not read_only & MUTATING
    assert {d["name"] for d in _schema(env=cli_env(FS_TOOLS_READ_ONLY="yes"))} == read_only
    assert {d["name"] for d in _schema("--no-read-only", env=cli_env(FS_TOOLS_READ_ONLY="yes"))} == names  # flag wins


def test_schema_and_call_take_a_subset_of_tools(root: Path, tmp_path: Path) -> None:
    assert [d["name"] for d in _schema("--root", str(root), "--tools", "read,edit")] == ["read", "edit"]
    (root / "a.txt").write_text("one\n")
    state = ("--state", str(tmp_path / "o.sqlite"), "--session", "s")
    done = run_cli("call", "--root", str(root), *state, "--tools", "read", "write", '{"file_path": "a.txt"}')
    assert done.returncode == 1 and "error: UNKNOWN_TOOL" in done.stderr
    assert_host_error(run_cli("schema", "--root", str(root), "--tools", "read,raed"), "raed")


# --- settings from the environment ---------------------------------------------------------------------------


def test_roots_state_and_session_come_from_the_environment(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    (second / "b.txt").write_text("bee\n")
    env = cli_env(
        FS_TOOLS_ROOT=os.pathsep.join([str(first), str(second)]),
        FS_TOOLS_STATE=str(tmp_path / "env.sqlite"),
        FS_TOOLS_SESSION="from-env",
    )
    read = run_cli("call", "read", json.dumps({"file_path": str(second / "b.txt")}), env=env)
    assert read.returncode == 0 and "bee" in read.stdout, read.stderr
    write = run_cli("call", "write", '{"file_path": "new.txt", "content": "x"}', env=env)
    assert write.returncode == 0 and (first / "new.txt").exists()  # the first root is primary
    with contextlib.closing(SqliteStore(tmp_path / "env.sqlite")) as store:
        assert store.observed("from-env")  # the state file and the session key from the environment
    # flags win over the variables
    flagged = run_cli("call", "--root", str(second), "--session", "other", "read", '{"file_path": "b.txt"}', env=env)
    assert flagged.returncode == 0
    with contextlib.closing(SqliteStore(tmp_path / "env.sqlite")) as store:
        assert store.observed("other")


def test_read_only_from_the_environment_and_the_flag_that_wins(root: Path, tmp_path: Path) -> None:
    base = ("call", "--root", str(root), "--state", str(tmp_path / "o.sqlite"), "--session", "s", "write")
    create = '{"file_path": "new.txt", "content": "x"}'
    refused = run_cli(*base, create, env=cli_env(FS_TOOLS_READ_ONLY="1"))
    assert refused.returncode == 1 and "error: FS_SANDBOX_DENIED" in refused.stderr
    assert not (root / "new.txt").exists()
    assert run_cli(*base, create, env=cli_env(FS_TOOLS_READ_ONLY="")).returncode == 0  # empty counts as unset
    other = '{"file_path": "other.txt", "content": "x"}'
    allowed = run_cli(*base[:1], "--no-read-only", *base[1:], other, env=cli_env(FS_TOOLS_READ_ONLY="on"))
    assert allowed.returncode == 0 and (root / "other.txt").exists(), allowed.stderr


def test_the_help_names_every_variable() -> None:
    done = run_cli("--help")
    for variable in ("FS_TOOLS_ROOT", "FS_TOOLS_READ_ONLY", "FS_TOOLS_STATE", "FS_TOOLS_SESSION",
                     "FS_TOOLS_LOG_LEVEL", "FS_TOOLS_TOKEN"):  # fmt: skip
        assert variable in done.stdout
    assert "exit status" in done.stdout


def test_the_token_variable_is_the_servers() -> None:
    mcp_http = pytest.importorskip("fs_tools.mcp.http")
    assert cli.TOKEN_ENV == mcp_http.TOKEN_ENV


# --- --log-level on every subcommand -------------------------------------------------------------------------

_LEVEL_PROBE = (
    "import logging, sys\nfrom fs_tools.cli import main\nmain(sys.argv[1:])\nprint(logging.getLogger().level)"
)


@pytest.mark.parametrize("command", ["demo", "call", "schema", "replay"])
def test_every_subcommand_takes_a_log_level(root: Path, tmp_path: Path, command: str) -> None:
    (tmp_path / "audit.jsonl").write_text("")
    tail = {
        "demo": [],
        "call": ["--root", str(root), "--state", str(tmp_path / "o.sqlite"), "--session", "s", "list"],
        "schema": ["--root", str(root)],
        "replay": [str(tmp_path / "audit.jsonl")],
    }[command]

    def level(*flags: str, **env: str) -> int:
        done = subprocess.run(
            [sys.executable, "-c", _LEVEL_PROBE, command, *flags, *tail],
            capture_output=True,
            text=True,
            timeout=WAIT,
            check=False,
            env=cli_env(**env),
        )
        assert done.returncode == 0, done.stderr
        return int(done.stdout.splitlines()[-1])

    assert level() == 30  # warning
    assert level("--log-level", "debug") == 10
    assert level(FS_TOOLS_LOG_LEVEL="error") == 40
    assert level("--log-level", "info", FS_TOOLS_LOG_LEVEL="error") == 20  # the flag wins


# --- lazy imports --------------------------------------------------------------------------------------------

_MODULES_AFTER = (
    "import sys\nfrom fs_tools.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
    "print(' '.join(sorted(sys.modules)), file=sys.stderr)"
)


@pytest.mark.parametrize("flag", ["--help", "--version"])
def test_help_and_version_import_nothing_of_the_library(flag: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _MODULES_AFTER, flag], capture_output=True, text=True, timeout=WAIT, check=False
    )
    loaded = set(done.stderr.split())
    assert "fs_tools.cli" in loaded
    heavy = {"pydantic", "fs_tools.workspace", "fs_tools.tools", "policy", "asyncio", "mcp", "logging", "json"}
    assert not loaded & heavy, loaded & heavy


def _loaded_by(code: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", f"import sys\n{code}\nprint(' '.join(sys.modules))"],
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=True,
    )
    return set(done.stdout.split())


def test_the_workspace_imports_neither_the_mcp_sdk_nor_sqlite_until_used() -> None:
    loaded = _loaded_by("from fs_tools import Workspace; Workspace")
    assert "fs_tools.workspace" in loaded
    assert not loaded & {"mcp", "mcp_types", "sqlite3", "fs_tools.cli", "fs_tools.mcp.server"}


def test_the_workspace_imports_neither_asyncio_nor_watchdog_until_used() -> None:
    loaded = _loaded_by("from fs_tools import Workspace; Workspace")
    assert not loaded & {"asyncio", "watchdog"}


# --- call --json: the MCP result -----------------------------------------------------------------------------


def test_call_json_prints_the_mcp_result(root: Path, tmp_path: Path) -> None:
    (root / "a.txt").write_text("one\n")
    base = ("call", "--root", str(root), "--state", str(tmp_path / "o.sqlite"), "--session", "s", "--json")
    refused = run_cli(*base, "edit", '{"file_path": "a.txt", "old_string": "one", "new_string": "1"}')
    assert refused.returncode == 1
    shown = json.loads(refused.stdout)
    assert list(shown) == ["isError", "content", "structuredContent"]
    error = shown["structuredContent"]["error"]
    assert shown["isError"] is True and error["code"] == "FS_NOT_OBSERVED" and error["name"] == "NotObserved"
    assert shown["content"] == [{"type": "text", "text": f"ERROR FS_NOT_OBSERVED: {error['message']}"}]

    read = json.loads(run_cli(*base, "read", '{"file_path": "a.txt"}').stdout)
    assert read["isError"] is False and read["structuredContent"]["total_lines"] == 1
    assert read["content"] == [{"type": "text", "text": "     1\tone"}]
    with Workspace(root) as ws:  # the very function the server uses
        expected = call_result(ws.session("fresh").call("read", {"file_path": "a.txt"}))
    assert read == expected


def test_call_without_json_prints_what_the_model_reads(root: Path, tmp_path: Path) -> None:
    base = ("call", "--root", str(root), "--state", str(tmp_path / "o.sqlite"), "--session", "s")
    done = run_cli(*base, "read", '{"file_path": "missing.txt"}')
    assert done.returncode == 1 and done.stdout.startswith("ERROR FS_NOT_FOUND: 'missing.txt' does not exist")
    assert done.stderr == "error: FS_NOT_FOUND\n"


# --- a stale error through call says what changed, as the server's does ----------------------------------------

APP = "".join(f"line {n}\n" for n in range(1, 11))


def _stale_sequence(call: Any, root: Path) -> str:
    (root / "app.py").write_text(APP)
    assert "line 1" in call("read", {"file_path": "app.py"})
    (root / "app.py").write_text(APP.replace("line 6\n", "line six\n"))  # someone else changes line 6
    return str(call("edit", {"file_path": "app.py", "old_string": "line 1\n", "new_string": "first\n"}))


def test_a_stale_error_through_call_names_the_changed_lines_as_the_library_does(root: Path, tmp_path: Path) -> None:
    state = str(tmp_path / "state" / "o.sqlite")

    def through_cli(tool: str, arguments: dict[str, Any]) -> str:
        done = run_cli("call", "--root", str(root), "--state", state, "--session", "s", tool, json.dumps(arguments))
        return done.stdout

    with Workspace(root) as ws:  # one process, as a server is
        session = ws.session("s")
        in_process = _stale_sequence(lambda tool, args: call_result(session.call(tool, args))["content"][0]["text"],
                                     root)  # fmt: skip
    from_cli = _stale_sequence(through_cli, root).rstrip("\n")
    assert "line 6 changed" in in_process
    assert from_cli == in_process


def test_the_store_keeps_contents_within_its_budget(tmp_path: Path) -> None:
    from fs_tools.provider.content import version_of

    path = tmp_path / "o.sqlite"
    datas = [bytes([n]) * 3000 for n in range(10)]
    versions = [version_of(data) for data in datas]
    huge = b"x" * 20_000
    with contextlib.closing(SqliteStore(path, max_content_bytes=10_000)) as store:
        for version, data in zip(versions, datas, strict=True):
            store.contents.put(version, data)
        store.contents.put(version_of(huge), huge)  # over the whole budget: not kept on disk
    with contextlib.closing(sqlite3.connect(path)) as db:
        rows = dict(db.execute("SELECT version, size FROM contents").fetchall())
    assert rows == {versions[7]: 3000, versions[8]: 3000, versions[9]: 3000}  # the newest that fit, oldest dropped
    with contextlib.closing(SqliteStore(path, max_content_bytes=10_000)) as later:  # another process, later
        assert later.contents.get(versions[9]) == datas[9]
        assert later.contents.get(versions[1]) is None and later.contents.get(version_of(huge)) is None


def test_contents_are_kept_only_in_a_store_nobody_else_can_read(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite"
    path.touch()
    path.chmod(0o644)
    with contextlib.closing(SqliteStore(path)) as store:
        store.contents.put("v", b"secret\n")
    with contextlib.closing(sqlite3.connect(path)) as db:
        assert db.execute("SELECT count(*) FROM contents").fetchone() == (0,)


def test_a_store_made_before_the_contents_table_gains_it(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute("CREATE TABLE observations (session TEXT NOT NULL, key TEXT NOT NULL, version TEXT, "
                   "PRIMARY KEY (session, key)) WITHOUT ROWID")  # fmt: skip
        db.execute("INSERT INTO observations VALUES ('s', '/k', 'abc')")
        db.commit()
    path.chmod(0o600)
    with contextlib.closing(SqliteStore(path)) as store:
        assert store.get("s", "/k") == Present("abc")
        store.contents.put("abc", b"kept\n")
        assert store.contents.get("abc") == b"kept\n"


# --- replay ----------------------------------------------------------------------------------------------------


def test_replay_says_what_is_missing_from_a_partial_entry(tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    entries = [
        {"ts": 1},
        {"ts": 1, "tool": "read", "code": None},
        {"ts": 1, "tool": "read", "arguments": {"file_path": "a.py"}},
        {"tool": "read", "arguments": {"file_path": "a.py"}, "code": None, "duration_ms": True},
    ]
    log.write_text("".join(json.dumps(e) + "\n" for e in entries))
    done = run_cli("replay", str(log))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "   1  no tool and no outcome, only 'ts' (unreadable entry)",
        "   2  read(arguments not recorded)  → ok",
        "   3  read a.py  → (no outcome recorded)",
        "   4  read a.py  → ok",
    ]
    assert "None" not in done.stdout


def test_replay_shows_a_rejected_call_as_sent(tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    rejected = {"file_path": "app.py", "old_string": "greet", "new_string": "greet"}  # must differ: INVALID_ARGS
    entries = [
        {"session": "s", "tool": "edit", "arguments": rejected, "code": "INVALID_ARGS", "duration_ms": 0.1},
        {"session": "s", "tool": "edit", "arguments": rejected | {"new_string": "hi"}, "code": None},
    ]
    log.write_text("".join(json.dumps(e) + "\n" for e in entries))
    lines = run_cli("replay", str(log)).stdout.splitlines()
    sent = 'edit(file_path="app.py", old_string="greet", new_string="greet")'
    assert lines[0] == f"   1  [s] {sent}  → INVALID_ARGS  0.1 ms"
    assert lines[1] == '   2  [s] edit app.py: replace "greet" (1 occurrence)  → ok'


def test_replay_shows_terminal_controls_as_escapes(tmp_path: Path) -> None:
    """A client chose the tool name an audit log records: replaying it must not drive the terminal."""
    log = tmp_path / "audit.jsonl"
    log.write_text(json.dumps({"tool": "rea\x1b]0;pwned\x07d", "arguments": {"file_path": "a\x9bb"}}) + "\n")
    done = run_cli("replay", str(log))
    assert done.returncode == 0, done.stderr
    assert "rea\\x1b]0;pwned\\x07d" in done.stdout and "a\\x9bb" in done.stdout
    assert not any(ord(c) < 0x20 and c != "\n" for c in done.stdout)


def test_output_that_cannot_be_written_is_one_line_and_a_closed_stdout_is_quiet(root: Path) -> None:
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "fs_tools", "schema", "--root", str(root)],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=WAIT,
            env=cli_env(),
        )
    assert done.returncode == 2, done.stderr
    assert done.stderr == "fs-tools: error: the output cannot be written: No space left on device\n"
    (root / "a.txt").write_text("one\n")
    closed = subprocess.run(  # started with fd 1 closed: the call still runs and says how it went
        [
            sys.executable,
            "-m",
            "fs_tools",
            "call",
            "--root",
            str(root),
            "--state",
            str(root.parent / "s.sqlite"),
            "--session",
            "s",
            "write",
            '{"file_path": "b.txt", "content": "x"}',
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        timeout=WAIT,
        env=cli_env(),
        preexec_fn=lambda: os.close(1),
    )
    assert closed.returncode == 0 and "Traceback" not in closed.stderr, closed.stderr
    assert (root / "b.txt").read_text() == "x"


def test_a_name_that_is_not_utf8_is_observed_in_the_sqlite_store(root: Path, tmp_path: Path) -> None:
    """Reached by a model's path through a symlink to a directory whose name is not UTF-8 (was an
    INTERNAL_ERROR from the store's UnicodeEncodeError)."""
    odd = os.fsdecode(b"d\xff")
    (root / odd).mkdir()
    (root / odd / "f.txt").write_text("hi\n")
    (root / "link").symlink_to(odd)
    with Workspace(root, store=tmp_path / "o.sqlite") as ws:
        session = ws.session("s\udcff")
        read = session.call("read", {"file_path": "link/f.txt"})
        assert not read.is_error, read.text
        edited = session.call("edit", {"file_path": "link/f.txt", "old_string": "hi", "new_string": "ho"})
        assert not edited.is_error, edited.text
    assert (root / odd / "f.txt").read_text() == "ho\n"


def test_the_log_level_may_come_before_the_subcommand(root: Path) -> None:
    before = run_cli("--log-level", "debug", "schema", "--root", str(root))
    after = run_cli("schema", "--root", str(root), "--log-level", "debug")
    assert before.returncode == after.returncode == 0, before.stderr + after.stderr
    assert before.stdout == after.stdout
    assert_host_error(run_cli("--log-level", "loud", "schema"), "argument --log-level: invalid choice: 'loud'")


def test_the_observation_store_must_lie_outside_the_roots(root: Path) -> None:
    (root / "a.txt").write_text("one\n")
    inside = root / "sub" / "state.sqlite"
    read = '{"file_path": "a.txt"}'
    done = run_cli("call", "--root", str(root), "--state", str(inside), "--session", "s", "read", read)
    assert_host_error(done, f"the observation store {str(inside)!r} lies inside the workspace root")
    assert not inside.exists() and not inside.parent.exists()


def test_a_relative_xdg_state_home_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", "relative/state")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert cli.default_state_file() == tmp_path / ".local" / "state" / "fs-tools" / "observations.sqlite"


def test_a_prefix_renames_the_tools_of_schema_and_call(root: Path, tmp_path: Path) -> None:
    (root / "a.txt").write_text("one\n")
    listed = json.loads(run_cli("schema", "--root", str(root), "--prefix", "fs_", "--tools", "read,grep").stdout)
    assert [tool["name"] for tool in listed] == ["fs_read", "fs_grep"]
    base = ("call", "--root", str(root), "--prefix", "fs_", "--state", str(tmp_path / "o.sqlite"), "--session", "s")
    assert run_cli(*base, "fs_read", '{"file_path": "a.txt"}').stdout == "     1\tone\n"
    unknown = run_cli(*base, "read", '{"file_path": "a.txt"}')
    assert unknown.returncode == 1 and 'did you mean "fs_read"?' in unknown.stdout
    assert_host_error(run_cli("schema", "--root", str(root), "--prefix", "1x"), "Workspace(prefix='1x')")


def test_keeping_contents_does_not_wait_out_another_processs_write_lock(tmp_path: Path) -> None:
    """The provider keeps contents while it commits, under a lock other sessions wait for: a store that
    another process is writing gets nothing kept, at once, instead of the store's whole busy timeout."""
    import threading

    from fs_tools.provider.content import version_of

    path = tmp_path / "o.sqlite"
    with contextlib.closing(SqliteStore(path, busy_timeout=600)) as store:
        with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as other:
            other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
            data = b"some content\n"
            put = threading.Thread(target=store.contents.put, args=(version_of(data), data), daemon=True)
            put.start()
            put.join(WAIT)  # a bound for a broken run, not a timing threshold
            assert not put.is_alive(), "the content put waited for the store's 600 s busy timeout"
            other.execute("ROLLBACK")
        store.put("s", "a.txt", Present("v1"))  # observations keep the store's own busy timeout
        assert store.get("s", "a.txt") == Present("v1")
    with contextlib.closing(sqlite3.connect(path)) as db:
        assert db.execute("SELECT count(*) FROM contents").fetchone() == (0,)


def test_the_checks_of_errors_that_teach_are_options_of_every_workspace_command(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text("def f():\n    return 1\n")
    state = tmp_path / "state.sqlite"
    env = cli_env(FS_TOOLS_SESSION="t")

    def call(*flags: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        done = run_cli(
            "call", "--root", str(root), "--state", str(state), *flags, "--json", tool, json.dumps(arguments), env=env
        )
        assert done.returncode in (0, 1), done.stderr
        return json.loads(done.stdout)  # type: ignore[no-any-return]

    assert not call(tool="read", arguments={"file_path": "a.py"})["isError"]
    placeholder = {"file_path": "a.py", "old_string": "    return 1", "new_string": "    # ... rest unchanged"}
    assert call(tool="edit", arguments=placeholder)["isError"]
    syntax_break = {"file_path": "a.py", "old_string": "    return 1", "new_string": "    return (1"}
    assert call("--refuse-syntax-errors", tool="edit", arguments=syntax_break)["isError"]
    assert (root / "a.py").read_text() == "def f():\n    return 1\n"
    allowed = call("--no-check-placeholders", "--no-check-syntax", tool="edit", arguments=placeholder)
    assert not allowed["isError"] and allowed["structuredContent"]["syntax_errors"] == []
    assert (root / "a.py").read_text() == "def f():\n    # ... rest unchanged\n"
    (root / "a.py").write_text("def f():\n    # ... rest unchanged\nx = 1\n")  # changed outside, not in line 2
    edit = {"file_path": "a.py", "old_string": "    # ... rest unchanged", "new_string": "    return 2"}
    assert call(tool="edit", arguments=edit)["isError"]  # strict: the file changed since
    region = call("--stale", "region", tool="edit", arguments=edit)
    assert not region["isError"] and region["structuredContent"]["changed_lines"] == [[3, 3]], region
