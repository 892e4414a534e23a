"""How names are shown — in listings, search results and messages — so that none can forge a line."""

from __future__ import annotations


def visible(name: str, *, tabs: bool = True) -> str:
    """Text as one printable line: line breaks, other control characters, undecodable bytes and lone
    surrogates escaped. Tabs are kept unless ``tabs`` is False, so a line copied from grep output still
    matches the file."""
    if name.isprintable():
        return name
    return "".join(char if char.isprintable() or (tabs and char == "\t") else repr(char)[1:-1] for char in name)
