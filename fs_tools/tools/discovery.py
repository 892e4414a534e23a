"""What the discovery tools (list, glob, grep) share: where a walk starts, which directories it skips,
how .gitignore rules apply, and how names are shown so that no name can forge a line."""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field

import pathspec

from fs_tools.errors import NotDirectory, NotFound, path_label
from fs_tools.provider import Resolved
from fs_tools.provider.oserrors import map_os_error
from fs_tools.provider.walk import DIRECTORY, Entry, start_directory
from fs_tools.tools.base import ToolContext

VCS_DIRECTORIES = frozenset({".git", ".hg", ".svn", ".bzr", "_darcs", "CVS", ".jj"})


def visible(name: str) -> str:
    """A name as one printable line: control characters, undecodable bytes and lone surrogates escaped."""
    if name.isprintable():
        return name
    return "".join(char if char.isprintable() else repr(char)[1:-1] for char in name)


def shown_path(target: Resolved, parts: tuple[str, ...]) -> str:
    """An entry's path as the tools show it: relative to its root."""
    return "/".join(visible(p) for p in (*target.parts, *parts))


@contextlib.contextmanager
def walk_start(ctx: ToolContext, path: str, *, files_too: bool = False) -> Iterator[tuple[Resolved, int | None]]:
    """The resolved start of a walk and a descriptor for its directory — or None for a regular file
    when ``files_too``; FS_NOT_FOUND / FS_NOT_DIRECTORY otherwise."""
    label = path_label(path)
    with ctx.provider.resolve(path) as target:
        current = target.leaf_stat()
        if current is None:
            raise NotFound(f"{label!r} does not exist", details={"reason": "missing"})
        if not stat.S_ISDIR(current.st_mode):
            if files_too and stat.S_ISREG(current.st_mode):
                yield target, None
                return
            raise NotDirectory(f"{label!r} is not a directory", details={"reason": "leaf"})
        try:
            fd = start_directory(target)
        except OSError as exc:
            raise map_os_error(exc, label) from exc
        if fd is None:
            raise NotDirectory(f"{label!r} is not a directory", details={"reason": "leaf"})
        try:
            yield target, fd
        finally:
            os.close(fd)


@dataclass
class IgnoreRules:
    """The .gitignore files met on the way down, each applying below its own directory."""

    enabled: bool
    _specs: dict[tuple[str, ...], pathspec.GitIgnoreSpec] = field(default_factory=dict)

    def load(self, directory: tuple[str, ...], directory_fd: int) -> None:
        if not self.enabled:
            return
        try:
            fd = os.open(".gitignore", os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=directory_fd)
        except OSError:
            return
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return
            text = os.read(fd, 1 << 20).decode("utf-8", "replace")
        finally:
            os.close(fd)
        self._specs[directory] = pathspec.GitIgnoreSpec.from_lines(text.splitlines())

    def ignored(self, entry: Entry) -> bool:
        if not self.enabled:
            return False
        for base, spec in self._specs.items():
            if entry.parts[: len(base)] == base and len(entry.parts) > len(base):
                rest = "/".join(entry.parts[len(base) :]) + ("/" if entry.kind == DIRECTORY else "")
                if spec.match_file(rest):
                    return True
        return False
