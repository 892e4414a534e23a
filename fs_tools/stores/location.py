"""Where a store is: the one place a ``store=`` / ``--store`` value is read by its scheme. A Redis URL
(``redis://``, ``rediss://``, ``unix://``), a ``sqlite:///absolute/path`` or a plain path of a SQLite file,
which must lie outside every root; anything else with ``scheme://`` is a one-line error, never a file name."""

from __future__ import annotations

import os
import re
import urllib.parse
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlsplit

SCHEMES = ("redis://", "rediss://", "unix://")
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")  # RFC 3986's scheme, then an authority
KNOWN_STORES = "redis://, rediss:// or unix:// (Redis), or a SQLite file's path (or sqlite:///absolute/path)"


def store_location(value: str | os.PathLike[str], roots: Sequence[str | os.PathLike[str]]) -> str | Path:
    """What a ``store=`` (``--store``, ``--state``) value names: a Redis URL (returned as it is) or the
    path of a SQLite file, which must lie outside every root. The one place a store is chosen by its
    URL's scheme: any other ``scheme://`` is a one-line ``ValueError``, never a file name (it would make
    a directory named after the scheme). A ``PathLike`` is always a file: ``Path`` folds ``//``."""
    if isinstance(value, str) and "://" in value:
        # a path never holds '://' as it is spelled ('Path' folds '//'): a URL, or a slip of one
        # (' redis://…' with a space from a config file) that would make a directory named after it
        if is_redis_url(value):
            return value
        shown = shown_url(value)
        shown = repr(shown if len(shown) <= 80 else shown[:80] + "…")
        found = _SCHEME.match(value)
        if found is None or found.group(1).lower() != "sqlite":
            scheme = repr(found.group(0)) if found is not None else f"before {value[: value.index('://') + 3]!r}"
            raise ValueError(f"observation store {shown} has an unknown scheme {scheme}: give {KNOWN_STORES}")
        value = urllib.parse.unquote(value[found.end() :])
        if not value.startswith("/") or "?" in value or "#" in value:
            # sqlite://host/... names another machine; a relative path has no URL; options are not taken
            raise ValueError(
                f"observation store {shown}: a sqlite:// URL names a file by its absolute path alone "
                "(sqlite:///var/state.db); give a relative path without the scheme"
            )
    path = Path(value)
    check_outside_roots(path, roots)
    return path


class StoreInsideRoot(ValueError):
    """A store file inside a workspace root (a host error: the host named it)."""


def check_outside_roots(path: Path, roots: Sequence[str | os.PathLike[str]], what: str = "observation store") -> None:
    """A store file must lie outside every root: inside one, a model could read it or write over the
    record of what it has read. Compared as the kernel resolves them (symlinks, ``..``, a relative root
    or path from the working directory), so no spelling slips a store into a root."""
    try:
        where = os.path.realpath(path)
    except ValueError:  # a NUL byte: no file has that name
        raise ValueError(f"{what} {str(path)!r} is not a file name (it holds a NUL byte)") from None
    for root in roots:
        try:
            top = os.path.realpath(root) if isinstance(root, str | os.PathLike) and os.fspath(root) else None
        except (TypeError, ValueError):  # not a root at all: the provider says so, naming it
            top = None
        if isinstance(top, str) and os.path.commonpath([where, top]) == top:
            raise StoreInsideRoot(
                f"the {what} {str(path)!r} lies inside the workspace root {os.fspath(root)!r}; keep "
                "it outside the roots"
            )


def is_redis_url(value: object) -> bool:
    """Whether a ``store=`` value names a Redis server rather than a SQLite file."""
    return isinstance(value, str) and value.lower().startswith(SCHEMES)


def shown_url(url: str) -> str:
    """The URL as a message may show it: without its password."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url.split("://", 1)[0] + "://…"
    if parts.password is None:
        return url
    user = f"{parts.username}:" if parts.username else ":"
    host = parts.netloc.rsplit("@", 1)[-1]
    return parts._replace(netloc=f"{user}***@{host}").geturl()
