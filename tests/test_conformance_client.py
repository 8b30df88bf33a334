"""The official MCP conformance suite, client side: `examples/conformance_client.py` must pass every client
scenario outside `auth/`, each run on its own, with no failed and no warning checks: the 8 of 2026-07-28,
and the 5 of 2025-11-25, where the mock servers speak the `initialize` era (protocol.md P34)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = {
    "2026-07-28": [
        "tools_call",
        "request-metadata",
        "sep-2322-client-request-state",
        "http-standard-headers",
        "http-custom-headers",
        "http-invalid-tool-headers",
        "json-schema-ref-no-deref",
        "json-schema-2020-12-preservation",
    ],
    "2025-11-25": [
        "initialize",
        "tools_call",
        "elicitation-sep1034-client-defaults",
        "sse-retry",
        "json-schema-2020-12-preservation",
    ],
}

pytestmark = [pytest.mark.conformance, pytest.mark.timeout(600)]


@pytest.mark.parametrize("spec_version", list(SCENARIOS))
def test_client_scenarios_pass_without_warnings(spec_version: str) -> None:
    scenarios = SCENARIOS[spec_version]
    command = [sys.executable, str(ROOT / "tools" / "conformance.py"), "client", *scenarios]
    command += ["--spec-version", spec_version, "--json", "--", sys.executable, "examples/conformance_client.py"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=540, check=False)
    assert done.stdout.strip(), f"the runner printed no JSON at {spec_version}; stderr:\n{done.stderr[-4000:]}"
    report = json.loads(done.stdout)
    problems = {
        name: [c for c in s["checks"] if c["status"] in ("FAILURE", "WARNING")] or s.get("error")
        for name, s in report["scenarios"].items()
        if not s["passed"] or s["checks_warnings"]
    }
    assert not problems, f"at {spec_version}: " + json.dumps(problems, indent=2)
    assert report["spec_version"] == spec_version
    assert sorted(report["scenarios"]) == sorted(scenarios)
    assert report["summary"]["failed"] == 0 and report["summary"]["warnings"] == 0
    assert done.returncode == 0, done.stderr[-4000:]
