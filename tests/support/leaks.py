"""What an attack's result must never show, and which files a call opens on the way."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from fs_tools.errors import path_label
from fs_tools.result import ToolResult
from tests.support.sandbox import SECRET


def assert_no_leak(result: ToolResult, sent: str, forbidden: Iterable[str]) -> None:
    """No secret in any text of the result, and none of ``forbidden`` outside the echo of ``sent``."""
    echoes = sorted(
        {
            form
            for p in (sent, path_label(sent))
            for form in (p, repr(p)[1:-1], json.dumps(p)[1:-1], json.dumps(p, ensure_ascii=False)[1:-1])
        },
        key=len,
        reverse=True,
    )
    texts = [result.text, json.dumps(result.value, ensure_ascii=False)]
    if result.error is not None:
        texts.append(result.error.message)
    for text in texts:
        assert SECRET not in text, text
        for echo in echoes:
            text = text.replace(echo, "<sent>")
        for path in forbidden:
            assert path not in text, f"{path!r} leaked in {text!r}"


def spy_opens_of(node_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Patch ``os.open`` to record every open of this inode (not any other /dev/null) for reading or
    writing; the list fills as the test runs. An ``O_PATH`` handle names the inode without opening it (no
    driver code runs), so it is not counted."""
    node = os.lstat(node_path)
    opened: list[str] = []
    real_open = os.open

    def spy_open(file: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        fd = real_open(file, flags, *args, **kwargs)
        if flags & getattr(os, "O_PATH", 0):
            return fd
        with contextlib.suppress(OSError):
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino) == (node.st_dev, node.st_ino):
                opened.append(os.fsdecode(file))
        return fd

    monkeypatch.setattr(os, "open", spy_open)
    return opened
