"""The workload files: source-like ASCII text of about 1 KB, 100 KB, 1 MB, 5 MB and 16 MB, each with
unique marker lines to edit."""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

# 16MB stays just under the default whole-file limit (16 MiB), which edits and writes must fit in.
SIZES = {"1KB": 1 << 10, "100KB": 100 << 10, "1MB": 1 << 20, "5MB": 5 << 20, "16MB": (16 << 20) - 4096}
SMOKE_SIZES = {"1KB": 1 << 10, "100KB": 8 << 10, "5MB": 32 << 10}
WORDS = ["alpha", "beta", "gamma", "delta", "return", "import", "class", "def", "self", "value", "print"]
MARK_A = "    marker = compute_alpha(value)  # edited by the benchmark"
MARK_B = "    marker = compute_bravo(value)  # edited by the benchmark"


@dataclass(frozen=True)
class Workload:
    name: str  # "1KB", ...
    relative: str  # the file's path relative to the workspace root
    path: Path
    size: int
    text_a: str  # the file's content with MARK_A; text_b has MARK_B instead (same size)
    text_b: str


def make_text(size: int, seed: int = 11) -> str:
    rng = random.Random(seed)
    lines: list[str] = []
    length = 0
    n = 0
    while length < size - len(MARK_A) - 1:
        line = f"    {' '.join(rng.choice(WORDS) for _ in range(5))} {n}"
        lines.append(line)
        length += len(line) + 1
        n += 1
    lines.insert(len(lines) // 2, MARK_A)
    return "\n".join(lines) + "\n"


def make_workloads(root: Path, sizes: dict[str, int], prefix: str = "") -> list[Workload]:
    out = []
    for name, size in sizes.items():
        relative = f"{prefix}{name.lower()}.py"
        text = make_text(size)
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        out.append(Workload(name, relative, path, len(text.encode()), text, text.replace(MARK_A, MARK_B)))
    return out
