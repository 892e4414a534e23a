"""Text in UTF-16 and UTF-32 with a BOM (SPEC §18): read decoded, edited and written back in its own
encoding, its BOM and line endings kept; other encodings are FS_NOT_TEXT naming the one they appear
to be."""

from __future__ import annotations

import codecs
import re
from pathlib import Path

import pytest

from fs_tools import Session, Workspace

WIDE = {
    "utf-16-le": (codecs.BOM_UTF16_LE, "UTF-16 (little-endian)"),
    "utf-16-be": (codecs.BOM_UTF16_BE, "UTF-16 (big-endian)"),
    "utf-32-le": (codecs.BOM_UTF32_LE, "UTF-32 (little-endian)"),
    "utf-32-be": (codecs.BOM_UTF32_BE, "UTF-32 (big-endian)"),
}
TEXT = "first line\r\nsecond líne 😀\r\n\u010athird\r\n"  # U+010A: a 0x0a byte that is not a line ending


def encoded(encoding: str, text: str = TEXT) -> bytes:
    return WIDE[encoding][0] + text.encode(encoding)


@pytest.mark.parametrize("encoding", list(WIDE))
def test_a_wide_file_is_read_decoded_and_says_its_encoding(root: Path, session: Session, encoding: str) -> None:
    (root / "w.txt").write_bytes(encoded(encoding))
    result = session.call("read", {"file_path": "w.txt"})
    assert not result.is_error, result.text
    assert result.text.startswith("     1\tfirst line\n     2\tsecond líne 😀\n     3\t\u010athird\n\n")
    assert f"'w.txt' is {WIDE[encoding][1]} text (it begins with a BOM)" in result.text
    assert "a write replaces it with UTF-8" in result.text
    assert result.value["encoding"] == encoding and result.value["total_lines"] == 3


@pytest.mark.parametrize("encoding", list(WIDE))
def test_edits_keep_the_encoding_the_bom_and_the_line_endings(root: Path, session: Session, encoding: str) -> None:
    path = root / "w.txt"
    path.write_bytes(encoded(encoding))
    session.call("read", {"file_path": "w.txt"})
    done = session.call("edit", {"file_path": "w.txt", "old_string": "second líne", "new_string": "2nd\nline"})
    assert not done.is_error, done.text
    assert path.read_bytes() == encoded(encoding, TEXT.replace("second líne", "2nd\r\nline"))
    multi = session.call("multi_edit", {"file_path": "w.txt", "edits": [{"old_string": "first", "new_string": "1st"}]})
    assert not multi.is_error, multi.text
    assert path.read_bytes() == encoded(encoding, TEXT.replace("second líne", "2nd\r\nline").replace("first", "1st"))


def test_the_text_editor_and_apply_patch_keep_the_encoding(root: Path) -> None:
    path = root / "w.txt"
    path.write_bytes(encoded("utf-16-be"))
    with Workspace(root, dialect="anthropic") as ws:
        s = ws.session("a")
        tool = "str_replace_based_edit_tool"
        s.call(tool, {"command": "view", "path": "w.txt"})
        assert not s.call(
            tool, {"command": "str_replace", "path": "w.txt", "old_str": "first", "new_str": "1"}
        ).is_error
        assert not s.call(
            tool, {"command": "insert", "path": "w.txt", "insert_line": 0, "insert_text": "zero"}
        ).is_error
    assert path.read_bytes() == encoded("utf-16-be", "zero\r\n" + TEXT.replace("first", "1"))
    patch = "*** Begin Patch\n*** Update File: w.txt\n@@\n-zero\n+ZERO\n*** End Patch\n"
    with Workspace(root, tools=["read", "apply_patch"]) as ws:
        s = ws.session("p")
        s.call("read", {"file_path": "w.txt"})
        result = s.call("apply_patch", {"patch": patch})
        assert not result.is_error, result.text
    assert path.read_bytes() == encoded("utf-16-be", "ZERO\r\n" + TEXT.replace("first", "1"))


def test_a_long_wide_file_pages_across_read_chunks(root: Path, session: Session) -> None:
    lines = [f"line {n} ✓" for n in range(1, 60_001)]  # ~1.3 MB in UTF-16: many read chunks, odd splits
    (root / "big.txt").write_bytes(encoded("utf-16-le", "\n".join(lines) + "\n"))
    result = session.call("read", {"file_path": "big.txt", "offset": 59_999, "limit": 5})
    assert result.value["total_lines"] == 60_000
    assert result.text.startswith(" 59999\tline 59999 ✓\n 60000\tline 60000 ✓")


def test_grep_searches_wide_files_as_text(root: Path, session: Session) -> None:
    (root / "w.txt").write_bytes(encoded("utf-32-le"))
    result = session.call("grep", {"pattern": "third"})
    assert result.value["matches"] == 1 and "w.txt:3: \u010athird" in result.text, result.text


def test_a_stale_wide_file_names_the_lines_that_changed(root: Path, session: Session) -> None:
    path = root / "w.txt"
    path.write_bytes(encoded("utf-16-le"))
    session.call("read", {"file_path": "w.txt"})
    path.write_bytes(encoded("utf-16-le", TEXT + "fourth\r\n"))
    result = session.call("edit", {"file_path": "w.txt", "old_string": "first", "new_string": "1"})
    assert result.error is not None and result.error.code == "FS_STALE_VERSION"
    assert "line 4 changed" in result.text, result.text


def test_write_over_a_wide_file_writes_utf8_as_given(root: Path, session: Session) -> None:
    path = root / "w.txt"
    path.write_bytes(encoded("utf-16-le"))
    session.call("read", {"file_path": "w.txt"})
    assert not session.call("write", {"file_path": "w.txt", "content": "new\n"}).is_error
    assert path.read_bytes() == b"new\n"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            encoded("utf-16-le")[:-1],
            "begins with a UTF-16 (little-endian) BOM but is not valid UTF-16 (little-endian): "
            "it ends in the middle of a character",
        ),
        (codecs.BOM_UTF16_BE + b"\xdc\x00\x00a", "the bytes at offset 2 cannot be decoded (illegal encoding)"),
        (
            encoded("utf-32-be", "ok\n") + b"\x00\x11\x00\x00",
            "is not valid UTF-32 (big-endian): the bytes at offset 16",
        ),
        (encoded("utf-16-le", "a\0b"), "looks binary: it contains a NUL character at offset 4 (read as UTF-16"),
    ],
)
def test_a_broken_wide_file_is_not_text_saying_where(root: Path, session: Session, data: bytes, message: str) -> None:
    (root / "w.txt").write_bytes(data)
    result = session.call("read", {"file_path": "w.txt"})
    assert result.error is not None and result.error.code == "FS_NOT_TEXT"
    assert message in result.text, result.text
    session_edit = session.call("edit", {"file_path": "w.txt", "old_string": "a", "new_string": "b"})
    assert session_edit.error is not None and session_edit.error.code == "FS_NOT_TEXT"  # why no read can see it
    assert (root / "w.txt").read_bytes() == data


@pytest.mark.parametrize(
    ("data", "named", "iconv"),
    [
        (("Grüße aus München, schöne Straße. " * 5).encode("latin-1"), "a single-byte Latin encoding", None),
        (
            ("Это русский текст для проверки кодировки. " * 3).encode("cp1251"),
            "Windows-1251 (Cyrillic)",
            "WINDOWS-1251",
        ),
        (("这是中文文本，用于测试编码检测。文件内容。" * 2).encode("gbk"), "GB18030 / GBK (Chinese)", "GB18030"),
        (("Αυτό είναι ένα ελληνικό κείμενο για δοκιμή. " * 3).encode("cp1253"), "Windows-1253 (Greek)", "WINDOWS-1253"),
        # too little to tell, or a guess a rival of another script matches: named as what it is sure of
        ("# Привет\nimport os\n".encode("cp1251"), "another encoding than UTF-8", None),
        (("שלום עולם. זהו קובץ טקסט לבדיקה של קידוד. " * 3).encode("cp1255"), "another encoding than UTF-8", None),
        (b"x = 1\n" * 5000 + "s = 'café'\n".encode("cp1252"), "another encoding than UTF-8", None),
    ],
)
def test_other_encodings_are_named_when_the_guess_is_sure(
    root: Path, session: Session, data: bytes, named: str, iconv: str | None
) -> None:
    (root / "f.txt").write_bytes(data)
    result = session.call("read", {"file_path": "f.txt"})
    assert result.error is not None and result.error.code == "FS_NOT_TEXT"
    assert f"it appears to be text in {named}" in result.text, result.text
    assert (f"iconv -f {iconv} -t UTF-8" in result.text) if iconv else ("iconv" not in result.text), result.text


@pytest.mark.parametrize(
    ("text", "codec", "iconv"),
    [
        ("これは日本語のテキストです。ファイルの内容を読みます。" * 2, "shift_jis", "CP932"),
        ("これは日本語のテキストです。ファイルの内容を読みます。" * 2, "euc_jp", "EUC-JP"),
        ("이것은 한국어 텍스트입니다. 파일 내용을 읽습니다." * 2, "euc-kr", "CP949"),
        ("這是中文文本，用於測試編碼檢測。文件內容。" * 2, "big5", "BIG5"),
        ("هذا نص عربي لاختبار ترميز الملف. " * 3, "cp1256", "WINDOWS-1256"),
    ],
)
def test_an_encoding_named_is_never_a_wrong_one(
    root: Path, session: Session, text: str, codec: str, iconv: str
) -> None:
    """Whether charset-normalizer is sure of these depends on its version (3.3.2 is not of Korean or
    Japanese, 3.5 is): a name, when given, is the right one."""
    (root / "f.txt").write_bytes(text.encode(codec))
    result = session.call("read", {"file_path": "f.txt"})
    assert result.error is not None and result.error.code == "FS_NOT_TEXT"
    named = re.search(r"iconv -f (\S+) -t UTF-8", result.text)
    assert named is None or named[1] == iconv, result.text


# --- found in review -------------------------------------------------------------------------------------


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-32-be"])
def test_the_syntax_check_reads_a_wide_file_as_its_text(root: Path, encoding: str) -> None:
    (root / "a.json").write_bytes(encoded(encoding, '{\n  "list": [1, 2, 3]\n}\n'))
    (root / "a.py").write_bytes(encoded(encoding, "def f(x):\n    return x + 1\n"))
    with Workspace(root, refuse_syntax_errors=True) as ws:
        s = ws.session("s")
        for name in ("a.json", "a.py"):
            s.call("read", {"file_path": name})
        valid = s.call("edit", {"file_path": "a.json", "old_string": "[1, 2, 3]", "new_string": "[1, 2, 3, 4]"})
        assert not valid.is_error and valid.value["syntax_errors"] == [], valid.text
        broken = s.call("edit", {"file_path": "a.py", "old_string": "x + 1", "new_string": "x + (1"})
        assert broken.error is not None and broken.error.code == "FS_SYNTAX_ERROR", broken.text


def test_the_size_limit_counts_the_files_own_encoding(root: Path) -> None:
    path = root / "b.txt"
    path.write_bytes(encoded("utf-16-le", "中" * 300 + "\n"))  # 604 bytes; 903 in UTF-8
    with Workspace(root, max_file_bytes=1000) as ws:
        s = ws.session("s")
        s.call("read", {"file_path": "b.txt"})
        fits = s.call("edit", {"file_path": "b.txt", "old_string": "中" * 300, "new_string": "文" * 450})
        assert not fits.is_error, fits.text  # 904 bytes in UTF-16
        over = s.call("edit", {"file_path": "b.txt", "old_string": "文" * 450, "new_string": "a" * 520})
    assert over.error is not None and over.error.code == "FS_TOO_LARGE"
    assert "1,044 bytes (in UTF-16 (little-endian)), over the 1,000-byte limit" in over.text
    assert "make the edit smaller" in over.text, over.text
    assert path.read_bytes() == encoded("utf-16-le", "文" * 450 + "\n")


def test_stat_counts_the_lines_of_a_wide_file(root: Path, session: Session) -> None:
    (root / "w.txt").write_bytes(encoded("utf-16-be"))
    result = session.call("stat", {"path": "w.txt"})
    assert result.value["lines"] == 3 and "binary" not in result.text, result.text


def test_a_wide_file_rewritten_in_another_encoding_is_stale_without_false_lines(root: Path, session: Session) -> None:
    path = root / "w.txt"
    path.write_bytes(encoded("utf-16-le"))
    session.call("read", {"file_path": "w.txt"})
    path.write_bytes(TEXT.encode("utf-8"))
    result = session.call("edit", {"file_path": "w.txt", "old_string": "first", "new_string": "1"})
    assert result.error is not None and result.error.code == "FS_STALE_VERSION"
    assert "removed" not in result.text and "line" not in result.text, result.text


def test_the_diff_of_a_wide_file_says_its_encoding_and_an_encoding_change(root: Path) -> None:
    path = root / "w.txt"
    path.write_bytes(encoded("utf-16-le"))
    with Workspace(root) as ws:
        s = ws.session("s")
        start = s.checkpoint("start")
        s.call("read", {"file_path": "w.txt"})
        s.call("edit", {"file_path": "w.txt", "old_string": "first", "new_string": "1st"})
        edited = s.diff(since=start)
        assert "# w.txt is UTF-16 (little-endian) text, shown decoded" in edited and "+1st line" in edited
        then = s.checkpoint("edited")
        s.call("write", {"file_path": "w.txt", "content": TEXT.replace("first", "1st")})
        assert "the same text, now in UTF-8 (was UTF-16 (little-endian))" in s.diff(since=then)


def test_a_broken_wide_file_and_an_empty_one_say_what_they_are(root: Path, session: Session) -> None:
    (root / "cut.txt").write_bytes(encoded("utf-16-le")[:-1])
    cut = session.call("read", {"file_path": "cut.txt"})
    assert "it may be cut short or still being written" in cut.text and "not UTF-8 text" not in cut.text
    (root / "empty.txt").write_bytes(codecs.BOM_UTF32_BE)
    empty = session.call("read", {"file_path": "empty.txt"})
    assert empty.value["encoding"] == "utf-32-be" and "its UTF-32 (big-endian) BOM, which edits keep" in empty.text
    (root / "nb.ipynb").write_bytes(encoded("utf-16-le", '{"cells": [], "nbformat": 4}'))
    session.call("read", {"file_path": "nb.ipynb"})
    refused = session.call(
        "notebook_edit", {"notebook_path": "nb.ipynb", "edit_mode": "insert", "cell_type": "code", "new_source": "x"}
    )
    assert "it is UTF-16 (little-endian) text, and a notebook's JSON is UTF-8" in refused.text, refused.text
