"""Principals from verified bearer JWTs over real HTTP, with the issuer's JWKS served on loopback."""

from __future__ import annotations

import functools
import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from support.markers import needs
from support.paths import SERVERS
from support.serve import RunningServer, start_for_module
from wire import accept, call

ISSUER, AUDIENCE = "https://issuer.test", "https://mcp.test"


@functools.cache
def signing_key(name: str) -> rsa.RSAPrivateKey:
    """The issuer's key ("issuer") or a stranger's: made when a test first needs it, not as each worker collects."""
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture(scope="module")
@needs("process")
def jwks_url() -> Iterator[str]:
    jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(signing_key("issuer").public_key()))
    body = json.dumps({"keys": [{**jwk, "kid": "k1", "use": "sig", "alg": "RS256"}]}).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/jwks.json"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
@needs("process")
def server(jwks_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """One server for the module: every test only calls `whoami`, which keeps nothing between calls."""
    with start_for_module(
        tmp_path_factory, str(SERVERS / "jwt_guarded.py"), env={"BATON_TEST_JWKS": jwks_url}
    ) as server:
        yield server


def token(sub: str = "alice", *, key: str = "issuer", kid: str = "k1", **claims: Any) -> str:
    now = int(time.time())
    body = {"iss": ISSUER, "aud": AUDIENCE, "sub": sub, "iat": now, "exp": now + 300, **claims}
    present = {k: v for k, v in body.items() if v is not None}
    return jwt.encode(present, signing_key(key), algorithm="RS256", headers={"kid": kid})


def bearer(value: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {value}"}


def test_valid_token_names_the_principal_and_binds_the_state(server: RunningServer) -> None:
    alice = token("alice")
    r1 = call(server.url, "whoami", **bearer(alice)).json()["result"]
    r2 = call(server.url, "whoami", responses={"q1": accept(confirm=True)}, state=r1["requestState"], **bearer(alice))
    assert r2.json()["result"]["content"][0]["text"] == f"{ISSUER}|alice ok=True"
    # Bob, with a perfectly valid token of his own, cannot continue Alice's flow.
    stolen = call(
        server.url, "whoami", responses={"q1": accept(confirm=True)}, state=r1["requestState"], **bearer(token("bob"))
    )
    assert stolen.status_code == 400 and stolen.json()["error"]["message"] == "Invalid or expired requestState"


BAD_CREDENTIALS: dict[str, Callable[[], str | None]] = {  # made as the test runs: tokens expire
    "none": lambda: None,
    "basic": lambda: "Basic YWxpY2U6cHc=",
    "empty": lambda: "Bearer",
    "garbage": lambda: "Bearer not-a-jwt",
    "expired": lambda: "Bearer " + token(exp=int(time.time()) - 3600),
    "issuer": lambda: "Bearer " + token(iss="https://evil.test"),
    "audience": lambda: "Bearer " + token(aud="https://other.test"),
    "key": lambda: "Bearer " + token(key="stranger"),
    "kid": lambda: "Bearer " + token(kid="unknown"),
    "no-sub": lambda: "Bearer " + token(sub=None),
    "alg-none": lambda: (
        "Bearer " + jwt.encode({"iss": ISSUER, "aud": AUDIENCE, "sub": "x", "exp": 2**31}, None, algorithm="none")
    ),
}


@pytest.mark.parametrize("kind", list(BAD_CREDENTIALS))
def test_bad_credentials_get_401(server: RunningServer, kind: str) -> None:
    credentials = BAD_CREDENTIALS[kind]()
    extra = {} if credentials is None else {"Authorization": credentials}
    resp = call(server.url, "whoami", **extra)
    assert resp.status_code == 401, resp.text
    assert resp.headers["www-authenticate"].startswith("Bearer error=")
    assert "Unauthorized" in resp.json()["error"]["message"]
    assert "result" not in resp.json()


def test_configuration_refuses_weak_algorithms() -> None:
    from baton.principals import bearer_jwt

    with pytest.raises(ValueError, match="asymmetric"):
        bearer_jwt(issuer=ISSUER, audience=AUDIENCE, key="secret", algorithms=["HS256"])
    with pytest.raises(ValueError, match="exactly one"):
        bearer_jwt(issuer=ISSUER, audience=AUDIENCE)
