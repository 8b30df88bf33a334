"""The official MCP conformance suite, client side: `examples/conformance_client.py` must pass every client
scenario with no failed and no warning checks: the 8 of 2026-07-28 outside `auth/`, and the 5 of 2025-11-25,
where the mock servers speak the `initialize` era (protocol.md P34); and the `auth/` ones, where the client
logs in with OAuth (`baton.client.oauth`): 25 at 2026-07-28, 14 at 2025-11-25. Each revision's scenarios run
side by side in one harness process (one node start, not one per scenario); the extension ones one by one."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from support import processes

ROOT = Path(__file__).resolve().parents[2]
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

AUTH = [
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
]
AUTH_SCENARIOS = {
    "2026-07-28": [
        *AUTH,
        *[
            "auth/resource-mismatch",
            "auth/offline-access-scope",
            "auth/offline-access-not-supported",
            "auth/authorization-server-migration",
            "auth/iss-supported",
            "auth/iss-not-advertised",
            "auth/iss-supported-missing",
            "auth/iss-wrong-issuer",
            "auth/iss-unexpected",
            "auth/iss-normalized",
            "auth/metadata-issuer-mismatch",
        ],
    ],
    "2025-11-25": AUTH,
}

# The extension track's `auth/` scenarios (issue 38): logins with no person, and DPoP-bound tokens.
EXTENSION_AUTH = [
    "auth/client-credentials-jwt",
    "auth/client-credentials-basic",
    "auth/wif-jwt-bearer",
    "auth/enterprise-managed-authorization",
    "auth/dpop",
    "auth/dpop-nonce",
]

pytestmark = [pytest.mark.conformance, pytest.mark.timeout(600)]


@pytest.mark.parametrize("spec_version", list(SCENARIOS))
def test_every_client_scenario_passes_without_warnings(spec_version: str) -> None:
    """Every scenario the suite has for the version, `auth/` ones included (a new one fails the names check)."""
    run_scenarios(spec_version, [*SCENARIOS[spec_version], *AUTH_SCENARIOS[spec_version]], side_by_side=True)


def test_extension_auth_scenarios_pass_without_warnings() -> None:
    run_scenarios("extension", EXTENSION_AUTH)


def run_scenarios(spec_version: str, scenarios: list[str], *, side_by_side: bool = False) -> None:
    """`side_by_side`: name no scenario, so the runner runs all of the version's at once (each client may then
    wait on the others for the two cores: a longer limit per client)."""
    named = [] if side_by_side else scenarios
    command = [sys.executable, str(ROOT / "tools" / "conformance.py"), "client", *named]
    command += ["--spec-version", spec_version, "--json", *(["--timeout", "150"] if side_by_side else [])]
    command += ["--", sys.executable, "examples/conformance_client.py"]
    done = processes.run(command, cwd=ROOT, capture_output=True, text=True, timeout=540, check=False)
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


# The skills extension (SEP-2640): the one check each client scenario runs, which must succeed.
SKILLS_CHECKS = {
    "sep-2640-client-no-prefetch": "sep-2640-host-no-prefetch",
    "sep-2640-client-verify-digest": "sep-2640-host-verify-digest",
    "sep-2640-client-verify-size": "sep-2640-host-size-mismatch-failure",
    "sep-2640-client-verify-frontmatter": "sep-2640-host-frontmatter-comparison",
}


def test_skills_scenarios_pass_and_each_runs_its_check() -> None:
    """Not vacuous: a client that never lists, or never reads the tampered SKILL.md, gets SKIPPED or a
    "not testable" FAILURE here; a client that reads on after it gets a FAILURE."""
    command = [sys.executable, str(ROOT / "tools" / "conformance.py"), "client", *SKILLS_CHECKS]
    command += ["--spec-version", "extension", "--json", "--", sys.executable, "examples/conformance_client.py"]
    done = processes.run(command, cwd=ROOT, capture_output=True, text=True, timeout=540, check=False)
    report = json.loads(done.stdout)
    assert sorted(report["scenarios"]) == sorted(SKILLS_CHECKS), done.stderr[-3000:]
    for name, scenario in report["scenarios"].items():
        assert [(c["id"], c["status"]) for c in scenario["checks"]] == [(SKILLS_CHECKS[name], "SUCCESS")], scenario
    assert done.returncode == 0, done.stderr[-3000:]
