"""bench/profile.py samples a real server under load with py-spy and names where its CPU goes."""

from __future__ import annotations

import subprocess
import sys

from support.paths import ROOT


def test_profile_names_batons_hot_path() -> None:
    run = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "profile.py"), "-n", "600", "-c", "4", "--top", "40"],
        check=False,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert run.returncode == 0, run.stderr
    out = run.stdout
    assert "-- by component (self time)" in out and "-- self time" in out and "-- inclusive time" in out
    assert "flows ok / failed        600 / 0" in out  # the measured load run's own report
    # The samples reach into Baton's request path, through the ASGI app to the tool.
    assert "HttpApp.__call__ (baton/serve/http.py)" in out
    assert "perform (everything.py)" in out
    shares = out.split("-- by component (self time)")[1].split("-- self time")[0]
    assert "%  baton" in shares and "%  uvicorn" in shares
