"""Where a run of lines occurs in a file's lines, found without comparing the run at every line.

A patch's hunk is located by its lines. Comparing it at each line of the file costs the file's length
times the hunk's, and a file of one repeated line with a long hunk that does not match, or thousands of
hunks each searched again, took tens of seconds. A ``LineIndex`` lists once where each line of the file
occurs (under one normalisation: exact, or trailing whitespace cut), so a run is tried only where its
rarest line is; every try is counted against a ``Work`` budget the caller sizes to the file and the
patch, and the moment a charge would take it below zero the search stops: ``OutOfWork``, or
``TooCommon`` when it was placing a run, naming the run's rarest line. So the counter never goes below
zero by more than the one charge that did not fit (a try, or one run's length).
"""

from __future__ import annotations

from bisect import bisect_left

from fs_tools.line_diff import Work

_NOWHERE: list[int] = []
BATCH = 256  # candidates tried between two counts of the work (fewer when less work is left)


class OutOfWork(Exception):
    """The work budget is spent: what was asked would take more than is left."""


class TooCommon(OutOfWork):
    """Placing a run took all the work that was left: even its rarest line occurs at many places."""

    def __init__(self, line: str, places: int) -> None:
        super().__init__(f"the line {line!r} occurs at {places:,} places")
        self.line = line
        self.places = places


class LineIndex:
    """The lines of one file under one normalisation (``keys``), and the places of each, listed once."""

    def __init__(self, keys: list[str], work: Work) -> None:
        if len(keys) > work.left:
            raise OutOfWork(f"listing {len(keys):,} lines takes more than the {work.left:,} units of work left")
        work.spend(len(keys))
        self.keys = keys
        self.work = work
        self.where: dict[str, list[int]] = {}
        for at, key in enumerate(keys):
            self.where.setdefault(key, []).append(at)

    def first(self, key: str, start: int) -> int | None:
        """The first place of the line ``key`` at or after ``start``."""
        places = self.where.get(key, _NOWHERE)
        found = bisect_left(places, start)
        return places[found] if found < len(places) else None

    def places(self, wanted: list[str], start: int, limit: int, stop: int | None = None) -> list[int]:
        """Where ``wanted`` runs in the lines, starting at or after ``start`` and ending by ``stop`` (the
        end of the file when None): at most ``limit`` places, in order."""
        last = (len(self.keys) if stop is None else stop) - len(wanted)
        if not wanted or last < start:
            return []
        offset, places = self._rarest(wanted)
        rarest, size, keys = wanted[offset], len(wanted), self.keys
        head, tail = wanted[0], wanted[-1]
        found: list[int] = []
        tried, room = 0, self._room()
        for index in range(bisect_left(places, start + offset), len(places)):
            at = places[index] - offset
            if at > last or len(found) >= limit:
                break
            tried += 1
            if tried == room:  # counted in batches: a call per try would cost more than the try
                self._charge(tried, rarest, places)
                tried, room = 0, self._room()
            if keys[at] != head or keys[at + size - 1] != tail:  # its ends first, one comparison each
                continue
            self._charge(tried + size, rarest, places)  # then all of it, charged before it is compared
            tried, room = 0, self._room()
            if keys[at : at + size] == wanted:
                found.append(at)
        self._charge(tried, rarest, places)
        return found

    def nearest(self, wanted: list[str], start: int, target: int) -> int | None:
        """The place of ``wanted`` at or after ``start`` nearest to ``target``, the earlier one on a tie."""
        target = max(start, min(target, len(self.keys) - len(wanted)))
        after = self.places(wanted, target, 1)
        reach = after[0] - target if after else len(self.keys)
        before = self._last_before(wanted, max(start, target - reach), target) if wanted else None
        if before is None:
            return after[0] if after else None
        if not after or target - before <= after[0] - target:
            return before
        return after[0]

    def _last_before(self, wanted: list[str], low: int, high: int) -> int | None:
        """The last place of ``wanted`` in [low, high)."""
        offset, places = self._rarest(wanted)
        rarest, size, keys = wanted[offset], len(wanted), self.keys
        head, tail = wanted[0], wanted[-1]
        tried, room = 0, self._room()
        for index in range(bisect_left(places, high + offset) - 1, -1, -1):
            at = places[index] - offset
            if at < low:
                break
            tried += 1
            if tried == room:
                self._charge(tried, rarest, places)
                tried, room = 0, self._room()
            if at + size > len(keys) or keys[at] != head or keys[at + size - 1] != tail:
                continue
            self._charge(tried + size, rarest, places)
            tried, room = 0, self._room()
            if keys[at : at + size] == wanted:
                return at
        self._charge(tried, rarest, places)
        return None

    def _rarest(self, wanted: list[str]) -> tuple[int, list[int]]:
        """The line of ``wanted`` with the fewest places in the file: its offset in ``wanted``, and them."""
        offset = min(range(len(wanted)), key=lambda at: len(self.where.get(wanted[at], _NOWHERE)))
        places = self.where.get(wanted[offset], _NOWHERE)
        self._charge(len(wanted), wanted[offset], places)
        return offset, places

    def _room(self) -> int:
        """The tries after which the pending ones are counted: a batch, or one more than the work left (so
        the try that does not fit is the last one made)."""
        return max(1, min(BATCH, self.work.left + 1))

    def _charge(self, units: int, rarest: str, places: list[int]) -> None:
        self.work.spend(units)
        if self.work.left < 0:
            raise TooCommon(rarest, len(places))
