"""Patches as ``apply_patch`` takes them (SPEC §14): the Codex format and the unified diff, parsed into
one shape — a list of file changes, each a list of hunks — before anything is looked up or gated.

Codex: ``*** Begin Patch`` … ``*** End Patch``, with ``*** Add File: p`` (every line ``+``),
``*** Delete File: p``, ``*** Update File: p`` (optionally ``*** Move to: q``) and hunks introduced by
``@@`` (with optional context text), their lines prefixed ``' '``, ``'-'`` or ``'+'``, optionally ended
by ``*** End of File``. Whitespace around the markers and headers is tolerated, as is the shell heredoc
a model sometimes wraps the patch in.

Unified: ``--- a/p`` / ``+++ b/p`` then ``@@ -l,n +l,n @@`` hunks, as ``git diff`` prints them
(``/dev/null`` for adds and deletes, git's extended headers, ``\\ No newline at end of file``).

A malformed patch is ``ToolArgsError`` at the patch argument, naming the patch line and what was
expected there.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field

from fs_tools.arguments import path_problem
from fs_tools.errors import ToolArgsError
from fs_tools.names import visible
from fs_tools.terms import term

MAX_PATCH_FILES = 100  # files one patch may change: each is locked, read and matched in one call


@dataclass(frozen=True)
class Hunk:
    """One hunk: the lines it expects (context and removed, in order) and the lines it leaves (context
    and added), without line endings."""

    number: int  # 1-based, counted within its file
    line: int  # the patch line that starts it
    ops: tuple[tuple[str, str], ...]  # (' ', '-' or '+', the line's text), in order
    context: str | None = None  # Codex: the text after '@@', a line to find first
    old_start: int | None = None  # unified: the line number the hunk says it starts at
    end_of_file: bool = False  # it must match at the end of the file
    old_ends_file_bare: bool = False  # unified: its last old line has no line ending
    new_ends_file_bare: bool = False  # unified: its last new line has no line ending

    @property
    def old(self) -> tuple[str, ...]:
        return tuple(text for sign, text in self.ops if sign != "+")

    @property
    def new(self) -> tuple[str, ...]:
        return tuple(text for sign, text in self.ops if sign != "-")


@dataclass(frozen=True)
class FileChange:
    """One file's part of a patch: ``add`` (with ``content``), ``delete``, or ``update`` (with hunks,
    and ``move_to`` when it is also renamed)."""

    kind: str
    path: str
    line: int  # the patch line of its header
    content: str = ""
    hunks: tuple[Hunk, ...] = field(default=())
    move_to: str | None = None


def parse_patch(patch: str) -> list[FileChange]:
    """The file changes of a Codex patch or a unified diff, in patch order."""
    lines = patch.replace("\r\n", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None:
        raise _malformed(1, "the patch is empty; expected '*** Begin Patch' (Codex format) or a unified diff")
    body = lines[first:]
    start = first + 1
    heredoc = re.fullmatch(r"\s*(?:\S*apply_patch\s*)?<<-?\s*['\"]?(\w+)['\"]?\s*", body[0])
    if heredoc:  # a shell heredoc around the patch: apply_patch <<'EOF' … EOF
        end = next((i for i in range(len(body) - 1, 0, -1) if body[i].strip() == heredoc.group(1)), None)
        if end is not None:
            body, start = body[1:end], start + 1
    if body and body[0].strip() == "*** Begin Patch":
        changes = _Codex(body, start).parse()
    elif _unified(body):
        changes = _Unified(body, start).parse()
    else:
        raise _malformed(
            start,
            f"expected '*** Begin Patch' (Codex format) or a unified diff ('--- a/path', '+++ b/path', '@@ …'), "
            f"got {_shown(body[0])}",
        )
    if not changes:
        raise _malformed(start, "the patch changes no file")
    for change in changes:
        for path in (change.path, change.move_to):
            problem = path_problem(path) if path is not None else None
            if problem is not None:
                raise _malformed(change.line, f"the path {visible(path or '')[:200]!r} {problem}")
    if len(changes) > MAX_PATCH_FILES:
        raise _malformed(start, f"the patch changes {len(changes)} files, more than {MAX_PATCH_FILES}; split it")
    return changes


def _unified(lines: list[str]) -> bool:
    headers = any(line.startswith("--- ") for line in lines) and any(line.startswith("@@") for line in lines)
    return headers or any(line.startswith("diff --git ") for line in lines)


def patch_line(number: int) -> str:
    """Patch line ``number`` as the call's model knows it: ``patch line 3``; or, for a patch an adapter
    built around the model's own diff (OpenAI's built-in apply_patch), that diff's line — or its
    operation, for a line the adapter wrote."""
    offset = int(term("patch_line_offset", "0"))
    if offset and number - offset < 1:
        return term("patch header", "the file header")
    return f"{term('patch line')} {max(1, number - offset)}"


def _malformed(line: int, what: str) -> ToolArgsError:
    return ToolArgsError([f"/{term('patch')}: {patch_line(line)}: {what}"])


def _shown(line: str) -> str:
    return repr(visible(line[:80]) + ("…" if len(line) > 80 else ""))


_FILE_HEADER = re.compile(r"\*\*\* (Add|Delete|Update) File:")  # asked of every line of a hunk: compiled once
_CODEX_HEADERS = "'*** Add File: path', '*** Update File: path' or '*** Delete File: path'"


class _Codex:
    """The Codex format, line by line; ``start`` is the patch line of ``lines[0]``."""

    def __init__(self, lines: list[str], start: int) -> None:
        self.lines = lines
        self.start = start
        self.at = 1  # past '*** Begin Patch'

    def _no(self, index: int | None = None) -> int:
        return self.start + (self.at if index is None else index)

    def parse(self) -> list[FileChange]:
        changes: list[FileChange] = []
        while self.at < len(self.lines):
            raw = self.lines[self.at]
            line = raw.strip()
            if line == "*** End Patch":
                rest = [i for i in range(self.at + 1, len(self.lines)) if self.lines[i].strip()]
                if rest:
                    raise _malformed(self._no(rest[0]), f"text after '*** End Patch': {_shown(self.lines[rest[0]])}")
                return changes
            if not line:
                self.at += 1
                continue
            header = re.fullmatch(r"\*\*\* (Add|Delete|Update) File:\s*(.*)", line)
            if header is None or not header.group(2).strip():
                expected = "a path after the header" if header is not None else _CODEX_HEADERS
                raise _malformed(self._no(), f"expected {expected}, got {_shown(raw)}")
            kind, path = header.group(1).lower(), header.group(2).strip()
            number = self._no()
            self.at += 1
            if kind == "add":
                changes.append(self._add(path, number))
            elif kind == "delete":
                changes.append(FileChange("delete", path, number))
            else:
                changes.append(self._update(path, number))
        raise _malformed(self._no(len(self.lines) - 1), "the patch ends without '*** End Patch'")

    def _at_header(self) -> bool:
        line = self.lines[self.at].strip()
        return line == "*** End Patch" or (line.startswith("*** ") and _FILE_HEADER.match(line) is not None)

    def _add(self, path: str, number: int) -> FileChange:
        content: list[str] = []
        while self.at < len(self.lines) and not self._at_header():
            raw = self.lines[self.at]
            if not raw.startswith("+"):
                hint = " (an empty line of the file is a lone '+')" if not raw.strip() else ""
                raise _malformed(self._no(), f"every line of an Add File starts with '+', got {_shown(raw)}{hint}")
            content.append(raw[1:] + "\n")
            self.at += 1
        return FileChange("add", path, number, content="".join(content))

    def _update(self, path: str, number: int) -> FileChange:
        move_to = None
        if self.at < len(self.lines):
            moved = re.fullmatch(r"\*\*\* Move to:\s*(.*)", self.lines[self.at].strip())
            if moved is not None:
                if not moved.group(1).strip():
                    raise _malformed(self._no(), "expected a path after '*** Move to:'")
                move_to = moved.group(1).strip()
                self.at += 1
        hunks: list[Hunk] = []
        while self.at < len(self.lines) and not self._at_header():
            if not self.lines[self.at].strip() and hunks:
                self.at += 1  # a blank line between hunks
                continue
            hunks.append(self._hunk(len(hunks) + 1, first=not hunks))
        if not hunks and move_to is None:
            raise _malformed(number, f"the Update File of {path!r} has no hunk; expected '@@' and its lines")
        return FileChange("update", path, number, hunks=tuple(hunks), move_to=move_to)

    def _hunk(self, number: int, *, first: bool) -> Hunk:
        raw = self.lines[self.at]
        start = self._no()
        context: str | None = None
        stripped = raw.strip()
        if stripped == "@@" or stripped.startswith("@@ "):  # where a hunk starts, its '@@' may be indented
            context = stripped[3:] if stripped.startswith("@@ ") else None
            self.at += 1
        elif not first:
            raise _malformed(start, f"expected '@@' to start hunk {number}, got {_shown(raw)}")
        ops: list[tuple[str, str]] = []
        end_of_file = False
        while self.at < len(self.lines):
            raw = self.lines[self.at]
            if raw.strip() == "*** End of File":
                end_of_file = True
                self.at += 1
                break
            if self._at_header() or raw.rstrip() == "@@" or raw.startswith("@@ "):
                break  # inside a hunk, ' @@ x' is a context line: a header starts the line
            sign, text = raw[:1] or " ", raw[1:]
            if sign in " -+":
                ops.append((sign, text))
            else:
                raise _malformed(
                    self._no(), f"hunk {number}: expected a line starting with ' ', '-' or '+', got {_shown(raw)}"
                )
            self.at += 1
        if not ops:
            raise _malformed(start, f"hunk {number} has no lines")
        return Hunk(number, start, tuple(ops), context=context or None, end_of_file=end_of_file)


_HUNK_HEADER = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


class _Unified:
    """A unified diff, as diff -u and git diff print it; ``start`` is the patch line of ``lines[0]``."""

    def __init__(self, lines: list[str], start: int) -> None:
        self.lines = lines
        self.start = start
        self.at = 0

    def _no(self) -> int:
        return self.start + self.at

    def _hunk_line_follows(self) -> bool:
        """A ' ', '-' or '+' line right after a hunk's counted lines (not the next file's '---' header)."""
        line = self.lines[self.at]
        if line.startswith("--- ") and self.at + 1 < len(self.lines) and self.lines[self.at + 1].startswith("+++ "):
            return False
        return line[:1] in (" ", "-", "+") and line.strip() != ""

    def parse(self) -> list[FileChange]:
        changes: list[FileChange] = []
        git: dict[str, str] = {}
        header_line = 0
        while self.at < len(self.lines):
            line = self.lines[self.at]
            if line.startswith("diff --git "):
                if git:
                    changes += self._git_only(git, header_line)
                git, header_line = {"diff": line}, self._no()
            elif line.startswith(("copy from ", "copy to ")):
                raise _malformed(
                    self._no(), "git copies are not supported: send the new file as a file of its own ('new file')"
                )
            elif line.startswith(("rename from ", "rename to ", "new file mode", "deleted file mode")):
                if "diff" not in git:
                    raise _malformed(self._no(), f"{_shown(line)} belongs after a 'diff --git a/path b/path' line")
                key = line.split(" ")[0] + " " + line.split(" ")[1]
                git[key] = self._path(line[len(key) + 1 :]) if line.startswith("rename") else "yes"
            elif line.startswith("Binary files ") or line.startswith("GIT binary patch"):
                raise _malformed(self._no(), "binary patches are not supported; this tool changes text files only")
            elif line.startswith("--- "):
                changes.append(self._file(git, header_line or self._no()))
                git, header_line = {}, 0
                continue
            self.at += 1
        if git:
            changes += self._git_only(git, header_line)
        return changes

    def _path(self, text: str) -> str:
        try:
            return _unquoted(text)
        except ValueError as exc:
            raise _malformed(self._no(), f"a quoted path that cannot be read ({exc})") from None

    def _git_only(self, git: dict[str, str], line: int) -> list[FileChange]:
        """A git section with no hunks: a pure rename, or an empty file added or deleted."""
        old_path, new_path = self._git_paths(git.get("diff", ""), line)
        if "rename from" in git and "rename to" in git:
            return [FileChange("update", git["rename from"], line, move_to=git["rename to"])]
        if "new file" in git:
            return [FileChange("add", new_path, line)]
        if "deleted file" in git:
            return [FileChange("delete", old_path, line)]
        return []  # a mode change alone: nothing this tool changes

    def _git_paths(self, diff: str, line: int) -> tuple[str, str]:
        """The two paths of a ``diff --git a/x b/y`` line (spaces in them, or git's quoting)."""
        body = diff[len("diff --git ") :]
        try:
            if body.startswith('"'):
                quoted = re.fullmatch(r'("(?:[^"\\]|\\.)*")\s+(.*)', body)
                if quoted is None:
                    raise ValueError("unbalanced quotes")
                return _strip_prefix(_unquoted(quoted.group(1))), _strip_prefix(_unquoted(quoted.group(2)))
            if body.endswith('"'):
                at = body.rfind(' "')
                return _strip_prefix(body[:at]), _strip_prefix(_unquoted(body[at + 1 :]))
        except ValueError as exc:
            raise _malformed(line, f"a quoted path that cannot be read ({exc})") from None
        half = len(body) // 2  # 'a/x b/x': the same path twice, split in the middle
        if body[half : half + 1] == " " and _strip_prefix(body[:half]) == _strip_prefix(body[half + 1 :]):
            return _strip_prefix(body[:half]), _strip_prefix(body[half + 1 :])
        at = body.find(" b/")
        return (_strip_prefix(body[:at]), _strip_prefix(body[at + 1 :])) if at > 0 else (body, body)

    def _file(self, git: dict[str, str], header: int) -> FileChange:
        old_path = self._diff_path(self.lines[self.at][4:])
        self.at += 1
        if self.at >= len(self.lines) or not self.lines[self.at].startswith("+++ "):
            raise _malformed(self._no(), "expected '+++ b/path' after the '--- a/path' line")
        new_path = self._diff_path(self.lines[self.at][4:])
        self.at += 1
        hunks: list[Hunk] = []
        while self.at < len(self.lines) and self.lines[self.at].startswith("@@"):
            hunks.append(self._hunk(len(hunks) + 1))
        if not hunks:
            raise _malformed(self._no(), f"expected a hunk ('@@ -l,n +l,n @@') for {new_path or old_path!r}")
        if old_path is None and new_path is None:
            raise _malformed(header, "both sides of the diff are /dev/null")
        if old_path is None:
            assert new_path is not None
            text = "".join(line + "\n" for hunk in hunks for line in hunk.new)
            if hunks[-1].new_ends_file_bare and text:
                text = text[:-1]
            return FileChange("add", new_path, header, content=text)
        if new_path is None:
            return FileChange("delete", old_path, header)
        if "rename from" in git and "rename to" in git:  # only git's rename headers move a file
            return FileChange("update", git["rename from"], header, hunks=tuple(hunks), move_to=git["rename to"])
        # 'diff -u f.orig f': the file the diff produces is the one changed, as patch(1) picks it
        return FileChange("update", new_path, header, hunks=tuple(hunks))

    def _diff_path(self, text: str) -> str | None:
        try:
            return _diff_path(text)
        except ValueError as exc:
            raise _malformed(self._no(), f"a quoted path that cannot be read ({exc})") from None

    def _hunk(self, number: int) -> Hunk:
        start = self._no()
        header = _HUNK_HEADER.match(self.lines[self.at])
        if header is None:
            got = _shown(self.lines[self.at])
            raise _malformed(start, f"expected a hunk header like '@@ -12,3 +12,4 @@', got {got}")
        old_count = int(header.group(2)) if header.group(2) is not None else 1
        new_count = int(header.group(4)) if header.group(4) is not None else 1
        self.at += 1
        ops: list[tuple[str, str]] = []
        olds = news = 0
        old_bare = new_bare = False
        last = ""
        while self.at < len(self.lines) and (olds < old_count or news < new_count):
            raw = self.lines[self.at]
            sign, text = raw[:1] or " ", raw[1:]
            if raw.startswith("\\"):
                old_bare, new_bare = old_bare or last in " -", new_bare or last in " +"
            elif sign in " -+":
                ops.append((sign, text))
                olds += sign != "+"
                news += sign != "-"
            else:
                break
            last = sign if not raw.startswith("\\") else last
            self.at += 1
        if self.at < len(self.lines) and self.lines[self.at].startswith("\\"):  # after the counted lines
            old_bare, new_bare = old_bare or last in " -", new_bare or last in " +"
            self.at += 1
        if self.at < len(self.lines) and self._hunk_line_follows():
            raise _malformed(
                start,
                f"hunk {number}'s header counts {old_count} old and {new_count} new line(s), but more lines follow "
                f"at {patch_line(self._no())}; correct the counts in its '@@' line",
            )
        if olds != old_count or news != new_count:
            raise _malformed(
                start,
                f"hunk {number}'s header counts {old_count} old and {new_count} new line(s), but it has "
                f"{olds} and {news}",
            )
        old_start = int(header.group(1))
        return Hunk(
            number,
            start,
            tuple(ops),
            old_start=old_start if old_count else old_start + 1,
            old_ends_file_bare=old_bare,
            new_ends_file_bare=new_bare,
        )


def _diff_path(text: str) -> str | None:
    """The path of a ``---``/``+++`` line (its timestamp cut, git's a/ and b/ taken off); None for
    /dev/null."""
    path = _unquoted(text.split("\t")[0].rstrip())
    if path == "/dev/null":
        return None
    return _strip_prefix(path)


def _unquoted(path: str) -> str:
    """A path as git quotes it (C escapes, octal bytes, in double quotes), unquoted; others as they are.
    ValueError for an escape that cannot be read."""
    if not (path.startswith('"') and path.endswith('"') and len(path) > 1):
        return path
    raw = codecs.escape_decode(path[1:-1].encode("utf-8"))[0]
    assert isinstance(raw, bytes)
    return raw.decode("utf-8", "replace")


def _strip_prefix(path: str) -> str:
    return path[2:] if path.startswith(("a/", "b/")) else path
