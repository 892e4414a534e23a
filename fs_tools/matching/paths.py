"""Did-you-mean for a path that does not exist (SPEC §15): the closest existing paths, the same
directory first (a misspelt component, at any depth that exists), then files of that name elsewhere in
the workspace. Every look goes through the provider's confined walk, bounded in entries, so a
suggestion is never a path outside the roots and never costs more than a small listing."""

from __future__ import annotations

import difflib
import re
from itertools import islice

from fs_tools.errors import FsError
from fs_tools.provider import DIRECTORY, Entry, Provider

_LIMIT = 3
_DIRECTORY_ENTRIES = 200_000  # names of one directory listed
_COMPARED = 5_000  # of which, of about the right length, compared
_WORKSPACE_ENTRIES = 20_000  # entries visited looking for the name elsewhere
_SKIPPED = frozenset({"node_modules", "__pycache__", "venv", "target", "dist", "build"})
_CUTOFF = 0.6


def similar_paths(provider: Provider, path: str, limit: int = _LIMIT) -> list[str]:
    """Up to ``limit`` existing paths like ``path``, closest first; [] when there is none (or ``path``
    cannot be resolved at all: outside the roots, say)."""
    absolute = path.startswith("/")
    parts = [part for part in path.split("/") if part not in ("", ".")]
    if not parts or ".." in parts:
        return []
    found = [shown for near in _nearby(provider, absolute, parts, depth=0) if (shown := _relative(provider, near))]
    if len(found) < limit:
        found.extend(other for other in _elsewhere(provider, parts[-1], path) if other not in found)
    return found[:limit]


def _relative(provider: Provider, path: str) -> str | None:
    """``path`` relative to the primary root, the form every tool takes (a message never shows where a
    root is on the machine); None for a path in another root."""
    if not path.startswith("/"):
        return path
    for root in (provider.root_paths[0], provider.real_root_paths[0]):
        if path.startswith(root.rstrip("/") + "/"):
            return path[len(root.rstrip("/")) + 1 :]
    return None


def _join(absolute: bool, parts: list[str]) -> str:
    joined = "/".join(parts)
    return ("/" + joined) if absolute else (joined or ".")


def _names(provider: Provider, directory: str) -> list[tuple[str, str]] | None:
    """(name, kind) of the entries of ``directory``, or None when it is not a directory we can list."""
    try:
        with provider.walk(directory, descend=lambda entry: False, sizes=False) as walk:
            return [(entry.name, entry.kind) for entry in islice(walk.entries, _DIRECTORY_ENTRIES)]
    except FsError:
        return None


def _nearby(provider: Provider, absolute: bool, parts: list[str], depth: int) -> list[str]:
    """Paths that differ from ``parts`` in the first component that is missing: the deepest existing
    directory's entries like it, followed down (one more misspelt component at most)."""
    for keep in range(len(parts) - 1, -1, -1):
        names = _names(provider, _join(absolute, parts[:keep]))
        if names is not None:
            break
    else:
        return []
    missing, rest = parts[keep], parts[keep + 1 :]
    by_name = dict(names)
    close = [name for name in by_name if name.lower() == missing.lower() and name != missing]
    # In a large directory only names of about the same length are compared (a bounded number of them)
    tokens = [t for t in re.findall(r"[^\W_]{3,}", missing.rsplit(".", 1)[0]) if t]
    sharing = [name for name in by_name if any(t in name for t in tokens)][:_COMPARED] if tokens else []
    chosen = set(sharing)
    alike = (
        sharing
        + [n for n in by_name if abs(len(n) - len(missing)) <= 3 and n not in chosen][: _COMPARED - len(sharing)]
    )
    close += [name for name in difflib.get_close_matches(missing, alike, n=_LIMIT, cutoff=_CUTOFF) if name not in close]
    out: list[str] = []
    for name in close:
        candidate = [*parts[:keep], name, *rest]
        if not rest:
            out.append(_join(absolute, candidate))
        elif by_name[name] == DIRECTORY:
            if _exists(provider, absolute, candidate):
                out.append(_join(absolute, candidate))
            elif depth < 1:
                out.extend(_nearby(provider, absolute, candidate, depth + 1))
    return out


def _exists(provider: Provider, absolute: bool, parts: list[str]) -> bool:
    names = _names(provider, _join(absolute, parts[:-1]))
    return names is not None and any(name == parts[-1] for name, _ in names)


def _elsewhere(provider: Provider, name: str, given: str) -> list[str]:
    """Files or directories named ``name`` (or nearly) anywhere under the primary root, the most like
    the whole given path first."""

    def descend(entry: Entry) -> bool:
        return not entry.name.startswith(".") and entry.name not in _SKIPPED

    hits: list[tuple[float, str]] = []
    try:
        with provider.walk(".", descend=descend, sizes=False) as walk:
            for entry in islice(walk.entries, _WORKSPACE_ENTRIES):
                if entry.name == name or (
                    abs(len(entry.name) - len(name)) <= 2
                    and difflib.SequenceMatcher(None, entry.name.lower(), name.lower()).ratio() >= 0.85
                ):
                    found = "/".join(entry.parts)
                    exact = 1.0 if entry.name == name else 0.0
                    hits.append((exact + difflib.SequenceMatcher(None, found, given).ratio(), found))
    except FsError:
        return []
    return [found for _, found in sorted(hits, key=lambda hit: (-hit[0], hit[1]))]
