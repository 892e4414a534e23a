"""The names a call's arguments go by in the messages that answer it.

Messages are written with fs-tools' own argument names (``old_string``, ``offset``). A dialect's tool
calls them otherwise (``old_str``, ``start_line``), and an ``apply_patch`` hunk has no ``old_string`` at
all: for the length of one call, ``speaking`` sets the names its messages use, and ``term`` gives the
name of one argument as that call's model knows it. A name no dialect renames is its own term.

Context-local (a ``ContextVar``), so concurrent calls on other threads or tasks keep their own.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from types import MappingProxyType

_NONE: Mapping[str, str] = MappingProxyType({})
_TERMS: ContextVar[Mapping[str, str]] = ContextVar("fs_tools_terms", default=_NONE)


def term(name: str, default: str | None = None) -> str:
    """What the current call names the argument fs-tools calls ``name`` (``default``, else ``name``
    itself, when nothing renames it)."""
    return _TERMS.get().get(name, name if default is None else default)


def pointer_term(pointer: str, name: str) -> str:
    """``name`` as the current call names it, after ``pointer`` (``/edits/2``) when there is one."""
    return f"{pointer}/{term(name)}" if pointer else term(name)


@contextlib.contextmanager
def speaking(terms: Mapping[str, str] | None, *, beneath: bool = False) -> Iterator[None]:
    """Messages made inside use ``terms`` (fs-tools' name → the call's), over any set outside — or, with
    ``beneath``, under them (a tool's own names, where an adapter has set how its model names them); None
    or empty changes nothing."""
    if not terms:
        yield
        return
    outside = _TERMS.get()
    token = _TERMS.set(MappingProxyType({**terms, **outside} if beneath else {**outside, **terms}))
    try:
        yield
    finally:
        _TERMS.reset(token)
