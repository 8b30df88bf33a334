"""A Baton server as an OAuth protected resource, in process (its ASGI app through httpx), with tokens
minted here by a key of the test's own: what the real authorization server of `test_auth_server.py`
cannot be made to do (a right signature on a wrong issuer, an algorithm that does not fit its key, a
JWKS that rotates or goes down), and the server-side rules that need no login at all.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import json
import logging
import re
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from support.markers import needs
from support.processes import free_port
from wire import headers_for, request

from baton import Server
from baton.auth import Introspection, OAuthResource
from baton.auth.claims import scopes_of
from baton.auth.jwks import Jwks
from baton.server.exchange import AuthUnavailable, Grant, RequestInfo, Unauthenticated
from baton.state.keys import KeyRing

RESOURCE = "http://127.0.0.1/mcp"
ISSUER = "http://127.0.0.1:9/issuer"  # never contacted: the key is configured


@functools.cache
def signing_key(name: str) -> rsa.RSAPrivateKey:
    """The configured issuer's key, or a stranger's: made when a test first needs it, not as each worker collects."""
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def b64(data: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


def mint(key: Any = None, alg: str = "RS256", kid: str | None = None, **claims: Any) -> str:
    """A token signed by `key` (the issuer's by default), for this resource and issuer unless `claims` say
    otherwise (None drops one)."""
    body = {"iss": ISSUER, "aud": RESOURCE, "sub": "alice", "exp": int(time.time()) + 300, "scope": "mcp:read"}
    body |= claims
    headers = {"kid": kid} if kid is not None else None
    signer = signing_key("issuer") if key is None else key
    return jwt.encode({k: v for k, v in body.items() if v is not None}, signer, algorithm=alg, headers=headers)


def protected(**options: Any) -> Server:
    issuer_key = signing_key("issuer").public_key()
    settings: dict[str, Any] = {"key": issuer_key, "scopes": ["mcp:read"], "leeway_s": 0} | options
    server = Server(
        "tokens", state_keys=KeyRing.ephemeral_key(), auth=OAuthResource(resource=RESOURCE, issuer=ISSUER, **settings)
    )

    @server.tool()
    def whoami(ctx: Any) -> str:
        return str(ctx.principal)

    return server


def send(app: Any, message: dict[str, Any], *, token: str | None = None, **headers: str) -> httpx.Response:
    """POST one 2026-07-28 message to the app (a bearer token if given) and return the response."""
    head = headers_for(message, **headers) if "method" in message else {"Content-Type": "application/json"}
    if token is not None:
        head["Authorization"] = f"Bearer {token}"

    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            return await http.post("/mcp", json=message, headers=head)

    return asyncio.run(go())


def challenge(resp: httpx.Response) -> dict[str, str]:
    return dict(re.findall(r'(\w+)="([^"]*)"', resp.headers["www-authenticate"]))


def whoami() -> dict[str, Any]:
    return request("tools/call", {"name": "whoami", "arguments": {}})


def test_a_valid_token_is_accepted() -> None:
    resp = send(protected().asgi(), whoami(), token=mint())
    assert resp.status_code == 200, resp.text
    assert resp.json()["result"]["content"][0]["text"] == f"{ISSUER}|alice"


def test_an_algorithm_that_does_not_fit_the_key_is_401_not_500() -> None:
    app = protected().asgi()
    # An ES256 header over the RSA key: PyJWT would raise TypeError; it is an invalid token.
    forged = b64({"alg": "ES256", "typ": "JWT"}) + "." + b64({"sub": "x"}) + ".AAAA"
    resp = send(app, whoami(), token=forged)
    assert resp.status_code == 401, resp.text
    assert challenge(resp)["error"] == "invalid_token"
    # A real ES256 signature by an EC key is refused the same way (the configured key is RSA).
    ec_token = mint(ec.generate_private_key(ec.SECP256R1()), alg="ES256")
    assert send(app, whoami(), token=ec_token).status_code == 401
    # An algorithm not configured is refused before any key is looked at.
    assert send(protected(algorithms=["ES256"]).asgi(), whoami(), token=mint()).status_code == 401


def test_an_unexpected_error_while_authenticating_is_a_logged_401(caplog: pytest.LogCaptureFixture) -> None:
    def hook(info: RequestInfo) -> Grant:
        raise RuntimeError(f"broken hook, token {info.headers.get('authorization') if info.headers else ''}")

    server = Server("hooked", state_keys=KeyRing.ephemeral_key(), principal=hook)

    @server.tool()
    def ping_me() -> str:
        return "pong"

    with caplog.at_level(logging.ERROR, logger="baton.auth"):
        resp = send(server.asgi(), request("tools/call", {"name": "ping_me", "arguments": {}}), token="secret-token-1")
    assert resp.status_code == 401, resp.text
    assert "RuntimeError" in caplog.text and "secret-token-1" not in caplog.text
    assert "secret-token-1" not in resp.text


@pytest.mark.parametrize(
    ("claims", "key", "words"),
    [
        ({"exp": int(time.time()) - 60}, None, "the token has expired"),
        ({"nbf": int(time.time()) + 3600}, None, "the token is not yet valid"),
        ({}, "stranger", "the token's signature does not verify"),
        ({"iss": "http://127.0.0.1:9/other"}, None, "the token was issued by another authorization server"),
        ({"sub": None}, None, "the token has no 'sub' claim"),
        ({"aud": "http://127.0.0.1/other"}, None, "the token was issued for another audience"),
    ],
)
def test_refusals_are_told_in_fixed_words(claims: dict[str, Any], key: Any, words: str) -> None:
    resp = send(protected().asgi(), whoami(), token=mint(signing_key(key or "issuer"), **claims))
    assert resp.status_code == 401, resp.text
    assert challenge(resp) | {"resource_metadata": ""} == {
        "error": "invalid_token",
        "error_description": words,
        "scope": "mcp:read",
        "resource_metadata": "",
    }


@pytest.mark.parametrize("token", ["not-a-jwt", "a.b.c", b64({"alg": "RS256"}) + ".e30.AAAA", "e30.e30."])
def test_a_malformed_token_is_told_so_without_the_library_text(token: str) -> None:
    resp = send(protected().asgi(), whoami(), token=token)
    assert resp.status_code == 401
    fixed = ("the token is malformed", "the token's signature algorithm is not accepted")
    assert challenge(resp)["error_description"] in (*fixed, "the token's signature does not verify")


def handshake_post(app: Any, body: dict[str, Any], session: str | None = None) -> httpx.Response:
    """POST one 2025-11-25 message (in a session when `session` is given), without credentials."""
    head = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if session is not None:
        head |= {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}

    async def go() -> httpx.Response:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as http:
            return await http.post("/mcp", json=body, headers=head)

    return asyncio.run(go())


def test_scopes_added_at_run_time_to_a_server_without_auth_are_refused_in_both_eras() -> None:
    server = Server("dyn", state_keys=KeyRing.ephemeral_key())  # nothing authenticates: start-up passes

    def drop_tables() -> str:
        return "tables dropped"

    @server.tool()
    def enable_admin() -> str:
        server.add_tool(drop_tables, scopes=["db:admin"])
        return "admin tools enabled"

    app = server.asgi()
    assert send(app, request("tools/call", {"name": "enable_admin", "arguments": {}})).status_code == 200
    resp = send(app, request("tools/call", {"name": "drop_tables", "arguments": {}}))
    assert resp.status_code == 403, resp.text
    assert challenge(resp) | {"error_description": ""} == {
        "error": "insufficient_scope",
        "error_description": "",
        "scope": "db:admin",
    }
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    opened = handshake_post(app, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
    sid = opened.headers["mcp-session-id"]
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "drop_tables", "arguments": {}}}
    assert handshake_post(app, call, sid).status_code == 403


def test_a_notification_to_a_protected_server_is_authenticated() -> None:
    app = protected().asgi()
    note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    extra = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "notifications/cancelled"}
    resp = send(app, note, **extra)
    assert resp.status_code == 401, resp.text
    assert challenge(resp) == {
        "scope": "mcp:read",
        "resource_metadata": "http://127.0.0.1/.well-known/oauth-protected-resource/mcp",
    }
    assert challenge(send(app, note, token="garbage", **extra))["error"] == "invalid_token"
    assert send(app, note, token=mint(scope="other"), **extra).status_code == 403  # lacks the server-wide scope
    assert send(app, note, token=mint(), **extra).status_code == 202
    # Without auth, a notification is accepted as before.
    assert send(Server("open", state_keys=KeyRing.ephemeral_key()).asgi(), note, **extra).status_code == 202


@pytest.mark.parametrize("separator", ["\x1f", "\u00a0", "\u3000", "\t", "\n"])
def test_token_scopes_are_split_on_spaces_only(separator: str) -> None:
    server = protected(scopes=[])

    @server.tool(scopes=["files:write"])
    def write_file() -> str:
        return "written"

    app = server.asgi()
    joined = mint(scope=f"mcp:read{separator}files:write")  # RFC 6749 3.3: one item, and not a scope-token
    assert send(app, request("tools/call", {"name": "write_file", "arguments": {}}), token=joined).status_code == 403
    spaced = mint(scope="mcp:read  files:write")
    assert send(app, request("tools/call", {"name": "write_file", "arguments": {}}), token=spaced).status_code == 200


def test_invalid_scope_items_are_dropped() -> None:
    assert scopes_of({"scope": 'mcp:read bad"quote caf\u00e9'}) == {"mcp:read"}
    assert scopes_of({"scp": ["mcp:read", "bad\\slash", "", 5, "a b"]}) == {"mcp:read"}
    assert scopes_of({"scp": "mcp:read files:write"}) == {"mcp:read", "files:write"}


# -- the issuer's JWKS: rotation, outages (protocol.md P46) ---------------------------------------------


class JwksServer:
    """A loopback JWKS endpoint whose keys, status and delay a test changes as it goes."""

    def __init__(self) -> None:
        self.keys: dict[str, Any] = {}
        self.status = 200
        self.delay_s = 0.0
        self.hits = 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                owner.hits += 1
                time.sleep(owner.delay_s)
                body = json.dumps({"keys": [public_jwk(key, kid) for kid, key in owner.keys.items()]}).encode()
                self.send_response(owner.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/jwks.json"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


def public_jwk(key: Any, kid: str) -> dict[str, Any]:
    jwk: dict[str, Any] = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
    return jwk | {"kid": kid, "use": "sig"}


@pytest.fixture
@needs("process")
def jwks_server() -> Iterator[JwksServer]:
    server = JwksServer()
    server.keys = {"k1": signing_key("issuer")}
    yield server
    server.httpd.shutdown()
    server.httpd.server_close()


def test_an_unknown_key_id_refreshes_the_set_at_most_every_min_refresh(jwks_server: JwksServer) -> None:
    async def go() -> None:
        jwks = Jwks(jwks_server.url, ttl_s=600)
        assert (await jwks.key("k1"))[0] is not None and jwks.fetches == 1
        jwks_server.keys["k2"] = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        with pytest.raises(Unauthenticated, match="not in the issuer's key set"):
            await jwks.key("k2")  # just loaded: a made-up kid does not make it ask again
        assert jwks.fetches == 1
        jwks.min_refresh_s = 0  # (as min_refresh_s later) the rotation is picked up
        assert (await jwks.key("k2"))[0] is not None and jwks.fetches == 2
        with pytest.raises(Unauthenticated, match="not in the issuer's key set"):
            await jwks.key("k3")

    asyncio.run(go())


def test_a_failed_refresh_keeps_the_cached_keys_and_backs_off(jwks_server: JwksServer) -> None:
    async def go() -> None:
        jwks = Jwks(jwks_server.url, ttl_s=0.2, min_refresh_s=0, retry_s=60)
        await jwks.key("k1")
        await asyncio.sleep(0.3)  # stale now, and the issuer is slow and failing
        jwks_server.status, jwks_server.delay_s = 503, 2.0
        started = time.monotonic()
        found = await asyncio.gather(*(jwks.key("k1") for _ in range(4)))
        # The cached key answers at once: nobody waits the issuer's 2 s (a bound of 0.3 s, against 0.5 s of delay,
        # failed once at 0.31 s on two loaded cores, the background refresh's start running in between).
        assert time.monotonic() - started < 1.0
        assert all(entry[0] is not None for entry in found)
        assert jwks._refresh is not None
        await jwks._refresh  # the one background refresh fails
        assert jwks.fetches == 2 and jwks_server.hits == 2
        assert (await jwks.key("k1"))[0] is not None  # still served from the cache
        with pytest.raises(AuthUnavailable):
            await jwks.key("k9")  # not cached, and the issuer is down: not the token's fault
        assert jwks.fetches == 2  # backing off: no new attempt within retry_s

    asyncio.run(go())


def test_concurrent_requests_share_one_refresh(jwks_server: JwksServer) -> None:
    async def go() -> None:
        jwks = Jwks(jwks_server.url, ttl_s=600)
        jwks_server.delay_s = 0.4
        started = time.monotonic()
        await asyncio.gather(*(jwks.key("k1") for _ in range(5)))
        assert jwks_server.hits == 1 and time.monotonic() - started < 1.5

    asyncio.run(go())


def test_an_unreachable_jwks_is_503_not_401_in_both_eras(jwks_server: JwksServer) -> None:
    jwks_server.status = 500
    app = protected(key=None, jwks_url=jwks_server.url).asgi()
    resp = send(app, whoami(), token=mint(kid="k1"))
    assert resp.status_code == 503, resp.text
    assert "www-authenticate" not in resp.headers and resp.headers["retry-after"] == "5"
    assert "cannot be loaded now" in resp.json()["error"]["message"]
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}
    head = {
        "Content-Type": "application/json",
        "Accept": "application/json",
        "Authorization": f"Bearer {mint(kid='k1')}",
    }

    async def handshake_init() -> httpx.Response:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as http:
            return await http.post("/mcp", json=body, headers=head)

    resp = asyncio.run(handshake_init())
    assert resp.status_code == 503 and "www-authenticate" not in resp.headers  # (backing off: no new attempt)
    jwks_server.status = 200
    assert jwks_server.hits == 1


@pytest.mark.process
def test_an_unreachable_introspection_endpoint_is_503_not_401() -> None:
    dead = Introspection(f"http://127.0.0.1:{free_port()}/introspect", "rs", "secret", timeout_s=2)
    resp = send(protected(key=None, introspection=dead).asgi(), whoami(), token="at-opaque")
    assert resp.status_code == 503, resp.text
    assert "www-authenticate" not in resp.headers and resp.headers["retry-after"] == "5"
    assert "introspection failed" in resp.json()["error"]["message"]
