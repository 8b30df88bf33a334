"""The official example MCP Apps server, from npm: `@modelcontextprotocol/server-basic-vanillajs` at a pinned
version under `.cache/interop/app-example`, installed with npm on first use (a failed install fails the test
with npm's output). `ensure_app_example()` returns the command that runs it over stdio: its `get-time` tool
comes with a page written with the official ext-apps `App` class, which `baton dev` must host
(tests/devui/test_dev_apps.py)."""

from __future__ import annotations

import fcntl
import json
import shutil
from pathlib import Path

import pytest

from support.peer_venvs import CACHE, npm_install

APP_EXAMPLE = "@modelcontextprotocol/server-basic-vanillajs@2.0.3"
APP_EXAMPLE_DIR = CACHE / "app-example"


def ensure_app_example() -> list[str]:
    """`node .../dist/index.js --stdio` of the pinned example, installed unless it already is."""
    package, version = APP_EXAMPLE.rsplit("@", 1)
    root = APP_EXAMPLE_DIR / "node_modules" / package
    entry = root / "dist" / "index.js"
    APP_EXAMPLE_DIR.mkdir(parents=True, exist_ok=True)
    with (CACHE / ".app-example.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (entry.is_file() and _version(root / "package.json") == version):
            npm_install(APP_EXAMPLE_DIR, APP_EXAMPLE)
        node = shutil.which("node")
        if node is None or not entry.is_file():
            pytest.fail(f"npm installed {APP_EXAMPLE} but there is no node or no {entry} to run", pytrace=False)
        return [node, str(entry), "--stdio"]


def _version(manifest: Path) -> str | None:
    try:
        meta = json.loads(manifest.read_text())
    except (OSError, ValueError):
        return None
    return meta.get("version") if isinstance(meta, dict) else None
