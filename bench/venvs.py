"""The peers' venvs: one per peer library under ``.cache/bench/``, made with its pinned requirement on first use.

Each peer runs in a venv of its own, never in Baton's, with exactly the stack its ``pip install`` pulls in.
A requirement may name several packages (``mcp-otel``, for bench/otel_compare: mcp with the OpenTelemetry SDK
and OTLP/HTTP exporter at the versions in Baton's venv, its ``sdk`` and ``exporter`` pins). A stamp file in the
venv records the requirement it was made with; a venv without it (an interrupted or failed install) or with
another one is made again. ``stack_versions`` reads back what a venv holds.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from processes import Skip, say

PEER_REQUIREMENTS = {
    "mcp": "mcp==2.3.0",
    "fastmcp": "fastmcp==4.1.6",
    "mcp1": "mcp==1.30.0",  # legacy_compare
    "mcp-otel": "mcp==2.3.0 opentelemetry-sdk=={sdk} opentelemetry-exporter-otlp-proto-http=={exporter}",
}
OTEL_PACKAGES = ("opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http")
STACK_PACKAGES = (
    "mcp-baton",
    "mcp",
    "fastmcp",
    "uvicorn",
    "httptools",
    "uvloop",
    "h11",
    "starlette",
    "pydantic",
    "orjson",
)


def ensure_venv(cache: Path, name: str, **pins: str) -> Path:
    """The Python of the peer's venv under ``cache``, created with its pinned requirement (its ``{...}`` filled
    from ``pins``) on first use."""
    requirement = PEER_REQUIREMENTS[name].format(**pins)
    venv = cache / name
    python = venv / "bin" / "python"
    stamp = venv / ".bench-requirement"
    if python.exists() and stamp.exists() and stamp.read_text().strip() == requirement:
        return python
    log = cache / "logs" / f"venv-{name}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    say(f"{name}: creating {venv} with {requirement} (first use, about a minute); log {log}")
    if venv.exists():
        shutil.rmtree(venv)
    with log.open("wb") as out:
        steps = [
            [sys.executable, "-m", "venv", str(venv)],
            [str(python), "-m", "pip", "install", "--quiet", *requirement.split()],
        ]
        for step in steps:
            if subprocess.run(step, stdout=out, stderr=subprocess.STDOUT, check=False).returncode != 0:
                shutil.rmtree(venv, ignore_errors=True)
                raise Skip(f"could not install {requirement}: see {log}")
    stamp.write_text(requirement + "\n")
    return python


def stack_versions(python: Path, packages: tuple[str, ...] = STACK_PACKAGES) -> dict[str, str]:
    """The versions of those of ``packages`` that the venv of ``python`` holds."""
    code = (
        "import importlib.metadata as m, json, sys\n"
        "out = {}\n"
        "for name in sys.argv[1:]:\n"
        "    try:\n        out[name] = m.version(name)\n"
        "    except m.PackageNotFoundError:\n        pass\n"
        "print(json.dumps(out))"
    )
    try:
        done = subprocess.run([str(python), "-c", code, *packages], capture_output=True, timeout=60, check=True)
        versions: dict[str, str] = json.loads(done.stdout)
    except (OSError, ValueError, subprocess.SubprocessError):
        return {}
    return versions
