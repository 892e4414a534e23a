"""What a session changed since a mark, as one unified diff ``patch -p1`` applies: one net section per
file (from before the session's first change to after its last), root-relative ``a/`` and ``b/`` paths,
``/dev/null`` for files created or deleted, ``\\ No newline at end of file`` where due.

A moved file is its deletion at the old path and its creation at the new one (every ``patch`` applies
that). A moved directory and bytes no longer kept are said in lines before the sections, which
``patch`` passes over as it does any text between them."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from fs_tools import line_diff
from fs_tools.history.model import DIR, LINK, Effect, Entry, HistoryStore, Move, State, is_version
from fs_tools.provider import DIRECTORY, ENCODING_NAMES, SYMLINK, as_text, wide_encoding

NO_NEWLINE = "\\ No newline at end of file\n"


def net_changes(entries: Iterable[Entry]) -> tuple[dict[str, tuple[State, State]], list[Move]]:
    """Each path's state before the first change and after the last; the directories and symlinks moved."""
    net: dict[str, tuple[State, State]] = {}
    moved: list[Move] = []

    def touch(key: str, before: State, after: State) -> None:
        first = net[key][0] if key in net else before
        net[key] = (first, after)

    for entry in entries:
        for step in entry.steps:
            if isinstance(step, Effect):
                touch(step.key, step.before, step.after)
            elif isinstance(step, Move) and step.is_file:
                touch(step.source, step.version, None)
                touch(step.destination, step.replaced, step.version)
            elif isinstance(step, Move):
                kind = LINK if step.kind == SYMLINK else DIR
                moved.append(step)
                touch(step.source, kind, None)
                touch(step.destination, None, kind)
    return net, moved


def unified_diff(
    entries: Iterable[Entry],
    history: HistoryStore,
    path_of: Callable[[str], str],
    check: Callable[[], None] | None = None,
) -> str:
    """The sections; ``check`` is called as the line diffs work (it raises to cancel)."""
    net, moved = net_changes(entries)
    notes = [
        f"# moved the directory {path_of(move.source)}/ to {path_of(move.destination)}/ (its files are not listed)\n"
        if move.kind == DIRECTORY
        else f"# moved the symlink {path_of(move.source)} to {path_of(move.destination)}\n"
        for move in moved
    ]
    sections: list[str] = []
    for key in sorted(net, key=path_of):
        before, after = net[key]
        if before == after or not (is_version(before) or is_version(after)):
            continue  # unchanged, or a directory: a diff shows files
        path = path_of(key)
        old = _bytes(history, before)
        new = _bytes(history, after)
        if old is None or new is None:
            notes.append(
                f"# {path}: its content {'before' if old is None else 'after'} this session's change is not kept\n"
            )
            continue
        sections.append(
            _section(path, old, new, created=not is_version(before), deleted=not is_version(after), check=check)
        )
    return "".join(notes) + "".join(sections)


def _bytes(history: HistoryStore, state: State) -> bytes | None:
    if not is_version(state):
        return b""
    assert state is not None
    return history.blob(state)


def _section(
    path: str, old: bytes, new: bytes, *, created: bool, deleted: bool, check: Callable[[], None] | None
) -> str:
    if "\n" in path or "\t" in path or "\r" in path:
        return f"# {path!r}: a name a unified diff cannot carry; its change is not shown\n"
    source = "/dev/null" if created else f"a/{path}"
    target = "/dev/null" if deleted else f"b/{path}"
    try:
        old_text, new_text = as_text(old, "strict"), as_text(new, "strict")
    except UnicodeDecodeError:
        return f"# {source} and {target} differ (not UTF-8 text: not shown)\n"
    encodings = (_encoding(old), _encoding(new))
    if old_text == new_text:
        if created or deleted:  # an empty file: a unified diff has no hunk to carry it
            return f"# {'created' if created else 'deleted'} the empty file {path}\n"
        if old != new:  # the same text, other bytes: a BOM, or another encoding
            return f"# {path}: the same text, now in {encodings[1]} (was {encodings[0]})\n"
        return ""  # the same bytes again (a file moved and moved back)
    end = "\t" if any(character.isspace() for character in path) else ""  # patch reads the name to the tab
    lines = line_diff.unified_diff(
        line_diff.patch_lines(old_text), line_diff.patch_lines(new_text), source + end, target + end, check=check
    )
    out: list[str] = []
    if encodings != ("UTF-8", "UTF-8"):  # a hunk of text a UTF-16 or UTF-32 file holds: patch cannot apply it
        shown = encodings[0] if encodings[0] == encodings[1] else f"{encodings[0]}, then {encodings[1]}"
        out.append(f"# {path} is {shown} text, shown decoded\n")
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n" + NO_NEWLINE)
    return "".join(out)


def _encoding(data: bytes) -> str:
    wide = wide_encoding(data[:4])
    if wide is not None:
        return ENCODING_NAMES[wide]
    return "UTF-8 with a BOM" if data.startswith(b"\xef\xbb\xbf") else "UTF-8"
