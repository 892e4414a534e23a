"""The test files in which a pytest run skipped something, from its JUnit XML (xunit1 names each test's file),
one word each on one line: .ci/run gives them to the run with every framework and SDK installed."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET


def skipped_files(report: str) -> list[str]:
    files = {case.get("file", "") for case in ET.parse(report).iter("testcase") if case.find("skipped") is not None}
    return sorted(name for name in files if name.startswith("tests/") and name.endswith(".py"))


if __name__ == "__main__":
    found = skipped_files(sys.argv[1])
    if not found:
        sys.exit(f"{sys.argv[1]}: no test was skipped, so no file needs the integrations (is it the core's run?)")
    print(" ".join(found))
