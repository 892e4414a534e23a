"""``fs-tools hook`` inside the real harnesses (SPEC §19): Claude Code 2.1.332, Gemini CLI 0.61.0 and Codex
0.171.0, pinned in ``.ci/harnesses/package.json`` and installed there by .ci/run, run headless and offline
against the scripted model APIs of tests/support/harness_fakes.py, with fs-tools' entries written by ``fs-tools hook
install``. What the model reads next (the tool result carrying fs-tools' reason) and what is on disk after are
checked.

``FS_TOOLS_HARNESS_DIR`` names another directory holding ``node_modules/.bin/{claude,gemini,codex}``; a CLI that
is not there is skipped. Known limits of the harnesses, measured: Claude Code checks an Edit's old_string
(not found, not unique) before its PreToolUse hook runs, so a near miss is tested through Gemini CLI and Codex
only, whose hooks run before their tools match anything (Codex alone would even apply a patch whose context
differs in whitespace only).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fs_tools.hooks import relay
from tests.support.harness_fakes import FakeAnthropic, FakeGemini, FakeModelAPI, FakeOpenAI, Turn, call

REPO = Path(__file__).resolve().parents[2]
HARNESS_DIR = Path(os.environ.get("FS_TOOLS_HARNESS_DIR", REPO / ".ci" / "harnesses"))
FS_TOOLS = [sys.executable, "-m", "fs_tools"]  # with PYTHONPATH at this checkout: the code under test
CLI_TIMEOUT = 180  # seconds; a run takes a few


@dataclass
class Run:
    status: int
    output: dict[str, Any]
    stderr: str
    api: FakeModelAPI

    @property
    def session(self) -> str:
        return str(self.output["session_id"])


class Harness:
    """One CLI: how its model calls its tools, how it is run, where the model reads a tool's result."""

    name: str
    binary: str
    api_class: type[FakeModelAPI]

    def __init__(self, project: Path, home: Path, store: Path) -> None:
        self.project = project
        self.home = home
        self.store = store

    @classmethod
    def executable(cls) -> Path:
        path = HARNESS_DIR / "node_modules" / ".bin" / cls.binary
        if not os.access(path, os.X_OK):
            pytest.skip(
                f"{cls.binary} is not installed in {HARNESS_DIR} (npm ci --prefix .ci/harnesses, or set "
                "FS_TOOLS_HARNESS_DIR to a directory with node_modules/.bin/claude, gemini and codex)"
            )
        return path

    def env(self, api: FakeModelAPI, pythonpath: Path) -> dict[str, str]:
        """Only what the run needs: no API key, FS_TOOLS_* setting or config of whoever runs the tests."""
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            "XDG_STATE_HOME": str(self.home / ".state"),
            "LANG": "C.UTF-8",
            "PYTHONPATH": str(pythonpath),  # the hook: this checkout's fs_tools
            "PYTHONDONTWRITEBYTECODE": "1",
        }

    def install(self, store: Path | None = None) -> None:
        """``fs-tools hook install`` into the project's settings (the command it writes is this interpreter)."""
        where = [f"--project={self.project}", f"--store={store or self.store}"]
        subprocess.run(
            [*FS_TOOLS, "hook", "install", "--harness", self.name, *where],
            env={**os.environ, "PYTHONPATH": str(REPO)},
            check=True,
            capture_output=True,
            timeout=60,
        )

    def command(self) -> list[str]:
        raise NotImplementedError

    def cli_env(self, api: FakeModelAPI) -> dict[str, str]:
        raise NotImplementedError

    def run(self, script: list[Turn], *, pythonpath: Path = REPO) -> Run:
        binary = self.executable()
        with self.api_class(script) as api:
            done = subprocess.run(
                [str(binary), *self.command()],
                cwd=self.project,
                env={**self.env(api, pythonpath), **self.cli_env(api)},
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=CLI_TIMEOUT,
            )
        assert not api.errors, api.errors
        assert done.returncode == 0, f"{self.name} exited {done.returncode}\n{done.stdout}\n{done.stderr}"
        try:
            output = self.parse(done.stdout, api)
        except ValueError:
            pytest.fail(f"{self.name} printed no JSON:\n{done.stdout}\n{done.stderr}")
        return Run(done.returncode, output, done.stderr, api)

    def parse(self, stdout: str, api: FakeModelAPI) -> dict[str, Any]:
        """The run's result, with its ``session_id``, from what the CLI printed."""
        return dict(json.loads(stdout))

    # the model's side
    def path(self, name: str) -> str:
        raise NotImplementedError

    def read(self, name: str) -> Turn:
        raise NotImplementedError

    def edit(self, name: str, old: str, new: str, before: Any = None) -> Turn:
        raise NotImplementedError

    def results(self, run: Run, request: int) -> list[tuple[bool, str]]:
        """(is an error, text) of each tool result in the model's ``request``-th agent request."""
        raise NotImplementedError

    def hook_output(self, run: Run) -> str:
        """Where the harness puts what its hooks printed (shown to the user, not the model)."""
        raise NotImplementedError


class ClaudeCode(Harness):
    name = "claude-code"
    binary = "claude"
    api_class = FakeAnthropic

    def command(self) -> list[str]:
        return ["-p", "do the task", "--permission-mode", "acceptEdits", "--output-format", "json"]

    def cli_env(self, api: FakeModelAPI) -> dict[str, str]:
        return {
            "ANTHROPIC_BASE_URL": api.url,
            "ANTHROPIC_API_KEY": "sk-fake-key",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
        }

    def path(self, name: str) -> str:
        return str(self.project / name)

    def read(self, name: str) -> Turn:
        return call("Read", file_path=self.path(name))

    def edit(self, name: str, old: str, new: str, before: Any = None) -> Turn:
        return call("Edit", before, file_path=self.path(name), old_string=old, new_string=new)

    def results(self, run: Run, request: int) -> list[tuple[bool, str]]:
        assert isinstance(run.api, FakeAnthropic)
        found = []
        for block in run.api.tool_results(request):
            content = block.get("content")
            if isinstance(content, list):
                content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
            found.append((bool(block.get("is_error")), str(content)))
        return found

    def hook_output(self, run: Run) -> str:
        # the session's transcript records each hook run: its exit code, stdout and stderr
        transcripts = (self.home / ".claude" / "projects").glob(f"*/{run.session}.jsonl")
        return "".join(path.read_text(errors="replace") for path in transcripts)


class GeminiCLI(Harness):
    name = "gemini"
    binary = "gemini"
    api_class = FakeGemini

    def command(self) -> list[str]:
        return ["-p", "do the task", "--yolo", "--output-format", "json"]

    def cli_env(self, api: FakeModelAPI) -> dict[str, str]:
        settings = self.home / ".gemini" / "settings.json"
        if not settings.exists():  # else: "Invalid auth method selected"
            settings.parent.mkdir(parents=True, exist_ok=True)
            settings.write_text(json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}}))
        return {
            "GOOGLE_GEMINI_BASE_URL": api.url,
            "GEMINI_API_KEY": "fake-key",
            "GEMINI_CLI_TRUST_WORKSPACE": "true",  # else no project settings (nor hooks) in a headless run
            "GEMINI_CLI_NO_RELAUNCH": "true",  # no second node process: seconds off each run
        }

    def path(self, name: str) -> str:
        return name  # relative, as the model usually writes them: the hook resolves them against cwd

    def read(self, name: str) -> Turn:
        return call("read_file", file_path=self.path(name))

    def edit(self, name: str, old: str, new: str, before: Any = None) -> Turn:
        arguments = {"file_path": self.path(name), "instruction": "change it", "old_string": old, "new_string": new}
        return call("replace", before, **arguments)

    def results(self, run: Run, request: int) -> list[tuple[bool, str]]:
        assert isinstance(run.api, FakeGemini)
        found = []
        for part in run.api.function_responses(request):
            response = part.get("response") or {}
            if "error" in response:
                found.append((True, str(response["error"])))
            else:
                found.append((False, str(response.get("output", ""))))
        return found

    def hook_output(self, run: Run) -> str:
        return run.stderr  # "Hook system message: ..."


class Codex(Harness):
    """``codex exec`` with model "gpt-5.5" (the one whose tools include the freeform ``apply_patch``), against
    a provider named "fake" in ``$CODEX_HOME/config.toml``, the project marked trusted there and the hooks
    trusted by a flag (else Codex skips ``.codex/hooks.json`` silently). Codex refuses a ``CODEX_HOME`` under
    the temp directory (it puts its apply_patch helper there), so ``home`` is under the checkout (see the
    fixture). Codex has no read tool: the model reads with ``cat`` through ``exec_command``."""

    name = "codex"
    binary = "codex"
    api_class = FakeOpenAI

    def command(self) -> list[str]:
        flags = ["--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--disable", "plugins"]
        # a project's hooks run only if the project is trusted (config.toml) and the hooks are too: reviewed
        # in the TUI, which records their hash, or, headless, this flag
        return ["exec", *flags, "--dangerously-bypass-hook-trust", "do the task"]

    def cli_env(self, api: FakeModelAPI) -> dict[str, str]:
        codex_home = self.home / ".codex"
        codex_home.mkdir(parents=True, exist_ok=True)
        (codex_home / "config.toml").write_text(
            'model = "gpt-5.5"\nmodel_provider = "fake"\n\n'
            f'[model_providers.fake]\nname = "fake"\nbase_url = "{api.url}/v1"\n'
            'wire_api = "responses"\nenv_key = "FAKE_OPENAI_KEY"\n\n'
            f'[projects.{json.dumps(str(self.project))}]\ntrust_level = "trusted"\n'
        )
        return {"CODEX_HOME": str(codex_home), "FAKE_OPENAI_KEY": "sk-fake-key", "RUST_LOG": "warn"}

    def parse(self, stdout: str, api: FakeModelAPI) -> dict[str, Any]:
        # not --json: its events leave out how each hook run ended, which stderr shows ("hook: PreToolUse
        # Failed"); the session id (the hooks' session_id) is in every request's client_metadata
        assert isinstance(api, FakeOpenAI)
        assert len(api.sessions) == 1, api.sessions
        return {"session_id": api.sessions[0], "result": stdout}

    def path(self, name: str) -> str:
        return name  # patch paths are relative to the session's cwd

    def read(self, name: str) -> Turn:
        return call("exec_command", cmd=f"cat {self.path(name)}")

    def patch(self, body: str, before: Any = None) -> Turn:
        return call("apply_patch", before, input=f"*** Begin Patch\n{body}*** End Patch\n")

    def edit(self, name: str, old: str, new: str, before: Any = None) -> Turn:
        """Whole lines only: ``old`` by ``new``, as a patch hunk."""
        hunk = "".join(f"-{line}\n" for line in old.split("\n")) + "".join(f"+{line}\n" for line in new.split("\n"))
        return self.patch(f"*** Update File: {self.path(name)}\n@@\n{hunk}", before)

    def results(self, run: Run, request: int) -> list[tuple[bool, str]]:
        """Codex flags no error: a result is one when a hook blocked the call, or a patch or command failed."""
        assert isinstance(run.api, FakeOpenAI)
        found = []
        for item in run.api.call_outputs(request):
            output = item.get("output")
            if isinstance(output, dict):
                output = output.get("content") or output.get("body") or json.dumps(output)
            if isinstance(output, list):
                output = "".join(part.get("text", "") for part in output if isinstance(part, dict))
            text = str(output)
            failed = "blocked by PreToolUse hook" in text or "verification failed" in text
            failed = failed or ("exited with code" in text and "exited with code 0" not in text)
            found.append((failed, text))
        return found

    def hook_output(self, run: Run) -> str:
        return run.stderr


HOMES = REPO / ".harness-homes"  # gitignored: homes that must not be under the temp directory (Codex)


@contextlib.contextmanager
def _home(kind: type[Harness], where: Path) -> Iterator[Path]:
    """A new home for a ``kind`` run: ``where``, or for Codex a directory under HOMES, removed after."""
    if kind is not Codex:
        where.mkdir()
        yield where.resolve()
        return
    HOMES.mkdir(exist_ok=True)
    home = Path(tempfile.mkdtemp(prefix="codex-", dir=HOMES))
    try:
        yield home.resolve()
    finally:
        shutil.rmtree(home, ignore_errors=True)


@contextlib.contextmanager
def _made(kind: type[Harness], tmp_path: Path) -> Iterator[Harness]:
    """A ``kind`` harness with a project, a home and a store of its own, fs-tools' hooks installed."""
    kind.executable()
    project = tmp_path / "project"
    project.mkdir()
    with _home(kind, tmp_path / "home") as home:
        made = kind(project.resolve(), home, (tmp_path / "state" / "observations.sqlite").resolve())
        made.install()
        try:
            yield made
        finally:  # the hooks ran through a hook server (the first event starts it): stopped with the run
            relay.stop_servers(str(home / ".state" / "fs-tools"))


@pytest.fixture(params=[ClaudeCode, GeminiCLI, Codex], ids=["claude-code", "gemini", "codex"])
def harness(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Harness]:
    with _made(request.param, tmp_path) as made:
        yield made


@pytest.fixture
def codex(tmp_path: Path) -> Iterator[Harness]:
    with _made(Codex, tmp_path) as made:
        yield made


TEXT = "alpha\nbeta\ngamma\n"


def _last_result(harness: Harness, run: Run, request: int) -> tuple[bool, str]:
    results = harness.results(run, request)
    assert results, f"no tool result in request {request}"
    return results[-1]


def test_a_change_before_a_read_is_denied_with_the_reason(harness: Harness) -> None:
    (harness.project / "a.txt").write_text(TEXT)
    run = harness.run([harness.edit("a.txt", "alpha", "ALPHA"), Turn(text="done")])
    error, text = _last_result(harness, run, 1)
    assert error, text
    assert "has not been read" in text or "has not read it" in text, text
    assert (harness.project / "a.txt").read_text() == TEXT


def test_a_write_before_a_read_is_denied_with_the_reason(harness: Harness) -> None:
    (harness.project / "a.txt").write_text(TEXT)
    if isinstance(harness, Codex):  # no write tool: a patch that adds the file, which replaces it
        write = harness.patch("*** Add File: a.txt\n+overwritten\n")
    else:
        tool = "Write" if isinstance(harness, ClaudeCode) else "write_file"
        write = call(tool, file_path=harness.path("a.txt"), content="overwritten\n")
    run = harness.run([write, Turn(text="done")])
    error, text = _last_result(harness, run, 1)
    assert error and "has not read it" in text, text
    assert (harness.project / "a.txt").read_text() == TEXT


def test_a_change_made_outside_between_the_read_and_the_edit_is_stale(harness: Harness) -> None:
    target = harness.project / "a.txt"
    target.write_text(TEXT)
    outside = "alpha\nbeta changed outside\ngamma\n"

    def change_outside() -> None:  # after the read's result came back, before the edit is called
        target.write_text(outside)

    script = [harness.read("a.txt"), harness.edit("a.txt", "alpha", "ALPHA", before=change_outside), Turn(text="done")]
    run = harness.run(script)
    assert _last_result(harness, run, 1)[0] is False  # the read went through
    error, text = _last_result(harness, run, 2)
    assert error and "changed since this session last read it" in text and "line 2" in text, text
    assert target.read_text() == outside


def test_read_then_edit_is_allowed_and_shows_in_the_session_diff(harness: Harness) -> None:
    target = harness.project / "a.txt"
    target.write_text(TEXT)
    run = harness.run([harness.read("a.txt"), harness.edit("a.txt", "alpha", "ALPHA"), Turn(text="done")])
    error, text = _last_result(harness, run, 2)
    assert not error, text
    assert target.read_text() == "ALPHA\nbeta\ngamma\n"
    diff = subprocess.run(
        [*FS_TOOLS, "diff", "--session", run.session, "--root", str(harness.project), "--state", str(harness.store)],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert diff.returncode == 0, diff.stderr
    assert "-alpha" in diff.stdout and "+ALPHA" in diff.stdout, diff.stdout


def test_the_hooks_answer_alike_once_their_server_runs() -> None:
    """The first event of a run starts the hook server (and is answered by its own command); a second run
    in the same home finds it running. Both runs' gates answer as before, through the real harness. (In a
    short directory: a Unix socket's path has a length limit, past which the command answers itself.)"""
    short = Path(tempfile.mkdtemp(prefix="fsh-", dir="/tmp"))
    with contextlib.ExitStack() as cleanup:
        cleanup.callback(shutil.rmtree, short, ignore_errors=True)
        harness = cleanup.enter_context(_made(ClaudeCode, short))
        (harness.project / "a.txt").write_text(TEXT)
        first = harness.run([harness.edit("a.txt", "alpha", "ALPHA"), Turn(text="done")])
        error, text = _last_result(harness, first, 1)
        assert error and "has not been read" in text, text
        state = harness.home / ".state" / "fs-tools" / "hookd"
        deadline = time.monotonic() + 30
        while not list(state.glob("*.sock")) and time.monotonic() < deadline:  # it starts in the background
            time.sleep(0.1)
        assert list(state.glob("*.sock")), "the first hook event started no server"
        second = harness.run([harness.read("a.txt"), harness.edit("a.txt", "alpha", "ALPHA"), Turn(text="done")])
        error, text = _last_result(harness, second, 2)
        assert not error, text
        assert (harness.project / "a.txt").read_text() == "ALPHA\nbeta\ngamma\n"
        assert relay.stop_servers(str(harness.home / ".state" / "fs-tools")) == 1  # it ran, and only one


def test_a_near_miss_reaches_the_model_with_its_diagnosis(tmp_path: Path) -> None:
    """Gemini CLI only: Claude Code refuses an old_string it cannot find before any hook runs."""
    GeminiCLI.executable()
    (tmp_path / "project").mkdir()
    (tmp_path / "home").mkdir()
    harness = GeminiCLI((tmp_path / "project").resolve(), (tmp_path / "home").resolve(), tmp_path / "store.sqlite")
    harness.install()
    target = harness.project / "a.py"
    target.write_text("def f():\n\treturn 1\n")
    script = [harness.read("a.py"), harness.edit("a.py", "    return 1", "    return 2"), Turn(text="done")]
    run = harness.run(script)
    error, text = _last_result(harness, run, 2)
    assert error and "tabs vs spaces" in text and "line 2" in text, text
    assert target.read_text() == "def f():\n\treturn 1\n"


@pytest.mark.parametrize("failure", ["store-unusable", "hook-crashes"])
def test_a_failing_hook_does_not_stop_the_harness(harness: Harness, tmp_path: Path, failure: str) -> None:
    """The same unread edit the gates deny above goes through when the hook cannot judge it: a hook that
    fails (no store it can open; a Python that cannot even import fs_tools) is no opinion, not a denial."""
    target = harness.project / "a.txt"
    target.write_text(TEXT)
    pythonpath = REPO
    if failure == "store-unusable":
        harness.install(store=tmp_path)  # a directory: no SQLite file can be opened there
    else:
        broken = tmp_path / "broken"
        (broken / "fs_tools").mkdir(parents=True)
        (broken / "fs_tools" / "__init__.py").write_text("raise ImportError('fs_tools broken on purpose')\n")
        pythonpath = broken
    run = harness.run([harness.edit("a.txt", "alpha", "ALPHA"), Turn(text="done")], pythonpath=pythonpath)
    error, text = _last_result(harness, run, 1)
    assert not error, text
    assert target.read_text() == "ALPHA\nbeta\ngamma\n"
    # the hook did run, and failed as arranged
    expected = "is a directory" if failure == "store-unusable" else "fs_tools broken on purpose"
    if isinstance(harness, Codex):  # Codex shows no hook's output, only how each run ended: the unusable
        # store is a note on stderr with exit 0 (Completed, no decision), the crash an exit 1 (Failed)
        expected = "hook: PreToolUse Completed" if failure == "store-unusable" else "hook: PreToolUse Failed"
    assert expected in harness.hook_output(run)


# --- Codex only -------------------------------------------------------------------------------------------


def test_codex_a_near_miss_in_a_patch_context_is_denied_with_its_diagnosis(codex: Harness) -> None:
    """Spaces in the patch where the file has a tab: Codex alone would apply it (it matches context lines
    with their whitespace trimmed); the hook denies it first, and says where."""
    target = codex.project / "a.py"
    target.write_text("def f():\n\treturn 1\n")
    assert isinstance(codex, Codex)
    near_miss = codex.patch("*** Update File: a.py\n@@\n-def f():\n+def g():\n     return 1\n")
    run = codex.run([codex.read("a.py"), near_miss, Turn(text="done")])
    error, text = _last_result(codex, run, 2)
    assert error and "line 2" in text and "tab" in text, text
    assert target.read_text() == "def f():\n\treturn 1\n"


def test_codex_a_heredoc_patch_through_the_shell_is_judged_too(codex: Harness) -> None:
    """The other way Codex patches: ``apply_patch <<'EOF'`` in a shell command (tool_name "Bash")."""
    target = codex.project / "a.txt"
    target.write_text(TEXT)
    patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-alpha\n+ALPHA\n*** End Patch"
    heredoc = call("exec_command", cmd=f"apply_patch <<'EOF'\n{patch}\nEOF")
    run = codex.run([heredoc, codex.read("a.txt"), heredoc, Turn(text="done")])
    error, text = _last_result(codex, run, 1)
    assert error and "has not been read" in text, text
    error, text = _last_result(codex, run, 3)
    assert not error, text
    assert target.read_text() == "ALPHA\nbeta\ngamma\n"


# --- two sessions at once ---------------------------------------------------------------------------------

LEASE = "is being changed by another agent's session"
STALE = "changed since this session last read it"
# each harness's own refusal of the second change, before its hook runs, when the first has already landed:
OWN_REFUSAL = {
    ClaudeCode: "has been modified since read",  # Claude Code's check of a Write against its own last Read
    GeminiCLI: "",  # none: write_file writes what it is given, whatever was read before
    Codex: "verification failed",  # apply_patch: the hunk's old lines are no longer in the file
}


def _replace_all(harness: Harness, name: str, old: str, new: str, before: Any) -> Turn:
    """The model replaces the whole of ``name`` (``old``) by ``new``: Claude Code's Write, Gemini CLI's
    write_file; Codex has no write tool, so an apply_patch updating the file, every old line by the new."""
    if isinstance(harness, Codex):
        return harness.edit(name, old.removesuffix("\n"), new.removesuffix("\n"), before)
    tool = "Write" if isinstance(harness, ClaudeCode) else "write_file"
    return call(tool, before, file_path=harness.path(name), content=new)


@pytest.mark.parametrize("kind", [ClaudeCode, GeminiCLI, Codex], ids=["claude-code", "gemini", "codex"])
def test_two_sessions_writing_one_file_at_once_lose_no_update(kind: type[Harness], tmp_path: Path) -> None:
    """Two runs of one CLI, each with a home (and so a session) of its own, on one project and one store,
    both read a file, then both replace it. Their fakes hold both replacing turns at a barrier and let them
    go together, so both sessions' pre-tool hooks run at about the same moment. Which one wins is up to the
    scheduler; what may never happen is both landing (the second would overwrite a change its session never
    read). Asserted, and what each guarantees:

    - both reads went through: each session's change is judged against a read of the original text;
    - exactly one change is reported done to its model: two would be a lost update, none a denial too many;
    - the other session's model is told, in its next request, why its change was refused: fs-tools' lease
      (the allowed change is being made), fs-tools' staleness (it was made; this read is older — also when
      Codex ran a read's post-tool hook only after the other change had landed: the read is recorded as
      the older text it showed, not left unrecorded, so the refusal is never "not read"), or — when
      that session was let go so late that the other change had landed before its harness validated its own
      call — the harness's own refusal, before any hook (Claude Code's Write check; Codex's patch whose old
      lines are gone; Gemini CLI has none);
    - the file holds exactly the landed change's text: the refused one left no trace on disk.

    Which of the three it was is printed (``pytest -rP`` shows it)."""
    kind.executable()
    project = tmp_path / "project"
    project.mkdir()
    store = (tmp_path / "state" / "observations.sqlite").resolve()
    target = project / "a.txt"
    target.write_text(TEXT)
    together = threading.Barrier(2, timeout=CLI_TIMEOUT / 2)
    with contextlib.ExitStack() as homes:
        sessions: dict[str, Harness] = {}
        for name in ("one", "two"):  # a home each; the project, its settings and the store shared
            sessions[name] = kind(project.resolve(), homes.enter_context(_home(kind, tmp_path / name)), store)
        sessions["one"].install()

        def script(name: str, harness: Harness) -> list[Turn]:
            write = _replace_all(harness, "a.txt", TEXT, f"written by {name}\n", together.wait)
            return [harness.read("a.txt"), write, Turn(text="done")]

        runs: dict[str, Run] = {}
        failures: list[BaseException] = []

        def run(name: str, harness: Harness) -> None:
            try:
                runs[name] = harness.run(script(name, harness))
            except BaseException as exc:  # pytest.fail's too: reported below, not lost in the thread
                failures.append(exc)
                together.abort()  # the other session's fake stops waiting

        threads = [threading.Thread(target=run, args=(name, harness)) for name, harness in sessions.items()]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(CLI_TIMEOUT + 30)
    assert not failures, failures
    for name, harness in sessions.items():
        error, text = _last_result(harness, runs[name], 1)
        assert not error, (name, text)  # the read went through
    outcomes = {name: _last_result(harness, runs[name], 2) for name, harness in sessions.items()}
    landed = [name for name, (error, _) in outcomes.items() if not error]
    assert len(landed) == 1, outcomes  # both landing is a lost update; neither, a denial too many
    (refused,) = set(outcomes) - set(landed)
    reason = outcomes[refused][1]
    own = OWN_REFUSAL[kind]
    seen = "lease" if LEASE in reason else "stale" if STALE in reason else "own" if own and own in reason else ""
    assert seen, reason
    print(f"race: {landed[0]} landed; {refused} refused ({seen}): {reason}")
    assert target.read_text() == f"written by {landed[0]}\n"
