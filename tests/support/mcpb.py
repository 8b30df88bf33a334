"""The official MCPB command line (`@anthropic-ai/mcpb`, from npm) under `.cache/interop/mcpb`, and `uv`.

`ensure_mcpb()` installs the pinned release on first use (npm, as `ensure_ts_sdk` does; a lock file serializes
concurrent runs; a failed install fails the test with npm's output) and returns the command that runs its CLI
with the system's node. `ensure_uv()` is the `uv` binary of the `uv` peer venv (`uv` from PyPI), what a desktop
host starts a bundle of server type "uv" with.
"""

from __future__ import annotations

import fcntl
import json
import shutil
from pathlib import Path

import pytest

from support.peer_venvs import CACHE, _installed_version, ensure_npm, ensure_venv, peer_env, run_step

MCPB = "@anthropic-ai/mcpb@2.1.2"
MCPB_DIR = CACHE / "mcpb"


def ensure_mcpb() -> list[str]:
    """`node .../dist/cli/cli.js` of the pinned `@anthropic-ai/mcpb`, installed unless it already is."""
    package, version = MCPB.rsplit("@", 1)
    root = MCPB_DIR / "node_modules" / package
    cli = root / "dist" / "cli" / "cli.js"
    MCPB_DIR.mkdir(parents=True, exist_ok=True)
    with (CACHE / ".mcpb.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (cli.is_file() and _installed_version(root) == version):
            own = MCPB_DIR / "package.json"
            if not own.is_file():
                own.write_text(json.dumps({"name": "baton-interop-mcpb", "private": True}) + "\n")
            step = [ensure_npm(), "install", "--no-audit", "--no-fund", "--no-update-notifier", "--loglevel=error"]
            env = {k: v for k, v in peer_env().items() if k != "NODE_OPTIONS"}
            run_step([*step, "--save-exact", MCPB], f"could not install {MCPB}", cwd=MCPB_DIR, env=env)
        node = shutil.which("node")
        if node is None or not cli.is_file():
            pytest.fail(f"npm installed {MCPB} but there is no node or no {cli} to run", pytrace=False)
        return [node, str(cli)]


def ensure_uv() -> Path:
    """The `uv` binary, from PyPI into its peer venv on first use."""
    uv = ensure_venv("uv").parent / "uv"
    if not uv.is_file():
        pytest.fail(f"pip installed uv but {uv} is not there", pytrace=False)
    return uv

