"""What ``fs-tools hook`` costs a harness per tool call: a whole process, launched as the harness launches it
(the event on stdin), against a bare ``python -c pass`` of the same interpreter — answered through the hook
server (fs_tools.hooks.relay), and alone (FS_TOOLS_HOOK_SERVER=0). Three events: one the hook does not
judge (a ``Bash`` call: answered before the library is imported), a ``Read`` recorded after it ran, and an
``Edit`` checked before it runs (allowed). Then the same two events in process, on gates kept open (the
work itself; an in-process hook: the Claude Agent SDK adapter's). Medians of interleaved rounds, in one
run. ``python -m bench --sections startup`` gives the rows.

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
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the bench package, run as a script

from bench.harness import Row, interleaved
from fs_tools.hooks import HookGates, relay


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


SECTION = "10 start-up"


def measure(rounds: int) -> tuple[dict[str, float], dict[str, float]]:
    """Medians in seconds: the whole processes (python -c pass; the hook answering through its server, and
    answering alone), and the same events judged in process on open gates (the work itself)."""
    with tempfile.TemporaryDirectory(prefix="fs-tools-bench-") as tmp:
        project = Path(tmp) / "project"
        project.mkdir()
        (project / "app.py").write_text("def greet(name):\n    return 'hi ' + name\n" * 200)
        store = str(Path(tmp) / "state" / "observations.sqlite")
        base = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent), "XDG_STATE_HOME": tmp}
        served = {**base, relay.SERVER_ENV: "1"}
        alone = {**base, relay.SERVER_ENV: "0"}
        hook = [sys.executable, "-m", "fs_tools", "hook", "--harness", "claude-code", f"--store={store}"]
        path = str(project / "app.py")
        read = _event(project, "PostToolUse", "Read", {"file_path": path})
        edit = {"file_path": path, "old_string": "return 'hi '", "new_string": "return 'hello '", "replace_all": True}
        before_edit = _event(project, "PreToolUse", "Edit", edit)
        bash = _event(project, "PreToolUse", "Bash", {"command": "ls"})
        try:
            subprocess.run(
                hook, input=read, env=served, check=True, capture_output=True
            )  # it has read it; a server starts
            _wait_for_server(hook, read, served)
            cases = {
                "python -c pass": _process([sys.executable, "-c", "pass"], b"", base),
                "hook, Bash (not judged)": _process(hook, bash, served),
                "hook, after Read": _process(hook, read, served),
                "hook, before Edit": _process(hook, before_edit, served),
                "hook alone, Bash (not judged)": _process(hook, bash, alone),
                "hook alone, after Read": _process(hook, read, alone),
                "hook alone, before Edit": _process(hook, before_edit, alone),
            }
            medians = interleaved(cases, rounds, warm=1)
        finally:
            relay.stop_servers(os.path.join(tmp, "fs-tools"))
        with HookGates("claude-code", store=store) as gates:
            in_process = interleaved(
                {
                    "in process, after Read": lambda: _judged(gates, read),
                    "in process, before Edit": lambda: _judged(gates, before_edit),
                },
                rounds * 10,
            )
    return medians, in_process


def _wait_for_server(hook: list[str], event: bytes, env: dict[str, str]) -> None:
    """Until the hook answers through its server (it never imports the workspace then)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        done = subprocess.run([hook[0], "-X", "importtime", *hook[1:]], input=event, env=env, capture_output=True)
        if b"fs_tools.workspace" not in done.stderr:
            return
        time.sleep(0.2)
    raise RuntimeError("the hook server did not start within a minute")


def hook_rows(smoke: bool) -> list[Row]:
    """The hook's cost per tool call over a bare interpreter start, the work itself (the same event judged
    in process) taken out: target <= 1.5x."""
    medians, in_process = measure(2 if smoke else 15)
    bare = medians["python -c pass"]
    rows = []
    for event, work in (("after Read", "in process, after Read"), ("before Edit", "in process, before Edit")):
        whole, alone, done = medians[f"hook, {event}"], medians[f"hook alone, {event}"], in_process[work]
        ratio = (whole - done) / bare
        rows.append(
            Row(
                SECTION,
                f"a harness's hook, {event}",
                "fs-tools hook, less the work",
                "python -c pass",
                ratio,
                whole,
                bare,
                target="<= 1.5x",
                met=ratio <= 1.5,
                note=(
                    f"{whole * 1000:,.0f} ms through the hook server, the work itself {done * 1000:,.1f} ms, "
                    f"python -c pass {bare * 1000:,.0f} ms; without the server {alone * 1000:,.0f} ms "
                    f"({alone / bare:,.1f}x)"
                ),
            )
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args(argv)
    medians, in_process = measure(2 if args.smoke else 15)
    bare = medians["python -c pass"]
    print(f"{'case':<32}{'median':>10}{'x python -c pass':>20}")
    for name, seconds in medians.items():
        print(f"{name:<32}{seconds * 1000:>8.0f} ms{seconds / bare:>19.1f}x")
    for name, seconds in in_process.items():
        print(f"{name:<32}{seconds * 1000:>8.1f} ms")
    return 0


def _judged(gates: HookGates, event: bytes) -> object:
    reply = gates.handle(json.loads(event))
    if reply.deny or reply.note:
        raise RuntimeError(f"not allowed: {reply}")
    return reply


if __name__ == "__main__":
    sys.exit(main())
