"""Confined path resolution on file descriptors.

Every path is walked one component at a time from a root's directory descriptor with ``O_NOFOLLOW``;
symlinks are read with ``readlink`` and their targets spliced into the walk, so a link is followed only
while it stays inside a root, and a link swapped in mid-walk is never followed blindly by the kernel.
``..`` pops the walk's own stack of descriptors, so it can never climb above the root it started from,
whatever is renamed meanwhile.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import stat
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from fs_tools.errors import (
    IoError,
    MissingParent,
    NotDirectory,
    NotRegularFile,
    OutsideRoots,
    Raced,
    ReservedName,
    SymlinkOutside,
    path_label,
)
from fs_tools.provider.tempfiles import create_staging, empty_tree, is_reserved_name

MAX_SYMLINK_HOPS = 40
MAX_DEPTH = 255  # directory levels held open during one resolution
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass(frozen=True)
class Root:
    """A workspace root: opened once, referred to by its descriptor ever after."""

    configured: str  # the absolute path as the host gave it
    real: str  # its canonical form, for matching absolute paths and symlink targets
    fd: int

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> Root:
        if not os.fspath(path):  # abspath('') is the current directory: an unset "$DIR" must not serve it
            raise ValueError("a workspace root is empty; give the path of a directory")
        configured = os.path.abspath(os.fspath(path))
        real = os.path.realpath(configured)
        try:
            fd = os.open(real, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as exc:
            reason = exc.strerror or str(exc)  # the OS's words, without repeating the path
            raise ValueError(f"workspace root {configured!r} cannot be opened as a directory: {reason}") from exc
        return cls(configured=configured, real=real, fd=fd)

    def parts_of(self, absolute: str) -> list[str] | None:
        """The components of ``absolute`` below this root, or None when it is not under it."""
        given = _components(absolute)
        for base in (self.real, self.configured):
            prefix = _components(base)
            if given[: len(prefix)] == prefix:
                return given[len(prefix) :]
        return None


def _components(path: str) -> list[str]:
    return [p for p in path.split("/") if p not in ("", ".")]


@dataclass
class Staging:
    """Missing parent directories being built under a hidden temp name, published by one no-replace
    rename: a writer killed halfway leaves only a temp directory the sweeper removes, never a chain of
    empty directories."""

    parent: int  # the descriptor of the deepest directory that existed
    name: str  # the temp name the chain is built under
    final: str  # the name it is published as
    fd: int  # the staging directory itself, held (and locked) until the resolution is closed
    published: bool = False


@dataclass
class Resolved:
    """Where a path leads: the descriptor of the directory that holds the leaf, and the leaf's name.

    ``name`` is None when the path names a directory itself (the root, ``dir/``, ``a/..``).
    ``dir_fd`` is None when a parent directory is missing; ``parts`` is then the lexical location.
    """

    root: Root
    parts: tuple[str, ...]  # canonical components below the root, leaf included
    name: str | None
    dir_fd: int | None
    _owned: list[int] = field(default_factory=list, repr=False)
    created: list[tuple[int, str]] = field(default_factory=list, repr=False)  # (parent fd, name) we made
    staged: Staging | None = field(default=None, repr=False)
    display: str = field(default="", repr=False)  # the path as the caller gave it, for messages
    made: list[int] = field(default_factory=list, repr=False)  # the indices in parts of the directories we made

    @functools.cached_property
    def key(self) -> str:
        """The canonical absolute path: the identity under which observations are kept."""
        return os.path.join(self.root.real, *self.parts) if self.parts else self.root.real

    @property
    def parent_exists(self) -> bool:
        return self.dir_fd is not None

    def leaf_stat(self) -> os.stat_result | None:
        """lstat of the leaf, or None when it does not exist."""
        if self.dir_fd is None:
            return None
        if self.name is None:
            return os.stat(self.dir_fd)
        try:
            return os.stat(self.name, dir_fd=self.dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            return None

    def made_keys(self) -> tuple[str, ...]:
        """The keys of the parent directories this resolution made, outermost first (once published: a
        staged chain is all ours)."""
        made = list(self.made)
        if self.staged is not None and made:  # every directory below the staged one was made inside it
            made = list(range(made[0], len(self.parts) - 1))
        return tuple(os.path.join(self.root.real, *self.parts[: index + 1]) for index in made)

    def remove_created_directories(self) -> None:
        """Undo the parent directories this resolution created, deepest first, where still empty (and a
        staged chain that was not published)."""
        staged = self.staged
        if staged is not None and staged.published:
            return
        while self.created:
            parent, name = self.created.pop()
            with contextlib.suppress(OSError):
                os.rmdir(name, dir_fd=parent)
        if staged is not None:  # all of it is ours, whatever an interruption left inside
            with contextlib.suppress(OSError):
                held = os.fstat(staged.fd)
                there = os.stat(staged.name, dir_fd=staged.parent, follow_symlinks=False)
                # Still under its temp name? An interruption just after publication must not undo it.
                if (held.st_dev, held.st_ino) == (there.st_dev, there.st_ino) and empty_tree(staged.fd):
                    os.rmdir(staged.name, dir_fd=staged.parent)

    def close(self) -> None:
        while self._owned:
            os.close(self._owned.pop())


class Resolver:
    """Resolves model-supplied paths against a fixed set of roots; the first root is primary."""

    def __init__(self, roots: Sequence[str | os.PathLike[str]], *, can_stage: bool) -> None:
        self._can_stage = can_stage  # whether a directory can be renamed without replacing (see Staging)
        if not roots:
            raise ValueError("a workspace needs at least one root")
        opened: list[Root] = []
        try:
            for given in roots:
                opened.append(Root.open(given))
        except BaseException:  # a bad second root must not leak the first one's descriptor
            for root in opened:
                os.close(root.fd)
            raise
        self.roots: tuple[Root, ...] = tuple(opened)
        self._closed = False

    def close(self) -> None:
        """Close the roots' descriptors; every later resolution is refused (a closed number may be
        reused by any other open, so it must never be used again)."""
        if self._closed:
            return
        self._closed = True
        for root in self.roots:
            os.close(root.fd)

    def relative_forms(self, key: str) -> list[str]:
        """The file's path relative to every root that holds it (nested roots give several)."""
        forms = []
        for root in self.roots:
            rest = root.parts_of(key)
            if rest is not None:
                forms.append("/".join(rest) or ".")
        return forms

    @contextmanager
    def resolve(
        self, path: str, *, create_parents: bool = False, stage: bool = True, follow_leaf: bool = True
    ) -> Iterator[Resolved]:
        """Resolve ``path``; with ``create_parents``, missing parent directories are made — built under
        a hidden temp name and published with the file (``Staging``) where the kernel can rename a
        directory without replacing anything, else (or with ``stage=False``) made one by one. Without
        ``follow_leaf`` a symlink as the last component is the result itself (to move or remove the link)."""
        resolved = self._resolve(
            path, create_parents=create_parents, stage=stage and self._can_stage, follow_leaf=follow_leaf
        )
        resolved.display = path_label(path)
        try:
            yield resolved
        finally:
            resolved.close()

    def _locate(self, path: str, display: str) -> tuple[Root, list[str]]:
        if not path.startswith("/"):
            return self.roots[0], path.split("/")
        best: tuple[Root, list[str]] | None = None
        for root in self.roots:
            rest = root.parts_of(path)
            if rest is not None and (best is None or len(rest) < len(best[1])):
                best = (root, rest)
        if best is None:
            raise OutsideRoots(f"{display!r} is outside every workspace root")
        return best

    def _resolve(self, path: str, *, create_parents: bool, stage: bool = False, follow_leaf: bool = True) -> Resolved:
        display = path_label(path)
        if self._closed:
            raise IoError(f"{display!r}: the workspace is closed", details={"reason": "closed"})
        root, raw = self._locate(path, display)
        reserved = next((part for part in raw if is_reserved_name(part)), None)
        if reserved is not None:
            raise ReservedName(f"{display!r}: names like {reserved!r} are reserved for fs-tools' temp files")
        must_be_dir = path == "" or path.endswith("/") or raw[-1:] in ([""], ["."])
        pending: deque[str] = deque(p for p in raw if p not in ("", "."))
        owned: list[int] = []
        names: list[str] = []
        created: list[tuple[int, str]] = []
        made: list[int] = []
        staged: Staging | None = None
        hops = 0
        try:
            while pending:
                comp = pending.popleft()
                cur = owned[-1] if owned else root.fd
                if is_reserved_name(comp):  # also where a symlink's target names one
                    raise ReservedName(f"{display!r} leads to a name reserved for fs-tools' temp files")
                if comp == "..":
                    if not names:
                        raise OutsideRoots(f"{display!r} leads outside the workspace root")
                    names.pop()
                    os.close(owned.pop())
                    continue
                is_leaf = not pending and not must_be_dir
                try:
                    st = os.stat(comp, dir_fd=cur, follow_symlinks=False)
                except FileNotFoundError:
                    if is_leaf:
                        return Resolved(root, (*names, comp), comp, cur, owned, created, staged, made=made)
                    if ".." in pending:
                        if _climbs_above(len(names) + 1, list(pending)):
                            raise OutsideRoots(f"{display!r} leads outside the workspace root") from None
                        # "missing/../x" would name x, but only through a directory that is not there
                        raise MissingParent(
                            f"{display!r}: {'/'.join([*names, comp])!r} does not exist",
                        ) from None
                    if not create_parents:
                        tail = (*names, comp, *pending)
                        _close_all(owned)
                        return Resolved(root, tail, tail[-1] if not must_be_dir else None, None, [])
                    if stage and staged is None:
                        staged, fd = _stage(cur, comp)
                        made.append(len(names))
                        owned.append(fd)
                        names.append(comp)
                        continue
                    if _make_directory(cur, comp):  # not one another writer made meanwhile
                        created.append((cur, comp))
                        made.append(len(names))
                    pending.appendleft(comp)
                    continue
                if stat.S_ISLNK(st.st_mode) and is_leaf and not follow_leaf:
                    return Resolved(root, (*names, comp), comp, cur, owned, created, staged, made=made)
                if stat.S_ISLNK(st.st_mode):
                    hops += 1
                    if hops > MAX_SYMLINK_HOPS:
                        raise IoError(
                            f"{display!r}: too many levels of symbolic links (a symlink loop)",
                            details={"errno": errno.ELOOP},
                        )
                    root, names, owned = self._splice_link(root, names, owned, cur, comp, pending, display)
                    continue
                if is_leaf:
                    return Resolved(root, (*names, comp), comp, cur, owned, created, staged, made=made)
                if not stat.S_ISDIR(st.st_mode):
                    raise NotDirectory(
                        f"{display!r}: {'/'.join([*names, comp])!r} is not a directory",
                        details={"component": comp},
                    )
                if len(owned) >= MAX_DEPTH:
                    raise IoError(
                        f"{display!r} is too deep: more than {MAX_DEPTH} directory levels",
                        details={"errno": errno.ENAMETOOLONG},
                    )
                owned.append(_open_directory(cur, comp, display))
                names.append(comp)
            cur = owned[-1] if owned else root.fd
            return Resolved(root, tuple(names), None, cur, owned, created, staged, made=made)
        except BaseException:
            for parent, name in reversed(created):
                with contextlib.suppress(OSError):
                    os.rmdir(name, dir_fd=parent)
            if staged is not None:
                with contextlib.suppress(OSError):
                    os.rmdir(staged.name, dir_fd=staged.parent)
            _close_all(owned)
            raise

    def _splice_link(
        self,
        root: Root,
        names: list[str],
        owned: list[int],
        cur: int,
        comp: str,
        pending: deque[str],
        display: str,
    ) -> tuple[Root, list[str], list[int]]:
        try:
            target = os.readlink(comp, dir_fd=cur)
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.EINVAL):  # removed, or no longer a link, since lstat
                raise Raced(
                    f"{display!r}: a symlink on the path changed while it was being resolved",
                    details={"errno": exc.errno},
                ) from exc
            raise
        target_parts = [p for p in target.split("/") if p not in ("", ".")]
        if not target.startswith("/") and _climbs_above(len(names), target_parts):
            # A relative target that climbs out of this root may land in it again or in another root:
            # judge it, like an absolute target, by where it lands.
            target = os.path.join(root.real, *names, target)
        if target.startswith("/"):
            landing = self._root_holding(os.path.normpath(target))
            if landing is None:
                raise SymlinkOutside(
                    f"{display!r} is a symlink (or passes through one) that leads outside the workspace"
                )
            _close_all(owned)
            root, rest = landing
            names, owned = [], []
            target_parts = rest
        pending.extendleft(reversed(target_parts))
        return root, names, owned

    def _root_holding(self, absolute: str) -> tuple[Root, list[str]] | None:
        for root in self.roots:
            rest = root.parts_of(absolute)
            if rest is not None:
                return root, rest
        return None


def _climbs_above(depth: int, parts: list[str]) -> bool:
    for part in parts:
        depth += -1 if part == ".." else 1
        if depth < 0:
            return True
    return False


def _open_directory(cur: int, comp: str, display: str) -> int:
    try:
        return os.open(comp, DIR_FLAGS, dir_fd=cur)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.ENOENT):
            # swapped for a symlink, a file or nothing since we looked: refuse rather than follow
            raise Raced(
                f"{display!r}: a directory on the path changed while it was being resolved",
                details={"errno": exc.errno},
            ) from exc
        raise


def _stage(cur: int, comp: str) -> tuple[Staging, int]:
    """A hidden temp directory in ``cur`` to build the missing chain under, open and locked (a live
    writer's staging is never swept)."""
    fd, name = create_staging(cur)
    return Staging(parent=cur, name=name, final=comp, fd=fd), fd


def _make_directory(cur: int, comp: str) -> bool:
    try:
        os.mkdir(comp, 0o777, dir_fd=cur)
        return True
    except FileExistsError:
        return False  # created by someone else meanwhile: the walk looks again


def _close_all(fds: list[int]) -> None:
    while fds:
        os.close(fds.pop())


def describe_kind(mode: int) -> str:
    """A human name for a non-regular file type."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a Unix socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "not a regular file"


def require_regular(st: os.stat_result, display: str) -> None:
    if stat.S_ISREG(st.st_mode):
        return
    kind = describe_kind(st.st_mode)
    raise NotRegularFile(
        f"{display!r} is {kind}, not a regular file",
        kind="directory" if stat.S_ISDIR(st.st_mode) else kind,
    )
