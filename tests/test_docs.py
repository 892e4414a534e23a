from __future__ import annotations

from pathlib import Path

import pytest

from fs_tools import reference
from fs_tools.errors import error_codes

DOCS = Path(__file__).resolve().parent.parent / "docs"


def test_error_reference_lists_every_code_with_an_example_and_a_recovery() -> None:
    page = (DOCS / "reference" / "errors.md").read_text(encoding="utf-8")
    for code, cls in error_codes().items():
        assert f"| [`{code}`](#{code.lower()}) | `{cls.__name__}` |" in page, code
        section = page.split(f"\n## {code}\n", 1)[1].split("\n## ", 1)[0]
        assert "```text\n" in section and f"**Recovery.** {cls.recovery}" in section, code


def test_every_error_scenario_produces_its_own_code() -> None:
    examples = reference.error_examples()  # raises when a scenario produces another code
    assert [e.code for e in examples] == list(error_codes())
    assert all(e.message for e in examples)


def test_the_generated_references_are_up_to_date() -> None:
    """The committed pages are what the code generates now: regenerate with
    ``python -m fs_tools.reference docs`` after changing a tool, a schema or a message."""
    stale = [path for path, text in reference.all_pages().items() if (DOCS / path).read_text(encoding="utf-8") != text]
    assert stale == [], f"regenerate with: python -m fs_tools.reference docs ({stale})"


def test_readme_opens_with_the_two_quick_start_commands() -> None:
    readme = (DOCS.parent / "README.md").read_text(encoding="utf-8")
    block = readme.split("```bash\n", 1)[1].split("```", 1)[0].strip().splitlines()
    assert block == ["pip install . && fs-tools demo", "pip install -e '.[dev]' && pytest"]
    ci = (DOCS.parent / ".ci" / "run").read_text(encoding="utf-8")
    assert "pip install -e '.[dev]' && pytest" in ci


@pytest.mark.parametrize("page", ["README.md", "docs/quickstart.md"])
def test_the_library_example_runs(page: str, tmp_path: Path) -> None:
    """The ten-line example, as a reader would paste it, with the project path pointed at a real one."""
    text = (DOCS.parent / page).read_text(encoding="utf-8")
    code = text.split("```python\n", 1)[1].split("```", 1)[0]
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("x = 1\n")
    exec(compile(code.replace("/path/to/project", str(tmp_path)), page, "exec"), {"__name__": "example"})
    assert (tmp_path / "src" / "app.py").read_text() == "x = 2\n"
