"""The hook command's side of the hook server. A harness runs ``fs-tools hook`` around every tool call, and
each run would otherwise pay for importing the library and opening the workspace (a few hundred
milliseconds). The command asks a server kept by the user (``fs_tools.hooks.server``) instead: the event
goes over a Unix socket, the answer comes back, and the command's own cost is a Python start and a round
trip.

- **One server per setting.** A server answers only the commands whose answers would be the same in its
  own process: the same interpreter and fs-tools, the same working directory, umask and the environment
  fs-tools reads (``WATCHED``, and every ``FS_TOOLS_*``). Its socket's name is a hash of those, and the
  command sends them whole: a server that finds them different says so and the command answers itself.
- **Started on demand, gone when idle.** A command that finds no server starts one (detached, in its own
  session) and answers its own event; the next finds it. A server leaves after ``IDLE_SECONDS`` without
  an event, and after an answer once the fs-tools files it was started from changed (an upgrade, an
  editable install edited): the next command starts a fresh one.
- **Private.** Sockets live in ``<state directory>/hookd``, a directory only the user can enter (one that
  is not is never used); the server answers only its own user (``SO_PEERCRED``, where the system has it).
- **Never in the way.** Whatever goes wrong on the way (no socket, a path too long, a server that closes
  the connection, one that does not know the setting) the command answers the event itself, as without a
  server; only the hook's own ``--timeout`` ends the wait. ``FS_TOOLS_HOOK_SERVER=0`` turns the server
  off, and ``--log-level`` (whose log goes to the command's stderr) does too, for that run.

The command's side imports nothing beyond the standard library's smallest modules: it runs before the
rest of fs-tools is imported.
"""

from __future__ import annotations

import os
import socket
import struct
import sys
import time
import zlib

from fs_tools.state import state_path

TYPE_CHECKING = False  # not typing's: importing typing costs this command ~4 ms

SERVER_ENV = "FS_TOOLS_HOOK_SERVER"  # "0": no hook server, every event judged in its own process
IDLE_SECONDS = 600.0  # a server with no event for this long leaves (FS_TOOLS_HOOK_IDLE: another number)
IDLE_ENV = "FS_TOOLS_HOOK_IDLE"
MAX_EVENT_BYTES = 64 << 20  # a Write's content travels in its event: more than any file fs-tools writes
# What a hook's answer depends on, beside FS_TOOLS_*: the state directory, where the library comes from, and
# the variables the harnesses name their project and their own directory by (fs_tools.hooks.harnesses).
WATCHED = (
    "HOME",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "PYTHONUTF8",
    "PYTHONIOENCODING",
    "XDG_STATE_HOME",
    "PYTHONPATH",
    "PYTHONHOME",
    "CLAUDE_PROJECT_DIR",
    "CLAUDE_CONFIG_DIR",
    "GEMINI_PROJECT_DIR",
    "CODEX_HOME",
)
START_GRACE = 10.0  # seconds after a server was started at a socket before another is started there
SOURCES_LOOKED_EVERY = 1.0  # seconds: how often a server looks whether fs-tools' files changed
DEFAULT_TIMEOUT = 20.0  # the hook command's --timeout default
HEADER = struct.Struct(">IId")  # the setting's length, the words' length, the seconds the command waits
REPLY = struct.Struct(">BiII")  # answered (1) or not (0), exit status, stdout's and stderr's lengths
MAX_HEADER = 1 << 20


if TYPE_CHECKING:
    from fs_tools.hooks.harnesses import Answer

_asked = False
deadline: float | None = None  # when the hook's --timeout ends, once the relay started counting it


def forget() -> None:
    """The run is answered: a next one in this process asks the server and counts its time afresh."""
    global _asked, deadline
    _asked, deadline = False, None


def remaining(timeout: float) -> float:
    """What is left of ``timeout`` for the command's own answer, after the relay spent some of it."""
    if deadline is None:
        return timeout
    return max(0.001, min(timeout, deadline - time.monotonic()))


def _readable(stream: object) -> bool:
    """A stdin the event can be read from by descriptor, and not a terminal."""
    try:
        return stream is not None and not stream.isatty() and stream.fileno() >= 0  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):
        return False


class Unanswered(Exception):
    """The server gave no answer: the command answers the event itself."""


class NoServer(Unanswered):
    """No server listens there: the command starts one."""


# --- the command's side -------------------------------------------------------------------------------


def setting() -> bytes:
    """What an answer depends on besides the event and the command's words: the interpreter and fs-tools,
    the working directory, the credentials (groups too), the umask, the encoding paths are named in, the
    host and the mount namespace, and the environment fs-tools reads."""
    umask = os.umask(0o022)
    os.umask(umask)
    names = sorted({*WATCHED, *(name for name in os.environ if name.startswith("FS_TOOLS_"))})
    try:
        namespace = str(os.stat("/proc/self/ns/mnt").st_ino)
    except OSError:
        namespace = ""
    who = f"{os.getuid()}:{os.getgid()}:{os.getegid()}:{sorted(os.getgroups())}"
    # (UTF-8 mode: on by itself under the C locale, in the server as in the command started there)
    place = f"{os.uname().nodename}:{namespace}:{sys.getfilesystemencoding()}:{sys.flags.utf8_mode}"
    parts = [sys.executable, os.path.dirname(os.path.abspath(__file__)), os.getcwd(), oct(umask), who, place]
    parts += [f"{name}={os.environ.get(name, '')}" for name in names if name != SERVER_ENV]
    return "\0".join(parts).encode("utf-8", "surrogateescape")


def socket_path(setting_bytes: bytes) -> str:
    name = f"{zlib.crc32(setting_bytes):08x}{zlib.adler32(setting_bytes):08x}.sock"
    return os.path.join(state_path(), "hookd", name)


def private_directory(path: str) -> bool:
    """Make ``path`` (mode 0700) if it is missing; whether it is a directory only this user can enter."""
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        found = os.stat(path, follow_symlinks=False)
    except OSError:
        return False
    import stat

    return stat.S_ISDIR(found.st_mode) and found.st_uid == os.getuid() and found.st_mode & 0o077 == 0


def wanted(words: list[str]) -> bool:
    """Whether this run may ask a server: not turned off, no log of its own to show (``--log-level`` or a
    prefix of it), and an interpreter run as the server's is (no -I, -E, -P or -X dev: a server starts
    without them)."""
    if os.environ.get(SERVER_ENV, "1").strip() == "0" or os.environ.get("FS_TOOLS_LOG_LEVEL"):
        return False
    flags = sys.flags
    if flags.isolated or flags.ignore_environment or flags.dev_mode or getattr(flags, "safe_path", False):
        return False
    return not any(word.startswith("--log") for word in words)


def _option(words: list[str], name: str, shortest: int) -> str | None:
    """The value of option ``name`` as argparse reads it: the last one given, by its whole name or a prefix
    of at least ``shortest`` characters, as ``--name value`` or ``--name=value``."""
    found = None
    for at, word in enumerate(words):
        given, equals, value = word.partition("=")
        if len(given) < shortest or not name.startswith(given):
            continue
        if equals:
            found = value
        elif at + 1 < len(words):
            found = words[at + 1]
    return found


def timeout_of(words: list[str]) -> float:
    """The hook's ``--timeout``, else its default."""
    value = _option(words, "--timeout", 3)
    if value is None:
        return DEFAULT_TIMEOUT
    try:
        seconds = float(value)
    except ValueError:
        return DEFAULT_TIMEOUT  # the command itself says what is wrong with it
    return seconds if seconds > 0 else DEFAULT_TIMEOUT


def ask(path: str, setting_bytes: bytes, words: list[str], event: bytes, timeout: float) -> tuple[int, bytes, bytes]:
    """The server's answer to ``event``: (exit status, stdout, stderr). ``Unanswered`` when there is no
    server or it did not answer; ``TimeoutError`` when ``timeout`` passed first."""
    blob = "\0".join(words).encode("utf-8", "surrogateescape")
    until = time.monotonic() + timeout
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.settimeout(timeout)
        try:
            connection.connect(path)
        except (FileNotFoundError, ConnectionRefusedError) as exc:
            raise NoServer(str(exc)) from exc
        except TimeoutError:
            raise
        except (OSError, ValueError) as exc:  # a path too long for a socket, ...
            raise Unanswered(str(exc)) from exc
        if not _ours(connection):
            raise Unanswered("the socket's server is another user's")
        try:
            connection.sendall(HEADER.pack(len(setting_bytes), len(blob), timeout) + setting_bytes + blob)
            connection.settimeout(max(0.001, until - time.monotonic()))  # the whole wait, not each step's
            connection.sendall(event)
            connection.shutdown(socket.SHUT_WR)
            connection.settimeout(max(0.001, until - time.monotonic()))
            head = receive(connection, REPLY.size)
            answered, status, out_size, err_size = REPLY.unpack(head)
            if not answered:
                raise Unanswered("the server did not take the event")
            out = receive(connection, out_size)
            err = receive(connection, err_size)
        except TimeoutError:
            raise
        except OSError as exc:  # it went away before answering
            raise Unanswered(str(exc)) from exc
        return status, out, err
    finally:
        connection.close()


PEER = struct.Struct("iII")  # struct ucred: pid, uid, gid


def peer_uid(connection: socket.socket) -> int | None:
    """The uid of the process at the other end (Linux: SO_PEERCRED); None where the system does not say."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    return int(PEER.unpack(connection.getsockopt(socket.SOL_SOCKET, option, PEER.size))[1])


def _ours(connection: socket.socket) -> bool:
    """Whether the server is this user's (where the system says; elsewhere the directory's mode decides)."""
    uid = peer_uid(connection)
    return uid is None or uid == os.getuid()


def receive(connection: socket.socket, size: int) -> bytes:
    chunks = []
    while size:
        chunk = connection.recv(min(size, 1 << 20))
        if not chunk:
            raise Unanswered("the server closed the connection before its answer was whole")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def start(path: str) -> None:
    """Start a server for ``path`` (detached: it outlives this command), unless one was started there in
    the last ``START_GRACE`` seconds (it is starting, or it failed: it is not started at every event, and
    a burst of first events starts one); never raises."""
    marker = path + ".start"
    try:
        try:
            os.close(os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600))
        except FileExistsError:
            if 0 <= time.time() - os.stat(marker).st_mtime < START_GRACE:  # (one in the future: a clock set back)
                return
            os.unlink(marker)  # an old start's: taken by whichever command makes it again first
            os.close(os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600))
        import subprocess

        subprocess.Popen(
            [sys.executable, "-m", "fs_tools.hooks.server", path],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
    except Exception:  # the event is answered here all the same
        pass


def answer(words: list[str]) -> int | None:
    """Answer the hook event on stdin through a server: the exit status, its output written. None when
    this process must answer it itself; the event is then on ``sys.stdin`` again."""
    global _asked, deadline
    if _asked or not wanted(words) or not _readable(sys.stdin):
        return None
    _asked = True  # once per process: the command's own answer does not ask again
    timeout = timeout_of(words)
    until = deadline = time.monotonic() + timeout  # the command's own answer has what is left of it
    event = _read_event(timeout)  # within the hook's time, as the command's own reading is
    try:
        answered = _late(words, timeout) if event is None else _through_server(words, event, until)
    except Exception:  # anything at all: the command answers the event itself
        answered = None
    if answered is None:
        if event is None:
            return None  # (no harness named: the command says so)
        import io

        sys.stdin = io.TextIOWrapper(io.BytesIO(event), encoding="utf-8")
        return None
    status, out, err = answered
    if out:
        sys.stdout.buffer.write(out)
        sys.stdout.flush()
    if err:
        sys.stderr.buffer.write(err)
        sys.stderr.flush()
    return status


def _read_event(seconds: float) -> bytes | None:
    """The event on stdin (at most one byte over the limit), or None when it did not come in time."""
    import select

    until = time.monotonic() + seconds
    fd = sys.stdin.fileno()
    chunks, size = [], 0
    while size <= MAX_EVENT_BYTES:
        left = until - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return None
        chunk = os.read(fd, min(1 << 20, MAX_EVENT_BYTES + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _through_server(words: list[str], event: bytes, until: float) -> tuple[int, bytes, bytes] | None:
    mine = setting()
    path = socket_path(mine)
    if not private_directory(os.path.dirname(path)):
        return None
    try:
        left = until - time.monotonic()
        if left <= 0:
            raise TimeoutError
        return ask(path, mine, words, event, left)
    except NoServer:
        start(path)
        return None
    except Unanswered:
        return None
    except TimeoutError:
        return _late(words, timeout_of(words))


def _late(words: list[str], timeout: float) -> tuple[int, bytes, bytes] | None:
    """The harness's "no opinion" for an event not judged within ``timeout``; None when no harness is named."""
    from fs_tools.hooks.harnesses import HARNESSES, unjudged

    harness = HARNESSES.get(_harness_of(words) or "")
    if harness is None:
        return None
    return encoded(harness.answer(unjudged(f"no verdict within {timeout:g} s")))


def encoded(said: Answer) -> tuple[int, bytes, bytes]:
    """An answer as the command writes it: its status, stdout, and stderr ending its line (as ``print``
    ends it), characters no encoding takes escaped."""
    err = f"{said.stderr}\n" if said.stderr else ""
    return said.status, said.stdout.encode("utf-8", "backslashreplace"), err.encode("utf-8", "backslashreplace")


def _harness_of(words: list[str]) -> str | None:
    return _option(words, "--harness", 4)  # ("--h" is --help's too)


def idle_seconds() -> float:
    try:
        seconds = float(os.environ.get(IDLE_ENV, "") or IDLE_SECONDS)
    except ValueError:
        return IDLE_SECONDS
    return seconds if 0 < seconds < 86_400 else IDLE_SECONDS


def stop_servers(state: str | None = None) -> int:
    """Stop the hook servers of the state directory ``state`` (default: this user's); how many. For a
    test or a benchmark that started some, and for anyone who wants them gone before they idle out."""
    import signal

    directory = os.path.join(state or state_path(), "hookd")
    try:
        names = [name for name in os.listdir(directory) if name.endswith(".sock.lock")]
    except OSError:
        return 0
    stopped = 0
    for name in names:
        try:
            with open(os.path.join(directory, name), "rb") as held:
                pid = int(held.read().strip() or 0)
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline:  # that pid, if reused, is left alone
                ours = b"fs_tools.hooks.server" in cmdline.read()
        except (OSError, ValueError):
            continue
        if pid > 0 and ours:
            try:
                os.kill(pid, signal.SIGTERM)
            except OSError:
                continue
            stopped += 1
    return stopped
