"""The shape of the house, as the imports draw it (GUIDE: five layers, each knowing only the ones below;
a closed provider whose public face is its package; tools that do no I/O).

Every module's imports are read from its source (nothing is run), so a new arrow that climbs a layer, or
a tool that reaches past the provider's face, fails here with the file and the import named.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[2]

# Lowest first. A module may import modules of its own layer or of lower ones, never of a higher one.
LAYERS: list[tuple[str, ...]] = [
    (
        "fs_tools.errors",
        "fs_tools.abilities",
        "fs_tools.names",
        "fs_tools.state",
        "fs_tools.lazy",
        "fs_tools.terms",
        "fs_tools.line_diff",
        "fs_tools.line_index",
    ),
    ("fs_tools.result", "fs_tools.arguments", "policy"),
    ("fs_tools.provider",),
    ("fs_tools.stores", "fs_tools.history", "fs_tools.watcher", "fs_tools.options"),
    # what tools are made of: text matching, checks, patterns, paging, rendering (no tool declared here)
    (
        "fs_tools.matching",
        "fs_tools.checks",
        "fs_tools.patches",
        "fs_tools.patterns",
        "fs_tools.paging",
        "fs_tools.rendering",
    ),
    ("fs_tools.tools", "fs_tools.gating", "fs_tools.history.rewind", "fs_tools.adoption"),
    ("fs_tools.boundary", "fs_tools.presenters"),
    ("fs_tools.workspace",),
    ("fs_tools.hooks",),
    (
        "fs_tools.adapters",
        "fs_tools.mcp.shapes",
        "fs_tools.demo",
        "fs_tools.testing",
        "fs_tools.reference",
        "fs_tools",  # the package's face: lazy re-exports of the workspace and the vocabulary
    ),
    ("fs_tools.mcp", "fs_tools.adapters.claude_agent_sdk"),
    # the hook server is a command of its own (python -m fs_tools.hooks.server): it reads the hook
    # command's options as the CLI does
    ("fs_tools.cli", "fs_tools.__main__", "fs_tools.hooks.server"),
]
# Imports of the provider's inner modules from outside it, each with why it is allowed.
PROVIDER_INSIDERS: set[tuple[str, str]] = set()


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PROJECT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    found = {}
    for package in ("fs_tools", "policy"):
        for path in sorted((PROJECT / package).rglob("*.py")):
            found[_module_name(path)] = path
    return found


MODULES = _modules()


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) for every import of a project module, as the module it names (``from a import b``
    names ``a.b`` when that is a module, else ``a``)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                child = f"{node.module}.{alias.name}"
                found.append((node.lineno, child if child in MODULES else node.module))
    return [(line, name) for line, name in found if name.split(".")[0] in ("fs_tools", "policy")]


def _layer(module: str) -> int:
    best: tuple[int, int] | None = None  # (prefix length, layer): the longest matching prefix decides
    for index, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            matches = module == prefix or module.startswith(prefix + ".")
            if matches and (best is None or len(prefix) > best[0]):
                best = (len(prefix), index)
    assert best is not None, f"{module} is in no layer: add it to LAYERS"
    return best[1]


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_import_climbs_a_layer(module: str) -> None:
    climbing = [
        f"{MODULES[module].relative_to(PROJECT)}:{line} imports {target}"
        for line, target in _imports(MODULES[module])
        if _layer(target) > _layer(module)
    ]
    assert climbing == []


def test_policy_imports_nothing_of_fs_tools() -> None:
    found = [
        f"{MODULES[m].relative_to(PROJECT)}:{line} imports {target}"
        for m in MODULES
        if m.startswith("policy")
        for line, target in _imports(MODULES[m])
        if target.startswith("fs_tools")
    ]
    assert found == []


def test_only_the_provider_package_is_its_public_face() -> None:
    reaching_in = [
        f"{MODULES[m].relative_to(PROJECT)}:{line} imports {target}"
        for m in MODULES
        if not m.startswith("fs_tools.provider")
        for line, target in _imports(MODULES[m])
        if target.startswith("fs_tools.provider.") and (m, target) not in PROVIDER_INSIDERS
    ]
    assert reaching_in == []


# The tools and what they are made of: above the provider, none of them touches the disk itself.
ABOVE_THE_PROVIDER = (
    "fs_tools.tools",
    "fs_tools.gating",
    "fs_tools.history.rewind",
    "fs_tools.history.diff",
    "fs_tools.matching",
    "fs_tools.checks",
    "fs_tools.patches",
    "fs_tools.patterns",
    "fs_tools.paging",
    "fs_tools.rendering",
)


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith(ABOVE_THE_PROVIDER)))
def test_tools_do_no_io_and_catch_no_os_error(module: str) -> None:
    tree = ast.parse(MODULES[module].read_text())
    names = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert not names & {"os", "io", "shutil", "fcntl", "pathlib"}, f"{module} imports an I/O module"
    caught = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.ExceptHandler) and "OSError" in ast.unparse(node.type or ast.Name("x"))
    ]
    assert caught == [], f"{module} catches OSError at lines {caught}"


def _tool_names() -> set[str]:
    from fs_tools.tools import ALL_TOOLS
    from fs_tools.tools.dialects import DIALECTS

    every = [*ALL_TOOLS, *(tool for dialect in DIALECTS.values() for tool in dialect.tools + dialect.extras)]
    return {tool.name for tool in every}


def _branches_on(node: ast.AST, names: set[str]) -> list[tuple[int, str]]:
    """Tool names a node tests or looks up: compared (``== "list"``, ``"list" in tools``), used as a
    key (``tools["list"]``) or fetched (``tools.get("list")``; a ``details.get`` is a fact's key)."""
    keys: list[ast.expr] = []
    if isinstance(node, ast.Compare):
        keys = [node.left, *node.comparators]
    elif isinstance(node, ast.Subscript):
        keys = [node.slice]
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
        receiver = node.func.value
        keys = [] if isinstance(receiver, ast.Name) and receiver.id == "details" else node.args[:1]
    return [(k.lineno, k.value) for k in keys if isinstance(k, ast.Constant) and k.value in names]


@pytest.mark.parametrize(
    "module", sorted(m for m in MODULES if m.startswith(("fs_tools.boundary", "fs_tools.workspace")))
)
def test_the_boundary_and_the_workspace_never_branch_on_a_tool(module: str) -> None:
    """A remedy suggests an ability, and the workspace finds the tool on offer that has it: neither
    tests for a tool's name (a new tool is one tool file, not an edit here)."""
    tree = ast.parse(MODULES[module].read_text())
    names = _tool_names()
    named = sorted(found for node in ast.walk(tree) for found in _branches_on(node, names))
    assert named == [], f"{module} branches on tool names: {named}"


CALL_WIDE_DETAILS = {"pointer", "terms"}  # of the call, not of a condition: which argument, by what names


def test_the_boundary_reads_a_conditions_facts_as_its_fields() -> None:
    """A condition carries its facts as typed fields (``StaleVersion.lines``, ``AmbiguousEdit.likely``);
    ``details`` is their copy for hosts. The boundary reads from ``details`` only what belongs to the call."""
    tree = ast.parse(MODULES["fs_tools.boundary"].read_text())
    read: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and ast.unparse(node.value).endswith("details"):
            key = node.slice
        elif isinstance(node, ast.Call) and ast.unparse(node.func).endswith("details.get"):
            key = node.args[0]
        else:
            continue
        read.add(key.value if isinstance(key, ast.Constant) else ast.unparse(key))
    assert read <= CALL_WIDE_DETAILS, f"the boundary reads conditions' facts from details: {read - CALL_WIDE_DETAILS}"
