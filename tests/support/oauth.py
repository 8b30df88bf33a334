"""The test authorization server (`tests/servers/oauth_as.py`) as a subprocess, and logging in to it
without a browser (its `login_hint` shortcut) with a real authorization-code + PKCE flow.

`start_as(log, "--token-ttl", "5")` returns a running `AuthServer` (`.issuer`, `.stop()`, a context
manager); `log_in(issuer, user=..., scope=..., resource=...)` returns the token response (a dict).
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import sys
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx

from support.paths import ROOT, SERVERS
from support.processes import OutputLine, Process, free_port, start
from support.serve import RunningServer, start_server

OAUTH_AS = ROOT / "tests" / "servers" / "oauth_as.py"
REDIRECT_URI = "http://127.0.0.1:9/callback"  # never contacted: the code is read from the redirect


class AuthServer:
    """A running `oauth_as.py`; leaving `with` stops it."""

    def __init__(self, process: Process, issuer: str) -> None:
        self.process = process
        self.issuer = issuer

    def stop(self) -> None:
        self.process.stop()

    def stats(self) -> dict[str, int]:
        return dict(httpx.get(f"{self.issuer}/test/stats", timeout=5).json())

    def __enter__(self) -> AuthServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_as(log: Path, *options: str, issuer_path: str = "") -> AuthServer:
    """Start the test AS on a free loopback port (stdout to `log`), once it says it is ready."""
    port = free_port()
    argv = [sys.executable, str(OAUTH_AS), "--port", str(port), *options]
    if issuer_path:
        argv += ["--issuer-path", issuer_path]
    process = start(argv, log=log, ready=OutputLine("oauth_as ready"), name="oauth_as")
    return AuthServer(process, f"http://127.0.0.1:{port}{issuer_path}")


def start_protected(auth_server: AuthServer, log: Path, port: int | None = None, **env: str) -> RunningServer:
    """`tests/servers/oauth_protected.py` on 127.0.0.1, trusting `auth_server`, its resource URI the served
    `/mcp`; `env` adds its other `BATON_TEST_*` settings."""
    port = port or free_port()
    env = {"BATON_TEST_ISSUER": auth_server.issuer, "BATON_TEST_RESOURCE": f"http://127.0.0.1:{port}/mcp", **env}
    return start_server(str(SERVERS / "oauth_protected.py"), port=port, log=log, env=env)


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def log_in(
    issuer: str,
    *,
    user: str = "alice",
    scope: str = "",
    resource: str,
    client_id: str = "public-client",
    client_secret: str | None = None,
    secret_in_body: bool = False,
) -> dict[str, Any]:
    """Authorization code + PKCE S256 as `user` (the AS's login_hint shortcut): the token response."""
    verifier, challenge = pkce()
    state = secrets.token_urlsafe(8)
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT_URI,
        "scope": scope,
        "state": state,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "resource": resource,
        "login_hint": user,
    }
    with httpx.Client(timeout=10) as http:
        resp = http.get(f"{issuer}/authorize", params=params)
        assert resp.status_code == 302, resp.text
        query = parse_qs(urlsplit(resp.headers["location"]).query)
        assert query["state"] == [state] and query["iss"] == [issuer], query
        data = {
            "grant_type": "authorization_code",
            "code": query["code"][0],
            "redirect_uri": REDIRECT_URI,
            "code_verifier": verifier,
            "resource": resource,
            "client_id": client_id,
        }
        auth = (client_id, client_secret) if client_secret and not secret_in_body else None
        if client_secret and secret_in_body:
            data["client_secret"] = client_secret
        token = http.post(f"{issuer}/token", data=data, auth=auth)
        assert token.status_code == 200, token.text
        return dict(token.json())
