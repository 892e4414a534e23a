"""Plain Python doing the same work as the tools, without fs-tools: the distance to the limit."""

from __future__ import annotations

import os
from pathlib import Path


def raw_read(path: Path, lines: int) -> str:
    """Read the bytes, decode, number the lines the tool shows (the tool also hashes and counts all)."""
    with open(path, "rb") as handle:
        text = handle.read().decode("utf-8")
    shown = text.split("\n", lines)[:lines]
    return "\n".join(f"{n:6d}\t{line}" for n, line in enumerate(shown, 1))


def raw_edit(path: Path, old: str, new: str, *, sync_directory: bool = False) -> None:
    """Read, check the target is unique, replace, then write a temp, fsync it and rename it over."""
    with open(path, "rb") as handle:
        text = handle.read().decode("utf-8")
    if text.count(old) != 1:
        raise ValueError("the target is not unique")
    raw_write(path, text.replace(old, new, 1), sync_directory=sync_directory)


def raw_write(path: Path, content: str, *, sync_directory: bool = False) -> None:
    """Encode, write a temp in the same directory, fsync it, rename it over the file."""
    data = content.encode("utf-8")
    temp = path.with_name(f".{path.name}.raw-tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)
    os.rename(temp, path)
    if sync_directory:  # what makes the rename itself durable; fs-tools does it
        dir_fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
