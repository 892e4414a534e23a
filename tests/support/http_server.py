"""``fs-tools serve --transport http`` as a user starts it, on a free loopback port, for the tests that
drive it with a real client: yields the endpoint's URL and stops the server after them."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def http_server(root: Path, tokens: str | None = None) -> Iterator[str]:
    """The server on ``root``; ``tokens`` (space-separated, as ``FS_TOOLS_TOKEN`` takes them) or none
    (``--no-token``: the scenario, not the token, is what these tests are about)."""
    port = free_port()
    env = {key: value for key, value in os.environ.items() if not key.startswith("FS_TOOLS_")}
    command = [sys.executable, "-m", "fs_tools", "serve", "--root", str(root), "--transport", "http"]
    with subprocess.Popen(
        [*command, "--port", str(port), *([] if tokens else ["--no-token"])],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env | ({"FS_TOOLS_TOKEN": tokens} if tokens else {}),
    ) as process:
        try:
            for _ in range(400):  # until it accepts connections (bounded; not a timing assertion)
                with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
                if process.poll() is not None:
                    raise AssertionError(process.stderr.read().decode() if process.stderr else "server exited")
                time.sleep(0.05)
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            process.terminate()
            process.wait(timeout=30)
