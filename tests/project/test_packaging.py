"""The distribution a user installs: its name, its extras, its sdist, and every install instruction."""

from __future__ import annotations

import email
import re
import shutil
import tarfile
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DISTRIBUTION = "agent-fs-tools"

# An instruction that would fetch the unrelated PyPI project "fs-tools": pip/pipx/uv installs, uvx --from,
# or a requirement with extras under that name.
_INDEX_FS_TOOLS = re.compile(
    r"""(?:install|--from)\s+(?:-\S+\s+)*['"]?fs-tools(?:\[|['"\s]|$)|(?<![\w./-])fs-tools\[""", re.MULTILINE
)


def _project() -> dict[str, object]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]  # type: ignore[no-any-return]


def _instruction_files() -> list[Path]:
    texts = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    return texts + sorted((ROOT / "fs_tools").rglob("*.py"))


def test_the_distribution_has_its_own_name_and_the_extras_refer_to_it() -> None:
    project = _project()
    assert project["name"] == DISTRIBUTION
    extras: dict[str, list[str]] = project["optional-dependencies"]  # type: ignore[assignment]
    for extra, requirements in extras.items():
        for requirement in requirements:
            assert not requirement.startswith("fs-tools"), f"[{extra}] names the PyPI project fs-tools: {requirement}"
    assert project["scripts"] == {"fs-tools": "fs_tools.cli:main"}


def test_the_test_extra_pulls_no_framework() -> None:
    extras: dict[str, list[str]] = _project()["optional-dependencies"]  # type: ignore[assignment]
    pulled = " ".join(extras["test"])
    for framework in ("pydantic-ai", "langchain", "mcp", "anthropic", "openai", "google-genai"):
        assert framework not in pulled


def test_no_instruction_installs_the_unrelated_fs_tools_project() -> None:
    found = [
        f"{path.relative_to(ROOT)}: {match.group(0)!r}"
        for path in _instruction_files()
        for match in _INDEX_FS_TOOLS.finditer(path.read_text(encoding="utf-8"))
    ]
    assert found == []


def test_the_checker_would_see_such_an_instruction() -> None:
    for bad in (
        "pip install fs-tools",
        "pip install 'fs-tools[mcp]'",
        "uvx --from fs-tools[mcp] fs-tools",
        "pipx install -f fs-tools",
        "(or `fs-tools[test]`)",
    ):
        assert _INDEX_FS_TOOLS.search(bad), bad
    for good in (
        "pip install '.[mcp]'",
        "pip install 'agent-fs-tools[mcp]'",
        "claude mcp add fs-tools -- fs-tools serve",
    ):
        assert not _INDEX_FS_TOOLS.search(good), good


def test_the_readme_renders_off_the_repository() -> None:
    """PyPI shows the README without the repository around it: a relative link or image would be broken."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)\s]+)", readme) + re.findall(
        r"""<(?:img|a)\b[^>]*(?:src|href)=["']([^"']+)""", readme
    )
    assert [target for target in targets if not re.match(r"https?://", target)] == []


def test_the_sdist_ships_the_packages_and_license_and_no_tests_it_cannot_run(tmp_path: Path) -> None:
    build_meta = pytest.importorskip("setuptools.build_meta")
    import setuptools

    if int(setuptools.__version__.split(".")[0]) < 77:
        pytest.skip(f"setuptools {setuptools.__version__} cannot read a PEP 639 license (the build needs >= 77)")
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "MANIFEST.in", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, source / name)
    for folder in ("fs_tools", "policy", "tests", "bench"):
        shutil.copytree(ROOT / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(source)
        name = build_meta.build_sdist(str(tmp_path / "dist"))
    with tarfile.open(tmp_path / "dist" / name) as sdist:
        members = {member.split("/", 1)[1] for member in sdist.getnames() if "/" in member}
        info = sdist.extractfile(f"{name.removesuffix('.tar.gz')}/PKG-INFO")
        assert info is not None
        metadata = email.message_from_bytes(info.read())
    assert {"LICENSE", "README.md", "pyproject.toml", "fs_tools/__init__.py", "policy/__init__.py"} <= members
    assert "fs_tools/py.typed" in members and "policy/py.typed" in members
    assert [member for member in members if member.startswith(("tests/", "bench/"))] == []
    assert metadata["Name"] == DISTRIBUTION
    assert metadata["License-Expression"] == "MIT"
    assert metadata["Description-Content-Type"] == "text/markdown"


def test_the_pydantic_ai_extra_installs_the_provider_its_page_names() -> None:
    """`pip install '.[pydantic-ai]'`, then the page's agent: the provider of its model must be there."""
    import re

    page = (ROOT / "docs" / "integrations" / "pydantic-ai.md").read_text(encoding="utf-8")
    providers = set(re.findall(r'Agent\("([a-z-]+):', page))
    assert providers, "the page's agent names no model"
    extras: dict[str, list[str]] = _project()["optional-dependencies"]  # type: ignore[assignment]
    (slim,) = [r for r in extras["pydantic-ai"] if r.startswith("pydantic-ai-slim")]
    installed = set(re.findall(r"\[([^\]]*)\]", slim)[0].split(",")) if "[" in slim else set()
    assert providers <= installed, (providers, slim)
