"""The peers' venvs: one per pinned library release under `.cache/interop/<name>`, made on first use.

`ensure_venv("mcp1")` returns the Python of `.cache/interop/mcp1` with `mcp==1.30.0` installed in it,
creating it unless a stamp says it already holds that requirement. A failed or timed-out install fails
the calling test with pip's output (never a skip), and removes the half-made venv so the next run
starts over. `peer_env()` is the environment a peer process runs in: never Baton's venv.

| name | requirement | used by |
| --- | --- | --- |
| `mcp` | `mcp==2.3.0` | peers/mcp_*.py (2026-07-28), peers/legacy_mcp2_client.py (its legacy mode) |
| `fastmcp` | `fastmcp==4.1.6` | peers/fastmcp_*.py |
| `mcp1` | `mcp==1.30.0` | peers/legacy_mcp1_*.py (2025-11-25, the last 1.x) |
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support.paths import ROOT

CACHE = ROOT / ".cache" / "interop"
REQUIREMENTS = {"mcp": "mcp==2.3.0", "fastmcp": "fastmcp==4.1.6", "mcp1": "mcp==1.30.0"}
STAMP = ".interop-requirement"
INSTALL_TIMEOUT_S = 600.0


def as_text(output: str | bytes | None) -> str:
    """A subprocess output as text, whatever `TimeoutExpired` carried."""
    return output.decode(errors="replace") if isinstance(output, bytes) else output or ""


def peer_env() -> dict[str, str]:
    """The environment for a peer process: ours, minus what would point it at Baton's venv."""
    env = {k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME"}}
    env["PYTHONUNBUFFERED"] = "1"
    return env


def ensure_venv(name: str) -> Path:
    """The Python of `.cache/interop/<name>`, created with its pinned requirement unless already there.

    A lock file serializes concurrent test runs; the stamp is written only after a successful install,
    so an interrupted or failed install is redone next time.
    """
    requirement = REQUIREMENTS[name]
    venv = CACHE / name
    python = venv / "bin" / "python"
    stamp = venv / STAMP
    CACHE.mkdir(parents=True, exist_ok=True)
    with (CACHE / f".{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if python.exists() and stamp.exists() and stamp.read_text().strip() == requirement:
            return python
        shutil.rmtree(venv, ignore_errors=True)
        pip = [str(python), "-m", "pip", "install", "--disable-pip-version-check", "--no-input"]
        steps = [[sys.executable, "-m", "venv", str(venv)], [*pip, "--progress-bar", "off", requirement]]
        for step in steps:
            try:
                done = subprocess.run(
                    step, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S, env=peer_env(), check=False
                )
            except subprocess.TimeoutExpired as exc:
                shutil.rmtree(venv, ignore_errors=True)
                pytest.fail(
                    f"{' '.join(step)} took over {INSTALL_TIMEOUT_S:.0f} s:\n"
                    f"{as_text(exc.stdout)}\n{as_text(exc.stderr)}",
                    pytrace=False,
                )
            if done.returncode != 0:
                shutil.rmtree(venv, ignore_errors=True)
                pytest.fail(
                    f"could not create the {name} peer venv ({requirement}): {' '.join(step)} exited with "
                    f"{done.returncode}\n--- stdout ---\n{done.stdout}\n--- stderr ---\n{done.stderr}",
                    pytrace=False,
                )
        stamp.write_text(requirement + "\n")
        return python
