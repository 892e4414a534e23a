"""The ``fs-tools`` command: ``demo``, ``serve``, ``call`` and ``replay``."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fs_tools.demo import run_demo

if TYPE_CHECKING:
    from fs_tools.workspace import Workspace

BAD_SETUP = 2  # a bad option, root or file: argparse's status for bad usage, distinct from a tool error (1)


def default_state_file() -> Path:
    """Where ``fs-tools call`` keeps observations between invocations: the user's state directory,
    never inside a workspace root."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "fs-tools" / "observations.sqlite"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fs-tools", description="Safe, instructive file tools for LLM agents.")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("demo", help="run a scripted agent session in a throwaway workspace")

    serve = commands.add_parser("serve", help="serve the tools over MCP (stdio by default)")
    serve.add_argument("--root", action="append", required=True, help="a workspace root (repeatable; first is primary)")
    serve.add_argument("--read-only", action="store_true", help="refuse every write and edit")
    serve.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    serve.add_argument("--host", default="127.0.0.1", help="HTTP bind address (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8765, help="HTTP port (default 8765; 0 picks a free one)")
    serve.add_argument(
        "--token",
        help="HTTP: require 'Authorization: Bearer TOKEN' on every request (default $FS_TOOLS_TOKEN; prefer "
        "the variable, since other local users can read a command line)",
    )
    serve.add_argument("--log-level", default="warning", choices=["debug", "info", "warning", "error"])
    serve.add_argument("--audit-log", type=Path, help="append one JSON line per tool call to this file")

    call = commands.add_parser("call", help="run one tool call; observations persist between invocations")
    call.add_argument("--root", action="append", required=True, help="a workspace root (repeatable)")
    call.add_argument("--session", required=True, help="session key: the same key keeps the same observations")
    call.add_argument("--state", type=Path, help=f"observation store (default {default_state_file()})")
    call.add_argument("--read-only", action="store_true")
    call.add_argument("--json", action="store_true", help="print the result's to_dict() form")
    call.add_argument("tool")
    call.add_argument("arguments", nargs="?", default="{}", help="the arguments as a JSON object")

    replay = commands.add_parser("replay", help="render an audit log for humans")
    replay.add_argument("log", type=Path)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "demo":
        return run_demo()
    if args.command == "serve":
        return _serve(args)
    if args.command == "call":
        return _call(args)
    return _replay(args.log)


def _serve(args: argparse.Namespace) -> int:
    try:
        from fs_tools import mcp_server
    except ImportError:
        return _bad_setup("fs-tools serve needs the MCP SDK: pip install 'fs-tools[mcp]'")
    logging.basicConfig(stream=sys.stderr, level=args.log_level.upper(), format="%(levelname)s %(name)s: %(message)s")
    token = args.token if args.token is not None else os.environ.get(mcp_server.TOKEN_ENV) or None
    if args.transport == "http":
        try:
            _check_http_options(args.host, token)
        except ValueError as exc:
            return _bad_setup(str(exc))
    try:
        audit = mcp_server.AuditLog(args.audit_log) if args.audit_log else None
    except OSError as exc:
        return _bad_setup(f"--audit-log {str(args.audit_log)!r} cannot be opened: {exc.strerror}")
    try:
        with _opened_workspace(args.root, read_only=args.read_only) as workspace:
            if args.transport == "stdio":
                asyncio.run(mcp_server.serve_stdio(workspace, audit=audit))
                return 0
            try:
                sock = mcp_server.listen(args.host, args.port)
            except OSError as exc:
                return _bad_setup(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}")
            print(f"fs-tools: serving MCP on {mcp_server.url_of(args.host, sock)}", flush=True)
            mcp_server.serve_http(workspace, sock, host=args.host, token=token, audit=audit)
    except _BadSetup as exc:
        return _bad_setup(str(exc))
    except KeyboardInterrupt:
        pass
    finally:
        if audit is not None:
            audit.close()
    return 0


def _check_http_options(host: str, token: str | None) -> None:
    """One-line ValueErrors for an unusable token, or a non-loopback address without one."""
    from fs_tools import mcp_server

    if token is not None:
        try:
            mcp_server.check_token(token)
        except ValueError as exc:
            raise ValueError(f"--token / ${mcp_server.TOKEN_ENV}: {exc}") from None
    elif not mcp_server.is_loopback(host):
        raise ValueError(
            f"--host {host!r} is not a loopback address: any machine that reaches it could use the tools, so "
            f"serving beyond this machine needs --token or ${mcp_server.TOKEN_ENV}"
        )


class _BadSetup(Exception):
    """A root, store or other host input the Workspace refused (its one-line message says which)."""


@contextlib.contextmanager
def _opened_workspace(roots: list[str], **options: Any) -> Iterator[Workspace]:
    from fs_tools.workspace import Workspace

    try:
        workspace = Workspace(roots, **options)
    except ValueError as exc:
        raise _BadSetup(str(exc)) from exc
    with workspace:
        yield workspace


def _bad_setup(message: str) -> int:
    print(f"fs-tools: error: {message}", file=sys.stderr)
    return BAD_SETUP


def _call(args: argparse.Namespace) -> int:
    state = args.state or default_state_file()
    try:
        with _opened_workspace(args.root, read_only=args.read_only, store=state) as workspace:
            result = workspace.session(args.session).call(args.tool, args.arguments)
    except _BadSetup as exc:  # a bad root or state file: the host's input, not the model's
        return _bad_setup(str(exc))
    if args.json:
        print(json.dumps(result.to_dict(), ensure_ascii=False, indent=2))
    else:
        print(result.text)
    if result.error is not None:
        print(f"error: {result.error.code}", file=sys.stderr)
        return 1
    return 0


def _replay(log: Path) -> int:
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as exc:
        print(f"cannot read {log}: {os.strerror(exc.errno or 0)}", file=sys.stderr)
        return 1
    for number, line in enumerate(lines, start=1):
        # backslash-escape what the terminal cannot take (lone surrogates from JSON escapes)
        print(_replay_line(number, line).encode("utf-8", "backslashreplace").decode("utf-8"))
    return 0


def _replay_line(number: int, line: str) -> str:
    """One audit entry for humans; entries from older versions or garbage never raise."""
    from fs_tools.presenters import present_call

    try:
        entry = json.loads(line)
    except (ValueError, RecursionError):
        return f"{number:>4}  (unreadable entry)"
    if not isinstance(entry, dict):
        return f"{number:>4}  (unreadable entry)"
    code = entry.get("code")
    status = f"→ {code}" if code else "→ ok"
    duration = entry.get("duration_ms")
    timing = f"  {duration} ms" if isinstance(duration, int | float) else ""
    session = entry.get("session")
    who = f"[{session}] " if isinstance(session, str) else ""
    return f"{number:>4}  {who}{present_call(entry.get('tool'), entry.get('arguments'))}  {status}{timing}"


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
