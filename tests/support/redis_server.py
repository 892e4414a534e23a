"""A real ``redis-server`` for the tests, on a loopback port of its own, with no persistence: started and
stopped by the tests that need it (one may stop it and start it again, empty, as a restart of a server
without persistence does). Skipped with the reason where the binary or redis-py is missing, unless
``REQUIRE_REDIS`` is set (``.ci/run`` sets it: there a missing server fails instead)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

REQUIRE = "REQUIRE_REDIS"


def _missing(reason: str) -> None:
    if os.environ.get(REQUIRE):
        pytest.fail(f"{reason}, and {REQUIRE} is set")
    pytest.skip(reason)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class RedisServer:
    """One redis-server process; ``url`` stays the same across ``stop`` and ``start``."""

    def __init__(self, directory: Path) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            _missing("redis-server is not on PATH (Debian: apt-get install redis-server; .ci/run installs it)")
        try:
            import redis  # noqa: F401
        except ImportError:
            _missing("redis-py is not installed (pip install -e '.[dev]')")
        self.binary = str(binary)
        self.directory = directory
        self.port = _free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        argv = [self.binary, "--bind", "127.0.0.1", "--port", str(self.port), "--save", "", "--appendonly", "no"]
        argv += ["--dir", str(self.directory), "--protected-mode", "yes"]
        for _ in range(3):  # the port may have been taken between the probe and the start
            self.process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if self._ready():
                return
            self.stop()
            self.port = _free_port()
            self.url = f"redis://127.0.0.1:{self.port}/0"
            argv[4] = str(self.port)
        _missing("redis-server did not start on a loopback port")

    def _ready(self) -> bool:
        import redis

        client = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=1, socket_connect_timeout=1)
        deadline = time.monotonic() + 10
        try:
            while time.monotonic() < deadline:
                assert self.process is not None
                if self.process.poll() is not None:
                    return False
                try:
                    # ours, not a server someone else started on the port we probed
                    return int(client.info("server")["process_id"]) == self.process.pid
                except redis.RedisError:
                    time.sleep(0.05)
            return False
        finally:
            client.close()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        self.process = None

    def flush(self) -> None:
        import redis

        with redis.Redis(host="127.0.0.1", port=self.port) as client:
            client.flushall()
