"""bench/profile.py samples a real server under load with py-spy and names where its CPU goes."""

from __future__ import annotations

import subprocess
import sys

import pytest
from support import processes
from support.paths import ROOT

pytestmark = pytest.mark.process  # every test here starts processes (support.markers)


def profile(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return processes.run(
        [sys.executable, str(ROOT / "bench" / "profile.py"), *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_profile_names_batons_hot_path() -> None:
    """What the samples name, whatever its share: every function sampled is listed (`--top` above their number),
    so a busy machine, which moves the shares, cannot push a name out of the tables."""
    run = profile("-n", "600", "-c", "4", "--top", "100000")
    assert run.returncode == 0, run.stderr
    out = run.stdout
    assert "-- by component (self time)" in out and "-- self time" in out and "-- inclusive time" in out
    assert "load: 600 flows ok, 0 failed, c=4" in out  # the measured load run's own report
    # The samples reach into Baton's request path, through the ASGI app to the tool.
    inclusive = out.split("-- inclusive time")[1]
    assert "%  HttpApp.__call__ (baton/serve/http.py)" in inclusive
    assert "%  perform (examples/everything.py)" in inclusive
    components = out.split("-- by component (self time)")[1].split("-- self time")[0]
    assert "%  baton" in components and "%  uvicorn" in components


def test_a_traced_server_shows_batons_tracing_beside_the_sdks_in_microseconds() -> None:
    """`--trace 1`: every request recorded and exported to a real OTLP receiver; the components name Baton's
    tracing code apart from the SDK's, each in µs of server CPU per round trip."""
    # 1600 flows: Baton's tracing takes about a tenth of the samples, but over 400 flows on a loaded machine it
    # once got none (the samples then went to uvicorn and asyncio, 84 %).
    run = profile("-n", "1600", "-c", "4", "--trace", "1")
    assert run.returncode == 0, run.stderr
    out = run.stdout
    assert "load: 1600 flows ok, 0 failed, c=4" in out
    components = out.split("-- by component (self time)")[1].split("-- self time")[0]  # every one sampled: < 30
    assert "%  baton tracing" in components and "%  OpenTelemetry SDK" in components, components
    microseconds = out.split("server CPU µs per round trip")[1].split("-- self time")[0]
    assert "baton tracing" in microseconds and "OpenTelemetry SDK" in microseconds


def test_a_bad_ratio_is_one_line_and_exit_2() -> None:
    run = profile("--trace", "2", timeout=60)
    assert run.returncode == 2 and "--trace takes a ratio from 0 to 1" in run.stderr
    assert "Traceback" not in run.stderr
