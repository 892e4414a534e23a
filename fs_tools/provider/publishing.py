"""Committing new bytes for a file: a complete, synced temp beside it, renamed into place under the
file's lock and its directory's, after the last check that the file is still the expected version."""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import logging
import os
import stat
from collections.abc import Callable

from fs_tools.errors import Aborted, MissingParent, NotRegularFile, Raced, StaleVersion
from fs_tools.provider import versions
from fs_tools.provider.content import version_of
from fs_tools.provider.disk import Disk, check_cancel, hold, keep_of, names, vanished
from fs_tools.provider.face import CancelToken, Gate, Snapshot
from fs_tools.provider.locks import directory_lock
from fs_tools.provider.primitives import Primitives
from fs_tools.provider.resolve import Resolved
from fs_tools.provider.tempfiles import create_temp

log = logging.getLogger("fs_tools.provider")


@dataclasses.dataclass
class Temp:
    """A complete, synced temp file beside its target, open and locked until published or discarded."""

    dir_fd: int
    fd: int
    name: str
    keep: tuple[int, int, int] | None  # the mode, owner and group it was given (None: a new file's)
    written: os.stat_result
    taken: bool = False  # a publish took it over: closing and removing it are then the publish's

    def discard(self) -> None:
        with contextlib.suppress(OSError):
            os.unlink(self.name, dir_fd=self.dir_fd)
        os.close(self.fd)


def commit(
    disk: Disk,
    target: Resolved,
    gate: Gate,
    content: bytes | Callable[[Snapshot], bytes],
    *,
    with_parents: Callable[[], Resolved],
    cancel: CancelToken | None,
    mode: int | None,
) -> Snapshot:
    """``FileProvider.commit`` on the resolved ``target``; ``with_parents`` resolves the path again,
    making its missing parent directories (for a new file in a new directory)."""
    display = target.display
    expected = gate.expect(disk.state(target))
    if isinstance(content, bytes):
        disk.check_content_size(len(content), display)  # refused before the disk is touched
    if expected is None and not target.parent_exists:
        check_cancel(cancel, f"writing {display!r}")
        target = with_parents()
        expected = gate.expect(disk.state(target))
    early: Temp | None = None
    try:
        # New bytes are written to a temp and synced before the file's lock is taken: the lock is held
        # for the checks and the rename, never across an fsync (the directory's comes after).
        if isinstance(content, bytes):
            early = _early_temp(disk, target, content, mode)
        with disk.locks.hold(target.key, cancel=cancel, display=display):
            before = None
            if not isinstance(content, bytes):
                before = versions.current(disk, target, expected)
            data = content if isinstance(content, bytes) else content(before)  # type: ignore[arg-type]
            check_cancel(cancel, f"writing {display!r}")
            after, replaced, made = commit_locked(
                disk, target, data, expected=expected, basis=before, cancel=cancel, early=early, mode=mode
            )
            gate.record(target.key, after, before=replaced, made=made)
    except BaseException:
        target.remove_created_directories()  # a failed create leaves no empty directories behind
        raise
    finally:
        if early is not None and not early.taken:
            early.discard()
    if early is not None and target.dir_fd is not None:  # the publish left the directory's sync to us
        disk.sync_directory(target.dir_fd, display)
    return after


def _early_temp(disk: Disk, target: Resolved, data: bytes, mode: int | None) -> Temp | None:
    """The new bytes in a synced temp beside the file, made with the mode the file has now (a commit
    takes it only if the file still has that mode and owner under the lock); None where the file's
    directory is yet to be made."""
    if target.staged is not None or target.dir_fd is None or target.name is None:
        return None
    try:
        now = target.leaf_stat()
    except OSError:
        return None  # the commit, under the lock, says what is wrong
    if now is not None and not stat.S_ISREG(now.st_mode):
        return None
    return write_temp(disk, target.dir_fd, data, keep_of(now, mode))


def write_temp(disk: Disk, dir_fd: int, data: bytes, keep: tuple[int, int, int] | None, *, sweep: bool = True) -> Temp:
    """A new temp in ``dir_fd`` holding ``data``, with ``keep``'s mode and owner, synced to disk; it
    stays open (and so locked against sweepers) until it is published or discarded. ``sweep`` first
    advances the removal of temps killed writers left in the directory."""
    if sweep:
        disk.sweeper.sweep(dir_fd)
    fd, name = create_temp(dir_fd, 0o600 if keep is not None else 0o666)
    try:
        disk.primitives.write_all(fd, data)
        if keep is not None:
            mode, uid, gid = keep
            if os.geteuid() == 0:
                os.chown(fd, uid, gid)  # the descriptor form of chown (fchown)
            os.fchmod(fd, _without_set_id(mode))
        if disk.durable:
            os.fsync(fd)
        return Temp(dir_fd, fd, name, keep, os.fstat(fd))
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(name, dir_fd=dir_fd)
        os.close(fd)
        raise


def commit_locked(
    disk: Disk,
    target: Resolved,
    data: bytes,
    *,
    expected: str | None,
    basis: Snapshot | None = None,
    cancel: CancelToken | None = None,
    attempt: int = 0,
    early: Temp | None = None,
    mode: int | None = None,
) -> tuple[Snapshot, Snapshot | None, tuple[str, ...]]:
    """Atomically replace the file if it is still at version ``expected``, or create it if ``expected``
    is None and it still does not exist; ``FS_STALE_VERSION`` otherwise. Returns the new snapshot, the
    one it replaced (None for a new file) and the keys of the parent directories it made.

    The caller holds the file's lock (``disk.locks.hold(target.key)``). ``basis`` is a snapshot already
    taken under that lock; the last check, under the directory's OS lock, trusts an unchanged stat of
    it only when the file was last changed well before the snapshot was read.
    """
    display = target.display
    disk.started(target.key)
    disk.check_content_size(len(data), display)
    if target.name is None:
        raise NotRegularFile(f"{display!r} is a directory, not a regular file", kind="directory")
    if target.dir_fd is None:
        if expected is not None:
            raise vanished(display)
        raise MissingParent(f"{display!r}: the parent directory does not exist")
    now = target.leaf_stat()
    basis = versions.check_expected(disk, target, now, expected, basis)
    for listener in disk.listeners:
        listener.version_checked(target.key)
    if cancel is not None and cancel.is_set():
        raise Aborted(f"writing {display!r} was cancelled before anything was written")
    keep = keep_of(now, mode)
    new_stat, replaced = publish(
        disk, target, data, keep, expected=expected, basis=basis, cancel=cancel, early=early, sync=early is None
    )
    disk.sync_created_directories(target)
    if target.staged is not None and not target.staged.published:
        return _publish_staging(disk, target, data, new_stat, cancel, attempt, mode)
    snap = Snapshot(data=data, version=version_of(data), stat=new_stat)
    disk.cache.put(snap.version, data)
    return snap, replaced, target.made_keys()


def _publish_staging(
    disk: Disk,
    target: Resolved,
    data: bytes,
    written: os.stat_result,
    cancel: CancelToken | None,
    attempt: int,
    mode: int | None,
) -> tuple[Snapshot, Snapshot | None, tuple[str, ...]]:
    """The new file is complete inside its staged parent directories: publish the whole chain under its
    name by one no-replace rename. If a directory of that name appeared meanwhile (another writer
    creating a sibling), take the file out and commit it again into what is there now."""
    display = target.display
    staged = target.staged
    assert staged is not None and target.dir_fd is not None and target.name is not None
    appeared = False
    try:
        with directory_lock(staged.parent, disk.lock_timeout, cancel, display):
            disk.sweeper.sweep(staged.parent)  # where killed creators leave their staging
            done = disk.primitives.rename_directory_no_replace(staged.parent, staged.name, staged.final)
    except FileExistsError:
        done, appeared = False, True
    except OSError:
        _withdraw_staged(target)
        raise
    except BaseException:
        if not staged.published and not names(staged.parent, staged.final, os.fstat(staged.fd)):
            _withdraw_staged(target)
        raise
    if done:
        staged.published = True
        disk.sync_directory(staged.parent, display, "creating")
        snap = Snapshot(data=data, version=version_of(data), stat=written)
        disk.cache.put(snap.version, data)
        return snap, None, target.made_keys()
    _withdraw_staged(target)
    if attempt >= 3:
        raise Raced(f"{display!r}: its parent directories kept changing while it was being created")
    with disk.resolver.resolve(target.key, create_parents=True, stage=appeared) as again:
        if again.key != target.key:  # a symlink appeared on the way: the gates judged another path
            raise Raced(f"{display!r}: a directory on the path changed while it was being created")
        try:
            return commit_locked(disk, again, data, expected=None, cancel=cancel, attempt=attempt + 1, mode=mode)
        except BaseException:
            again.remove_created_directories()
            raise


def publish(
    disk: Disk,
    target: Resolved,
    data: bytes,
    keep: tuple[int, int, int] | None,
    *,
    expected: str | None,
    basis: Snapshot | None,
    cancel: CancelToken | None,
    early: Temp | None = None,
    sync: bool = True,
) -> tuple[os.stat_result, Snapshot | None]:
    """Write a complete temp file, then — holding the directory's OS lock, which other processes and
    other workspaces respect too — re-check the expectation and rename it into place.

    ``keep`` is the replaced file's (mode, uid, gid), less the set-user-ID and set-group-ID bits
    (cleared as the kernel clears them when a file's content is written); a new file is created with
    mode 0o666 and the kernel applies the process umask, which is never read or changed here. Returns
    the temp's stat and the snapshot of the file it replaced, as verified (None: created). ``early`` is
    a temp already written (``_early_temp``): taken if it was made with ``keep`` in this directory,
    else left to its maker to discard. ``sync=False`` leaves the directory's fsync to the caller (done
    once the file's lock is released).
    """
    display = target.display
    dir_fd, name = target.dir_fd, target.name
    assert dir_fd is not None and name is not None
    temp: str | None = None
    published = False
    proven: Snapshot | None = None
    try:
        if early is not None and early.dir_fd == dir_fd and early.keep == keep and target.staged is None:
            early.taken = True
            fd, temp, written = early.fd, early.name, early.written
        else:
            made = write_temp(disk, dir_fd, data, keep, sweep=target.staged is None)
            fd, temp, written = made.fd, made.name, made.written
        try:  # the temp stays open, and so locked against sweepers, until it is published
            # Inside staged parent directories no other writer can be (the staging is locked as ours).
            locked = (
                directory_lock(dir_fd, disk.lock_timeout, cancel, display)
                if target.staged is None
                else contextlib.nullcontext()
            )
            with locked:
                proven = versions.check_expected(disk, target, target.leaf_stat(), expected, basis, True)
                if cancel is not None and cancel.is_set():
                    raise Aborted(f"writing {display!r} was cancelled before it was published; the file is intact")
                if expected is None:
                    try:
                        disk.primitives.rename_no_replace(dir_fd, temp, name)
                    except FileExistsError as exc:  # a creator won the race: never clobber it
                        raise StaleVersion(f"{display!r} already exists", found="exists") from exc
                    published = True
                elif proven is None:  # no version to prove (only when a benchmark switches the gate off)
                    os.rename(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
                    published = True
                else:
                    published = True  # from here on, _replace alone decides what the temp name holds
                    _replace(disk, dir_fd, temp, name, proven, written, display)
        finally:
            os.close(fd)
    finally:
        if not published and temp is not None:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=dir_fd)
    if sync:
        disk.sync_directory(dir_fd, display)  # the rename is done; a failure to sync it is logged
    return written, proven


def _replace(
    disk: Disk, dir_fd: int, temp: str, name: str, proven: Snapshot, ours: os.stat_result, display: str
) -> None:
    """Put the temp in place of ``name``, proving that what it displaces is the verified version.

    A program that saves by rename between the last check and this rename would otherwise be
    overwritten unseen. Where the kernel can swap two names atomically the temp is swapped in and the
    file it displaced is checked: if it is not the one just verified, the two are swapped back, the
    other program's save is kept and this change is ``FS_STALE_VERSION``. Elsewhere it is a plain
    rename (the docs say what that leaves open). Once the swap is made, the temp name may hold another
    program's file, so this function alone decides what becomes of it.
    """
    # The file to be replaced, held and locked across the swap: once swapped it sits under the temp
    # name until settled, and a sweeper (another writer's) must not take it for an orphan.
    holder = hold(disk.primitives, dir_fd, name)
    try:
        _swap_in(disk, dir_fd, temp, name, proven, ours, display)
    finally:
        if holder is not None:
            os.close(holder)


def _swap_in(
    disk: Disk, dir_fd: int, temp: str, name: str, proven: Snapshot, ours: os.stat_result, display: str
) -> None:
    try:
        swapped = disk.primitives.exchange(dir_fd, temp, name)
    except FileNotFoundError:  # deleted since the check: a rename would bring it back
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=dir_fd)
        raise vanished(display) from None
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=dir_fd)
        raise
    except BaseException:  # interrupted around the swap: settle what it did, then go on interrupting
        if names(dir_fd, name, ours):
            _settle_swap(disk, dir_fd, temp, name, proven, ours, display)
        else:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=dir_fd)
        raise
    if not swapped:
        try:
            os.rename(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=dir_fd)
            raise
        return
    try:
        settled = _settle_swap(disk, dir_fd, temp, name, proven, ours, display)
    except BaseException:  # interrupted before the displaced file was proven ours to drop: keep theirs
        if names(dir_fd, name, ours):
            _swap_back(disk.primitives, dir_fd, temp, name, ours)
        raise
    if not settled:
        raise StaleVersion(
            f"{display!r} was replaced by another program just as this change was being saved",
            found="modified",
        )


def _settle_swap(
    disk: Disk, dir_fd: int, temp: str, name: str, proven: Snapshot, ours: os.stat_result, display: str
) -> bool:
    """After the swap: keep it if the displaced file is the verified version (True), else swap back."""
    if versions.is_version(disk, dir_fd, temp, proven):
        try:
            os.unlink(temp, dir_fd=dir_fd)  # the replaced version
        except OSError as exc:  # published all the same; the leftover is an orphan for the sweeper
            log.warning("published %r, but the replaced file could not be removed: errno %s", display, exc.errno)
        return True
    _swap_back(disk.primitives, dir_fd, temp, name, ours)
    return False


def _swap_back(prims: Primitives, dir_fd: int, temp: str, name: str, ours: os.stat_result) -> None:
    """Undo a swap: the other program's file back under ``name``, ours under the temp name, removed.

    If yet another save replaced ours under ``name`` meanwhile, that newest save is put back under
    ``name`` and the one it superseded is removed, as that save's own rename would have done. Never
    raises: what cannot be sorted out is left in place and logged."""
    try:
        if not prims.exchange(dir_fd, temp, name):
            raise OSError(errno.ENOTSUP, "the swap worked once and not again")
    except FileNotFoundError:  # the name is gone meanwhile: put theirs back under it
        with contextlib.suppress(OSError):
            prims.rename_no_replace(dir_fd, temp, name)
        return
    except OSError as exc:
        log.error("could not withdraw a stale change (errno %s); the other file is left under %r", exc.errno, temp)
        return
    try:
        if not names(dir_fd, temp, ours):
            prims.exchange(dir_fd, temp, name)  # a newer save replaced ours: it goes back under the name
        os.unlink(temp, dir_fd=dir_fd)
    except OSError as exc:
        log.warning("withdrew a stale change, but cleaning up after it failed: errno %s", exc.errno)


def _withdraw_staged(target: Resolved) -> None:
    """Take a file published inside unpublished staging out again, and remove the staging."""
    assert target.dir_fd is not None and target.name is not None
    with contextlib.suppress(OSError):
        os.unlink(target.name, dir_fd=target.dir_fd)
    target.remove_created_directories()


def _without_set_id(mode: int) -> int:
    """The mode less set-user-ID, and set-group-ID where group-execute is set (without it the bit marks
    mandatory locking, which the kernel keeps), as the kernel clears them when a file is written."""
    mode &= ~stat.S_ISUID
    if mode & stat.S_IXGRP:
        mode &= ~stat.S_ISGID
    return mode
