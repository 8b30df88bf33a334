"""The TypeScript SDK v1 (`@modelcontextprotocol/sdk`, 2025-11-25 only) under `.cache/interop/ts-sdk1`, from npm.

`ensure_ts_sdk()` installs the pinned release on first use (npm, as `ensure_inspector` does; a lock file
serializes concurrent runs) and returns the folder whose `node_modules` holds it: a peer script loads the
SDK from there (`createRequire`), and runs with the system's node.
"""

from __future__ import annotations

import fcntl
import json
import shutil
from pathlib import Path

import pytest

from support.peer_venvs import CACHE, npm_install

TS_SDK = "@modelcontextprotocol/sdk@1.32.2"
TS_SDK_DIR = CACHE / "ts-sdk1"


def node() -> str:
    found = shutil.which("node")
    if found is None:
        pytest.fail("node is not installed (the suite's peers need it)", pytrace=False)
    return found


def ensure_ts_sdk() -> Path:
    """The folder holding the pinned TypeScript SDK v1 in its `node_modules`."""
    package, version = TS_SDK.rsplit("@", 1)
    manifest = TS_SDK_DIR / "node_modules" / package / "package.json"
    TS_SDK_DIR.mkdir(parents=True, exist_ok=True)
    with (CACHE / ".ts-sdk1.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if manifest.is_file() and json.loads(manifest.read_text()).get("version") == version:
            return TS_SDK_DIR
        npm_install(TS_SDK_DIR, TS_SDK)
        if not manifest.is_file():
            pytest.fail(f"npm installed {TS_SDK} but {manifest} is not there", pytrace=False)
        return TS_SDK_DIR
