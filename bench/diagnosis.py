"""What a failing edit costs: each kind of near miss on a 1, 4 and 16 MB file, against a successful edit
of the same file (issue 15's target: at most twice), in one interleaved run.

The failing edits change nothing, so each is repeated as it is; the successful edit swaps two marker
lines back and forth. Every call goes through a session (arguments, gates, the lock, the boundary), so
both sides pay the same read of the file and differ only in what follows the search.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

from bench.files import MARK_A, MARK_B, make_text
from bench.harness import Row, interleaved, ratio_row
from fs_tools import Session, Workspace
from fs_tools.result import ToolResult

SECTION = "6 diagnosis"
SIZES = {"1MB": 1 << 20, "4MB": 4 << 20, "16MB": (16 << 20) - 4096}
SMOKE_SIZES = {"64KB": 64 << 10}



def misses(text: str) -> dict[str, str]:
    """old_string of each kind of miss, built from three lines three quarters down the file."""
    lines = text.split("\n")
    at = len(lines) * 3 // 4
    one, two, three = lines[at : at + 3]
    block = "\n".join((one, two, three))
    word = two.split()[1]
    return {
        "typo": "\n".join((one, two.replace(word, word[:-1] + word[-1] * 2), three)),
        "indentation": "\n".join("    " + line for line in (one, two, three)),
        "tabs vs spaces": "\n".join("\t" + line.strip() for line in (one, two, three)),
        "trailing space": "\n".join((one + "  ", two, three)),
        "no-break space": block.replace(" ", "\u00a0", 3),
        "line prefix": "\n".join(f"{at + n + 1:>6}\t{line}" for n, line in enumerate((one, two, three))),
        "over-escaped": block.replace("\n", "\\n"),
        "partial": "\n".join((one, "    this line is not in the file at all", three)),
        "nothing similar": "zqxj vwkp qqqq",
    }


def diagnosis_rows(smoke: bool) -> list[Row]:
    rows: list[Row] = []
    for name, size in (SMOKE_SIZES if smoke else SIZES).items():
        with tempfile.TemporaryDirectory(prefix="fs-tools-bench-diagnosis-") as tmp:
            root = Path(tmp)
            text = make_text(size)
            (root / "f.py").write_text(text)
            with Workspace(root, max_file_bytes=32 << 20) as ws:
                rows += _rows_for(ws.session("bench"), name, misses(text), smoke)
    return rows


def _rows_for(session: Session, size: str, kinds: dict[str, str], smoke: bool) -> list[Row]:
    _ok(session.call("read", {"file_path": "f.py", "limit": 1}))
    turn = [False]

    def succeed() -> None:
        turn[0] = not turn[0]
        old, new = (MARK_A, MARK_B) if turn[0] else (MARK_B, MARK_A)
        _ok(session.call("edit", {"file_path": "f.py", "old_string": old, "new_string": new}))

    cases: dict[str, Callable[[], object]] = {"successful edit": succeed}
    for kind, old in kinds.items():
        cases[kind] = _failing(session, old)
    medians = interleaved(cases, 3 if smoke else 7, warm=1)
    return [
        ratio_row(
            SECTION,
            size,
            medians,
            kind,
            "successful edit",
            limit=2.0,
            note=f"failing edit ({kind}) ÷ a successful edit of the same file",
        )
        for kind in kinds
    ]


def _failing(session: Session, old: str) -> Callable[[], None]:
    def call() -> None:
        first, _, rest = old.partition("\n")  # a realistic new_string: the block with its first line changed
        new = first + "  # changed by the benchmark" + ("\n" + rest if rest else "")
        result = session.call("edit", {"file_path": "f.py", "old_string": old, "new_string": new})
        assert result.error is not None and result.error.code == "FS_EDIT_NOT_FOUND", result.text

    return call


def _ok(result: ToolResult) -> None:
    assert not result.is_error, result.text
