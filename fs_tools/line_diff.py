"""A line diff whose work stays near linear in the size of its input, whatever the input.

``difflib`` compares every line with every other where lines repeat or move (8,000 lines with
neighbours swapped took seconds, 24,000 over a minute): too slow for a diff a model asks for, and far
too slow under a file's lock. This one is a patience diff: the lines common to both sides are set aside
at each end, the lines that occur exactly once on each side anchor the rest (the longest run of them
in the same order on both sides), and the gaps between anchors are diffed the same way. A gap with no
such line (blank lines, braces) goes to a Myers diff, which is exact but costs the number of changes
times the gap's length, so it gets only what is left of a work budget proportional to the input; past
it, the gap is one replacement. The result is always a correct diff — applying it to ``a`` gives ``b``
— if not always the smallest one.

The work is counted in lines looked at, never timed, so the same input gives the same diff on any
machine; ``check`` is called every so many units of work, so a caller can cancel.
"""

from __future__ import annotations

import itertools
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterator, Sequence

Opcode = tuple[str, int, int, int, int]  # as difflib's: (tag, i1, i2, j1, j2), tag equal/replace/delete/insert

WORK_PER_LINE = 8  # the budget: this many units per line of both sides, and FLOOR more (``budget_of``)
FLOOR = 50_000
CHECK_EVERY = 20_000  # units of work between two calls of ``check``
SMALL = 64  # a gap of at most this many line pairs goes straight to Myers


class Work:
    """The units of work left, and the caller's cancellation check run as they are spent."""

    def __init__(self, budget: int, check: Callable[[], None] | None) -> None:
        self.left = budget
        self.check = check
        self._since_check = 0

    def spend(self, units: int) -> None:
        self.left -= units
        self._since_check += units
        if self.check is not None and self._since_check >= CHECK_EVERY:
            self._since_check = 0
            self.check()


def budget_of(a: Sequence[str], b: Sequence[str]) -> int:
    """The units of work a diff of ``a`` and ``b`` may spend before its gaps become replacements."""
    return WORK_PER_LINE * (len(a) + len(b)) + FLOOR


def opcodes(
    a: Sequence[str], b: Sequence[str], *, check: Callable[[], None] | None = None, budget: int | None = None
) -> list[Opcode]:
    """How to turn ``a`` into ``b``, as ``difflib.SequenceMatcher.get_opcodes`` says it, within ``budget``
    units of work (``budget_of``)."""
    ids: dict[str, int] = {}
    left = [ids.setdefault(line, len(ids)) for line in a]
    right = [ids.setdefault(line, len(ids)) for line in b]
    work = Work(budget_of(a, b) if budget is None else budget, check)
    runs = sorted(_equal_runs(left, right, work))
    codes: list[Opcode] = []
    i = j = 0
    for start_a, start_b, size in [*_merged(runs), (len(left), len(right), 0)]:
        if i < start_a and j < start_b:
            codes.append(("replace", i, start_a, j, start_b))
        elif i < start_a:
            codes.append(("delete", i, start_a, j, j))
        elif j < start_b:
            codes.append(("insert", i, i, j, start_b))
        if size:
            codes.append(("equal", start_a, start_a + size, start_b, start_b + size))
        i, j = start_a + size, start_b + size
    return codes


def patch_lines(text: str) -> list[str]:
    """The lines of ``text`` as ``patch`` counts them, each with its ending: ended by "\n" alone (a lone
    "\r", "\f", "\x85" or "\u2028" is part of its line, as ``str.splitlines`` would not have it), the
    last one without an ending when the text does not end with "\n"."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    return [*lines, parts[-1]] if parts[-1] else lines


def unified_diff(
    a: Sequence[str],
    b: Sequence[str],
    fromfile: str,
    tofile: str,
    *,
    context: int = 3,
    check: Callable[[], None] | None = None,
) -> Iterator[str]:
    """The lines of a unified diff from ``a`` to ``b`` (lines with their endings), as
    ``difflib.unified_diff(a, b, fromfile, tofile)`` prints them: nothing when they are equal."""
    groups = _grouped(opcodes(a, b, check=check), context)
    for number, group in enumerate(groups):
        if number == 0:
            yield f"--- {fromfile}\n"
            yield f"+++ {tofile}\n"
        first, last = group[0], group[-1]
        yield f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@\n"
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                yield from [" " + line for line in a[i1:i2]]
                continue
            yield from ["-" + line for line in a[i1:i2]]
            yield from ["+" + line for line in b[j1:j2]]


def _range(start: int, stop: int) -> str:
    """A hunk's range as unified diffs write it (difflib's ``_format_range_unified``)."""
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start + 1 if length else start},{length}"


def _grouped(codes: list[Opcode], context: int) -> list[list[Opcode]]:
    """The opcodes cut into hunks with ``context`` equal lines around each change (difflib's
    ``get_grouped_opcodes``)."""
    if not codes:
        codes = [("equal", 0, 1, 0, 1)]
    if codes[0][0] == "equal":
        tag, i1, i2, j1, j2 = codes[0]
        codes[0] = tag, max(i1, i2 - context), i2, max(j1, j2 - context), j2
    if codes[-1][0] == "equal":
        tag, i1, i2, j1, j2 = codes[-1]
        codes[-1] = tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context)
    groups: list[list[Opcode]] = []
    group: list[Opcode] = []
    for tag, i1, i2, j1, j2 in codes:
        if tag == "equal" and i2 - i1 > 2 * context:
            group.append((tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context)))
            groups.append(group)
            group = []
            i1, j1 = max(i1, i2 - context), max(j1, j2 - context)
        group.append((tag, i1, i2, j1, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        groups.append(group)
    return groups


def _merged(runs: list[tuple[int, int, int]]) -> Iterator[tuple[int, int, int]]:
    """Runs of equal lines, adjacent ones joined (difflib never shows two equal blocks in a row)."""
    current: tuple[int, int, int] | None = None
    for run in runs:
        if current is not None and current[0] + current[2] == run[0] and current[1] + current[2] == run[1]:
            current = (current[0], current[1], current[2] + run[2])
            continue
        if current is not None:
            yield current
        current = run
    if current is not None:
        yield current


def _equal_runs(a: list[int], b: list[int], work: Work) -> list[tuple[int, int, int]]:
    """Runs (i, j, size) of lines equal in ``a`` and ``b``, in no particular order; the regions still to
    diff are kept on a stack (no recursion: anchors can nest as deep as the file is long)."""
    runs: list[tuple[int, int, int]] = []
    regions = [(0, len(a), 0, len(b))]
    while regions:
        a_lo, a_hi, b_lo, b_hi = regions.pop()
        head = 0
        while a_lo + head < a_hi and b_lo + head < b_hi and a[a_lo + head] == b[b_lo + head]:
            head += 1
        if head:
            runs.append((a_lo, b_lo, head))
            a_lo, b_lo = a_lo + head, b_lo + head
        tail = 0
        while a_lo < a_hi - tail and b_lo < b_hi - tail and a[a_hi - 1 - tail] == b[b_hi - 1 - tail]:
            tail += 1
        if tail:
            a_hi, b_hi = a_hi - tail, b_hi - tail
            runs.append((a_hi, b_hi, tail))
        work.spend(head + tail + 1)
        if a_lo == a_hi or b_lo == b_hi or work.left <= 0:
            continue  # one side is empty (a pure insertion or deletion), or no work is left: a replacement
        if (a_hi - a_lo) * (b_hi - b_lo) <= SMALL:
            runs += _myers(a, b, a_lo, a_hi, b_lo, b_hi, work)  # exact, and cheaper than counting lines
            continue
        anchors = _anchors(a[a_lo:a_hi], b[b_lo:b_hi], work)
        if not anchors:
            runs += _myers(a, b, a_lo, a_hi, b_lo, b_hi, work)
            continue
        previous_a, previous_b = a_lo, b_lo
        start_a = start_b = size = 0
        for i, j in anchors:
            i, j = a_lo + i, b_lo + j
            if i == previous_a and j == previous_b and size:
                size += 1  # the next line on both sides: one run grows (most of a barely changed file)
            else:
                if size:
                    runs.append((start_a, start_b, size))
                start_a, start_b, size = i, j, 1
                regions.append((previous_a, i, previous_b, j))
            previous_a, previous_b = i + 1, j + 1
        runs.append((start_a, start_b, size))
        regions.append((previous_a, a_hi, previous_b, b_hi))
    return runs


def _anchors(a: list[int], b: list[int], work: Work) -> list[tuple[int, int]]:
    """The lines that occur once in ``a`` and once in ``b``, as (i, j) pairs: the longest chain of them
    in the same order on both sides (patience sorting, k log k)."""
    work.spend(len(a) + len(b))
    in_a, in_b = Counter(a), Counter(b)
    where_b = {line: j for j, line in enumerate(b) if in_b[line] == 1}
    pairs = [(i, where_b[line]) for i, line in enumerate(a) if in_a[line] == 1 and line in where_b]
    work.spend(len(pairs))
    if not pairs:
        return []
    if all(first[1] < second[1] for first, second in itertools.pairwise(pairs)):
        return pairs  # in the same order on both sides already (edits that move no line): all of them
    tops: list[int] = []  # the smallest j that ends a chain of each length
    ends: list[int] = []  # the pair (by index) that ends it
    before: list[int] = []  # each pair's predecessor in its chain, -1 for none
    for index, (_, j) in enumerate(pairs):
        length = bisect_left(tops, j)
        if length == len(tops):
            tops.append(j)
            ends.append(index)
        else:
            tops[length] = j
            ends[length] = index
        before.append(ends[length - 1] if length else -1)
    chain: list[tuple[int, int]] = []
    at = ends[-1]
    while at >= 0:
        chain.append(pairs[at])
        at = before[at]
    chain.reverse()
    return chain


def _myers(
    a: list[int], b: list[int], a_lo: int, a_hi: int, b_lo: int, b_hi: int, work: Work
) -> list[tuple[int, int, int]]:
    """The equal runs of a shortest edit script of ``a[a_lo:a_hi]`` to ``b[b_lo:b_hi]`` (Myers' greedy
    algorithm); none — the whole gap one replacement — when the work it takes passes what is left."""
    x_part, y_part = a[a_lo:a_hi], b[b_lo:b_hi]
    n, m = len(x_part), len(y_part)
    if n == m == 1 or not set(x_part).intersection(y_part):  # (one line each: they differ, or were set aside)
        work.spend(n + m)
        return []  # no line in common: a replacement, found in linear time
    offset = n + m + 1
    furthest = [-1] * (2 * offset + 1)  # per diagonal k = x - y, the furthest x reached; -1: not reached
    furthest[offset + 1] = 0  # the start, as if stepped down onto diagonal 0
    trace: list[list[int]] = []
    for d in range(n + m + 1):
        trace.append(furthest[offset - d - 1 : offset + d + 2])  # diagonals -d-1 .. d+1, before step d
        spent = d + 1
        for k in range(-d, d + 1, 2):
            down = furthest[offset + k + 1] if k < d or d == 0 else -1  # d = 0: the start
            right = furthest[offset + k - 1] if k > -d else -1
            x, _ = _step(down, right, k, n, m)
            if x < 0:
                furthest[offset + k] = -1
                continue
            y = x - k
            start = x
            while x < n and y < m and x_part[x] == y_part[y]:
                x += 1
                y += 1
            spent += x - start
            furthest[offset + k] = x
            if x == n and y == m:
                work.spend(spent)
                return _traced(trace, n, m, a_lo, b_lo)
        work.spend(spent)
        if work.left <= 0:
            return []
    return []  # pragma: no cover - d = n + m always reaches the end


def _step(down: int, right: int, k: int, n: int, m: int) -> tuple[int, bool]:
    """Where a path of one more change starts on diagonal ``k``: the furthest of a step down from
    diagonal k + 1 (reaching ``down``) and a step right from k - 1 (reaching ``right``), neither leaving
    the grid; (x, True when it stepped down), or (-1, False) when neither can."""
    down_ok = down >= 0 and down - k <= m
    right_ok = right >= 0 and right < n
    if down_ok and (not right_ok or right < down):
        return down, True
    if right_ok:
        return right + 1, False
    return -1, False


def _traced(trace: list[list[int]], n: int, m: int, a_lo: int, b_lo: int) -> list[tuple[int, int, int]]:
    """The equal runs along the path Myers' search found, walked back from the end."""
    runs: list[tuple[int, int, int]] = []
    x, y = n, m
    for d in range(len(trace) - 1, 0, -1):
        before = trace[d]  # index k + d + 1 holds diagonal k as it was before step d
        k = x - y
        down = before[k + 1 + d + 1] if k < d else -1
        right = before[k - 1 + d + 1] if k > -d else -1
        start, stepped_down = _step(down, right, k, n, m)
        if x > start:
            runs.append((a_lo + start, b_lo + start - k, x - start))
        x = down if stepped_down else right
        y = x - (k + 1 if stepped_down else k - 1)
    if x > 0:
        runs.append((a_lo, b_lo, x))
    return runs
