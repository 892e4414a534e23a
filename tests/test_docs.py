from __future__ import annotations

from pathlib import Path

from fs_tools.errors import error_codes

DOCS = Path(__file__).resolve().parent.parent / "docs"


def test_error_reference_lists_every_code_with_its_class() -> None:
    page = (DOCS / "errors.md").read_text(encoding="utf-8")
    missing = [code for code, cls in error_codes().items() if f"| `{code}` | `{cls.__name__}` |" not in page]
    assert missing == []


def test_readme_opens_with_the_two_quick_start_commands() -> None:
    readme = (DOCS.parent / "README.md").read_text(encoding="utf-8")
    block = readme.split("```bash\n", 1)[1].split("```", 1)[0].strip().splitlines()
    assert block == ["pip install . && fs-tools demo", "pip install -e '.[dev]' && pytest"]
    ci = (DOCS.parent / ".ci" / "run").read_text(encoding="utf-8")
    assert "pip install -e '.[dev]' && pytest" in ci
