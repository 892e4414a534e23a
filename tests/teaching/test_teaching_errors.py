"""SPEC §15 beyond the edit diagnosis: omission placeholders refused (and legitimate ellipses never),
did-you-mean for a missing path, what a file that is not text appears to be — and the diagnosis itself
under fuzzing (it never raises, and it answers the same every time)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fs_tools import Session, Workspace
from fs_tools.checks.placeholders import is_placeholder, new_placeholders
from fs_tools.matching.diagnosis import diagnose
from fs_tools.testing import assert_error, assert_ok

# --- omission placeholders -----------------------------------------------------------------------------

PLACEHOLDERS = [
    "# ... rest of code unchanged",
    "    // ... existing code ...",
    "/* ... */",
    "<!-- ... -->",
    "# ...",
    "    # …",
    "// rest of the file remains the same",
    "# Rest of the implementation unchanged",
    "{/* ... */}",
    "-- ... rest of query",
    "    // ... other methods ...",
    "# existing code here",
    "   # ... (unchanged)",
    "// ... keep existing",
    "/* rest of the code is unchanged */",
    "# [rest of the function remains unchanged]",
    "  // ...existing code...",
    "# ... previous code ...",
    "<!-- ... existing content ... -->",
    "    # ... same as before ...",
    "// ... remaining cases omitted",
    "; ... rest unchanged",
    # found by review
    "/* rest of styles unchanged */",
    "<!-- rest of the page unchanged -->",
    "# ... snip ...",
    "// (omitted for brevity)",
    "# the rest stays unchanged",
    "{# ... rest unchanged #}",
]
LEGITIMATE = [
    "def f(): ...",
    "    ...",
    "print('Loading...')",
    "x: Tuple[int, ...]",
    "# wait...",
    "// TODO: handle more cases...",
    "# This keeps the rest of the list sorted",
    "foo(...args)",
    "# see https://example.com/...",
    "# Note: the rest of the world uses UTC",
    "#!/usr/bin/env python",
    "# -*- coding: utf-8 -*-",
    "// and so on...",
    "# Step 3 ...",
    "   * @param x the value...",
    "# ... and then we return",
    "# Keep this in sync with the API",
    "# code below handles retries",
    "const all = [...existing, ...incoming];",
    "    return {...rest};",
    'msg = "... rest of code unchanged"',
    "if x: ...",
    "// Unicode ellipsis in prose… is fine",
    "# " + "keep the rest " * 20,
    "",
    "...",
    # found by review: prose that mentions what a placeholder says
    "## Migrating existing code",
    "# Keep the rest of the function unchanged for callers.",
    "-- existing code paths rely on this index",
    "/// Same as before, but with retries.",
    "# Use the existing implementation here",
    "# remains unchanged if the flag is false",
]


@pytest.mark.parametrize("line", PLACEHOLDERS)
def test_a_placeholder_comment_is_recognised(line: str) -> None:
    assert is_placeholder(line)


@pytest.mark.parametrize("line", LEGITIMATE)
def test_a_legitimate_ellipsis_or_comment_is_not_a_placeholder(line: str) -> None:
    assert not is_placeholder(line)


def test_a_placeholder_the_replaced_text_had_is_allowed() -> None:
    old = "def f():\n    # ...\n    return 1\n"
    assert new_placeholders("def f():\n    # ...\n    return 2\n", old) == []
    assert new_placeholders("def f():\n    # ... rest unchanged\n", old) == [(2, "# ... rest unchanged")]


SOURCE = "def total(items):\n    s = 0\n    for i in items:\n        s += i\n    return s\n"


def _read(root: Path, session: Session, name: str = "a.py", data: str = SOURCE) -> Path:
    path = root / name
    path.write_text(data)
    assert_ok(session.call("read", {"file_path": name}))
    return path


def test_an_edit_replacing_code_with_a_placeholder_is_refused_and_nothing_is_written(
    root: Path, session: Session
) -> None:
    path = _read(root, session)
    old = "    s = 0\n    for i in items:\n        s += i\n    return s"
    result = session.call(
        "edit", {"file_path": "a.py", "old_string": old, "new_string": "    # ... rest of code unchanged"}
    )
    message = assert_error(result, "FS_OMISSION_PLACEHOLDER").text
    assert message.startswith("new_string line 1 is an omission placeholder") and "rest of code unchanged" in message
    assert path.read_text() == SOURCE


def test_a_multi_edit_placeholder_names_its_edit_and_applies_none(root: Path, session: Session) -> None:
    path = _read(root, session)
    edits = [
        {"old_string": "s = 0", "new_string": "s = 1"},
        {"old_string": "        s += i", "new_string": "        s += i\n        // ... existing code ..."},
    ]
    message = assert_error(
        session.call("multi_edit", {"file_path": "a.py", "edits": edits}), "FS_OMISSION_PLACEHOLDER"
    ).text
    assert message.startswith("/edits/1/new_string line 2 ")
    assert path.read_text() == SOURCE


def test_a_write_over_a_file_is_compared_with_the_file_and_a_new_file_never(root: Path, session: Session) -> None:
    path = _read(root, session)
    stub = "def total(items):\n    # ... rest of the function unchanged\n"
    assert_error(session.call("write", {"file_path": "a.py", "content": stub}), "FS_OMISSION_PLACEHOLDER")
    assert path.read_text() == SOURCE
    assert_ok(session.call("write", {"file_path": "new.py", "content": stub}))  # creates: replaces no code
    kept = _read(root, session, "kept.py", "x = 1\n# ...\n")
    assert_ok(session.call("write", {"file_path": "kept.py", "content": "x = 2\n# ...\n"}))  # the file had it
    assert kept.read_text() == "x = 2\n# ...\n"


def test_legitimate_ellipses_pass_through_every_mutating_tool(root: Path, session: Session) -> None:
    _read(root, session)
    text = 'def stub(): ...\nprint("Loading...")\nargs = [...rest]\n# wait...\n'
    assert_ok(session.call("edit", {"file_path": "a.py", "old_string": "    return s", "new_string": text}))
    assert_ok(session.call("read", {"file_path": "a.py"}))
    assert_ok(session.call("write", {"file_path": "a.py", "content": text}))


def test_the_check_can_be_turned_off(root: Path) -> None:
    with Workspace(root, check_placeholders=False) as workspace:
        session = workspace.session("s")
        path = _read(root, session)
        assert_ok(session.call("edit", {"file_path": "a.py", "old_string": "    return s", "new_string": "    # ..."}))
        assert path.read_text().endswith("    # ...\n")


# --- did you mean ---------------------------------------------------------------------------------------


@pytest.fixture
def tree(root: Path) -> Path:
    for name in ("src/app.py", "src/lib/utils.py", "docs/guide.md", "README.md"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x\n")
    return root


@pytest.mark.parametrize(
    ("asked", "suggested"),
    [
        ("src/ap.py", "src/app.py"),  # a typo in the name
        ("scr/app.py", "src/app.py"),  # a typo in a directory
        ("src/App.py", "src/app.py"),  # the case
        ("src/utils.py", "src/lib/utils.py"),  # the name elsewhere
        ("doc/guide.md", "docs/guide.md"),
        ("readme.md", "README.md"),
    ],
)
def test_a_missing_path_suggests_the_closest_existing_one(
    tree: Path, session: Session, asked: str, suggested: str
) -> None:
    message = assert_error(session.call("read", {"file_path": asked}), "FS_NOT_FOUND").text
    assert "did you mean" in message and f"{suggested!r}" in message.split("did you mean", 1)[1], message


def test_every_tool_that_names_a_missing_path_suggests(tree: Path, session: Session) -> None:
    calls = [
        ("list", {"path": "scr"}),
        ("grep", {"pattern": "x", "path": "scr"}),
        ("stat", {"path": "src/ap.py"}),
        ("delete", {"file_path": "src/ap.py"}),
        ("move", {"source": "src/ap.py", "destination": "b.py"}),
        ("edit", {"file_path": "src/ap.py", "old_string": "x", "new_string": "y"}),
    ]
    for tool, args in calls:
        message = assert_error(session.call(tool, args), "FS_NOT_FOUND").text
        assert "did you mean" in message, (tool, message)


def test_nothing_close_suggests_nothing_and_a_suggestion_never_leaves_the_root(
    tree: Path, session: Session, tmp_path: Path
) -> None:
    os.symlink(tmp_path / "outside", tree / "outsid")  # a link out of the root, named like what is asked for
    message = assert_error(session.call("read", {"file_path": "zzz/qqq.txt"}), "FS_NOT_FOUND").text
    assert "did you mean" not in message
    message = assert_error(session.call("read", {"file_path": "outside/secret.txt"}), "FS_NOT_FOUND").text
    assert "did you mean" not in message, message  # never a path through the link out


# --- what a file that is not text appears to be ---------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "appears", "step"),
    [
        (b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR", "a PNG image that is truncated or corrupt", "good copy"),
        (b"\xff\xd8\xff\xe0\0\x10JFIF", "a JPEG image that is truncated or corrupt", "good copy"),
        (b"GIF89a\x01\0\x01\0", "a GIF image that is truncated or corrupt", "good copy"),
        (b"RIFF\x10\0\0\0WEBPVP8 ", "a WebP image that is truncated or corrupt", "good copy"),
        (b"II*\x00\x08\x00\x00\x00", "a TIFF image", "PNG, JPEG, GIF and WebP images only"),
        (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", "a PDF that is damaged or unsupported", "text version"),
        (b"PK\x03\x04\x14\0\0\0", "a ZIP archive", "leave it alone"),
        (b"\x1f\x8b\x08\0\0\0\0\0", "gzip-compressed data", "leave it alone"),
        (b"\x7fELF\x02\x01\x01\0", "an ELF executable", "leave it alone"),
        (b"SQLite format 3\0\x10\0", "an SQLite database", "leave it alone"),
        ("hello world\n".encode("utf-16-le"), "UTF-16 text (little-endian, without a BOM)", "begin with a BOM"),
        ("café au lait\n".encode("latin-1"), "text in another encoding than UTF-8", "convert it to UTF-8"),
        (("这是中文文本，用于测试编码检测。文件内容。" * 2).encode("gbk"), "text in GB18030", "iconv -f GB18030"),
    ],
)
def test_a_file_that_is_not_text_is_named_with_the_next_step(
    root: Path, session: Session, data: bytes, appears: str, step: str
) -> None:
    (root / "f.bin").write_bytes(data)
    message = assert_error(session.call("read", {"file_path": "f.bin"}), "FS_NOT_TEXT").text
    assert f"it appears to be {appears}" in message and step in message, message


def test_unknown_binary_says_only_what_is_known(root: Path, session: Session) -> None:
    (root / "f.bin").write_bytes(b"\x01\x02\0\x03\x04")
    message = assert_error(session.call("read", {"file_path": "f.bin"}), "FS_NOT_TEXT").text
    assert "appears" not in message and "NUL byte at offset 2" in message


# --- the diagnosis under fuzzing ------------------------------------------------------------------------

_TEXT = st.text(alphabet=st.sampled_from(list("ab \t\n\r\\\"'`.…\u00a0\u200b\u2019\u2014xyz_0123{}()#/")), max_size=300)


@settings(max_examples=300, deadline=None)
@given(haystack=_TEXT, needle=_TEXT.filter(lambda t: t.strip() != ""), new=_TEXT)
def test_the_diagnosis_never_raises_and_answers_the_same_every_time(haystack: str, needle: str, new: str) -> None:
    haystack, needle, new = (t.replace("\r\n", "\n") for t in (haystack, needle, new))
    first = diagnose(haystack, needle, new)
    assert first == diagnose(haystack, needle, new)
    if first.get("line") is not None:
        assert 1 <= first["line"] <= haystack.count("\n") + 1
    for row, _ in first.get("candidate") or []:
        assert 1 <= row <= haystack.count("\n") + 1


def test_a_write_over_a_file_too_large_to_compare_is_refused_if_it_has_a_placeholder(root: Path) -> None:
    with Workspace(root, max_file_bytes=1 << 10) as workspace:
        session = workspace.session("s")
        big = root / "big.py"
        big.write_text("# ...\n" + "x = 1\n" * 1000)  # its own placeholder, but past what is kept to compare
        assert_ok(session.call("read", {"file_path": "big.py", "limit": 1}))
        assert_error(session.call("write", {"file_path": "big.py", "content": "# ...\n"}), "FS_OMISSION_PLACEHOLDER")
        assert big.read_text().startswith("# ...\nx = 1\n")


def test_placeholders_deep_in_a_large_text_are_found_at_their_line() -> None:
    body = "x = request.get(url)\n" * 5000  # 'rest' everywhere: the cheap filter lets it through to the scan
    new = body + "    # ... rest of the code unchanged\r\n" + body + "// existing code here\n"
    assert new_placeholders(new, "") == [(5001, "# ... rest of the code unchanged"), (10002, "// existing code here")]
    assert new_placeholders(new, "  # ... rest of the code unchanged\n") == [(10002, "// existing code here")]
    assert new_placeholders(body * 10, "") == []


def test_a_large_write_is_checked_in_the_lines_it_changes(root: Path, session: Session) -> None:
    """Content over 64 KB is compared with the file first and only the lines that differ are scanned: a
    placeholder there is refused at its line in the whole content; one the file already had (kept in
    place, or moved) is not."""
    body = "x = request.get(url)\n" * 5000  # 100 KB
    big = root / "big.py"
    big.write_text(body + "# ... rest unchanged\n" + body)
    assert_ok(session.call("read", {"file_path": "big.py", "limit": 1}))
    added = body + "# ... rest unchanged\n" + body[:-21] + "// existing code here\n"
    refused = assert_error(session.call("write", {"file_path": "big.py", "content": added}), "FS_OMISSION_PLACEHOLDER")
    assert "line 10001" in refused.text and "existing code here" in refused.text, refused.text
    assert big.read_text() == body + "# ... rest unchanged\n" + body
    moved = "# ... rest unchanged\n" + body + body  # the file's own placeholder, at another line
    assert_ok(session.call("write", {"file_path": "big.py", "content": moved}))
    kept = moved + "y = 2\n"  # a change far from the placeholder it keeps
    assert_ok(session.call("write", {"file_path": "big.py", "content": kept}))
    assert big.read_text() == kept
