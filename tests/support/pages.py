"""The code blocks of a docs page, as a reader would copy them."""

from __future__ import annotations

import re
from pathlib import Path


def code_blocks(page: Path) -> list[tuple[str, str]]:
    """``(info string, code)`` of every fenced block of a page, in order."""
    text = page.read_text(encoding="utf-8")
    return re.findall(r"^```([^\n]*)\n(.*?)^```$", text, re.MULTILINE | re.DOTALL)


def titled_block(page: Path, title: str) -> str:
    """The block titled ``title``, preceded by blank lines so that a traceback names the page's lines."""
    found = [code for info, code in code_blocks(page) if f'title="{title}"' in info]
    assert len(found) == 1, f"{page.name}: expected one block titled {title}"
    before = page.read_text(encoding="utf-8").split(f'title="{title}"', 1)[0]
    return "\n" * (before.count("\n") + 1) + found[0]
