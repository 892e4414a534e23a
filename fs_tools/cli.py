"""The ``fs-tools`` command: ``demo``, ``serve``, ``call``, ``schema``, ``replay``, and the history of
``call`` sessions: ``checkpoint``, ``history``, ``diff`` and ``rewind``.

The library is imported only by the subcommand that needs it, so ``--help`` and ``--version`` answer
without loading pydantic, the tools or the MCP SDK.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from fs_tools import __version__
from fs_tools.state import state_directory

if TYPE_CHECKING:
    from fs_tools.history import HistoryEntry
    from fs_tools.result import ToolResult
    from fs_tools.workspace import Session, Workspace

TOOL_ERROR = 1  # the call ran and its result is an error
BAD_SETUP = 2  # a bad option, root or file: argparse's status for bad usage, distinct from a tool error (1)
OUTPUT_CLOSED = 141  # 128 + SIGPIPE: what a shell reports for `cat` when the reader of its pipe went away
INTERRUPTED = 130  # 128 + SIGINT

ROOT_ENV = "FS_TOOLS_ROOT"
READ_ONLY_ENV = "FS_TOOLS_READ_ONLY"
STATE_ENV = "FS_TOOLS_STATE"
SESSION_ENV = "FS_TOOLS_SESSION"
LOG_LEVEL_ENV = "FS_TOOLS_LOG_LEVEL"
TOKEN_ENV = "FS_TOOLS_TOKEN"  # mcp_http.TOKEN_ENV, named here so that --help need not import the SDK
LOG_LEVELS = ("debug", "info", "warning", "error")
FORMATS = ("mcp", "openai", "anthropic", "gemini")
HOOK_HARNESSES = ("claude-code", "gemini", "codex")  # fs_tools.hooks.HOOK_HARNESSES, named here for --help
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")

EPILOG = f"""\
environment (a flag on the command line wins; an empty variable counts as unset):
  {ROOT_ENV}       workspace roots, separated by {os.pathsep!r}; the first is primary (--root)
  {READ_ONLY_ENV}  1/true/yes/on or 0/false/no/off (--read-only / --no-read-only)
  {STATE_ENV}      the observation store of 'fs-tools call' (--state)
  {SESSION_ENV}    the session key of 'fs-tools call' (--session)
  {LOG_LEVEL_ENV}  {", ".join(LOG_LEVELS)} (--log-level; default warning)
  {TOKEN_ENV}      the bearer token 'fs-tools serve --transport http' requires (--token)

exit status: 0 success; 1 the tool call returned an error; 2 a bad option, root or file (one line on
stderr: 'fs-tools: error: ...'); 141 the reader of the output went away; 130 interrupted (serve stops
cleanly with 0)."""


class _BadSetup(Exception):
    """A host input the command cannot use: a bad option, root, store or file (the message says which)."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line, ``fs-tools: error: ...``, like every other host error."""

    def error(self, message: str) -> NoReturn:
        raise _BadSetup(f"{message} (see '{self.prog} --help')")


def default_state_file() -> Path:
    """Where ``fs-tools call`` keeps observations between invocations: the user's state directory,
    never inside a workspace root."""
    return state_directory() / "observations.sqlite"


def token_file(port: int | str) -> Path:
    """Where ``fs-tools serve --transport http`` writes the token it made for the server on ``port``:
    beside ``fs-tools call``'s state, readable by the user only."""
    return default_state_file().parent / f"http-{port}.token"


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port number from 0 to 65535, got {text!r}")
    return port


def _names(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


def _parser() -> _Parser:
    formatter = argparse.RawDescriptionHelpFormatter
    log_level = {"choices": LOG_LEVELS, "help": f"what is logged to stderr (default ${LOG_LEVEL_ENV} or warning)"}
    common = _Parser(add_help=False)
    # accepted before or after the subcommand: the subcommand's copy sets it only when given there
    common.add_argument("--log-level", default=argparse.SUPPRESS, **log_level)  # type: ignore[arg-type]
    workspace = _Parser(add_help=False)
    workspace.add_argument(
        "--root", action="append", help=f"a workspace root (repeatable; the first is primary; default ${ROOT_ENV})"
    )
    workspace.add_argument(
        "--read-only",
        action=argparse.BooleanOptionalAction,
        help=f"refuse every write and edit; list no mutating tool (default ${READ_ONLY_ENV} or off)",
    )
    workspace.add_argument("--tools", type=_names, help="only these tools, comma-separated (e.g. read,edit)")
    workspace.add_argument(
        "--dialect",
        choices=["fs-tools", "claude-code", "anthropic", "codex", "gemini"],
        help="speak one model family's tool names and arguments (default fs-tools)",
    )
    workspace.add_argument(
        "--stale",
        choices=["strict", "region"],
        help="region: let an edit through when the file changed since the read but not in its lines (default strict)",
    )
    workspace.add_argument(
        "--check-syntax",
        action=argparse.BooleanOptionalAction,
        help="report the syntax errors a write or an edit introduced (default on)",
    )
    workspace.add_argument(
        "--refuse-syntax-errors",
        action=argparse.BooleanOptionalAction,
        help="refuse such a change with FS_SYNTAX_ERROR instead (default off)",
    )
    workspace.add_argument(
        "--check-placeholders",
        action=argparse.BooleanOptionalAction,
        help="refuse new text that replaces code with '# ... rest unchanged' (default on)",
    )
    workspace.add_argument(
        "--durable",
        action=argparse.BooleanOptionalAction,
        help="fsync every write's file and directory (default on; --no-durable: atomic, not crash-safe)",
    )
    workspace.add_argument("--prefix", help="put before every tool name the model sees and calls (fs_ gives fs_read)")
    workspace.add_argument(
        "--workspace-id", help="a Redis store: the workspace's name in its keys (default the primary root's path)"
    )
    workspace.add_argument("--key-prefix", help="a Redis store: keeps deployments sharing one Redis apart")

    parser = _Parser(
        prog="fs-tools",
        description="Safe, instructive file tools for LLM agents.",
        epilog=EPILOG,
        formatter_class=formatter,
    )
    parser.add_argument("--version", action="version", version=f"fs-tools {__version__}")
    parser.add_argument("--log-level", **log_level)  # type: ignore[arg-type]
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, parents: list[_Parser], help: str) -> _Parser:
        return commands.add_parser(
            name, parents=parents, help=help, description=help, epilog=EPILOG, formatter_class=formatter
        )

    command("demo", [common], "run a scripted agent session in a throwaway workspace")

    serve = command("serve", [common, workspace], "serve the tools over MCP (stdio by default)")
    serve.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    serve.add_argument("--host", default="127.0.0.1", help="HTTP bind address (default 127.0.0.1)")
    serve.add_argument("--port", type=_port, default=8765, help="HTTP port (default 8765; 0 picks a free one)")
    serve.add_argument(
        "--token",
        action="append",
        help=f"HTTP: require 'Authorization: Bearer TOKEN' on every request (default ${TOKEN_ENV}, several "
        "separated by spaces; prefer the variable, since other local users can read a command line). Give one "
        "per agent to keep the agents' stateless sessions apart. Without either, a token is made for the run "
        f"and written to {token_file('PORT')} (readable by you only)",
    )
    serve.add_argument(
        "--no-token",
        action="store_true",
        help="HTTP on a loopback address: require no token (any local user can then use the tools with your "
        "rights); refused with --token or off loopback",
    )
    serve.add_argument("--audit-log", type=Path, help="append one JSON line per tool call to this file")
    serve.add_argument(
        "--store",
        help="keep observations and history in a SQLite file, or in Redis (redis://host:port/db) shared by "
        "replicas and workers (default: in memory)",
    )

    stateful = _Parser(add_help=False)
    stateful.add_argument("--session", help=f"session key: the same key keeps the same observations (${SESSION_ENV})")
    stateful.add_argument(
        "--state",
        help=f"observation store: a SQLite file or a redis:// URL (default ${STATE_ENV} or {default_state_file()})",
    )
    call = command("call", [common, workspace, stateful], "run one tool call; observations persist between invocations")
    call.add_argument("--json", action="store_true", help="print the MCP result: isError, content, structuredContent")
    call.add_argument("tool")
    call.add_argument(
        "arguments", nargs="?", default="{}", help="the arguments as a JSON object; - reads them from stdin (a heredoc)"
    )

    mark = command("checkpoint", [common, workspace, stateful], "mark this point in a call session's history")
    mark.add_argument("--label", help="a few words saying what this point is")
    command("history", [common, workspace, stateful], "list a call session's checkpoints and changes")
    diff = command("diff", [common, workspace, stateful], "print what a call session changed, as a unified diff")
    diff.add_argument("--since", metavar="MARK", help="a mark from checkpoint or history (default: every change)")
    rewind = command("rewind", [common, workspace, stateful], "undo what a call session changed since a mark")
    rewind.add_argument("mark", help="a mark from checkpoint or history")
    rewind.add_argument(
        "--force", action="store_true", help="restore files someone else changed since, too (their change is lost)"
    )

    schema = command("schema", [common, workspace], "print the tool definitions as JSON")
    schema.add_argument(
        "--format", choices=FORMATS, default="mcp", help="whose tool format (default mcp: what tools/list sends)"
    )

    hook = command(
        "hook",
        [common],
        "fs-tools' gates on a harness's own file tools: run as its hook (one event on stdin), or install it",
    )
    hook.add_argument(
        "action",
        nargs="?",
        choices=["run", "install", "uninstall"],
        default="run",
        help="run (the default: judge the event on stdin), install or uninstall the harness's settings entries",
    )
    hook.add_argument("--harness", required=True, choices=HOOK_HARNESSES, help="whose hook protocol")
    hook.add_argument(
        "--root", action="append", help="a workspace root (repeatable; default: the project directory the event names)"
    )
    hook.add_argument(
        "--store", help=f"observations and history: a SQLite file or a redis:// URL (default {default_state_file()})"
    )
    hook.add_argument("--protected", action="append", default=[], metavar="GLOB", help="a path no change may touch")
    hook.add_argument("--read-only", action="store_true", help="deny every change")
    hook.add_argument("--timeout", type=float, default=20.0, help="no opinion after this many seconds (default 20)")
    hook.add_argument(
        "--scope", choices=["project", "user"], default="project", help="install: the project's settings or yours"
    )
    hook.add_argument("--project", type=Path, help="install: the project directory (default: the current one)")

    replay = command("replay", [common], "render an audit log (serve --audit-log) for humans")
    replay.add_argument("log", type=Path)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    if _is_hook_run(words):
        return _hook_main(words)
    try:
        status = _run(argv)
        if sys.stdout is not None:  # None when started with stdout closed: there was nothing to print to
            sys.stdout.flush()  # inside the try: a reader that went away shows here for buffered output
        return status
    except _BadSetup as exc:
        print(f"fs-tools: error: {exc}", file=sys.stderr)
        return BAD_SETUP
    except BrokenPipeError:
        return _output_closed()
    except KeyboardInterrupt:
        return INTERRUPTED
    except OSError as exc:
        if exc.filename is None and exc.errno in _UNWRITABLE:  # what writing the output can meet
            return _unwritable_output(exc)
        raise


def _is_hook_run(words: list[str]) -> bool:
    """``fs-tools hook [run] ...``: what a harness runs on every tool call (not ``install``/``uninstall``)."""
    positional = [word for word in words if not word.startswith("-")]
    if not positional or positional[0] != "hook":
        return False
    return len(positional) == 1 or positional[1] not in ("install", "uninstall")


def _hook_main(words: list[str]) -> int:
    """A hook never blocks its harness for fs-tools' own trouble: to every harness, exit 2 means "deny",
    so a bad option, a bad setting or a crash here is exit 0 ("no opinion") with one line on stderr. The
    hook server answers first where it can (``fs_tools.hooks.relay``)."""
    try:
        served = _served(words)
        if served is not None:
            return served
        status = _run(words)
        if sys.stdout is not None:
            sys.stdout.flush()
        return status
    except SystemExit:  # --help, --version
        return 0
    except BaseException as exc:  # anything at all: the harness goes on
        with contextlib.suppress(BaseException):
            from fs_tools.hooks.harnesses import unjudged

            why = str(exc) if isinstance(exc, _BadSetup) else f"{type(exc).__name__}: {exc}"
            print(unjudged(why).note, file=sys.stderr)
        return 0
    finally:
        with contextlib.suppress(Exception):  # the next run in this process counts its own --timeout
            from fs_tools.hooks import relay

            relay.forget()


def _served(words: list[str]) -> int | None:
    """The hook server's answer, where it gave one; None: this process answers (whatever went wrong)."""
    if {"-h", "--help"} & set(words):
        return None
    try:
        from fs_tools.hooks.relay import answer

        return answer(words)
    except Exception:
        return None


# A full disk or quota, a file over its size limit, a device error, a descriptor that is not open.
_UNWRITABLE = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.EBADF})


def _unwritable_output(exc: OSError) -> int:
    with contextlib.suppress(Exception):
        print(f"fs-tools: error: the output cannot be written: {exc.strerror or exc}", file=sys.stderr)
    with contextlib.suppress(Exception):  # the final flush at exit must not fail again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return BAD_SETUP


def _run(argv: Sequence[str] | None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    _check_leading_options(words)
    args = _parser().parse_args(words)
    _configure_logging(_choice(args.log_level, LOG_LEVEL_ENV, LOG_LEVELS) or "warning")
    if args.command == "demo":
        from fs_tools.demo import run_demo

        return run_demo()
    if args.command == "serve":
        return _serve(args)
    if args.command == "call":
        return _call(args)
    if args.command == "schema":
        return _schema(args)
    if args.command in ("checkpoint", "history", "diff", "rewind"):
        return _history(args)
    if args.command == "hook":
        return _hook(args)
    return _replay(args.log)


_TOP_OPTIONS = ("--help", "-h", "--version", "--log-level")  # the options before the command


def _check_leading_options(words: list[str]) -> None:
    """An option before the command that ``fs-tools`` does not have is named (argparse would say only
    that a command is required): ``fs-tools --verion`` → "unknown option '--verion'; did you mean
    '--version'?". A long option's unambiguous prefix is that option, as argparse takes it."""
    at = 0
    while at < len(words) and words[at].startswith("-") and words[at] != "--":
        name = words[at].split("=", 1)[0]
        if name.startswith("--"):
            known = [option for option in _TOP_OPTIONS if option.startswith("--") and option.startswith(name)]
        else:
            known = [name] if name in _TOP_OPTIONS else []
        if not known:
            import difflib

            guess = difflib.get_close_matches(name, _TOP_OPTIONS, n=1, cutoff=0.6)
            hint = f"; did you mean {guess[0]!r}?" if guess else ""
            raise _BadSetup(f"unknown option {name!r}{hint} (see 'fs-tools --help')")
        if len(known) > 1:
            return  # ambiguous: argparse says so, naming the candidates
        at += 2 if known[0] == "--log-level" and "=" not in words[at] else 1


def _output_closed() -> int:
    """The reader of stdout went away (``fs-tools replay big.log | head -1``): exit quietly. Whatever is
    still buffered goes to the null device, so the interpreter's own flush at exit cannot fail again."""
    with contextlib.suppress(OSError, ValueError):  # ValueError: a stdout with no descriptor
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    return OUTPUT_CLOSED


def _configure_logging(level: str) -> None:
    import logging

    logging.basicConfig(stream=sys.stderr, level=level.upper(), format="%(levelname)s %(name)s: %(message)s")


# --- settings: a flag, else its environment variable, else the default ------------------------------------


def _env(name: str) -> str | None:
    return os.environ.get(name) or None


def _choice(flag: str | None, env: str, choices: Sequence[str]) -> str | None:
    if flag is not None:
        return flag
    value = _env(env)
    if value is not None and value.lower() not in choices:
        raise _BadSetup(f"${env}={value!r} is not one of {', '.join(choices)}")
    return None if value is None else value.lower()


def _switch(flag: bool | None, env: str) -> bool:
    if flag is not None:
        return flag
    value = _env(env)
    if value is None or value.lower() in _FALSE:
        return False
    if value.lower() in _TRUE:
        return True
    raise _BadSetup(f"${env}={value!r} is not a switch; use 1/0, true/false, yes/no or on/off")


def _roots(flag: list[str] | None, default: list[str] | None = None) -> list[str]:
    if flag:
        return flag
    roots = [root for root in (_env(ROOT_ENV) or "").split(os.pathsep) if root]
    if roots:
        return roots
    if default is not None:
        return default
    raise _BadSetup(f"no workspace root: give --root DIR or set ${ROOT_ENV}")


def _workspace_options(args: argparse.Namespace) -> dict[str, Any]:
    options: dict[str, Any] = {"read_only": _switch(args.read_only, READ_ONLY_ENV)}
    if args.tools is not None:
        options["tools"] = args.tools
    if args.prefix is not None:
        options["prefix"] = args.prefix
    for name in (
        "stale",
        "check_syntax",
        "refuse_syntax_errors",
        "check_placeholders",
        "dialect",
        "durable",
        "workspace_id",
        "key_prefix",
    ):
        if getattr(args, name, None) is not None:
            options[name] = getattr(args, name)
    return options


@contextlib.contextmanager
def _opened_workspace(roots: list[str], **options: Any) -> Iterator[Workspace]:
    from fs_tools.workspace import Workspace

    try:
        workspace = Workspace(roots, **options)
    except ValueError as exc:  # the Workspace's one-line host error: names the option and the value
        raise _BadSetup(str(exc)) from exc
    with workspace:
        yield workspace


# --- the subcommands ----------------------------------------------------------------------------------------


def _serve(args: argparse.Namespace) -> int:
    roots, options = _roots(args.root), _workspace_options(args)
    if args.store is not None:
        options["store"] = _store_of(args.store, roots)
    from_env = _env(TOKEN_ENV)
    tokens: list[str] | None = args.token
    if tokens is None and not args.no_token and from_env is not None:
        tokens = from_env.split() or None  # a token has no spaces: several are separated by them
        if tokens is not None and any(token.lower() == "bearer" for token in tokens):
            raise _BadSetup(f"${TOKEN_ENV} holds 'Bearer': give the token alone, without the header's scheme")
    # a mistake in the token variable is named whatever is installed; the rest is checked with the SDK
    try:
        from fs_tools.mcp import server as mcp_server
        from fs_tools.mcp import stdio as mcp_stdio

        if args.transport == "http":  # (stdio has no use for the HTTP stack: ~0.3 s of its start-up)
            from fs_tools.mcp import http as mcp_http
    except ImportError as exc:
        # the SDK by its own name: on PyPI "fs-tools" is an unrelated project (SPEC section 2)
        raise _BadSetup(f"fs-tools serve needs the MCP SDK ({exc}): pip install 'mcp>=2.3,<3'") from exc
    if args.transport == "http":
        _check_http_options(args.host, tokens, no_token=args.no_token, token_given=args.token is not None)
    elif args.token is not None or args.no_token:  # a stdio client is the process that started the server
        flag = "--token" if args.token is not None else "--no-token"
        print(f"fs-tools: warning: {flag} applies to --transport http only; stdio ignores it", file=sys.stderr)
    try:
        audit = mcp_server.AuditLog(args.audit_log) if args.audit_log else None
    except OSError as exc:
        raise _BadSetup(f"--audit-log {str(args.audit_log)!r} cannot be opened: {exc.strerror}") from exc
    try:
        with _opened_workspace(roots, **options) as workspace:
            if args.transport == "stdio":
                import asyncio

                if sys.stdin is not None and sys.stdin.isatty():  # a person ran it; a client never does
                    shown = ", ".join(str(root) for root in workspace.roots)
                    print(
                        f"fs-tools: serving MCP on stdio for {shown}: an MCP client starts this command and speaks "
                        "on its stdin and stdout (for a server to connect to, --transport http); Ctrl-C stops it",
                        file=sys.stderr,
                        flush=True,
                    )
                asyncio.run(mcp_stdio.serve_stdio(workspace, audit=audit))
                return 0
            try:
                sock = mcp_http.listen(args.host, args.port)
            except OSError as exc:
                raise _BadSetup(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}") from exc
            with contextlib.ExitStack() as made:
                if tokens is None and not args.no_token:
                    tokens = [made.enter_context(_made_token(sock.getsockname()[1], workspace.roots))]
                print(f"fs-tools: serving MCP on {mcp_http.url_of(args.host, sock)}", flush=True)
                mcp_http.serve_http(workspace, sock, host=args.host, token=tokens, audit=audit)
    except KeyboardInterrupt:
        pass
    finally:
        if audit is not None:
            audit.close()
    return 0


def hook_store(args: argparse.Namespace) -> str:
    """The store a hook run keeps observations in: ``--store``, else ``$FS_TOOLS_STATE``, else the user's
    state file (the hook command and the hook server both ask this)."""
    return str(args.store or _env(STATE_ENV) or default_state_file())


@contextlib.contextmanager
def _made_token(port: int, roots: list[Path]) -> Iterator[str]:
    """A token for a server given none: written where only the user can read it (never inside a root,
    where the model could read it), said on stderr, and removed when the server stops (a server killed
    leaves it, readable by the user only, for the next run on the port to replace)."""
    import secrets

    from fs_tools.stores import check_outside_roots

    token, path = secrets.token_urlsafe(32), token_file(port)
    try:
        check_outside_roots(path, roots, what="HTTP token file")
    except ValueError as exc:
        raise _BadSetup(f"{exc}: give --token or ${TOKEN_ENV}, or set $XDG_STATE_HOME outside the roots") from None
    try:
        _write_private(path, token)
    except OSError as exc:
        raise _BadSetup(
            f"cannot write the HTTP token to {str(path)!r}: {exc.strerror or exc}; give --token or ${TOKEN_ENV} "
            "(or --no-token)"
        ) from exc
    print(
        f"fs-tools: no --token or ${TOKEN_ENV} given: clients must send 'Authorization: Bearer <token>' with "
        f"the token in {str(path)!r} (readable by you only; --no-token serves without one)",
        file=sys.stderr,
        flush=True,
    )
    try:
        with _terminate_as_interrupt():
            yield token
    finally:
        with contextlib.suppress(OSError):
            path.unlink()


@contextlib.contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM stops the server as SIGINT does, cleanly, so the token file is removed: uvicorn hands a
    signal it caught back to the handler that was there before it, and the default one for SIGTERM ends
    the process on the spot."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():  # only the main thread may set handlers
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _write_private(path: Path, text: str) -> None:
    """``text`` as the whole of ``path``, mode 0600 from the start: written to a temp file made by mkstemp
    (0600, never an existing file or a planted link) in the same directory, then renamed over ``path``."""
    import tempfile

    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="ascii") as out:
            out.write(text)  # no newline: the file's text is the header's value as it is
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _check_http_options(host: str, tokens: list[str] | None, *, no_token: bool, token_given: bool) -> None:
    """An unusable token, a non-loopback address without one, or --no-token with a token or off loopback
    is a host error."""
    from fs_tools.mcp import http as mcp_http

    if no_token and token_given:
        raise _BadSetup("--no-token and --token contradict each other: give one of them")
    if no_token and not mcp_http.is_loopback(host):
        raise _BadSetup(
            f"--no-token serves only on a loopback address, and --host {host!r} is not one: any machine that "
            f"reaches it could use the tools; give --token or ${TOKEN_ENV} instead"
        )
    if tokens is not None:
        try:
            for token in tokens:
                mcp_http.check_token(token)
        except ValueError as exc:
            raise _BadSetup(f"--token / ${TOKEN_ENV}: {exc}") from None
    elif not mcp_http.is_loopback(host):
        raise _BadSetup(
            f"--host {host!r} is not a loopback address: any machine that reaches it could use the tools, so "
            f"serving beyond this machine needs --token or ${TOKEN_ENV}"
        )


def _call(args: argparse.Namespace) -> int:
    if args.arguments == "-":
        args.arguments = _stdin_arguments()
    try:
        roots, options = _roots(args.root), _workspace_options(args)
        session, state = _session_state(args, roots)
    except _BadSetup as exc:  # the arguments' JSON, if bad too, is said in the same line: one retry fixes both
        bad = _json_problem(args.arguments)
        if bad is None:
            raise
        raise _BadSetup(f"{exc}; and {bad}") from exc
    from fs_tools.workspace import keep_contents_in_store

    with _opened_workspace(roots, store=state, **options) as workspace:
        keep_contents_in_store(workspace)
        result = workspace.session(session).call(args.tool, args.arguments)
    _print_result(result, as_json=args.json)
    if result.error is not None:
        print(f"error: {result.error.code}", file=sys.stderr)
        return TOOL_ERROR
    return 0


def _stdin_arguments() -> str:
    """``call TOOL -``: the arguments are stdin's text (a heredoc's, a pipe's), read up to a bound: an
    ``edit`` of a whole file carries two file-sized strings, and JSON escapes at most sextuple a byte."""
    from fs_tools.workspace import DEFAULT_MAX_FILE_BYTES

    if sys.stdin is None or sys.stdin.isatty():  # typed by hand it would wait, silently, for Ctrl-D
        which = "closed" if sys.stdin is None else "a terminal"
        raise _BadSetup(f"`-` reads the arguments from stdin, which is {which}: pipe the JSON in or use a heredoc")
    bound = 12 * DEFAULT_MAX_FILE_BYTES + (1 << 20)
    data = sys.stdin.buffer.read(bound + 1)
    if len(data) > bound:
        raise _BadSetup(
            f"the arguments on stdin pass {bound} bytes, more than any call takes (a file's limit is "
            f"{DEFAULT_MAX_FILE_BYTES} bytes): check what is piped in, or write the file in parts"
        )
    try:
        return data.decode("utf-8-sig")  # a byte-order mark (PowerShell's pipes) is not the JSON's
    except UnicodeDecodeError as exc:
        raise _BadSetup(
            f"the arguments on stdin are not UTF-8 (byte {exc.start}): send the JSON as UTF-8 text"
        ) from None


def _json_problem(text: str) -> str | None:
    """What is wrong with a call's arguments as JSON (None: they are a JSON object)."""
    import json

    try:
        value = json.loads(text)
    except ValueError as exc:
        where = f" at line {exc.lineno} column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else ""
        message = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
        return f"the arguments are not valid JSON ({message}{where})"
    if not isinstance(value, dict):
        return f'the arguments are JSON {type(value).__name__}, not an object like \'{{"file_path": "a.txt"}}\''
    return None


def _session_state(args: argparse.Namespace, roots: list[str]) -> tuple[str, Path | str]:
    session = args.session or _env(SESSION_ENV)
    if session is None:
        raise _BadSetup(f"no session key: give --session KEY or set ${SESSION_ENV}")
    return session, _store_of(args.state or _env(STATE_ENV) or default_state_file(), roots)


def _store_of(given: str | Path, roots: list[str]) -> Path | str:
    """A ``--state`` / ``--store``: a Redis URL as it is, else a SQLite file that must lie outside the roots
    (the library's rule, with the default named); an unknown ``scheme://`` is a host error."""
    from fs_tools.stores import StoreInsideRoot, store_location

    try:
        return store_location(given, roots)
    except StoreInsideRoot as exc:
        raise _BadSetup(f"{exc} (the default is {str(default_state_file())!r})") from exc
    except ValueError as exc:
        raise _BadSetup(str(exc)) from exc


def _history(args: argparse.Namespace) -> int:
    """``checkpoint``, ``history``, ``diff`` and ``rewind`` of a ``call`` session (SPEC §16)."""
    from fs_tools.errors import HarnessError

    roots, options = _roots(args.root), _workspace_options(args)
    session_key, state = _session_state(args, roots)
    if args.command != "checkpoint" and isinstance(state, Path) and not state.exists():
        raise _BadSetup(f"no state file {str(state)!r}: it is made by the first 'fs-tools call' (or checkpoint)")
    with _opened_workspace(roots, store=state, **options) as workspace:
        session = workspace.session(session_key)
        try:
            if args.command == "checkpoint":
                print(session.checkpoint(args.label))
            elif args.command == "history":
                for entry in session.history():
                    print(_history_line(entry))
            elif args.command == "diff":
                sys.stdout.write(session.diff(args.since))
            else:
                return _rewound(session, args.mark, args.force)
        except ValueError as exc:  # an unknown mark
            raise _BadSetup(str(exc)) from exc
        except HarnessError as exc:  # the store failed, or holds a row fs-tools did not write: the command
            # line was fine (not exit 2); one line with the code first, as a script greps it
            print(f"fs-tools: error: {exc.code}: {' '.join(exc.message.split())}", file=sys.stderr)
            return TOOL_ERROR
    return 0


def _history_line(entry: HistoryEntry) -> str:
    import datetime

    when = datetime.datetime.fromtimestamp(entry.time).astimezone().strftime("%Y-%m-%d %H:%M:%S")
    if entry.kind == "mark":  # one line each: a label or a name with a newline is shown quoted
        return f"{entry.mark}  {when}  checkpoint" + (f" {_one_line(entry.label)}" if entry.label else "")
    return f"{entry.mark}  {when}  {entry.tool}  {', '.join(_one_line(path) for path in entry.paths)}"


def _one_line(text: str) -> str:
    return text if text.isprintable() else repr(text)


def _rewound(session: Session, mark: str, force: bool) -> int:
    report = session.rewind(mark, force=force)
    print(report.message)
    for item in report.skipped:
        print(f"  {item.path}: {item.code}: {item.message}")
    if report.code is not None:
        print(f"error: {report.code}", file=sys.stderr)
    return TOOL_ERROR if report.is_error else 0


def _hook(args: argparse.Namespace) -> int:
    """``fs-tools hook``: a harness's hook (SPEC §19). Running it never fails the harness: exit 0, or the
    harness's "deny" status for a gate's verdict."""
    from fs_tools.hooks import command

    if args.action == "run":
        return command.run(
            args.harness,
            roots=args.root or [],
            store=hook_store(args),
            protected=args.protected,
            read_only=args.read_only,
            timeout=args.timeout,
        )
    project = (args.project or Path.cwd()).resolve()
    # What the harness runs, from wherever it runs it: absolute paths, and a store no root holds
    roots = [str(Path(root).resolve()) for root in args.root or []]
    options = [f"--root={root}" for root in roots]
    options += [f"--protected={glob}" for glob in args.protected]
    options += ["--read-only"] if args.read_only else []
    if args.store:
        store = _store_of(args.store, roots or [str(project)])
        options.append(f"--store={store if isinstance(store, str) else store.resolve()}")
    try:
        if args.action == "install":
            print(command.install(args.harness, args.scope, project, options))
        else:
            print(command.uninstall(args.harness, args.scope, project))
    except (ValueError, OSError) as exc:
        raise _BadSetup(str(exc)) from exc
    return 0


def _print_result(result: ToolResult, *, as_json: bool) -> None:
    """What an MCP client gets for the call: its text, or with ``--json`` the whole result."""
    from fs_tools.mcp.shapes import call_result

    shown = call_result(result)
    print(_json(shown) if as_json else shown["content"][0]["text"])


def _json(value: object) -> str:
    import json

    return json.dumps(value, ensure_ascii=False, indent=2)


def _schema(args: argparse.Namespace) -> int:
    roots, options = _roots(args.root, default=["."]), _workspace_options(args)
    with _opened_workspace(roots, **options) as workspace:
        definitions = _definitions(workspace, args.format)
    print(_json(definitions))
    return 0


def _definitions(workspace: Workspace, format: str) -> list[dict[str, Any]]:
    """The definitions in ``format``: the MCP server's own, or the adapter's ``tool_definitions``."""
    if format == "mcp":
        from fs_tools.mcp import shapes

        return shapes.tool_definitions(workspace)
    if format == "openai":
        from fs_tools.adapters import openai

        return openai.tool_definitions(workspace)
    if format == "anthropic":
        from fs_tools.adapters import anthropic

        return anthropic.tool_definitions(workspace)
    from fs_tools.adapters import gemini

    return gemini.tool_definitions(workspace)


# Control characters a terminal would act on (escape sequences, bells): a client chose the tool names and
# arguments an audit log records, so replay shows them as escapes. A tab stays a tab.
_TERMINAL_CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x20), *range(0x7F, 0xA0)) if c != 0x09}


def _replay(log: Path) -> int:
    try:
        lines = log.open(encoding="utf-8", errors="replace")  # read line by line: a log may be large
    except OSError as exc:
        raise _BadSetup(f"audit log {str(log)!r} cannot be read: {exc.strerror}") from exc
    with lines:
        for number, line in enumerate(lines, start=1):
            shown = _replay_line(number, line.rstrip("\n")).translate(_TERMINAL_CONTROLS)
            # backslash-escape what the terminal cannot take (lone surrogates from JSON escapes)
            print(shown.encode("utf-8", "backslashreplace").decode("utf-8"))
    return 0


def _replay_line(number: int, line: str) -> str:
    """One audit entry for humans; entries from older versions, partial entries and garbage never raise."""
    import json

    try:
        entry = json.loads(line)
    except (ValueError, RecursionError):
        return f"{number:>4}  not JSON (unreadable entry)"
    if not isinstance(entry, dict):
        return f"{number:>4}  a JSON {type(entry).__name__}, not an object (unreadable entry)"
    if not isinstance(entry.get("tool"), str) and "code" not in entry:
        keys = ", ".join(repr(key)[:40] for key in list(entry)[:6]) or "no keys"
        return f"{number:>4}  no tool and no outcome, only {keys} (unreadable entry)"
    duration = entry.get("duration_ms")
    timing = f"  {duration} ms" if isinstance(duration, int | float) and not isinstance(duration, bool) else ""
    session = entry.get("session")
    who = f"[{session}] " if isinstance(session, str) else ""
    return f"{number:>4}  {who}{_replayed_call(entry)}  {_replayed_outcome(entry)}{timing}"


def _replayed_call(entry: dict[str, Any]) -> str:
    """The call as the presenters show it; one refused before it ran (``INVALID_ARGS``, ``UNKNOWN_TOOL``)
    is shown with its arguments as sent, never as if they had been valid."""
    from fs_tools.presenters import REJECTED_CODES, present_call

    tool, code = entry.get("tool"), entry.get("code")
    if not isinstance(tool, str):
        return "(no tool name recorded)"
    if "arguments" not in entry:
        return f"{tool[:60]}(arguments not recorded)"
    return present_call(tool, entry["arguments"], rejected=isinstance(code, str) and code in REJECTED_CODES)


def _replayed_outcome(entry: dict[str, Any]) -> str:
    if "code" not in entry:
        return "→ (no outcome recorded)"
    code = entry["code"]
    return "→ ok" if code is None else f"→ {str(code)[:60]}"


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
