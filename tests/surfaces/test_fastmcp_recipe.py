"""The FastMCP recipe (docs/integrations/fastmcp.md) as written: fs-tools' server proxied into a FastMCP
app keeps fs-tools' messages and gates; and all the app's clients share one fs-tools session, as the page
warns."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.pages import titled_block

PAGE = Path(__file__).parents[2] / "docs" / "integrations" / "fastmcp.md"
EDIT = {"file_path": "app.py", "old_string": "DEBUG = True", "new_string": "DEBUG = False"}


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    pytest.importorskip("mcp")
    if "fastmcp" in os.environ.get("REQUIRE_FRAMEWORKS", "").split(","):
        import fastmcp  # noqa: F401
    else:
        pytest.importorskip("fastmcp")
    (tmp_path / "app.py").write_text("DEBUG = True\n")
    # the page's `fs-tools` is the one installed beside this Python
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    for name in [key for key in os.environ if key.startswith("FS_TOOLS_")]:
        monkeypatch.delenv(name)
    code = titled_block(PAGE, "fastmcp_app.py").replace("/path/to/project", str(tmp_path))
    scope: dict[str, Any] = {"__name__": "fastmcp_app"}
    exec(compile(code, str(PAGE), "exec"), scope)
    return scope["app"]


def _text(result: Any) -> str:
    return str(result.content[0].text)


def test_the_recipe_keeps_fs_tools_messages_and_gates(app: Any, tmp_path: Path) -> None:
    from fastmcp import Client

    async def run() -> None:
        async with Client(app) as client:
            names = [tool.name for tool in await client.list_tools()]
            assert "fs_read" in names and "fs_edit" in names
            bad = await client.call_tool("fs_read", {"file_path": 3, "bogus": True}, raise_on_error=False)
            assert bad.is_error and _text(bad).startswith(
                "ERROR INVALID_ARGS: invalid arguments: /file_path: expected string, got number; /bogus: unknown"
            )
            unread = await client.call_tool("fs_edit", EDIT, raise_on_error=False)
            assert unread.is_error and _text(unread).startswith("ERROR FS_NOT_OBSERVED: 'app.py' has not been read")
            assert not (await client.call_tool("fs_read", {"file_path": "app.py"}, raise_on_error=False)).is_error
            done = await client.call_tool("fs_edit", EDIT, raise_on_error=False)
            assert not done.is_error, _text(done)

    asyncio.run(run())
    assert (tmp_path / "app.py").read_text() == "DEBUG = False\n"


def test_every_client_of_the_app_shares_one_fs_tools_session(app: Any, tmp_path: Path) -> None:
    """What the page warns of: one agent's read lets another client of the same app edit."""
    from fastmcp import Client

    async def run() -> None:
        async with Client(app) as first, Client(app) as second:
            assert not (await first.call_tool("fs_read", {"file_path": "app.py"}, raise_on_error=False)).is_error
            assert not (await second.call_tool("fs_edit", EDIT, raise_on_error=False)).is_error

    asyncio.run(run())
    assert (tmp_path / "app.py").read_text() == "DEBUG = False\n"
