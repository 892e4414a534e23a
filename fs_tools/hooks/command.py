"""``fs-tools hook``: one event on stdin, the answer in the harness's protocol; ``hook install`` and
``hook uninstall``: fs-tools' entries in the harness's settings, merged with what is there."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from fs_tools.hooks import relay
from fs_tools.hooks.harnesses import HARNESSES, Answer, Reply, unjudged
from fs_tools.hooks.relay import MAX_EVENT_BYTES

MARKER = "-m fs_tools hook"  # what every command fs-tools installs contains, and uninstall looks for


class _TimedOut(BaseException):  # not an Exception: the gates' own "never raises" does not swallow it
    pass


def run(
    harness: str, *, roots: Sequence[str], store: str | None, protected: Sequence[str], read_only: bool, timeout: float
) -> int:
    """Judge the event on stdin and answer it; the exit status the harness reads. The time is what is left
    of ``timeout`` once the hook server was asked (``relay.remaining``)."""
    try:
        with _deadline(relay.remaining(timeout)):
            raw = sys.stdin.buffer.read(MAX_EVENT_BYTES + 1)

            def judge(event: object) -> Reply:
                from fs_tools.hooks.engine import hook_event

                return hook_event(
                    harness, event, roots=roots or None, store=store, protected=protected, read_only=read_only
                )

            answer = answer_event(harness, raw, judge)
    except _TimedOut:
        answer = HARNESSES[harness].answer(unjudged(f"no verdict within {timeout:g} s"))
    if answer.stdout:
        sys.stdout.write(answer.stdout)
    if answer.stderr:
        print(answer.stderr, file=sys.stderr)
    return answer.status


def answer_event(harness: str, raw: bytes, judge: Callable[[object], Reply]) -> Answer:
    """The answer to the event ``raw`` (the harness's JSON), judged by ``judge`` when it is a call fs-tools
    judges. Never raises but for a timeout."""
    spec = HARNESSES[harness]
    try:
        if len(raw) > MAX_EVENT_BYTES:
            return spec.answer(unjudged(f"the event is over {MAX_EVENT_BYTES:,} bytes"))
        try:
            event = json.loads(raw)
        except ValueError as exc:
            return spec.answer(unjudged(f"the event is not JSON ({exc})"))
        call = spec.call_of(event) if isinstance(event, dict) else "the event is not a JSON object"
        if isinstance(call, str):  # not ours to judge: answered before the library is imported
            return spec.answer(unjudged(call) if call else Reply())
        return spec.answer(judge(event))
    except _TimedOut:
        raise
    except Exception as exc:  # a hook never breaks its harness
        return spec.answer(unjudged(f"{type(exc).__name__}: {exc}"))


@contextlib.contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    def expired(signum: int, frame: object) -> None:
        raise _TimedOut()

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# --- install / uninstall ------------------------------------------------------------------------------


def command_line(harness: str, options: Sequence[str]) -> str:
    """The command a harness runs: this interpreter, so it works whatever the harness's PATH is."""
    parts = [sys.executable, "-m", "fs_tools", "hook", "--harness", harness, *options]
    return " ".join(shlex.quote(part) for part in parts)


def settings_file(harness: str, scope: str, project: Path) -> Path:
    """The project's settings file, or the user's: in the harness's own directory (``$CODEX_HOME``,
    ``$CLAUDE_CONFIG_DIR``, else ``~/.codex``, ``~/.claude``, ``~/.gemini``)."""
    spec = HARNESSES[harness]
    assert spec.settings is not None
    if scope == "project":
        return project / spec.settings
    own = spec.own_directory()
    assert own is not None
    return Path(own) / Path(spec.settings).name


def install(harness: str, scope: str, project: Path, options: Sequence[str]) -> str:
    """Merge fs-tools' hook entries into the harness's settings (replacing fs-tools' own from before, keeping
    every other entry and setting); what was done, in a line."""
    spec = HARNESSES[harness]
    path = settings_file(harness, scope, project)
    settings = _load(path)
    _remove_ours(settings)
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise ValueError(f"{path}: 'hooks' is not an object; fix it by hand, then install again")
    command = command_line(harness, options)
    for event, matcher in spec.entries.items():
        entries = hooks.setdefault(event, [])
        if not isinstance(entries, list):
            raise ValueError(f"{path}: hooks.{event} is not a list; fix it by hand, then install again")
        entries.append(spec.entry(matcher, command))
    _save(path, settings)
    done = f"installed fs-tools' hooks for {harness} in {path}"
    if harness == "codex":  # Codex skips hooks it has not been told to trust, silently
        done += (
            "\nCodex runs them only once trusted: review them in codex (/hooks), mark the project trusted in "
            "$CODEX_HOME/config.toml for .codex/hooks.json, or run codex exec with --dangerously-bypass-hook-trust"
        )
    return done


def uninstall(harness: str, scope: str, project: Path) -> str:
    path = settings_file(harness, scope, project)
    if not path.exists():
        return f"no {path}: nothing to remove"
    settings = _load(path)
    removed = _remove_ours(settings)
    if not removed:
        return f"no fs-tools hook in {path}: nothing to remove"
    _save(path, settings)
    return f"removed {removed} fs-tools hook(s) from {path}"


def _load(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    try:
        settings = json.loads(text) if text.strip() else {}
    except ValueError as exc:
        raise ValueError(f"{path} is not valid JSON ({exc}); fix it by hand, then install again") from exc
    if not isinstance(settings, dict):
        raise ValueError(f"{path} does not hold a JSON object; fix it by hand, then install again")
    return settings


def _remove_ours(settings: dict[str, Any]) -> int:
    """Drop every hook whose command is fs-tools' (and a matcher group left empty by it); how many."""
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return 0
    removed = 0
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept_groups = []
        for group in groups:
            inner = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(inner, list):
                kept_groups.append(group)
                continue
            kept = [hook for hook in inner if not (isinstance(hook, dict) and _ours(hook.get("command")))]
            removed += len(inner) - len(kept)
            if kept or not inner:
                kept_groups.append({**group, "hooks": kept})
        if kept_groups:
            hooks[event] = kept_groups
        else:
            del hooks[event]
    if not hooks:
        del settings["hooks"]
    return removed


def _ours(command: object) -> bool:
    """A command ``install`` wrote: ``<python> -m fs_tools hook ...``."""
    if not isinstance(command, str) or MARKER not in command:
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    return words[1:4] == ["-m", "fs_tools", "hook"]


def _save(path: Path, settings: dict[str, Any]) -> None:
    path = path.resolve()  # a settings file that is a link (to dotfiles) is written where it points
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.fs-tools-{os.getpid()}")
    temporary.write_text(json.dumps(settings, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    with contextlib.suppress(FileNotFoundError):
        os.chmod(temporary, os.stat(path).st_mode & 0o7777)
    os.replace(temporary, path)
