"""Recently seen contents by version, so a stale error can say which lines changed."""

from __future__ import annotations

import threading
from collections import OrderedDict


class VersionCache:
    """Recently seen contents by version, bounded in bytes, so a stale error can say which lines moved."""

    def __init__(self, max_total: int = 32 << 20, max_item: int = 2 << 20) -> None:
        self.max_total = max_total
        self.max_item = max_item
        self._items: OrderedDict[str, bytes] = OrderedDict()
        self._total = 0
        self._lock = threading.Lock()

    def put(self, version: str, data: bytes) -> None:
        if len(data) > self.max_item:
            return
        with self._lock:
            if version in self._items:
                self._items.move_to_end(version)
                return
            self._items[version] = data
            self._total += len(data)
            while self._total > self.max_total:
                _, dropped = self._items.popitem(last=False)
                self._total -= len(dropped)

    def get(self, version: str) -> bytes | None:
        with self._lock:
            return self._items.get(version)
