"""Issue 12, items 2, 3, 4 and the listing half of 12: nothing a model sends to list, glob or grep — a
pattern, a regular expression, a .gitignore it wrote — can freeze the process, exhaust its memory or
turn into INTERNAL_ERROR, and the temp files of atomic writes are nobody's content.

Every test runs on a real temporary tree. A pattern that used to hold the GIL for hours is run in a child
process, so that on the old code the test fails at the child's timeout instead of freezing pytest (no
thread gets a turn while ``re`` backtracks); the timeout is a hang guard a thousand times what the call
needs, not a performance threshold.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from wcmatch import glob as wc

from fs_tools import Session, Workspace
from fs_tools.errors import ToolTimeout, error_codes
from fs_tools.patterns.glob import (
    MAX_GLOB_CHARS,
    MAX_GLOB_FLOATING,
    MAX_GLOB_SEGMENTS,
    GlobListLimit,
    compile_glob,
    compile_globs,
)
from fs_tools.patterns.ignore import IgnoreRules, ignore_rules
from fs_tools.provider.tempfiles import TEMP_NAME, create_temp
from fs_tools.provider.walk import FILE, Entry
from fs_tools.testing import assert_error, assert_ok
from fs_tools.tools.grep import MAX_PATTERN_CHARS, MAX_PATTERN_SIZE

HANG_GUARD_SECONDS = 60
DEEP = 60  # the depth of the reproduction
BUG_CODES = {"INTERNAL_ERROR", "INVALID_TOOL_OUTPUT"}


def _in_child(root: Path, tool: str, arguments: dict[str, Any], search_seconds: float = 10.0) -> dict[str, Any]:
    """One call in a fresh process; its result as ``ToolResult.to_dict()``, or a test failure if it hangs."""
    script = (
        "import json, sys\n"
        "from fs_tools import Workspace\n"
        "root, tool, arguments, seconds = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), float(sys.argv[4])\n"
        "with Workspace(root, search_seconds=seconds) as ws:\n"
        "    print(json.dumps(ws.session('s').call(tool, arguments).to_dict()))\n"
    )
    command = [sys.executable, "-c", script, str(root), tool, json.dumps(arguments), str(search_seconds)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=HANG_GUARD_SECONDS, check=False)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{tool} {arguments} did not return within {HANG_GUARD_SECONDS} s: the process froze")
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def _code(result: dict[str, Any]) -> str | None:
    error = result.get("error")
    return None if error is None else str(error["info"]["code"])


def _text(result: dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


def _deep_file(session: Session, name: str = "f") -> str:
    path = "a/" * DEEP + name
    assert_ok(session.call("write", {"file_path": path, "content": "needle\n"}))
    return path


# --- item 2: glob patterns have a bounded cost per entry --------------------------------------------------


def test_globstar_chains_match_a_deep_tree_without_freezing_the_process(root: Path, session: Session) -> None:
    """The issue's reproduction, with more repeats: each '**' may take any number of directories, and
    the translated regex tried them all (depth^k); matched name by name, the cost is linear."""
    path = _deep_file(session)
    missing = _in_child(root, "glob", {"pattern": "**/a*/" * 10 + "b"})
    assert _code(missing) is None, _text(missing)
    assert "no files match" in _text(missing)
    found = _in_child(root, "glob", {"pattern": "**/a*/" * 10 + "f"})
    assert _code(found) is None and _text(found) == path


def test_star_runs_within_one_name_cannot_backtrack(root: Path) -> None:
    """A guard on the per-name translation we take from wcmatch (atomic groups since wcmatch 10 on
    Python 3.11): '*a*a…*b' against a long name of 'a's is exponential for a plain regex."""
    (root / ("a" * 200)).write_text("needle\n")
    for tool, arguments in (
        ("glob", {"pattern": "*a" * 20 + "*b"}),
        ("grep", {"pattern": "x", "glob": "*a" * 20 + "*b"}),
    ):
        result = _in_child(root, tool, arguments)
        assert _code(result) is None and _text(result).startswith("(no "), _text(result)


def test_grep_glob_filter_cannot_freeze_the_process_and_the_budget_holds(root: Path, session: Session) -> None:
    _deep_file(session)
    missing = _in_child(root, "grep", {"pattern": "needle", "glob": "**/a*/" * 10 + "b"}, search_seconds=1)
    assert _code(missing) is None, _text(missing)
    assert _text(missing).startswith("(no matches for 'needle' in 0 file(s)")
    found = _in_child(root, "grep", {"pattern": "needle", "glob": "**/a*/" * 10 + "f"}, search_seconds=1)
    assert _text(found) == "a/" * DEEP + "f:1: needle"


def test_a_hostile_gitignore_pattern_cannot_freeze_grep(root: Path, session: Session) -> None:
    """A .gitignore the model wrote is a pattern the model sent: pathspec's regex backtracked the same way."""
    _deep_file(session)
    assert_ok(
        session.call("write", {"file_path": ".gitignore", "content": "**/a*/" * 10 + "b\n" + "**/a*/" * 10 + "f\n"})
    )
    result = _in_child(root, "grep", {"pattern": "needle"})  # the default budget: the old code froze in one check
    assert _code(result) is None, _text(result)
    assert _text(result).startswith("(no matches") and "1 path(s) excluded by .gitignore" in _text(result)


def test_glob_has_a_time_budget(root: Path) -> None:
    """SPEC §5: glob is a tool with a time budget; it had none."""
    (root / "a.py").write_text("x\n")
    with Workspace(root, search_seconds=0) as ws:
        result = assert_error(ws.session("s").call("glob", {"pattern": "**/*.py"}), "TOOL_TIMEOUT")
    assert "0 s budget" in result.text and "narrower path" in result.text


@pytest.mark.parametrize(
    ("pattern", "limit"),
    [
        ("**/a/" * (MAX_GLOB_FLOATING + 2) + "b", f"limit of {MAX_GLOB_FLOATING:,}"),
        ("**/{1..999}/**/x", f"limit of {MAX_GLOB_FLOATING:,}"),
        ("{1..999}/a/b", f"limit of {MAX_GLOB_SEGMENTS:,}"),
        ("a" * (MAX_GLOB_CHARS + 1), f"limit of {MAX_GLOB_CHARS:,}"),
    ],
    ids=["globstars", "globstar-alternatives", "alternatives", "length"],
)
@pytest.mark.parametrize("tool", ["glob", "grep"])
def test_a_glob_past_a_cost_limit_is_invalid_args_naming_the_limit(
    root: Path, session: Session, tool: str, pattern: str, limit: str
) -> None:
    (root / "x.txt").write_text("needle\n")
    arguments = {"pattern": pattern} if tool == "glob" else {"pattern": "needle", "glob": pattern}
    pointer = "/pattern" if tool == "glob" else "/glob"
    result = assert_error(session.call(tool, arguments), "INVALID_ARGS")
    assert f"{pointer}: invalid glob pattern" in result.text and limit in result.text, result.text
    assert len(result.text) < 400


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("**/*.py", ["pkg/a.py", "pkg/sub/b.py", "top.py"]),
        ("pkg/**", ["pkg/.hidden", "pkg/a.py", "pkg/sub/b.py", "pkg/sub/c.txt"]),
        ("pkg/**/*.txt", ["pkg/sub/c.txt"]),
        ("**/sub/**", ["pkg/sub/b.py", "pkg/sub/c.txt"]),
        ("*/*/{b,c}.*", ["pkg/sub/b.py", "pkg/sub/c.txt"]),
        ("pkg/[!a]*", ["pkg/.hidden"]),
        ("pkg//a.py", ["pkg/a.py"]),
        ("top.py/", []),
        ("/top.py", []),
    ],
)
def test_glob_semantics_are_kept(root: Path, session: Session, pattern: str, expected: list[str]) -> None:
    for name in ("top.py", "pkg/a.py", "pkg/.hidden", "pkg/sub/b.py", "pkg/sub/c.txt"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x\n")
    result = assert_ok(session.call("glob", {"pattern": pattern}))
    if expected:
        assert result.text.splitlines() == expected, result.text
    else:
        assert result.value["matches"] == 0 and "no files match" in result.text, result.text


GLOB_TOKENS = st.sampled_from(
    ["a", "b", ".", "*", "?", "/", "[", "]", "!", "\\", "{", "}", ",", "-", "**", "/**/", "[!a]", "[a-b]", "{a,b}"]
)
NAMES = st.sampled_from(["a", "b", ".a", "ab", "a.b", "*", "[", "]", "!", "-", "{", "\\", "ba", "a b"])


@settings(max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    pattern=st.lists(GLOB_TOKENS, max_size=10).map("".join),
    parts=st.lists(NAMES, min_size=1, max_size=5).map(tuple),
    match_base=st.booleans(),
)
def test_the_linear_matcher_agrees_with_wcmatch(pattern: str, parts: tuple[str, ...], match_base: bool) -> None:
    """On paths shallow enough for wcmatch's regexes, matching name by name changes no answer (the
    flags are the ones glob and grep's ``glob`` used: GLOBSTAR, DOTGLOB, BRACE, and MATCHBASE for grep)."""
    flags = wc.GLOBSTAR | wc.DOTGLOB | wc.BRACE | (wc.MATCHBASE if match_base else 0)
    try:
        theirs = wc.globmatch("/".join(parts), pattern, flags=flags)
    except Exception:  # wcmatch's own limits: compared elsewhere
        return
    assert compile_glob(pattern, match_base=match_base).matches(parts) == theirs


# --- item 3: grep's regex compile stays inside the budget --------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "size"),
    [
        ("(?:x{3000}){3000}", "9,000,000"),
        ("(?:x{20000}){20000}", "400,000,000"),  # was MemoryError → INTERNAL_ERROR
        ("(?:(?:ab){100}|c){2000}", "404,000"),  # 2,000 × (100 × 2 + 1 + the alternation)
        ("(?:x{1000}){1000,}", "1,000,000"),  # an open-ended repeat still unrolls its minimum
    ],
)
def test_a_regex_that_unrolls_past_the_limit_is_refused_before_compiling(root: Path, pattern: str, size: str) -> None:
    (root / "a.txt").write_text("x" * 10 + "\n")
    with Workspace(root, search_seconds=1) as ws:
        result = assert_error(ws.session("s").call("grep", {"pattern": pattern}), "INVALID_ARGS")
    assert result.text.startswith("invalid arguments: /pattern: pattern too costly to compile"), result.text
    assert f"about {size} regex items" in result.text and f"limit of {MAX_PATTERN_SIZE:,}" in result.text


def test_a_regex_longer_than_the_limit_is_refused(root: Path, session: Session) -> None:
    result = assert_error(session.call("grep", {"pattern": "x" * (MAX_PATTERN_CHARS + 1)}), "INVALID_ARGS")
    assert "/pattern: pattern too long: 10,001 characters" in result.text
    assert f"limit of {MAX_PATTERN_CHARS:,}" in result.text
    assert_ok(session.call("grep", {"pattern": "x" * MAX_PATTERN_CHARS}))


@pytest.mark.parametrize(
    "pattern", ["x{3000}", "(?:ab){1000}", r"\d{1,3}(?:\.\d{1,3}){3}", "(?:a|b)+c*", "[^,]{0,300}"]
)
def test_regexes_under_the_limit_still_search(root: Path, session: Session, pattern: str) -> None:
    (root / "a.txt").write_text("x" * 3000 + "\n" + "ab" * 1000 + "\n10.0.0.1\n")
    assert_ok(session.call("grep", {"pattern": pattern}))


def test_a_syntax_error_is_still_reported_as_before(session: Session) -> None:
    result = assert_error(session.call("grep", {"pattern": "(?:x{3000}"}), "INVALID_ARGS")
    assert "/pattern: invalid regular expression: missing ), unterminated subpattern" in result.text


# --- item 4: an unparsable .gitignore line is skipped, the others still apply ------------------------------


@pytest.fixture
def nested_tree(root: Path) -> Path:
    for name in ("top.txt", "sub/kept.txt", "sub/local.txt", "sub/deeper/local.txt", "sub/deeper/kept.txt"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("needle\n")
    return root


@pytest.mark.parametrize("bad", ["!", "\\", "a\\", "[z-a]", "!\\", "[", "\\\\\\", "**/[z-a]/x", "{"])
@pytest.mark.parametrize("start", [".", "sub"])
def test_an_unparsable_gitignore_line_is_skipped_and_the_valid_lines_still_apply(
    nested_tree: Path, session: Session, bad: str, start: str
) -> None:
    assert_ok(session.call("write", {"file_path": "sub/.gitignore", "content": f"{bad}\nlocal.txt\n"}))
    result = assert_ok(session.call("grep", {"pattern": "needle", "path": start}))
    rows = result.text.split("\n\n")[0].splitlines()
    expected = ["sub/deeper/kept.txt:1: needle", "sub/kept.txt:1: needle"]
    assert rows == ([*expected, "top.txt:1: needle"] if start == "." else expected), result.text
    assert "2 path(s) excluded by .gitignore" in result.text  # both local.txt: the valid line still works
    # list and glob do not read .gitignore at all: the same tree lists in full
    assert "local.txt" in assert_ok(session.call("list", {"path": start, "depth": 3})).text
    assert "sub/deeper/local.txt" in assert_ok(session.call("glob", {"pattern": "**/local.txt"})).text


@pytest.mark.parametrize(
    ("lines", "visible"),
    [
        ("*.log\n!keep.log\n", ["a.txt", "keep.log", "sub/a.txt", "sub/keep.log"]),
        ("/a.txt\n", ["keep.log", "sub/a.txt", "sub/keep.log", "sub/x.log", "x.log"]),
        ("sub/\n!sub/a.txt\n", ["a.txt", "keep.log", "x.log"]),  # nothing below an ignored directory returns
        ("sub/**\n!sub/a.txt\n", ["a.txt", "keep.log", "sub/a.txt", "x.log"]),
        ("a.txt\\ \n", ["a.txt", "keep.log", "sub/a.txt", "sub/keep.log", "sub/x.log", "x.log"]),  # "a.txt "
        ("a.txt   \n", ["keep.log", "sub/keep.log", "sub/x.log", "x.log"]),
        ("\\#x.log\n#a.txt\n", ["a.txt", "keep.log", "sub/a.txt", "sub/keep.log", "sub/x.log", "x.log"]),
        ("\ufeffx.log\r\n", ["a.txt", "keep.log", "sub/a.txt", "sub/keep.log"]),
        ("**/sub/*.log\n", ["a.txt", "keep.log", "sub/a.txt", "x.log"]),
    ],
)
def test_gitignore_lines_mean_what_git_says(root: Path, session: Session, lines: str, visible: list[str]) -> None:
    for name in ("a.txt", "keep.log", "x.log", "sub/a.txt", "sub/keep.log", "sub/x.log"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("needle\n")
    (root / ".gitignore").write_bytes(lines.encode())
    result = assert_ok(session.call("grep", {"pattern": "needle"}))
    assert [row.removesuffix(":1: needle") for row in result.text.split("\n\n")[0].splitlines()] == visible
    if shutil.which("git"):  # the expectation is git's own
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
        listed = subprocess.run(
            ["git", "ls-files", "--others", "--exclude-standard"], cwd=root, capture_output=True, text=True, check=True
        ).stdout.split()
        assert [name for name in listed if name != ".gitignore"] == visible


def test_reading_and_applying_gitignore_rules_stops_at_the_budget(root: Path) -> None:
    """A 1 MiB .gitignore is ~100,000 patterns to compile (seconds) and to try on every path: the budget
    is checked in both loops, and grep turns the TimeoutError into TOOL_TIMEOUT."""
    text = "\n".join(f"*.x{i}" for i in range(1000))
    assert len(ignore_rules(text)) == 1000
    with pytest.raises(TimeoutError):
        ignore_rules(text, deadline=time.monotonic() - 1)
    (root / ".gitignore").write_text("\n".join(f"*.x{i}" for i in range(100)))
    rules = IgnoreRules(enabled=True)
    rules.load((), lambda name, limit: (root / name).read_bytes()[:limit])
    entry = Entry(parts=("a.txt",), kind=FILE, size=-1, parent_fd=-1)
    assert rules.ignored(entry) is False
    assert rules.ignored(Entry(parts=("a.x42",), kind=FILE, size=-1, parent_fd=-1)) is True
    rules.deadline = time.monotonic() - 1
    with pytest.raises(TimeoutError):
        rules.ignored(entry)


GITIGNORE_TOKENS = st.sampled_from(
    ["a", "b", "d", "*", "?", "/", "**", "!", "\\", " ", "#", "[a]", "[!a]", "[z-a]", ".log", "sub", "[", "\\ "]
)
GITIGNORE_TEXT = st.lists(st.lists(GITIGNORE_TOKENS, max_size=6).map("".join), max_size=4).map("\n".join)
GIT_TREE = ["a", "b", "a.log", ".a", "d/a", "d/b", "d/e/a", "sub/a", "sub/d/a", "sub/x.log", "a b", "!a", "#a"]


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
@settings(
    max_examples=int(os.environ.get("FS_TOOLS_GIT_EXAMPLES", "60")),
    derandomize=not os.environ.get("FS_TOOLS_GIT_EXAMPLES"),  # the same cases in CI; more and new ones on demand
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
@given(top=GITIGNORE_TEXT, nested=GITIGNORE_TEXT, start=st.sampled_from([".", "sub", "d"]))
def test_grep_skips_exactly_what_git_ignores(top: str, nested: str, start: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        subprocess.run(["git", "init", "-q"], cwd=base, check=True)
        for name in GIT_TREE:
            (base / name).parent.mkdir(parents=True, exist_ok=True)
            (base / name).write_text("needle\n")
        (base / ".gitignore").write_text(top + "\n")
        (base / "sub" / ".gitignore").write_text(nested + "\n")
        listed = subprocess.run(
            ["git", "ls-files", "--others", "--exclude-standard", "-z"], cwd=base, capture_output=True, check=True
        ).stdout.decode()
        theirs = {name for name in listed.split("\0") if name and not name.endswith(".gitignore")}
        theirs = {name for name in theirs if start == "." or name.startswith(f"{start}/")}
        with Workspace(base) as ws:
            result = ws.session("s").call("grep", {"pattern": "needle", "path": start})
    assert not result.is_error, result.text
    ours = {
        row.removesuffix(":1: needle") for row in result.text.split("\n\n")[0].splitlines() if row.endswith("needle")
    }
    assert ours == theirs, (top, nested, start)


# --- item 12 (listing side): temp files of atomic writes are nobody's content -----------------------------

TEMP_FILE = ".0123456789abcdef.fs-tools.tmp"
TEMP_DIRECTORY = ".fedcba9876543210.fs-tools.tmp"
STAGING_DIRECTORY = ".00112233445566aa.fs-tools.dir"  # where a create builds missing parents
LOOKALIKES = [".0123456789abcdef.fs-tools.tmp.bak", "x.0123456789abcdef.fs-tools.tmp"]


@pytest.fixture
def tree_with_temps(root: Path) -> Path:
    assert all(TEMP_NAME.fullmatch(name) for name in (TEMP_FILE, TEMP_DIRECTORY, STAGING_DIRECTORY))
    assert not any(TEMP_NAME.fullmatch(name) for name in LOOKALIKES)
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("needle = 1\n")
    (root / "src" / TEMP_FILE).write_text("needle = 2  # half of a write a killed writer left\n")
    (root / TEMP_DIRECTORY / "inner").mkdir(parents=True)
    (root / TEMP_DIRECTORY / "inner" / "leaf.py").write_text("needle = 3\n")
    (root / "src" / STAGING_DIRECTORY / "inner").mkdir(parents=True)
    (root / "src" / STAGING_DIRECTORY / "inner" / "leaf.py").write_text("needle = 5\n")
    for name in LOOKALIKES:  # the control: names that only look like temps are ordinary files
        (root / "src" / name).write_text("needle = 4\n")
    return root


def _shown(text: str) -> str:
    return text.split("\n\n")[0]


def test_list_never_shows_or_counts_temps(tree_with_temps: Path, session: Session) -> None:
    for include_hidden in (True, False):
        result = assert_ok(session.call("list", {"depth": 4, "include_hidden": include_hidden}))
        names = [row.strip().split("  (")[0].rstrip("/") for row in _shown(result.text).splitlines()]
        assert not [name for name in names if TEMP_NAME.fullmatch(name)], result.text
        assert "inner" not in names and "leaf.py" not in names
        if include_hidden:
            assert names == ["src", *sorted([*LOOKALIKES, "app.py"])]
        else:
            assert names == ["src", "app.py", LOOKALIKES[1]]
            assert result.value["hidden"] == 1, result.text  # the dot-named look-alike, not the temps


def test_glob_never_lists_temps_or_what_is_inside_a_temp_directory(tree_with_temps: Path, session: Session) -> None:
    rows = assert_ok(session.call("glob", {"pattern": "**"})).text.splitlines()
    assert rows == ["src/" + name for name in sorted([*LOOKALIKES, "app.py"])]
    for pattern in (f"**/{TEMP_FILE}", f"{TEMP_DIRECTORY}/**", "**/leaf.py"):
        assert "no files match" in assert_ok(session.call("glob", {"pattern": pattern})).text, pattern


def test_grep_never_matches_the_bytes_of_a_temp(tree_with_temps: Path, session: Session) -> None:
    for include_ignored in (False, True):
        result = assert_ok(session.call("grep", {"pattern": "needle", "include_ignored": include_ignored}))
        expected = [
            f"src/{name}:1: needle = {1 if name == 'app.py' else 4}" for name in sorted([*LOOKALIKES, "app.py"])
        ]
        assert _shown(result.text).splitlines() == expected, result.text
        assert result.value["files_searched"] == 3


def test_a_live_temp_of_a_write_in_progress_is_invisible(root: Path, session: Session) -> None:
    """A temp as a writer holds it: created, locked and half written, not yet renamed."""
    (root / "big.txt").write_text("old\n")
    directory = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    fd, name = create_temp(directory, 0o644)
    try:
        os.write(fd, b"needle: the first half of the new content\n")
        assert (root / name).exists()
        grep = assert_ok(session.call("grep", {"pattern": "needle"}))
        assert grep.value["matches"] == 0 and grep.value["files_searched"] == 1, grep.text
        assert assert_ok(session.call("glob", {"pattern": "**"})).text == "big.txt"
        assert name not in assert_ok(session.call("list", {"include_hidden": True})).text
    finally:
        os.close(fd)
        os.unlink(name, dir_fd=directory)
        os.close(directory)


# --- fuzz: any pattern gives a structured result ---------------------------------------------------------

REGEX_TOKENS = st.sampled_from(
    [
        "x",
        "a",
        "(",
        ")",
        "(?:",
        "|",
        "*",
        "+",
        "?",
        "{3000}",
        "{2,}",
        "{0,9999}",
        "{",
        "}",
        "[",
        "]",
        "^",
        "$",
        "\\",
        "\\d",
        ".",
        "(?=",
        "(?<=",
        "(?P<n>",
        "(?P=n)",
        "(?>",
        "*+",
        "{1000}",
    ]
)


@pytest.fixture(scope="module")
def fuzz_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("fuzz")
    path = base
    for _ in range(12):
        path = path / "a"
    path.mkdir(parents=True)
    (path / "f.txt").write_text("x" * 24 + "\n")
    (base / "top.py").write_text("aaaa\n")
    return base


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    pattern=st.lists(GLOB_TOKENS | st.sampled_from(["{1..9}", "a*", "**/a*/"]) | st.text(max_size=3), max_size=14).map(
        "".join
    ),
    tool=st.sampled_from(["glob", "grep"]),
)
def test_any_glob_pattern_gives_a_structured_result(fuzz_root: Path, pattern: str, tool: str) -> None:
    arguments = {"pattern": pattern} if tool == "glob" else {"pattern": "x", "glob": pattern}
    with Workspace(fuzz_root, search_seconds=5) as ws:
        result = ws.session("s").call(tool, arguments)
    if result.error is not None:
        assert result.error.code in error_codes() and result.error.code not in BUG_CODES, result.text


@pytest.mark.filterwarnings("ignore:Possible nested set:FutureWarning")  # re's own warning for a '[[' regex
@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(pattern=st.lists(REGEX_TOKENS | st.text(max_size=2), min_size=1, max_size=10).map("".join))
def test_any_regex_gives_a_structured_result(fuzz_root: Path, pattern: str) -> None:
    with Workspace(fuzz_root, search_seconds=2) as ws:
        result = ws.session("s").call("grep", {"pattern": pattern})
    if result.error is not None:
        assert result.error.code in error_codes() and result.error.code not in BUG_CODES, result.text


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    text=st.lists(GITIGNORE_TOKENS | st.sampled_from(["\n", "\r\n", "{a,b}"]) | st.text(max_size=3), max_size=20).map(
        "".join
    )
)
def test_any_gitignore_gives_a_structured_result(tmp_path_factory: pytest.TempPathFactory, text: str) -> None:
    base = tmp_path_factory.getbasetemp() / "ignore-fuzz"
    (base / "a" / "b").mkdir(parents=True, exist_ok=True)
    (base / "a" / "b" / "x.txt").write_text("x\n")
    (base / "a" / ".gitignore").write_text(text)
    with Workspace(base, search_seconds=5) as ws:
        result = ws.session("s").call("grep", {"pattern": "x"})
    assert result.error is None or result.error.code not in BUG_CODES, result.text


def test_a_pattern_only_re_can_compile_is_refused_not_searched_without_a_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``re`` cannot be interrupted and holds the GIL: a pattern the regex engine refuses must be
    INVALID_ARGS, never matched with ``re`` instead."""
    import regex

    from fs_tools.tools import grep

    (tmp_path / "f.txt").write_text("needle\n")
    real = regex.compile

    def refuse(pattern: str, *args: object, **kwargs: object) -> object:
        if pattern == "needle":
            raise regex.error("not supported here")
        return real(pattern, *args, **kwargs)

    monkeypatch.setattr(grep.regex, "compile", refuse)
    with Workspace(tmp_path) as ws:
        result = ws.session("s").call("grep", {"pattern": "needle"})
    assert result.error is not None and result.error.code == "INVALID_ARGS", result.text
    assert result.text.startswith("invalid arguments: /pattern: pattern not supported by the search engine")


# --- issue 31: a list of globs costs what one glob may, and a call globbing many times has one budget ---


def test_ls_ignore_globs_share_one_brace_budget(root: Path) -> None:
    """A hundred '{1..999}' ranges in 1 KB of LS arguments compiled 100,000 patterns (4-10 s, then
    matched each entry against all of them): the list now shares one pattern's limits."""
    (root / "7").write_text("x\n")
    (root / "keep.txt").write_text("x\n")
    with Workspace(root, dialect="claude-code") as ws:
        session = ws.session("s")
        hostile = assert_error(session.call("LS", {"path": ".", "ignore": ["{1..999}"] * 100}), "INVALID_ARGS")
        at_limit = assert_ok(session.call("LS", {"path": ".", "ignore": ["{1..500}", "{1..499}", "x"]}))
        over = assert_error(session.call("LS", {"path": ".", "ignore": ["{1..500}", "{1..500}", "x"]}), "INVALID_ARGS")
    assert hostile.text.startswith("invalid arguments: /ignore/1: invalid glob pattern: "), hostile.text
    assert "the patterns before it expand to 999" in hostile.text and "limit of 1,000" in hostile.text
    assert "for the whole list" in hostile.text and len(hostile.text) < 400
    assert hostile.exception is not None and hostile.exception.__cause__ is None  # a verdict on the arguments
    assert "keep.txt" in at_limit.text and "1 entry matching ignore not shown" in at_limit.text
    assert "/ignore/2:" in over.text and "expand to 1,000 and it adds more" in over.text


def test_read_many_files_include_globs_share_one_brace_budget(root: Path) -> None:
    """read_many_files compiled each include glob with a budget of its own (50 '{1..999}': 50,000
    patterns, about 3 s, before its time budget began): the globs now share one pattern's limits."""
    (root / "a.txt").write_text("x\n")
    with Workspace(root, dialect="gemini") as ws:
        session = ws.session("s")
        hostile = assert_error(
            session.call("read_many_files", {"include": ["a.txt"] + ["{1..999}"] * 49}), "INVALID_ARGS"
        )
        fits = assert_ok(session.call("read_many_files", {"include": ["a.txt", "{1..500}", "{1..499}"]}))
    assert hostile.text.startswith("invalid arguments: /include/2: invalid glob pattern: "), hostile.text
    assert "the patterns before it expand to 999" in hostile.text and "limit of 1,000" in hostile.text
    assert "a.txt" in fits.text


def test_a_glob_list_is_refused_at_the_pattern_that_passes_a_shared_limit() -> None:
    """Each limit of one pattern holds for a whole list, whatever the list's length; the error names the
    index, and a lone pattern keeps its own message."""
    with pytest.raises(GlobListLimit) as many:
        compile_globs(["x"] * 100_000)  # 1,000 plain patterns fit; the next passes the limit
    assert many.value.index == 1_000 and "expand to 1,000" in str(many.value)
    with pytest.raises(GlobListLimit) as segments:
        compile_globs(["{1..600}/a/b", "{1..300}/c"])  # 900 expansions, but 1,800 + 600 segments
    assert segments.value.index == 1 and f"limit of {MAX_GLOB_SEGMENTS:,} for the whole list" in str(segments.value)
    with pytest.raises(GlobListLimit) as floating:
        compile_globs(["**/a/" * 60 + "b", "**/c/" * 60 + "d"])
    assert floating.value.index == 1 and "its 59 path segments between two" in str(floating.value)
    assert "and the 59 of the patterns before it" in str(floating.value)
    with pytest.raises(GlobListLimit) as lone:
        compile_globs(["{1..2000}"])
    assert lone.value.index == 0 and str(lone.value) == "its braces expand to more than 1,000 patterns"
    assert compile_globs(["*.py", "build/**"], match_base=True).matches(("src", "a.py"))
    assert not compile_globs([], match_base=True).matches(("a.py",))


class _CountingClock:
    """A clock moved on by each look at it: a budget in seconds becomes a count of work done."""

    def __init__(self) -> None:
        self.now = time.monotonic()  # never behind the real clock other checks may use
        self.looks = 0

    def monotonic(self) -> float:
        self.looks += 1
        self.now += 1.0
        return self.now


def test_read_many_files_globs_share_one_time_budget(root: Path) -> None:
    """Each include glob of gemini's read_many_files had a budget of its own (50 globs: 50 budgets);
    the call now has one, and the work it does is bounded by it."""
    for n in range(40):
        (root / f"f{n}.txt").write_text("x\n")
    clock = _CountingClock()
    include = ["*.txt"] + [f"**/nothing-{n}" for n in range(49)]  # each glob alone fits the budget of 100
    with Workspace(root, dialect="gemini", search_seconds=100, clock=clock.monotonic) as ws:
        result = assert_error(ws.session("s").call("read_many_files", {"include": include}), "TOOL_TIMEOUT")
    assert clock.looks <= 100 + 2  # one entry past the budget, not 50 × 40
    assert "/include/2 ('**/nothing-1')" in result.text and "100 s budget" in result.text, result.text
    assert "with 40 file(s) named before it" in result.text
    assert result.exception is not None and isinstance(result.exception.__cause__, ToolTimeout)
