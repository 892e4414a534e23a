"""Reading PDFs (SPEC §18): text page by page with markers, ``pages`` to choose, a page budget that says
how to read on; encrypted and damaged files are structured errors; the read records the version."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from fs_tools import Session, Workspace
from tests.support.pdf_files import make_pdf, pdf_with_content


def pages_of(count: int) -> list[str]:
    return [f"Page {n} says hello\nits second line" for n in range(1, count + 1)]


def test_a_pdf_is_read_page_by_page_and_recorded(root: Path, session: Session) -> None:
    (root / "paper.pdf").write_bytes(make_pdf(pages_of(3)))
    result = session.call("read", {"file_path": "paper.pdf"})
    assert not result.is_error, result.text
    assert result.text.startswith("'paper.pdf': PDF, 3 pages\n\n--- page 1 of 3 ---\nPage 1 says hello")
    assert "--- page 3 of 3 ---\nPage 3 says hello\nits second line" in result.text
    assert "continue with" not in result.text
    assert result.value["kind"] == "pdf" and result.value["page_count"] == 3
    assert result.value["pages_shown"] == [1, 2, 3] and result.value["version"] is not None
    assert not session.call("write", {"file_path": "paper.pdf", "content": "replaced\n"}).is_error


def test_a_long_pdf_shows_the_page_budget_and_how_to_read_on(root: Path) -> None:
    (root / "book.pdf").write_bytes(make_pdf(pages_of(25)))
    with Workspace(root, max_pdf_pages=10) as ws:
        s = ws.session("s")
        first = s.call("read", {"file_path": "book.pdf"})
        assert first.value["pages_shown"] == list(range(1, 11))
        assert first.text.endswith('[showing pages 1-10 of 25 (10 pages at a time); continue with pages="11-20"]')
        chosen = s.call("read", {"file_path": "book.pdf", "pages": " 24-25 , 3,3"})
    assert chosen.value["pages_shown"] == [24, 25, 3]
    assert "--- page 24 of 25 ---" in chosen.text and "continue with" not in chosen.text


@pytest.mark.parametrize(
    ("pages", "message"),
    [
        ("30", "/pages: page 30 is past the end: 'book.pdf' has 5 pages"),
        ("2-40", "/pages: page 40 is past the end"),
        ("0", "/pages: pages are counted from 1, and '0' names page 0; the first page is \"1\""),
        ("4-2", "/pages: '4-2' ends before it starts; write it as 2-4"),
        ("one", '/pages: expected pages such as "3", "1-5" or "1,4,7-9" (from 1), got \'one\''),
        ("1-", "/pages: expected pages such as"),
        ("1" * 12, "/pages: expected pages such as"),
    ],
)
def test_bad_pages_are_invalid_args_naming_the_page_count(
    root: Path, session: Session, pages: str, message: str
) -> None:
    (root / "book.pdf").write_bytes(make_pdf(pages_of(5)))
    result = session.call("read", {"file_path": "book.pdf", "pages": pages})
    assert result.error is not None and result.error.code == "INVALID_ARGS"
    assert message in result.text, result.text


def test_pages_on_a_file_that_is_not_a_pdf_is_refused_and_not_recorded(root: Path, session: Session) -> None:
    (root / "notes.txt").write_text("hello\n")
    result = session.call("read", {"file_path": "notes.txt", "pages": "1"})
    assert result.error is not None and result.error.code == "INVALID_ARGS"
    assert "only a PDF has pages, and 'notes.txt' is text; remove pages" in result.text
    refused = session.call("write", {"file_path": "notes.txt", "content": "x\n"})
    assert refused.error is not None and refused.error.code == "FS_NOT_OBSERVED"


def test_the_kind_is_decided_by_content(root: Path, session: Session) -> None:
    (root / "report.bin").write_bytes(make_pdf(["inside"]))
    (root / "fake.pdf").write_text("just text\n")
    assert session.call("read", {"file_path": "report.bin"}).value["kind"] == "pdf"
    assert session.call("read", {"file_path": "fake.pdf"}).value["kind"] == "text"


def test_an_owner_only_pdf_opens_and_a_password_protected_one_is_named(root: Path, session: Session) -> None:
    (root / "open.pdf").write_bytes(make_pdf(["owner only"], user_password=""))
    (root / "locked.pdf").write_bytes(make_pdf(["secret"], user_password="pw"))
    assert "owner only" in session.call("read", {"file_path": "open.pdf"}).text
    locked = session.call("read", {"file_path": "locked.pdf"})
    assert locked.error is not None and locked.error.code == "FS_NOT_TEXT"
    assert "an encrypted PDF" in locked.text and "unencrypted copy" in locked.text and "secret" not in locked.text


@pytest.mark.parametrize("cut", [0.1, 0.5, 0.9])
def test_a_damaged_pdf_is_not_text_saying_so(root: Path, session: Session, cut: float) -> None:
    data = make_pdf(pages_of(4))
    (root / "cut.pdf").write_bytes(data[: int(len(data) * cut)])
    result = session.call("read", {"file_path": "cut.pdf"})
    assert result.error is not None and result.error.code == "FS_NOT_TEXT"
    assert "starts like a PDF but cannot be read" in result.text and "text version" in result.text


def test_a_page_without_text_says_so(root: Path, session: Session) -> None:
    (root / "scan.pdf").write_bytes(make_pdf([""]))
    result = session.call("read", {"file_path": "scan.pdf"})
    assert "(no text on this page: it may be a scanned image or a drawing)" in result.text


def test_a_pdf_whose_text_passes_the_output_cap_says_where_to_go_on(root: Path, session: Session) -> None:
    long_page = "\n".join(f"line {n} " + "x" * 70 for n in range(60))  # ~4.7 KB a page
    (root / "dense.pdf").write_bytes(make_pdf([long_page] * 15))
    result = session.call("read", {"file_path": "dense.pdf"})
    shown = result.value["pages_shown"]
    assert 0 < len(shown) < 15 and len(result.text.encode()) <= 60 * 1024
    assert f'(output capped at 50 KiB); continue with pages="{len(shown) + 1}-15"]' in result.text


def test_the_gemini_and_text_editor_reads_show_a_pdf_too(root: Path) -> None:
    (root / "paper.pdf").write_bytes(make_pdf(["alpha"]))
    with Workspace(root, dialect="gemini") as ws:
        assert "alpha" in ws.session("s").call("read_file", {"file_path": "paper.pdf"}).text
    with Workspace(root, dialect="anthropic") as ws:
        viewed = ws.session("s").call("str_replace_based_edit_tool", {"command": "view", "path": "paper.pdf"})
        assert "alpha" in viewed.text and "--- page 1 of 1 ---" in viewed.text


# --- found in review -----------------------------------------------------------------------------------------


def test_a_pdf_that_takes_too_long_is_too_large_within_the_cpu_bound(
    root: Path, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fs_tools.provider import pdfs

    monkeypatch.setattr(pdfs, "PDF_CPU_SECONDS", 1)
    (root / "heavy.pdf").write_bytes(pdf_with_content(b"BT /F1 12 Tf " + b"() Tj " * 3_000_000 + b"ET", pages=3))
    result = session.call("read", {"file_path": "heavy.pdf"})
    assert result.error is not None and result.error.code == "FS_TOO_LARGE", result.text
    assert "takes more than 1 s of CPU" in result.text and "fewer pages at a time" in result.text


def test_the_output_cap_counts_bytes_not_characters(root: Path, session: Session) -> None:
    page = "\n".join("é" * 80 for _ in range(40))  # 6.4 KB of UTF-8 a page, 3.2 K characters
    (root / "accents.pdf").write_bytes(make_pdf([page] * 15))
    result = session.call("read", {"file_path": "accents.pdf"})
    assert len(result.text.encode()) <= 52 * 1024
    assert "output capped at 50 KiB" in result.text


def test_error_reasons_carry_no_object_addresses() -> None:
    from fs_tools.provider.pdf_worker import reason_of

    reason = reason_of(ValueError("Detected loop with self reference for IndirectObject(5, 0, 140370340859984)."))
    assert reason == "Detected loop with self reference for object 5"


def test_pages_past_the_end_do_not_record_the_read(root: Path, session: Session) -> None:
    (root / "book.pdf").write_bytes(make_pdf(pages_of(3)))
    assert session.call("read", {"file_path": "book.pdf", "pages": "30"}).error is not None
    refused = session.call("write", {"file_path": "book.pdf", "content": "x\n"})
    assert refused.error is not None and refused.error.code == "FS_NOT_OBSERVED"


def test_a_wide_pages_value_shows_one_budget_and_names_the_next(root: Path) -> None:
    (root / "long.pdf").write_bytes(make_pdf([f"p{n}" for n in range(1, 201)]))
    with Workspace(root, max_pdf_pages=10) as ws:
        result = ws.session("s").call("read", {"file_path": "long.pdf", "pages": ",".join(["1-200"] * 30)})
    assert result.value["pages_shown"] == list(range(1, 11))
    assert 'continue with pages="11-20"' in result.text


def test_after_the_pages_asked_the_note_names_what_follows(root: Path, session: Session) -> None:
    (root / "book.pdf").write_bytes(make_pdf(pages_of(30)))
    result = session.call("read", {"file_path": "book.pdf", "pages": "8-10"})
    assert result.text.endswith('[20 more page(s) after page 10: pages="11-30"]')


def test_dialects_without_pages_are_told_how_to_read_on_in_their_own_arguments(root: Path) -> None:
    (root / "book.pdf").write_bytes(make_pdf(pages_of(25)))
    with Workspace(root, dialect="gemini") as ws:
        s = ws.session("s")
        first = s.call("read_file", {"file_path": "book.pdf"})
        assert "continue with start_line=21 and end_line=25" in first.text
        more = s.call("read_file", {"file_path": "book.pdf", "start_line": 21, "end_line": 25})
        assert more.value["pages_shown"] == [21, 22, 23, 24, 25]
    with Workspace(root, dialect="anthropic") as ws:
        viewed = ws.session("s").call("str_replace_based_edit_tool", {"command": "view", "path": "book.pdf"})
        assert "continue with view_range=[21, 25]" in viewed.text


def test_an_edit_of_a_pdf_says_read_shows_its_text(root: Path, session: Session) -> None:
    (root / "paper.pdf").write_bytes(make_pdf(["alpha"]))
    session.call("read", {"file_path": "paper.pdf"})
    result = session.call("edit", {"file_path": "paper.pdf", "old_string": "alpha", "new_string": "beta"})
    assert result.error is not None and result.error.code == "FS_NOT_TEXT"
    assert "read shows its text page by page, but it cannot be edited" in result.text


def test_a_page_longer_than_the_output_cap_is_cut_and_says_so(root: Path, session: Session) -> None:
    page = "\n".join(f"row {n} " + "y" * 90 for n in range(2000))  # ~200 KB of text on one page
    (root / "wide.pdf").write_bytes(make_pdf([page, "second"]))
    result = session.call("read", {"file_path": "wide.pdf"})
    assert not result.is_error, result.text
    assert "[… the rest of this page is cut: it is longer than the output cap]" in result.text
    assert len(result.text.encode()) <= 52 * 1024 and result.value["pages_shown"] == [1]
    assert 'continue with pages="2"' in result.text


@pytest.mark.parametrize("pages", ["0", "1-0", "0-2", "2, 00", "1,4,0-9"])
@pytest.mark.parametrize("name", ["book.pdf", "notes.txt", "missing.pdf"])
def test_page_zero_is_refused_quoting_the_value_received_whatever_the_file(
    root: Path, session: Session, pages: str, name: str
) -> None:
    # found by the acceptance run: "0" was refused without saying what was received; "1-0" was told to
    # write "0-1"; and a text file or a missing one was refused for another reason first
    (root / "book.pdf").write_bytes(make_pdf(pages_of(5)))
    (root / "notes.txt").write_text("text\n")
    result = session.call("read", {"file_path": name, "pages": pages})
    assert result.error is not None and result.error.code == "INVALID_ARGS", result.text
    assert result.text.startswith(f"invalid arguments: /pages: pages are counted from 1, and {pages!r} names page 0")
    assert 'the first page is "1"' in result.text and "write it as" not in result.text
    assert isinstance(result.exception, Exception) and isinstance(result.exception.__cause__, ValidationError)
    refused = session.call("write", {"file_path": "book.pdf", "content": "x\n"})  # nothing was shown: not recorded
    assert refused.error is not None and refused.error.code == "FS_NOT_OBSERVED"
