"""The official MCP conformance suite, client side: `examples/conformance_client.py` must pass every
2026-07-28 client scenario outside `auth/`, each run on its own, with no failed and no warning checks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = [
    "tools_call",
    "request-metadata",
    "sep-2322-client-request-state",
    "http-standard-headers",
    "http-custom-headers",
    "http-invalid-tool-headers",
    "json-schema-ref-no-deref",
    "json-schema-2020-12-preservation",
]

pytestmark = [pytest.mark.conformance, pytest.mark.timeout(600)]


def test_client_scenarios_pass_without_warnings() -> None:
    command = [sys.executable, str(ROOT / "tools" / "conformance.py"), "client", *SCENARIOS, "--json", "--"]
    command += [sys.executable, "examples/conformance_client.py"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=540, check=False)
    assert done.stdout.strip(), f"the runner printed no JSON; stderr:\n{done.stderr[-4000:]}"
    report = json.loads(done.stdout)
    problems = {
        name: [c for c in s["checks"] if c["status"] in ("FAILURE", "WARNING")] or s.get("error")
        for name, s in report["scenarios"].items()
        if not s["passed"] or s["checks_warnings"]
    }
    assert not problems, json.dumps(problems, indent=2)
    assert sorted(report["scenarios"]) == sorted(SCENARIOS)
    assert report["summary"]["failed"] == 0 and report["summary"]["warnings"] == 0
    assert done.returncode == 0, done.stderr[-4000:]
