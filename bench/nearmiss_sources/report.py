"""Summarise a web server's access log: requests per status, the slowest paths, and a CSV export."""

from __future__ import annotations

import csv
import re
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

LINE = re.compile(
    r'(?P<host>\S+) \S+ \S+ \[(?P<when>[^\]]+)\] "(?P<method>[A-Z]+) (?P<path>\S+) [^"]*" '
    r"(?P<status>\d{3}) (?P<size>\d+|-) (?P<millis>\d+)"
)
SEPARATOR = "\t"
WINDOWS_ROOT = "C:\\logs\\access"


@dataclass(frozen=True)
class Request:
    host: str
    method: str
    path: str
    status: int
    millis: int


def parse(lines: list[str]) -> tuple[list[Request], int]:
    """The requests in ``lines``, and how many lines did not parse."""
    requests, skipped = [], 0
    for line in lines:
        found = LINE.match(line)
        if found is None:
            skipped += 1
            continue
        requests.append(
            Request(
                host=found["host"],
                method=found["method"],
                path=found["path"].split("?", 1)[0],
                status=int(found["status"]),
                millis=int(found["millis"]),
            )
        )
    return requests, skipped


def slowest(requests: list[Request], top: int = 5) -> list[tuple[str, float]]:
    by_path: dict[str, list[int]] = defaultdict(list)
    for request in requests:
        by_path[request.path].append(request.millis)
    medians = {path: statistics.median(times) for path, times in by_path.items() if len(times) >= 3}
    return sorted(medians.items(), key=lambda item: (-item[1], item[0]))[:top]


def summary(requests: list[Request], skipped: int) -> str:
    statuses = Counter(request.status // 100 for request in requests)
    rows = [f"{family}xx: {count}" for family, count in sorted(statuses.items())]
    if skipped:
        rows.append(f"skipped: {skipped} line(s) that are not \"combined\" log format")
    rows.append("slowest:\n" + "\n".join(f"  {path}\t{millis:.0f} ms" for path, millis in slowest(requests)))
    return "\n".join(rows)


def export(requests: list[Request], target: Path) -> None:
    with target.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, delimiter=SEPARATOR)
        writer.writerow(["host", "method", "path", "status", "millis"])
        for request in requests:
            writer.writerow([request.host, request.method, request.path, request.status, request.millis])
