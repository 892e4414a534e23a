"""What the discovery tools (list, glob, grep) share: where a walk starts, which directories it skips,
how .gitignore rules apply, and how names are shown so that no name can forge a line."""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pathspec
from wcmatch import glob as wc

from fs_tools.errors import FsError, NotDirectory, NotFound, path_label
from fs_tools.provider import Resolved
from fs_tools.provider.files import open_regular_with_stat
from fs_tools.provider.oserrors import map_os_error
from fs_tools.provider.resolve import DIR_FLAGS, require_regular
from fs_tools.provider.walk import DIRECTORY, Entry, start_directory
from fs_tools.tools.base import ToolContext

VCS_DIRECTORIES = frozenset({".git", ".hg", ".svn", ".bzr", "_darcs", "CVS", ".jj"})


def visible(name: str) -> str:
    """Text as one printable line: line breaks, other control characters, undecodable bytes and lone
    surrogates escaped; tabs kept, so a line copied from grep output still matches the file."""
    if name.isprintable():
        return name
    return "".join(char if char.isprintable() or char == "\t" else repr(char)[1:-1] for char in name)


GLOB_FLAGS = wc.GLOBSTAR | wc.DOTGLOB | wc.BRACE


def glob_pattern_violations(data: Mapping[str, Any], key: str) -> list[tuple[tuple[int | str, ...], str]]:
    """A glob pattern wcmatch refuses (say, a brace expansion past its limit) is the caller's mistake."""
    pattern = data.get(key)
    if not isinstance(pattern, str) or not pattern:
        return []
    try:
        wc.compile(pattern, flags=GLOB_FLAGS | wc.MATCHBASE)
    except Exception as exc:  # wcmatch raises its own exception types for limits and syntax
        return [((key,), f"invalid glob pattern: {exc}")]
    return []


def plural(count: int, one: str, many: str) -> str:
    return f"{count:,} {one if count == 1 else many}"


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
            if files_too:
                require_regular(current, label)  # a FIFO or device is named as such, never opened
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
    """The .gitignore files that apply to a walk: those of the start directory's ancestors inside the
    root, and those met on the way down. Each applies below its own directory, and for any path the
    deepest file with a matching rule decides (so a nested ``!keep.log`` re-includes what a parent
    ignored), as in git."""

    enabled: bool
    start: tuple[str, ...] = ()  # the walk's start, relative to its root
    _specs: dict[tuple[str, ...], pathspec.GitIgnoreSpec] = field(default_factory=dict)

    def load_ancestors(self, root_fd: int) -> None:
        """Read the .gitignore of the root and of every directory down to (not including) the start."""
        if not self.enabled:
            return
        fd = os.dup(root_fd)
        try:
            for depth in range(len(self.start)):
                self._load_absolute(self.start[:depth], fd)
                child = os.open(self.start[depth], DIR_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = child
        except OSError:
            pass  # the start was resolved a moment ago; a directory changing now only loses a rule
        finally:
            os.close(fd)

    def load(self, directory: tuple[str, ...], directory_fd: int) -> None:
        """``walk``'s ``enter`` hook: ``directory`` is relative to the start."""
        if self.enabled:
            self._load_absolute((*self.start, *directory), directory_fd)

    def _load_absolute(self, directory: tuple[str, ...], directory_fd: int) -> None:
        try:
            # never opens a FIFO or device that happens to be named .gitignore
            fd, _ = open_regular_with_stat(directory_fd, ".gitignore", ".gitignore")
        except (OSError, FsError):
            return
        try:
            text = os.read(fd, 1 << 20).decode("utf-8", "replace")
        except OSError:
            return
        finally:
            os.close(fd)
        self._specs[directory] = pathspec.GitIgnoreSpec.from_lines(text.splitlines())

    def ignored(self, entry: Entry) -> bool:
        if not self.enabled:
            return False
        parts = (*self.start, *entry.parts)
        verdict: bool | None = None
        for base in sorted(self._specs, key=len):  # shallow to deep: the deepest match has the last word
            if parts[: len(base)] == base and len(parts) > len(base):
                rest = "/".join(parts[len(base) :]) + ("/" if entry.kind == DIRECTORY else "")
                include = self._specs[base].check_file(rest).include
                if include is not None:
                    verdict = include
        return bool(verdict)
