"""The official MCP conformance suite, server side: one `baton serve examples/everything.py` process must
pass every scenario at 2026-07-28 (40) and at 2025-11-25 (33, the `initialize` era, protocol.md P28) with
no failed and no warning checks, from the same handlers (driven by tools/conformance.py); and every
extension scenario (13: the ten of the Tasks extension among them) but the one the harness itself skips. Twice: with
telemetry off, and traced (every request sampled, spans and metrics exported over OTLP/HTTP to a real
receiver), since tracing must change nothing a client sees."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support import processes
from support.paths import BATON, ROOT
from support.serve import RunningServer, start_server

sys.path.insert(0, str(ROOT / "bench"))
from otlp_sink import OtlpSink
from support.markers import needs

RUNNER = ROOT / "tools" / "conformance.py"
EXPECTED_SCENARIOS = {"2026-07-28": 40, "2025-11-25": 33, "extension": 13}
# Scenarios the pinned harness skips whatever the server does (a placeholder: "pending subscriptions/listen
# rewrite"); any other scenario whose checks are all skipped fails this test.
SKIPPED_BY_HARNESS = {"extension": ["tasks-status-notifications"]}
STARTUP_TIMEOUT = 20.0
RUNNER_TIMEOUT = 840.0

pytestmark = [pytest.mark.conformance, pytest.mark.timeout(900)]


def tail(path: Path, limit: int = 4000) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        return f"(cannot read {path}: {exc})"
    return text[-limit:] or "(empty)"


def describe_failures(summary: dict[str, Any]) -> str:
    lines: list[str] = []
    for name, scenario in summary.get("scenarios", {}).items():
        if scenario.get("status") == "PASS":
            continue
        error = f": {scenario['error']}" if scenario.get("error") else ""
        lines.append(f"{scenario.get('status')} {name}{error}")
        lines += [f"    {p['status']} {p['id']}: {p['message']}" for p in scenario.get("problems", [])]
    return "\n".join(lines) or "(no failing scenario)"


def test_the_runner_selects_the_extension_scenarios() -> None:
    """`--spec-version extension` lists the scenarios the harness marks [extension] and no core one
    (protocol.md P143)."""
    argv = [sys.executable, str(RUNNER), "list", "server", "--spec-version", "extension"]
    run = processes.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=RUNNER_TIMEOUT, check=False)
    assert run.returncode == 0, run.stderr
    names = run.stdout.split()
    assert {"tasks-lifecycle", "tasks-capability-negotiation", "sep-2640-skills-manifest"} <= set(names)
    assert "server-initialize" not in names and "tools-list" not in names


@pytest.fixture(scope="module", params=["off", "traced"])
def receiver(request: pytest.FixtureRequest) -> Iterator[OtlpSink | None]:
    """None for the run with telemetry off; for the traced run, the OTLP/HTTP receiver the server exports to."""
    if request.param == "off":
        yield None
        return
    with OtlpSink(keep=False) as sink:
        yield sink


@pytest.fixture(scope="module")
@needs("process")
def everything(tmp_path_factory: pytest.TempPathFactory, receiver: OtlpSink | None) -> Iterator[RunningServer]:
    """One server for both versions: a single process serves both eras side by side."""
    assert Path(BATON).exists(), f"{BATON} is missing: run `./dev setup` first"
    log = tmp_path_factory.mktemp("conformance-server") / "baton-serve.log"
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint, "OTEL_BSP_SCHEDULE_DELAY": "50"} if receiver else {}
    with start_server("examples/everything.py", log=log, timeout=STARTUP_TIMEOUT, env=env) as server:
        yield server


@pytest.mark.parametrize("spec_version", list(EXPECTED_SCENARIOS))
def test_everything_server_passes_the_conformance_suite(
    everything: RunningServer, receiver: OtlpSink | None, spec_version: str
) -> None:
    expected = EXPECTED_SCENARIOS[spec_version]
    log = everything.log
    argv = [sys.executable, str(RUNNER), "server", everything.url, "--spec-version", spec_version, "--json"]
    try:
        run = processes.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=RUNNER_TIMEOUT, check=False)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"tools/conformance.py timed out after {exc.timeout:.0f}s; server log:\n{tail(log)}")
    try:
        summary: dict[str, Any] = json.loads(run.stdout)
    except ValueError:
        pytest.fail(
            f"tools/conformance.py exited {run.returncode} without a JSON summary\n"
            f"stdout:\n{run.stdout[-3000:]}\nstderr:\n{run.stderr[-3000:]}\nserver log:\n{tail(log)}"
        )

    counts = summary["summary"]
    report = [line for line in run.stderr.splitlines() if not line.startswith("PASS ")]
    details = "\n\n".join(
        [
            f"at {spec_version}:",
            describe_failures(summary),
            "runner report (PASS lines dropped):\n" + "\n".join(report[-150:]),
            f"server log:\n{tail(log, 2000)}",
        ]
    )
    assert summary["spec_version"] == spec_version, details
    skipped = SKIPPED_BY_HARNESS.get(spec_version, [])
    assert counts["scenarios"] == expected, details
    assert counts.get("skipped", []) == skipped, details
    assert (counts["passed"], counts["failed"], counts["warnings"]) == (expected - len(skipped), 0, 0), details
    assert summary["errors"] == [], details
    assert run.returncode == 0, details
    if receiver is not None:
        deadline = time.monotonic() + 10
        while not receiver.spans_received and time.monotonic() < deadline:
            time.sleep(0.1)
        assert receiver.spans_received > 0, "traced, yet no span reached the receiver: tracing was not on"


# The skills extension (SEP-2640): each scenario with the checks it runs against everything.py's skill.
SKILLS_CHECKS = {"sep-2640-skills-directory": 7, "sep-2640-skills-enumeration": 32, "sep-2640-skills-manifest": 6}


def test_everything_server_passes_the_skills_scenarios(everything: RunningServer) -> None:
    """Every skills scenario of the suite, strict and not vacuous: each of its checks succeeds, none is
    skipped or only warns, and each scenario runs its full set against the skill everything.py serves."""
    argv = [sys.executable, str(RUNNER), "server", everything.url, "--spec-version", "extension", "sep-2640-*"]
    run = processes.run(
        [*argv, "--json"], cwd=ROOT, capture_output=True, text=True, timeout=RUNNER_TIMEOUT, check=False
    )
    summary: dict[str, Any] = json.loads(run.stdout)
    details = f"{describe_failures(summary)}\n{run.stderr[-3000:]}\nserver log:\n{tail(everything.log)}"
    assert sorted(summary["scenarios"]) == sorted(SKILLS_CHECKS), details
    for name, scenario in summary["scenarios"].items():
        statuses = {check["id"]: check["status"] for check in scenario["checks"]}
        assert set(statuses.values()) == {"SUCCESS"}, (name, statuses, details)
        assert len(scenario["checks"]) == SKILLS_CHECKS[name], (name, statuses)
    assert run.returncode == 0, details
