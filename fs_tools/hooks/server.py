"""The hook server (``python -m fs_tools.hooks.server SOCKET``): started by the hook command that finds
none (``fs_tools.hooks.relay``), it answers that command's events with gates kept open between them."""

from __future__ import annotations

import contextlib
import fcntl
import functools
import os
import socket
import sys
import threading
import time

from fs_tools.hooks.command import answer_event
from fs_tools.hooks.engine import DEADLINE, HookGates
from fs_tools.hooks.harnesses import Answer
from fs_tools.hooks.relay import (
    HEADER,
    MAX_EVENT_BYTES,
    MAX_HEADER,
    REPLY,
    SOURCES_LOOKED_EVERY,
    encoded,
    idle_seconds,
    peer_uid,
    private_directory,
    receive,
    setting,
    socket_path,
)

MAX_SETTINGS = 16  # sets of gates a server keeps open (command lines); the least recently used closes
MAX_WORKERS = 64  # events in flight at once; past them a connection is closed (the command answers)


def serve(path: str) -> int:
    """Listen at ``path`` until idle; the exit status. One server per path: another one's lock held, or a
    setting that is not this process's, and it leaves at once."""
    mine = setting()
    if path != socket_path(mine) or not private_directory(os.path.dirname(path)):
        return 2
    lock = os.open(path + ".lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(lock)
        return 0  # another server has it
    os.ftruncate(lock, 0)
    os.write(lock, f"{os.getpid()}\n".encode())  # which process to stop (stop_servers)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server = _Server(mine)
    mine_socket = -1
    workers: list[threading.Thread] = []
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        listener.bind(path)
        os.chmod(path, 0o600)
        mine_socket = os.stat(path).st_ino
        listener.listen(64)
        listener.settimeout(1.0)  # a tick: to see that it is retiring (fs-tools changed) or idle
        idle, last = idle_seconds(), time.monotonic()
        while not server.retiring.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                if time.monotonic() - last >= idle or not _still(path, mine_socket):
                    break  # idle, or its socket is gone or another's (the state directory was removed)
                continue
            last = time.monotonic()
            workers = [w for w in workers if w.is_alive()]
            if len(workers) >= MAX_WORKERS:  # events stuck behind one that does not end: the command answers
                connection.close()
                continue
            worker = threading.Thread(target=server.serve_one, args=(connection,), daemon=False)
            worker.start()
            workers.append(worker)
    finally:
        if _still(path, mine_socket):
            with contextlib.suppress(OSError):
                os.unlink(path)
        listener.close()
        for worker in workers:
            worker.join()
        server.close()
        os.close(lock)
    return 0


class _Server:
    """Answers events with gates kept open between them, one set per command line (harness, roots,
    store, protected paths, read-only), each taken by one event at a time."""

    def __init__(self, mine: bytes) -> None:
        self.setting = mine
        self.sources = _sources()
        self._looked = time.monotonic()
        self.retiring = threading.Event()
        self._lock = threading.Lock()
        self._gates: dict[tuple[object, ...], tuple[threading.Lock, HookGates]] = {}

    def close(self) -> None:
        with self._lock:
            for _, gates in self._gates.values():
                gates.close()
            self._gates.clear()

    def serve_one(self, connection: socket.socket) -> None:
        try:
            with connection:
                connection.settimeout(60.0)
                reply = self._reply(connection)
                connection.sendall(reply)
        except Exception:  # the command answers the event itself when no answer came
            pass

    def _reply(self, connection: socket.socket) -> bytes:
        refused = REPLY.pack(0, 0, 0, 0)
        uid = peer_uid(connection)  # None: the system does not say, and the directory's mode keeps others out
        if uid is not None and uid != os.getuid():
            return refused
        setting_size, words_size, waits = HEADER.unpack(receive(connection, HEADER.size))
        until = time.monotonic() + min(max(waits, 0.0), 3600.0)  # when the command stops waiting
        if setting_size + words_size > MAX_HEADER:
            return refused
        theirs = receive(connection, setting_size)
        words = receive(connection, words_size).decode("utf-8", "surrogateescape").split("\0")
        event = _read_to_end(connection, MAX_EVENT_BYTES + 1)
        if theirs != self.setting or self.retiring.is_set():
            return refused
        if time.monotonic() - self._looked > SOURCES_LOOKED_EVERY:
            self._looked = time.monotonic()
            if _sources() != self.sources:  # fs-tools changed under it: the next command starts a fresh one
                self.retiring.set()
                return refused
        said = self._judge(words, event, until)
        if said is None:
            return refused
        status, out, err = encoded(said)
        return REPLY.pack(1, status, len(out), len(err)) + out + err

    def _judge(self, words: list[str], event: bytes, until: float) -> Answer | None:
        options = _options(tuple(words))
        if options is None:
            return None
        harness, roots, store, protected, read_only = options
        key = (harness, roots, store, protected, read_only)
        old: tuple[threading.Lock, HookGates] | None = None
        with self._lock:
            held = self._gates.pop(key, None)  # and put back last: the most recently used last
            if held is None:
                gates = HookGates(harness, roots=roots or None, store=store, protected=protected, read_only=read_only)
                held = (threading.Lock(), gates)
                if len(self._gates) >= MAX_SETTINGS:
                    old = self._gates.pop(next(iter(self._gates)))
            self._gates[key] = held
        if old is not None:  # closed once its event is done, never under it, and not on this event's time
            threading.Thread(target=_close_when_free, args=old, daemon=True).start()
        lock, gates = held
        # Not past the command's wait: an event judged after its command gave up could take a lease its
        # own post event already gave back.
        if not lock.acquire(timeout=max(0.0, until - time.monotonic())):
            return None
        try:
            with self._lock:
                current = self._gates.get(key) is held
            if not current or time.monotonic() >= until:  # closed as least recently used meanwhile; too late
                return None
            token = DEADLINE.set(until)
            try:
                return answer_event(harness, event, gates.handle)
            finally:
                DEADLINE.reset(token)
        finally:
            lock.release()


@functools.lru_cache(maxsize=64)
def _options(words: tuple[str, ...]) -> tuple[str, tuple[str, ...], str, tuple[str, ...], bool] | None:
    """The command line's options as ``fs-tools hook`` reads them; None for any other command line (the
    command itself then says what is wrong with it)."""
    import contextlib
    import io

    from fs_tools import cli

    try:
        cli._check_leading_options(list(words))
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            args = cli._parser().parse_args(list(words))
    except (SystemExit, Exception):
        return None
    if args.command != "hook" or args.action != "run":
        return None
    store = cli.hook_store(args)
    roots = tuple(os.path.abspath(root) for root in args.root or [])
    return args.harness, roots, store, tuple(args.protected), bool(args.read_only)


def _close_when_free(lock: threading.Lock, gates: HookGates) -> None:
    with lock:
        gates.close()


def _still(path: str, inode: int) -> bool:
    """Whether ``path`` is still the socket this server bound."""
    try:
        return os.stat(path).st_ino == inode
    except OSError:
        return False


def _read_to_end(connection: socket.socket, most: int) -> bytes:
    chunks, size = [], 0
    while size < most:
        chunk = connection.recv(min(most - size, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _sources() -> tuple[int, int]:
    """How many of fs-tools' own files there are and the latest change among them (the package and the
    policy package beside it)."""
    import fs_tools
    import policy

    count, latest = 0, 0
    for package in (fs_tools, policy):
        for folder, _, files in os.walk(os.path.dirname(os.path.abspath(package.__file__ or ""))):
            for name in files:
                if name.endswith(".py"):
                    try:
                        latest = max(latest, os.stat(os.path.join(folder, name)).st_mtime_ns)
                    except OSError:
                        continue
                    count += 1
    return count, latest


if __name__ == "__main__":
    sys.exit(serve(sys.argv[1]) if len(sys.argv) == 2 else 2)
