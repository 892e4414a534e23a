"""What ``fs-tools hook`` costs a harness per tool call: a whole process, launched as the harness launches it
(the event on stdin), against a bare ``python -c pass`` of the same interpreter. Three events: one the
hook does not judge (a ``Bash`` call: answered before the library is imported), a ``Read`` recorded after
it ran, and an ``Edit`` checked before it runs (allowed). Then the same two events in process, on gates
kept open (an in-process hook: the Claude Agent SDK adapter's). Medians of interleaved rounds, in one run.

    python bench/hooks.py            # 15 rounds
    python bench/hooks.py --smoke    # 2 rounds: checks the command works
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the bench package, run as a script

from bench.harness import interleaved
from fs_tools.hooks import HookGates


def _event(project: Path, event: str, tool: str, tool_input: dict[str, object]) -> bytes:
    payload = {"session_id": "bench", "cwd": str(project), "hook_event_name": event, "tool_name": tool}
    return json.dumps({**payload, "tool_input": tool_input}).encode()


def _process(argv: list[str], stdin: bytes, env: dict[str, str], status: int = 0) -> Callable[[], object]:
    def run() -> object:
        done = subprocess.run(argv, input=stdin, capture_output=True, env=env, check=False)
        if done.returncode != status:
            raise RuntimeError(f"{argv[-3:]} exited {done.returncode}: {done.stderr[-300:]!r}")
        return done

    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args(argv)
    rounds = 2 if args.smoke else 15
    with tempfile.TemporaryDirectory(prefix="fs-tools-bench-") as tmp:
        project = Path(tmp) / "project"
        project.mkdir()
        (project / "app.py").write_text("def greet(name):\n    return 'hi ' + name\n" * 200)
        store = str(Path(tmp) / "state" / "observations.sqlite")
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
        hook = [sys.executable, "-m", "fs_tools", "hook", "--harness", "claude-code", f"--store={store}"]
        path = str(project / "app.py")
        read = _event(project, "PostToolUse", "Read", {"file_path": path})
        edit = {"file_path": path, "old_string": "return 'hi '", "new_string": "return 'hello '", "replace_all": True}
        subprocess.run(hook, input=read, env=env, check=True, capture_output=True)  # the session has read it
        cases = {
            "python -c pass": _process([sys.executable, "-c", "pass"], b"", env),
            "hook, Bash (not judged)": _process(hook, _event(project, "PreToolUse", "Bash", {"command": "ls"}), env),
            "hook, after Read": _process(hook, read, env),
            "hook, before Edit": _process(hook, _event(project, "PreToolUse", "Edit", edit), env),
        }
        medians = interleaved(cases, rounds, warm=1)
        with HookGates("claude-code", store=store) as gates:
            in_process = interleaved(
                {
                    "in process, after Read": lambda: _judged(gates, read),
                    "in process, before Edit": lambda: _judged(gates, _event(project, "PreToolUse", "Edit", edit)),
                },
                rounds * 10,
            )
    bare = medians["python -c pass"]
    print(f"{'case':<26}{'median':>10}{'x python -c pass':>20}")
    for name, seconds in medians.items():
        print(f"{name:<26}{seconds * 1000:>8.0f} ms{seconds / bare:>19.1f}x")
    for name, seconds in in_process.items():
        print(f"{name:<26}{seconds * 1000:>8.1f} ms")
    return 0


def _judged(gates: HookGates, event: bytes) -> object:
    reply = gates.handle(json.loads(event))
    if reply.deny or reply.note:
        raise RuntimeError(f"not allowed: {reply}")
    return reply


if __name__ == "__main__":
    sys.exit(main())
