"""The bench's own environment for peers: ``.bench-env/venv`` (Python >= 3.12, fs-tools installed from
this checkout plus ``requirements-peers.txt``, with ``overrides-peers.txt`` applied by uv) and
``.bench-env/node`` (``package.json``). Built on first use, rebuilt when those files change."""

from __future__ import annotations

import glob
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
ENV = REPO / ".bench-env"
VENV = ENV / "venv"
NODE = ENV / "node"
NODE_SERVER = NODE / "node_modules" / "@modelcontextprotocol" / "server-filesystem" / "dist" / "index.js"


def find_python312(explicit: str | None) -> str | None:
    """A Python >= 3.12 interpreter: the one given, on PATH, or in pyenv's versions."""
    candidates = [explicit] if explicit else []
    candidates += [shutil.which(name) or "" for name in ("python3.12", "python3.13", "python3.14")]
    pyenv = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    candidates += sorted(glob.glob(f"{pyenv}/versions/3.1[2-9]*/bin/python3"))
    candidates += ["/usr/bin/python3.12", "/usr/bin/python3.13"]
    check = "import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)"
    for candidate in candidates:
        usable = candidate and os.path.exists(candidate)
        if usable and subprocess.run([candidate, "-c", check], capture_output=True, check=False).returncode == 0:
            return candidate
    return None


def _fingerprint(*paths: Path) -> str:
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _run(argv: list[str], cwd: Path | None = None) -> None:
    print(f"[bench] $ {' '.join(argv)}", file=sys.stderr)
    subprocess.run(argv, cwd=cwd, check=True, stdout=sys.stderr)


def ensure_python_peers(python: str) -> Path:
    """The venv's interpreter, with fs-tools (editable) and the Python peers installed."""
    stamp = VENV / ".fs-tools-bench"
    overrides = HERE / "overrides-peers.txt"
    wanted = _fingerprint(HERE / "requirements-peers.txt", overrides, REPO / "pyproject.toml")
    interpreter = VENV / "bin" / "python"
    if not (stamp.exists() and stamp.read_text() == wanted and interpreter.exists()):
        shutil.rmtree(VENV, ignore_errors=True)
        _run([python, "-m", "venv", str(VENV)])
        # uv, not pip: only uv can override a peer's pin (see overrides-peers.txt); uv is a dev dependency
        uv = shutil.which("uv") or str(Path(sys.executable).with_name("uv"))
        _run(
            [
                uv,
                "pip",
                "install",
                "-q",
                "--python",
                str(interpreter),
                "--override",
                str(overrides),
                "-e",
                f"{REPO}[mcp]",
                "-r",
                str(HERE / "requirements-peers.txt"),
            ]
        )
        stamp.write_text(wanted)
    return interpreter


def ensure_node_peer() -> Path | None:
    """The Node filesystem server's entry point, or None without node/npm."""
    if not (shutil.which("node") and shutil.which("npm")):
        return None
    stamp = NODE / ".fs-tools-bench"
    wanted = _fingerprint(HERE / "package.json")
    if not (stamp.exists() and stamp.read_text() == wanted and NODE_SERVER.exists()):
        shutil.rmtree(NODE, ignore_errors=True)
        NODE.mkdir(parents=True)
        shutil.copy(HERE / "package.json", NODE / "package.json")
        _run(["npm", "install", "--no-audit", "--no-fund", "--silent"], cwd=NODE)
        stamp.write_text(wanted)
    return NODE_SERVER
