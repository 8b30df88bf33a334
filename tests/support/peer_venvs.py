"""The peers' venvs: one per pinned library release under `.cache/interop/<name>`, made on first use.

`ensure_venv("mcp1")` returns the Python of `.cache/interop/mcp1` with `mcp==1.30.0` installed in it,
creating it unless a stamp says it already holds that requirement. `uv` (a dev dependency, in Baton's venv)
makes it: on a fresh clone pip took 165 s of wall and 22 s of CPU for the FastMCP venv alone, uv 13 s and
1.4 s. A failed or timed-out install fails the calling test with uv's output (never a skip), and removes
the half-made venv so the next run starts over. `peer_env()` is the environment a peer process runs in:
never Baton's venv. `UV` is that uv binary, also what a desktop host runs an MCPB bundle with.

`ensure_inspector()` does the same for the MCP Inspector, an npm package: `.cache/interop/inspector`
holds `@modelcontextprotocol/inspector` at its pinned version, and a pinned `node-<os>-<arch>` package
too when the system's node is older than the Inspector needs (as tools/conformance.py obtains one). npm
itself comes from apt-get when it is missing and we are root.

| name | requirement | used by |
| --- | --- | --- |
| `mcp` | `mcp==2.3.0` | peers/mcp_*.py (2026-07-28), peers/legacy_mcp2_client.py (its legacy mode) |
| `fastmcp` | `fastmcp==4.1.6` | peers/fastmcp_*.py |
| `fastmcp3` | `fastmcp[tasks]==3.4.11` | peers/fastmcp3_*.py (2025-11-25 tasks, which FastMCP 4 dropped) |
| `fastmcp4tasks` | `fastmcp[tasks]==4.1.4` | peers/fastmcp4_tasks_server.py (2026-07-28 tasks) |
| `mcp1` | `mcp==1.30.0` | peers/legacy_mcp1_*.py (2025-11-25, the last 1.x) |
| `mcp-fuzzer` | `mcp-fuzzer==0.7.0` | tests/conformance/test_mcp_fuzzer.py (the public MCP fuzzer) |
"""

from __future__ import annotations

import fcntl
import json
import os
import platform
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from support import processes
from support.paths import ROOT

CACHE = ROOT / ".cache" / "interop"
REQUIREMENTS = {
    "mcp": "mcp==2.3.0",
    "fastmcp": "fastmcp==4.1.6",
    "fastmcp3": "fastmcp[tasks]==3.4.11",
    "fastmcp4tasks": "fastmcp[tasks]==4.1.4",
    "mcp1": "mcp==1.30.0",
    "mcp-fuzzer": "mcp-fuzzer==0.7.0",
}
UV = Path(sys.executable).with_name("uv")  # pyproject.toml's dev extra pins it
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


def run_step(step: Sequence[str], what: str, *, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    """Run one install step; its output, or fail the test with it (`what` says what was being made)."""
    try:
        done = processes.run(
            step,
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT_S,
            cwd=cwd,
            env=env or peer_env(),
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(
            f"{what}: {' '.join(step)} took over {INSTALL_TIMEOUT_S:.0f} s:\n"
            f"{as_text(exc.stdout)}\n{as_text(exc.stderr)}",
            pytrace=False,
        )
    if done.returncode != 0:
        pytest.fail(
            f"{what}: {' '.join(step)} exited with {done.returncode}\n"
            f"--- stdout ---\n{done.stdout}\n--- stderr ---\n{done.stderr}",
            pytrace=False,
        )
    return done.stdout


def ensure_uv() -> Path:
    """The `uv` binary of Baton's venv, or fail the test saying how to get it."""
    if not UV.is_file():
        pytest.fail(f"no uv at {UV}: run ./dev setup, which installs Baton's dev extra", pytrace=False)
    return UV


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
        uv = str(ensure_uv())
        steps = [
            [uv, "venv", "--quiet", "--python", sys.executable, str(venv)],
            [uv, "pip", "install", "--quiet", "--python", str(python), requirement],
        ]
        try:
            for step in steps:
                run_step(step, f"could not create the {name} peer venv ({requirement})")
        except BaseException:
            shutil.rmtree(venv, ignore_errors=True)
            raise
        stamp.write_text(requirement + "\n")
        return python


# -- the MCP Inspector (npm) -----------------------------------------------------------------------------

INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"
INSPECTOR_NODE_MIN = (22, 19)  # the Inspector's `engines.node`
NODE_VERSION = "22.23.5"  # the node-<os>-<arch> package installed when the system's node is older
INSPECTOR_DIR = CACHE / "inspector"


@dataclass(frozen=True)
class Inspector:
    """The Inspector's launcher script and the node that runs it: `argv("--cli", ...)` is a command."""

    node: Path
    launcher: Path

    def argv(self, *args: str) -> list[str]:
        return [str(self.node), str(self.launcher), *args]


def node_version(node: str | Path) -> tuple[int, int] | None:
    """(major, minor) of a node binary, or None if it does not run."""
    env = {k: v for k, v in os.environ.items() if k != "NODE_OPTIONS"}
    try:
        done = processes.run(
            [str(node), "-p", "process.versions.node"], capture_output=True, text=True, timeout=30, env=env, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    parts = done.stdout.strip().split(".")
    if done.returncode != 0 or len(parts) < 2 or not (parts[0].isdigit() and parts[1].isdigit()):
        return None
    return int(parts[0]), int(parts[1])


def node_package() -> str:
    """The npm package that ships a node binary for this machine (node-<os>-<arch>)."""
    system = {"Linux": "linux", "Darwin": "darwin"}.get(platform.system())
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(platform.machine().lower())
    if system is None or arch is None:
        pytest.fail(f"no node package known for {platform.system()}/{platform.machine()}", pytrace=False)
    return f"node-{system}-{arch}"


def usable_node() -> Path | None:
    """The system node if recent enough for the Inspector, else the cached one if installed."""
    candidates = [shutil.which("node"), INSPECTOR_DIR / "node_modules" / node_package() / "bin" / "node"]
    for node in candidates:
        if node is not None and Path(node).is_file() and (node_version(node) or (0, 0)) >= INSPECTOR_NODE_MIN:
            return Path(node)
    return None


def ensure_npm() -> str:
    """npm, installed with apt-get (as root) when it is missing."""
    npm = shutil.which("npm")
    if npm is not None:
        return npm
    apt = shutil.which("apt-get")
    if apt is None or os.geteuid() != 0:
        pytest.fail("npm is missing and cannot be installed here (needs apt-get as root)", pytrace=False)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    run_step([apt, "update"], "installing npm", env=env)
    run_step([apt, "install", "-y", "--no-install-recommends", "nodejs", "npm"], "installing npm", env=env)
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail("apt-get installed npm but it is still not on PATH", pytrace=False)
    return npm


def npm_install(folder: Path, *specs: str) -> None:
    """`npm install --save-exact SPEC...` into `folder` (a private package.json made first), or fail the test."""
    manifest = folder / "package.json"
    if not manifest.is_file():
        manifest.write_text(json.dumps({"name": f"baton-interop-{folder.name}", "private": True}) + "\n")
    step = [ensure_npm(), "install", "--no-audit", "--no-fund", "--no-update-notifier", "--loglevel=error"]
    env = {k: v for k, v in peer_env().items() if k != "NODE_OPTIONS"}
    run_step([*step, "--save-exact", *specs], f"could not install {' '.join(specs)}", cwd=folder, env=env)


def ensure_inspector() -> Inspector:
    """The pinned MCP Inspector under `.cache/interop/inspector`, installed with npm unless already there."""
    package, version = INSPECTOR.rsplit("@", 1)
    root = INSPECTOR_DIR / "node_modules" / package
    launcher = root / "clients" / "launcher" / "build" / "index.js"
    INSPECTOR_DIR.mkdir(parents=True, exist_ok=True)
    with (CACHE / ".inspector.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        node = usable_node()
        if node is not None and launcher.is_file() and _installed_version(root) == version:
            return Inspector(node, launcher)
        packages = [INSPECTOR] if node is not None else [INSPECTOR, f"{node_package()}@{NODE_VERSION}"]
        npm_install(INSPECTOR_DIR, *packages)
        node = usable_node()
        if node is None or not launcher.is_file() or _installed_version(root) != version:
            pytest.fail(f"npm installed {' '.join(packages)} but no usable Inspector or node came of it", pytrace=False)
        return Inspector(node, launcher)


def _installed_version(root: Path) -> str | None:
    try:
        meta = json.loads((root / "package.json").read_text())
    except (OSError, ValueError):
        return None
    return meta.get("version") if isinstance(meta, dict) else None
