"""MkDocs hooks for the fs-tools site.

- The header's version is the package's, read from pyproject.toml, so it cannot show another.
- A long code name in a table cell (a test's node id, a command line) may wrap only where its own
  words end: after ``_``, ``::``, ``/``, ``.``, ``-`` or a space. Short names never wrap (extra.css).
- A heading may wrap after an underscore (the error codes' sections, on a phone).

tests/support/docs_screenshots.py checks in a browser that no name is broken mid-word.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

LONG_NAME = 32  # characters: shorter names fit a cell whole
_CELL = re.compile(r"<td[^>]*>.*?</td>", re.DOTALL)
_CODE = re.compile(r"<code>([^<]{%d,})</code>" % LONG_NAME)
# Where a word of a name ends: after these, before the next non-space character.
_HEADING = re.compile(r"<h[1-3][^>]*>.*?</h[1-3]>", re.DOTALL)
# A tag, or the text up to the next one: only text gets line-break opportunities.
_TAG = re.compile(r"(<[^>]*>)|([^<]+)")
_SNAKE = re.compile(r"(?<=[A-Za-z0-9]_)(?=[A-Za-z0-9])")
_WORD_END = re.compile(r"(?:(?<=::)|(?<=[_/.\s])|(?<=[A-Za-z0-9]-))(?=\S)")


def on_config(config: Any, **kwargs: Any) -> Any:
    pyproject = Path(config.config_file_path).resolve().parent / "pyproject.toml"
    config.extra["release"] = "v" + tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["version"]
    return config


def on_page_content(html: str, **kwargs: Any) -> str:
    html = _CELL.sub(lambda cell: _CODE.sub(_breakable, cell.group(0)), html)
    return _HEADING.sub(lambda heading: _TAG.sub(_snake_breaks, heading.group(0)), html)


def _breakable(code: re.Match[str]) -> str:
    """Each word in an unbreakable span (extra.css), with a line-break opportunity between them."""
    words = _WORD_END.split(code.group(1))
    return '<code class="fs-long-name">' + "<wbr>".join(f"<span>{word}</span>" for word in words) + "</code>"


def _snake_breaks(part: re.Match[str]) -> str:
    """A heading's text may wrap after the underscores of a long code (``TOOL_ABORTED_BEFORE_DISPATCH``
    on a phone), instead of the browser breaking it mid-word."""
    tag, text = part.groups()
    return tag if tag is not None else _SNAKE.sub("<wbr>", text)
