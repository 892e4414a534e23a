"""The child process fs-tools parses untrusted media in (``child.py`` is the parent's side), run as a
script: ``worker.py READER MEMORY CPU``. It imports nothing of fs-tools (the package's import takes half
a second), sets its own limits before it reads a byte, then hands the file to its reader
(``pdf_worker``, ``image_worker``: modules beside it, found on the script's own path).

Protocol: the parent sends the file (8-byte big-endian length, then the bytes), then JSON lines as the
reader asks for them; the reader answers one JSON line per message. Out of memory anywhere, the answer
is ``{"limit": "memory"}``.
"""

from __future__ import annotations

import importlib
import json
import sys

READERS = {"pdf": "pdf_worker", "image": "image_worker"}


def say(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def listen() -> dict[str, object]:
    """The parent's next message; an empty one when it has no more to say."""
    line = sys.stdin.readline()
    message: dict[str, object] = json.loads(line) if line.strip() else {}
    return message


def main() -> None:
    import resource

    reader = READERS[sys.argv[1]]
    memory, cpu = (int(value) for value in sys.argv[2:4])
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    try:
        size = int.from_bytes(sys.stdin.buffer.read(8), "big")
        data = sys.stdin.buffer.read(size)
        importlib.import_module(reader).serve(data, say, listen)
    except MemoryError:
        say({"limit": "memory"})


if __name__ == "__main__":
    main()
