"""Timing in the same run: cases are interleaved round by round, so a noisy neighbour slows them all
alike, and each figure is a median over rounds."""

from __future__ import annotations

import gc
import random
import selectors
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO


@dataclass
class Row:
    """One line of the table: ``subject`` measured against ``baseline`` on one workload."""

    section: str
    workload: str
    subject: str
    baseline: str
    ratio: float | None  # subject / baseline; None when one side could not run
    subject_seconds: float | None = None
    baseline_seconds: float | None = None
    target: str = ""  # e.g. "<= 1.3": what the number should say
    met: bool | None = None
    note: str = ""
    extra: dict[str, object] = field(default_factory=dict)


def interleaved(cases: dict[str, Callable[[], object]], rounds: int, *, warm: int = 2) -> dict[str, float]:
    """Median seconds per call of each case; every round calls each case once, in a shuffled order (a
    fixed rotation would make each case always follow the same other one, and inherit its cache and
    allocator after-effects: a case after a 5 MB raw decode measured 30% slower that way)."""
    names = list(cases)
    rng = random.Random(len(names) * 7919 + rounds)
    for _ in range(warm):
        for name in names:
            cases[name]()
    samples: dict[str, list[float]] = {name: [] for name in names}
    gc_was_enabled = gc.isenabled()
    gc.disable()  # collections land on whichever case happens to allocate; collect between rounds instead
    try:
        for _ in range(rounds):
            order = names[:]
            rng.shuffle(order)
            for name in order:
                started = time.perf_counter()
                cases[name]()
                samples[name].append(time.perf_counter() - started)
            gc.collect(0)
    finally:
        if gc_was_enabled:
            gc.enable()
    return {name: statistics.median(values) for name, values in samples.items()}


def rounds_for(size: int, smoke: bool) -> int:
    """More rounds for small files (cheap calls, noisier), fewer for big ones."""
    if smoke:
        return 3
    if size <= 4 << 10:
        return 300
    if size <= 256 << 10:
        return 120
    return 60


def ratio_row(
    section: str,
    workload: str,
    medians: dict[str, float],
    subject: str,
    baseline: str,
    *,
    limit: float | None = None,
    note: str = "",
) -> Row:
    s, b = medians.get(subject), medians.get(baseline)
    ratio = s / b if s is not None and b else None
    met = None if limit is None or ratio is None else ratio <= limit
    return Row(
        section,
        workload,
        subject,
        baseline,
        ratio,
        s,
        b,
        target=f"<= {limit:g}x" if limit is not None else "",
        met=met,
        note=note,
    )


def read_line(stream: IO[str] | IO[bytes], seconds: float, what: str) -> str:
    """The next line a child process writes, waiting at most ``seconds`` (then ``TimeoutError`` naming
    ``what``): a child that hangs without writing cannot hang the benchmark."""
    with selectors.DefaultSelector() as selector:
        selector.register(stream, selectors.EVENT_READ)
        if not selector.select(seconds):
            raise TimeoutError(f"{what}: no answer within {seconds:g} s")
    line = stream.readline()
    return line.decode("utf-8", "replace") if isinstance(line, bytes) else line
