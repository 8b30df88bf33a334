"""`baton install`'s start-up check, run where the host will run the entry (protocol.md P118).

The server is loaded and `baton serve --stdio`'s start-up checks are run in a child process
(`baton.install.check_child`) started as the host starts the entry: this environment's Python, from the
filesystem's root, with only the host's usual minimum of variables (`HOME` and `PATH`; on Windows also
the few Python needs to start) and the entry's `--env` values. Nothing else of the installer's shell
reaches it, so a check never passes because of a variable the host will not set. When it fails and the
shell has `BATON_*` variables the entry does not carry, the check is run once more with them: if that
passes, the refusal names them and the `--env` to add (as `"$NAME"`, for the shell to fill in: a value is
never printed).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from .host_apps import InstallError

HOST_VARIABLES = ("HOME", "PATH")
if sys.platform == "win32":
    HOST_VARIABLES += ("SYSTEMROOT", "SYSTEMDRIVE", "USERPROFILE", "APPDATA", "LOCALAPPDATA", "TEMP", "TMP")
TIMEOUT = 120.0  # seconds for loading the server and its checks


def host_environment(env: dict[str, str]) -> dict[str, str]:
    """The variables the host gives the entry: its usual minimum, then the entry's own."""
    return {k: os.environ[k] for k in HOST_VARIABLES if k in os.environ} | env


def checked(target: str, env: dict[str, str]) -> str:
    """The name of the Server at `target` (an absolute `FILE.py[:ATTR]`), once it would start in the host
    with `env`; otherwise an InstallError that says what would stop it there."""
    result = _probe(target, host_environment(env))
    if "name" in result:
        return result["name"]
    if "unloadable" in result:
        raise InstallError(
            f"not installed: {result['unloadable']}\n(loaded as the host will load it: from {os.sep}, with only "
            "HOME, PATH and the --env values)"
        )
    refusal = result["refused"]
    shell = {k: v for k, v in os.environ.items() if k.startswith("BATON_") and k not in env}
    if shell and "name" in _probe(target, host_environment({**shell, **env})):
        named = [k for k in shell if k in refusal] or sorted(shell)
        flags = " ".join(f'--env {k}="${k}"' for k in named)
        raise InstallError(
            f"not installed, as the host could not start it: {refusal}. The host does not see your shell's "
            f"{', '.join(named)}: add {flags}"
        )
    raise InstallError(f"not installed, as the host could not start it: {refusal}; pass what it needs with --env")


def _probe(target: str, env: dict[str, str]) -> dict[str, str]:
    command = [sys.executable, "-m", "baton.install.check_child", target]
    try:
        done = subprocess.run(
            command,
            env=env,
            cwd=Path(sys.executable).anchor or os.sep,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise InstallError(
            f"not installed: loading {target} took over {TIMEOUT:.0f} s (does it wait at import?)"
        ) from None
    except OSError as exc:
        raise InstallError(f"cannot run {sys.executable}: {exc.strerror or exc}", status=1) from None
    lines = done.stdout.strip().splitlines()
    try:
        result = json.loads(lines[-1]) if done.returncode == 0 and lines else None
    except json.JSONDecodeError:
        result = None
    if not isinstance(result, dict):
        last = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        raise InstallError(f"not installed: the start-up check of {target} failed: {last}")
    return result
