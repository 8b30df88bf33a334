"""Running `baton install` as a user would, into a throw-away home: the tests of tests/cli/test_install*.py."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from support import processes
from support.paths import BATON

UNPRIVILEGED = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"]  # util-linux


def baton(
    home: Path, *args: str, cwd: Path | None = None, shell: dict[str, str] | None = None, modes_apply: bool = False
) -> subprocess.CompletedProcess[str]:
    """`baton install ARGS` with `home` as HOME (and its XDG and APPDATA folders), no `BATON_PUBLIC_URL` unless
    `shell` (variables the user exported) sets it; `modes_apply`: file modes stop it even when root runs the
    tests (root without the capabilities that override them)."""
    env = {
        **os.environ,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "APPDATA": str(home / "AppData"),
        "PATH": "/usr/bin:/bin",  # no `claude` here: the command is printed
    }
    env.pop("BATON_PUBLIC_URL", None)
    return processes.run(
        [*(UNPRIVILEGED if modes_apply and os.geteuid() == 0 else []), BATON, "install", *args],
        env=env | (shell or {}),
        cwd=cwd or home,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def configs(home: Path) -> list[Path]:
    """The files under `home` but the server's own data directory, where its start-up check (as the host's
    first start would) creates its key file."""
    return [p for p in home.rglob("*") if p.is_file() and ".local/share/baton" not in p.as_posix()]
