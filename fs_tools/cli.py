"""The ``fs-tools`` command."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from fs_tools.demo import run_demo


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="fs-tools", description="Safe file tools for LLM agents.")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("demo", help="run a scripted agent session in a throwaway workspace")
    args = parser.parse_args(argv)
    if args.command == "demo":
        return run_demo()
    parser.error(f"unknown command {args.command!r}")  # pragma: no cover - argparse rejects it first
    return 2  # pragma: no cover


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
