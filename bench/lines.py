"""Section 14: line diffs and patches on large and hostile inputs (issue 31) — ``fs_tools.line_diff``
against difflib on a real 100,000-line file with scattered edits and on lines with neighbours swapped
(difflib's quadratic case), and ``apply_patch`` of a real file's git diff and of the hostile patches
against writing the same bytes directly. Every figure from this run.

    python -m bench --sections lines
"""

from __future__ import annotations

import difflib
import os
import sysconfig
import tempfile
from collections.abc import Callable
from pathlib import Path

from bench.harness import Row, interleaved, ratio_row
from fs_tools import Session, Workspace, line_diff

SECTION = "14 line diffs and patches"


def real_lines(count: int) -> list[str]:
    """The standard library's own Python source, file after file in name order, to ``count`` lines."""
    lines: list[str] = []
    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).rglob("*.py")):
        if len(lines) >= count:
            break
        try:
            lines += path.read_text(encoding="utf-8").splitlines(keepends=True)
        except (UnicodeDecodeError, OSError):
            continue
    return lines[:count]


def edited(lines: list[str], edits: int) -> list[str]:
    """``lines`` with ``edits`` scattered changes: a line replaced, one removed, two added, in turn."""
    out = lines[:]
    step = max(1, len(out) // (edits + 1))
    for number in range(edits, 0, -1):  # from the end, so the positions stay put
        at = number * step
        kind = number % 3
        if kind == 0:
            out[at] = "# changed by the benchmark\n"
        elif kind == 1:
            del out[at]
        else:
            out[at:at] = ["# added by the benchmark\n", "# and again\n"]
    return out


def swapped(count: int) -> tuple[list[str], list[str]]:
    before = [f"value_{i} = {i}\n" for i in range(count)]
    after = before[:]
    for at in range(0, count - 1, 2):
        after[at], after[at + 1] = after[at + 1], after[at]
    return before, after


def diff_rows(smoke: bool) -> list[Row]:
    rows: list[Row] = []
    size = 2_000 if smoke else 100_000
    before = real_lines(size)
    after = edited(before, 20)
    cases: dict[str, Callable[[], object]] = {
        "line_diff": lambda: list(line_diff.unified_diff(before, after, "a/f", "b/f")),
        "difflib": lambda: list(difflib.unified_diff(before, after, "a/f", "b/f")),
    }
    medians = interleaved(cases, 3 if smoke else 10, warm=1)
    rows.append(
        ratio_row(
            SECTION,
            f"unified diff, real {len(before):,}-line file, 20 scattered edits",
            medians,
            "line_diff",
            "difflib",
            note=f"line_diff {medians['line_diff'] * 1000:,.0f} ms, difflib {medians['difflib'] * 1000:,.0f} ms",
        )
    )
    count = 200 if smoke else 2_000  # difflib: ~0.5 s here, 4.5-7.7 s at 8,000, over a minute at 24,000
    old, new = swapped(count)
    cases = {
        "line_diff": lambda: list(line_diff.unified_diff(old, new, "a/f", "b/f")),
        "difflib": lambda: list(difflib.unified_diff(old, new, "a/f", "b/f")),
    }
    medians = interleaved(cases, 2 if smoke else 3, warm=0)
    rows.append(
        ratio_row(
            SECTION,
            f"unified diff, {count:,} lines with neighbours swapped",
            medians,
            "line_diff",
            "difflib",
            note=f"line_diff {medians['line_diff'] * 1000:,.0f} ms, difflib {medians['difflib'] * 1000:,.0f} ms "
            "(difflib grows with the square of the lines)",
        )
    )
    return rows


def _raw_write(path: Path, texts: tuple[str, str]) -> Callable[[], None]:
    """Writing the bytes the patch produces straight to the file (temp file and rename), alternately."""
    turn = [False]

    def write() -> None:
        turn[0] = not turn[0]
        temp = path.with_suffix(".tmp")
        temp.write_text(texts[0] if turn[0] else texts[1])
        os.replace(temp, path)

    return write


def _patching(session: Session, patches: tuple[str, str], refused: str | None = None) -> Callable[[], None]:
    """apply_patch of the two patches in turn (forward, then back); or one patch, refused with ``refused``."""
    assert not session.call("read", {"file_path": "f.txt", "limit": 1}).is_error
    turn = [False]

    def apply() -> None:
        turn[0] = not turn[0]
        result = session.call("apply_patch", {"patch": patches[0] if turn[0] else patches[1]})
        if refused is None:
            assert not result.is_error, result.text[:500]
        else:
            assert result.error is not None and result.error.code == refused, result.text[:500]

    return apply


def patch_rows(smoke: bool) -> list[Row]:
    rows: list[Row] = []
    size = 2_000 if smoke else 100_000
    before = real_lines(size)
    after = edited(before, 50)
    forward = "".join(line_diff.unified_diff(before, after, "a/f.txt", "b/f.txt"))
    back = "".join(line_diff.unified_diff(after, before, "a/f.txt", "b/f.txt"))
    texts = ("".join(after), "".join(before))
    rows.append(
        _patch_row(
            f"apply_patch, real {size:,}-line file, its 50-hunk git diff",
            "".join(before),
            texts,
            (forward, back),
            smoke,
        )
    )
    same = 1_600 if smoke else 160_000
    hunk = " same line\n" * 999 + "-not in the file\n+x\n"
    repeated = f"*** Begin Patch\n*** Update File: f.txt\n@@\n{hunk}*** End Patch\n"
    text = "same line\n" * same
    rows.append(
        _patch_row(
            f"apply_patch refused, {same:,} copies of one line, a 1,000-line hunk that does not match",
            text,
            (text, text),
            (repeated, repeated),
            smoke,
            refused="FS_EDIT_NOT_FOUND",
        )
    )
    lines = 800 if smoke else 80_000
    spaced = [f"line {i}   \n" for i in range(lines)]
    hunks_forward = "".join(f"@@\n line {i}\n-line {i + 1}\n+LINE {i + 1}\n" for i in range(0, lines, 10))
    hunks_back = "".join(f"@@\n line {i}\n-LINE {i + 1}\n+line {i + 1}\n" for i in range(0, lines, 10))
    changed = "".join(f"LINE {i}\n" if i % 10 == 1 else line for i, line in enumerate(spaced))
    rows.append(
        _patch_row(
            f"apply_patch, {lines // 10:,} hunks matching but for trailing spaces, {lines:,} lines",
            "".join(spaced),
            (changed, "".join(spaced)),
            (
                f"*** Begin Patch\n*** Update File: f.txt\n{hunks_forward}*** End Patch\n",
                f"*** Begin Patch\n*** Update File: f.txt\n{hunks_back}*** End Patch\n",
            ),
            smoke,
        )
    )
    return rows


def _patch_row(
    workload: str,
    text: str,
    texts: tuple[str, str],
    patches: tuple[str, str],
    smoke: bool,
    refused: str | None = None,
) -> Row:
    with tempfile.TemporaryDirectory(prefix="fs-tools-bench-lines-") as tmp:
        ours, raw = Path(tmp) / "ours", Path(tmp) / "raw"
        for root in (ours, raw):
            root.mkdir()
            (root / "f.txt").write_text(text)
        with Workspace(ours, tools=["read", "apply_patch"], check_syntax=False) as ws:
            cases: dict[str, Callable[[], object]] = {
                "apply_patch": _patching(ws.session("bench"), patches, refused),
                "raw write": _raw_write(raw / "f.txt", texts),
            }
            medians = interleaved(cases, 2 if smoke else 6, warm=2)
    return ratio_row(
        SECTION,
        workload,
        medians,
        "apply_patch",
        "raw write",
        note=f"apply_patch {medians['apply_patch'] * 1000:,.0f} ms; writing the same bytes directly "
        f"{medians['raw write'] * 1000:,.1f} ms",
    )


def lines_rows(smoke: bool) -> list[Row]:
    return diff_rows(smoke) + patch_rows(smoke)
