"""What every dialect's tools share: building fs-tools' own arguments from a dialect's, and the file
types a ripgrep-style ``type`` argument names."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from fs_tools.arguments import ToolArgs, Violation, validate_arguments
from fs_tools.patterns.glob import GlobListLimit, compile_globs
from fs_tools.tools.base import Tool

A = TypeVar("A", bound=ToolArgs)


def canonical(model: type[A], values: Mapping[str, Any]) -> A:
    """fs-tools' arguments for a dialect's call, from values its own model has validated already (a
    value its model let through that ours refuses is still INVALID_ARGS, never a crash). A ``None``
    value means "the default", as in every call."""
    args = validate_arguments(model, {key: value for key, value in values.items() if value is not None})
    assert isinstance(args, model)
    return args


def itself(canonical_name: str) -> dict[str, str]:
    """``stands_for`` of a dialect tool that plays exactly one fs-tools tool's part."""
    return {canonical_name: "{name}"}


def ignore_violations(data: Mapping[str, Any], key: str = "ignore") -> list[Violation]:
    """A list of glob patterns (an ``ignore`` argument), compiled as one: the first that cannot be
    compiled, or that passes a limit the whole list shares (``compile_globs``), at its index."""
    patterns = data.get(key)
    if not isinstance(patterns, list) or not all(isinstance(pattern, str) for pattern in patterns):
        return []  # the types are the schema's to refuse
    try:
        compile_globs(patterns, match_base=True)
    except GlobListLimit as exc:
        return [((key, exc.index), f"invalid glob pattern: {exc}")]
    return []


def like(base: Tool[Any], **changes: Any) -> Tool[Any]:
    """A dialect's tool declared as fs-tools' ``base`` is, but for ``changes`` (its name, description,
    arguments, body, …)."""
    return cast(Tool[Any], dataclasses.replace(cast(Any, base), **changes))


# ripgrep's names for common file types (``rg --type-list``), as globs: what a ``type`` argument means.
FILE_TYPES: dict[str, tuple[str, ...]] = {
    "c": ("*.c", "*.h"),
    "cpp": ("*.cpp", "*.cc", "*.cxx", "*.hpp", "*.hh", "*.hxx", "*.h", "*.inl"),
    "cs": ("*.cs",),
    "css": ("*.css", "*.scss"),
    "go": ("*.go",),
    "html": ("*.html", "*.htm", "*.xhtml"),
    "java": ("*.java", "*.jsp"),
    "js": ("*.js", "*.jsx", "*.mjs", "*.cjs", "*.vue"),
    "json": ("*.json",),
    "kotlin": ("*.kt", "*.kts"),
    "lua": ("*.lua",),
    "make": ("Makefile", "makefile", "GNUmakefile", "*.mk", "*.mak"),
    "markdown": ("*.md", "*.markdown", "*.mdx"),
    "md": ("*.md", "*.markdown", "*.mdx"),
    "php": ("*.php",),
    "py": ("*.py", "*.pyi"),
    "python": ("*.py", "*.pyi"),
    "rb": ("*.rb", "Gemfile", "*.gemspec", "Rakefile"),
    "ruby": ("*.rb", "Gemfile", "*.gemspec", "Rakefile"),
    "rust": ("*.rs",),
    "scala": ("*.scala", "*.sbt"),
    "sh": ("*.sh", "*.bash", "*.zsh", ".bashrc", ".zshrc"),
    "sql": ("*.sql",),
    "swift": ("*.swift",),
    "toml": ("*.toml", "Cargo.lock"),
    "ts": ("*.ts", "*.tsx", "*.mts", "*.cts"),
    "typescript": ("*.ts", "*.tsx", "*.mts", "*.cts"),
    "txt": ("*.txt",),
    "xml": ("*.xml", "*.xsd", "*.xsl", "*.svg"),
    "yaml": ("*.yaml", "*.yml"),
}
