"""A writer that changes a file between a patch's look and its commit."""

from __future__ import annotations

from pathlib import Path


class WritesBetween:
    """A provider listener that writes ``path`` from outside the second time a commit to it starts: after
    the patch's gates checked it, before the patch's commit to it (the listener seam, no patched method)."""

    def __init__(self, key: str, path: Path, data: bytes) -> None:
        self.key, self.path, self.data, self.starts = key, path, data, 0

    def operation_started(self, key: str) -> None:
        if key == self.key:
            self.starts += 1
            if self.starts == 2:
                self.path.write_bytes(self.data)

    def read_recorded(self, key: str) -> None:
        pass

    def version_checked(self, key: str) -> None:
        pass
