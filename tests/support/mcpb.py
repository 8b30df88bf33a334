"""The official MCPB command line (`@anthropic-ai/mcpb`, from npm) under `.cache/interop/mcpb`, and `uv`.

`ensure_mcpb()` installs the pinned release on first use (npm, as `ensure_ts_sdk` does; a lock file serializes
concurrent runs; a failed install fails the test with npm's output) and returns the command that runs its CLI
with the system's node. A desktop host starts a bundle of server type "uv" with `uv`: `peer_venvs.ensure_uv()`.
"""

from __future__ import annotations

import fcntl
import shutil

import pytest

from support.peer_venvs import CACHE, _installed_version, npm_install

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
            npm_install(MCPB_DIR, MCPB)
        node = shutil.which("node")
        if node is None or not cli.is_file():
            pytest.fail(f"npm installed {MCPB} but there is no node or no {cli} to run", pytrace=False)
        return [node, str(cli)]
