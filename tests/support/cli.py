"""Running the fs-tools command as a user would: its environment, a run with a timeout, and what a host
error must say."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

WAIT = 60.0  # the longest a test waits for a process; reached only when something is broken


def cli_env(**extra: str) -> dict[str, str]:
    """The test's environment without any FS_TOOLS_* setting of the person running the tests."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("FS_TOOLS_")}
    return env | extra


def run_cli(*args: str, env: dict[str, str] | None = None, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """``python -m fs_tools ARGS``: the package's own entry point, as the command runs it."""
    return subprocess.run(
        [sys.executable, "-m", "fs_tools", *args],
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
        env=env if env is not None else cli_env(),
        **kwargs,
    )


def assert_host_error(done: subprocess.CompletedProcess[str], *facts: str) -> None:
    """Exit status 2 and one line on stderr, ``fs-tools: error: ...``, carrying ``facts``; no traceback."""
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert done.stderr.startswith("fs-tools: error: ") and done.stderr.count("\n") == 1, done.stderr
    assert done.stdout == "" and "Traceback" not in done.stderr
    for fact in facts:
        assert fact in done.stderr, (fact, done.stderr)
