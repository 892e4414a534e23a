"""What the write path's housekeeping costs: the first write into a directory of 20,000 entries against
the first write into a small one (each in a fresh Workspace, so each is a first write that sweeps), and
a replace against a create in the same directory (the replace checks what its swap displaced). Ratios
of medians over interleaved rounds, in one run.

    python bench/housekeeping.py            # 20,000 entries, 40 rounds
    python bench/housekeeping.py --smoke    # a tiny directory: checks the command works
"""

from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the bench package, run as a script

from bench.harness import interleaved
from fs_tools import Workspace


def first_write(root: Path, directory: str) -> Callable[[], object]:
    counter = itertools.count()

    def call() -> object:
        with Workspace(root) as ws:
            result = ws.session("bench").call(
                "write", {"file_path": f"{directory}/new-{next(counter)}.txt", "content": "x\n"}
            )
        assert not result.is_error, result.text
        return result

    return call


def replace_and_create(root: Path) -> tuple[Callable[[], object], Callable[[], object]]:
    ws = Workspace(root)
    session = ws.session("bench")
    counter = itertools.count()
    assert not session.call("write", {"file_path": "small/replaced.txt", "content": "0\n"}).is_error

    def replace() -> object:
        return session.call("write", {"file_path": "small/replaced.txt", "content": f"{next(counter)}\n"})

    def create() -> object:
        return session.call("write", {"file_path": f"small/created-{next(counter)}.txt", "content": "x\n"})

    return replace, create


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args(argv)
    entries, rounds = (200, 3) if args.smoke else (20_000, 40)
    with tempfile.TemporaryDirectory(prefix="fs-tools-bench-") as tmp:
        root = Path(tmp)
        (root / "small").mkdir()
        (root / "big").mkdir()
        for i in range(entries):
            with open(root / "big" / f"entry-{i:05d}.txt", "w"):
                pass
        medians = interleaved({"big": first_write(root, "big"), "small": first_write(root, "small")}, rounds)
        replace, create = replace_and_create(root)
        swap = interleaved({"replace": replace, "create": create}, rounds * 5)
    print(f"first write into {entries:,} entries: {medians['big'] * 1e3:.3f} ms")
    print(f"first write into a small directory:   {medians['small'] * 1e3:.3f} ms")
    print(f"ratio (big / small): {medians['big'] / medians['small']:.2f}x")
    print(f"replace / create in one directory: {swap['replace'] / swap['create']:.2f}x "
          f"({swap['replace'] * 1e3:.3f} / {swap['create'] * 1e3:.3f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
