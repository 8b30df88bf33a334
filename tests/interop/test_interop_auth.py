"""Interop (acceptance for OAuth): the official `mcp` 2.3.0 client's OAuth support logs in to a Baton
server protected by `Server(auth=OAuthResource(...))`, with tokens from the real test authorization
server, and calls its tools, stepping up when a tool needs one more scope (`peers/mcp_oauth_client.py`).
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest
from support import processes
from support.markers import needs
from support.oauth import AuthServer, start_as, start_protected
from support.paths import ROOT
from support.peer_venvs import INSTALL_TIMEOUT_S, as_text, ensure_venv, peer_env
from support.serve import RunningServer

CLIENT_TIMEOUT_S = 90.0
pytestmark = pytest.mark.timeout(2 * INSTALL_TIMEOUT_S)  # the peer venv may be made on first use


@pytest.fixture(scope="module")
@needs("process")
def auth_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuthServer]:
    with start_as(tmp_path_factory.mktemp("as") / "as.log") as running:
        yield running


@pytest.fixture(scope="module")
@needs("process")
def server(auth_server: AuthServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with start_protected(auth_server, tmp_path_factory.mktemp("baton") / "baton.log") as running:
        yield running


def test_mcp_client_logs_in_steps_up_and_calls_tools(auth_server: AuthServer, server: RunningServer) -> None:
    python = ensure_venv("mcp")
    command = [str(python), str(ROOT / "peers" / "mcp_oauth_client.py"), server.url, "interop-user"]
    try:
        done = processes.run(
            command, capture_output=True, text=True, timeout=CLIENT_TIMEOUT_S, env=peer_env(), check=False
        )
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"the peer timed out:\n{as_text(exc.stderr)}\n{server.log.read_text()}") from None
    output = f"--- stdout ---\n{done.stdout}\n--- stderr ---\n{done.stderr}\n--- server ---\n{server.log.read_text()}"
    assert done.returncode == 0, output
    # The SDK adds offline_access (the AS offers it) to the scope the 401 named, for a refresh token.
    lines = done.stdout.splitlines()
    assert lines == [f"{auth_server.issuer}|interop-user scopes=mcp:read offline_access", "wrote interop.txt"], output
    # The peer logged in twice: first with the 401's scope, then stepping up after the 403.
    assert "logins: ['mcp:read offline_access', 'mcp:read offline_access files:write']" in done.stderr, output
    assert "protocol: 2026-07-28" in done.stderr, output
    # Tokens never reach the server's log.
    assert "eyJ" not in server.log.read_text()
