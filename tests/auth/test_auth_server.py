"""A Baton server as an OAuth 2.1 protected resource, over real loopback HTTP, with tokens from the real
Authlib test authorization server (`tests/servers/oauth_as.py`): the Protected Resource Metadata, the
401 and 403 challenges, audience/issuer/expiry/signature refusals, per-tool, per-resource and per-prompt
scopes with a scope hierarchy, the 2025-11-25 session path, MRTR rounds, and `baton serve --auth-issuer`.
"""

from __future__ import annotations

import base64
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from support import processes
from support.inprocess import InProcessServer
from support.markers import needs
from support.oauth import AuthServer, log_in, start_as, start_protected
from support.paths import BATON, ROOT, SERVERS
from support.processes import free_port
from support.serve import RunningServer, start_server
from wire import accept, call, post, request

from baton import Server
from baton.auth import OAuthResource, canonical_resource
from baton.server.challenge import bearer_challenge
from baton.server.scopes import Implications, scope_list
from baton.server.startup import ConfigurationError

HANDSHAKE = "2025-11-25"


def challenge(header: str) -> dict[str, str]:
    """The parameters of a `Bearer k="v", ...` challenge."""
    assert header.startswith("Bearer"), header
    return dict(re.findall(r'(\w+)="([^"]*)"', header))


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture(scope="module")
def signing_key(tmp_path_factory: pytest.TempPathFactory) -> str:
    """One RSA key for both test issuers, so a token of the other issuer has a valid signature here."""
    path = tmp_path_factory.mktemp("key") / "signing.pem"
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    encoding, pkcs8 = serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8
    path.write_bytes(key.private_bytes(encoding, pkcs8, serialization.NoEncryption()))
    return str(path)


@pytest.fixture(scope="module")
@needs("process")
def auth_server(tmp_path_factory: pytest.TempPathFactory, signing_key: str) -> Iterator[AuthServer]:
    with start_as(tmp_path_factory.mktemp("as") / "as.log", "--key-file", signing_key) as running:
        yield running


@pytest.fixture(scope="module")
@needs("process")
def other_issuer(tmp_path_factory: pytest.TempPathFactory, signing_key: str) -> Iterator[AuthServer]:
    with start_as(tmp_path_factory.mktemp("as2") / "as.log", "--key-file", signing_key) as running:
        yield running


@pytest.fixture(scope="module")
@needs("process")
def server(auth_server: AuthServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with start_protected(auth_server, tmp_path_factory.mktemp("baton") / "baton.log") as running:
        yield running


def token_for(auth_server: AuthServer, server: RunningServer, scope: str, user: str = "alice", **kw: Any) -> str:
    return str(log_in(auth_server.issuer, user=user, scope=scope, resource=server.url, **kw)["access_token"])


# -- Protected Resource Metadata ------------------------------------------------------------------------


def test_metadata_is_published_at_the_path_aware_well_known_uri(auth_server: AuthServer, server: RunningServer) -> None:
    url = f"http://127.0.0.1:{server.port}/.well-known/oauth-protected-resource/mcp"
    resp = httpx.get(url, headers={"Origin": "https://host.example"})
    assert resp.status_code == 200
    assert resp.headers["access-control-allow-origin"] == "*"
    doc = resp.json()
    assert doc["resource"] == server.url
    assert doc["authorization_servers"] == [auth_server.issuer]
    assert doc["bearer_methods_supported"] == ["header"]
    assert doc["scopes_supported"] == ["mcp:read", "files:write", "files:read"]
    assert "offline_access" not in doc["scopes_supported"]
    assert doc["resource_name"] == "Baton OAuth test server"
    preflight = httpx.options(url, headers={"Origin": "https://host.example", "Access-Control-Request-Method": "GET"})
    assert preflight.status_code == 204 and preflight.headers["access-control-allow-origin"] == "*"
    # The endpoint is at /mcp: the root document would name another resource (protocol.md P45).
    assert httpx.get(f"http://127.0.0.1:{server.port}/.well-known/oauth-protected-resource").status_code == 404
    assert httpx.post(url).status_code == 405


# -- 401: no token, bad tokens ------------------------------------------------------------------------


def test_a_request_without_a_token_gets_401_naming_the_metadata_and_the_scopes(server: RunningServer) -> None:
    resp = call(server.url, "whoami")
    assert resp.status_code == 401
    params = challenge(resp.headers["www-authenticate"])
    assert params == {
        "scope": "mcp:read",
        "resource_metadata": f"http://127.0.0.1:{server.port}/.well-known/oauth-protected-resource/mcp",
    }
    assert "Unauthorized" in resp.json()["error"]["message"]
    # The challenge names every scope the operation needs, so one login suffices.
    resp = call(server.url, "write_file", {"name": "a"})
    assert resp.status_code == 401
    assert challenge(resp.headers["www-authenticate"])["scope"] == "mcp:read files:write"


def test_a_valid_token_names_the_caller_issuer_and_subject(auth_server: AuthServer, server: RunningServer) -> None:
    token = token_for(auth_server, server, "mcp:read offline_access")
    resp = call(server.url, "whoami", **bearer(token))
    assert resp.status_code == 200, resp.text
    text = resp.json()["result"]["content"][0]["text"]
    assert text == f"{auth_server.issuer}|alice scopes=mcp:read offline_access"


def refused(resp: httpx.Response) -> dict[str, str]:
    assert resp.status_code == 401, resp.text
    params = challenge(resp.headers["www-authenticate"])
    assert params["error"] == "invalid_token"
    assert params["resource_metadata"].endswith("/.well-known/oauth-protected-resource/mcp")
    assert "result" not in resp.json()
    return params


def test_a_token_for_another_audience_is_refused(auth_server: AuthServer, server: RunningServer) -> None:
    token = str(log_in(auth_server.issuer, scope="mcp:read", resource="http://127.0.0.1:1/other")["access_token"])
    assert "another audience" in refused(call(server.url, "whoami", **bearer(token)))["error_description"]
    # A trailing slash is another resource, not a spelling of this one (protocol.md P43).
    token = str(log_in(auth_server.issuer, scope="mcp:read", resource=server.url + "/")["access_token"])
    refused(call(server.url, "whoami", **bearer(token)))


def test_an_uppercase_scheme_and_host_in_the_audience_is_the_same_resource(
    auth_server: AuthServer, server: RunningServer
) -> None:
    loud = server.url.replace("http://127.0.0.1", "HTTP://127.0.0.1")
    token = str(log_in(auth_server.issuer, scope="mcp:read", resource=loud)["access_token"])
    assert call(server.url, "whoami", **bearer(token)).status_code == 200


def test_an_expired_token_is_refused(auth_server: AuthServer, server: RunningServer) -> None:
    token = token_for(auth_server, server, "mcp:read", client_id="short-lived")
    assert call(server.url, "whoami", **bearer(token)).status_code == 200
    time.sleep(2.5)
    assert "expired" in refused(call(server.url, "whoami", **bearer(token)))["error_description"]


def test_a_token_from_another_issuer_is_refused(other_issuer: AuthServer, server: RunningServer) -> None:
    # The other issuer signs with the same key (and kid): only the `iss` check can refuse its token.
    token = str(log_in(other_issuer.issuer, scope="mcp:read", resource=server.url)["access_token"])
    description = refused(call(server.url, "whoami", **bearer(token)))["error_description"]
    assert description == "the token was issued by another authorization server"


def test_a_token_with_a_bad_signature_is_refused(auth_server: AuthServer, server: RunningServer) -> None:
    token = token_for(auth_server, server, "mcp:read")
    head, body, sig = token.split(".")
    flipped = base64.urlsafe_b64encode(bytes([base64.urlsafe_b64decode(sig + "==")[0] ^ 1])).decode()[:2]
    refused(call(server.url, "whoami", **bearer(f"{head}.{body}.{flipped}{sig[2:]}")))
    # A payload with more scopes under the original signature is refused too.
    payload = base64.urlsafe_b64decode(body + "==").replace(b'"mcp:read"', b'"mcp:admin mcp:read"')
    forged = base64.urlsafe_b64encode(payload).rstrip(b"=").decode()
    refused(call(server.url, "write_file", {"name": "x"}, **bearer(f"{head}.{forged}.{sig}")))


def test_an_algorithm_that_does_not_fit_the_jwks_key_is_401_in_both_eras(server: RunningServer) -> None:
    def b64(data: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()

    # The JWKS key test-key-1 is RSA; an ES256 header naming it made PyJWT raise TypeError (a 500).
    forged = b64({"alg": "ES256", "kid": "test-key-1", "typ": "JWT"}) + "." + b64({"sub": "x"}) + ".AAAA"
    refused(call(server.url, "whoami", **bearer(forged)))
    init = {"protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    resp = handshake(server.url, "initialize", init, 1, None, forged)
    assert resp.status_code == 401 and 'error="invalid_token"' in resp.headers["www-authenticate"]


@pytest.mark.parametrize(
    ("header", "error"),
    [("Bearer not-a-jwt", "invalid_token"), ("Basic YWxpY2U6c2VjcmV0", None), ("Bearer a b", "invalid_request")],
)
def test_malformed_credentials_are_refused_and_the_server_keeps_serving(
    server: RunningServer, header: str, error: str | None
) -> None:
    resp = call(server.url, "whoami", Authorization=header)
    assert resp.status_code == 401
    # Another scheme is no bearer credential at all: no error code (RFC 6750 3.1, protocol.md P47).
    assert challenge(resp.headers["www-authenticate"]).get("error") == error
    assert httpx.get(f"http://127.0.0.1:{server.port}/.well-known/oauth-protected-resource/mcp").status_code == 200


# -- 403: scopes ------------------------------------------------------------------------------------------


def forbidden(resp: httpx.Response, scope: str) -> None:
    assert resp.status_code == 403, resp.text
    params = challenge(resp.headers["www-authenticate"])
    assert params["error"] == "insufficient_scope"
    assert params["scope"] == scope
    assert params["resource_metadata"].endswith("/.well-known/oauth-protected-resource/mcp")
    assert "Forbidden" in resp.json()["error"]["message"]


def test_a_tool_scope_is_required_and_every_needed_scope_is_named_at_once(
    auth_server: AuthServer, server: RunningServer
) -> None:
    read_only = token_for(auth_server, server, "mcp:read")
    forbidden(call(server.url, "write_file", {"name": "a"}, **bearer(read_only)), "mcp:read files:write")
    # tools/list still shows the tool (protocol.md P39); calls are what the scope guards.
    listed = post(server.url, request("tools/list"), **bearer(read_only)).json()["result"]["tools"]
    assert "write_file" in [tool["name"] for tool in listed]
    stepped_up = token_for(auth_server, server, "mcp:read files:write")
    resp = call(server.url, "write_file", {"name": "a"}, **bearer(stepped_up))
    assert resp.json()["result"]["content"][0]["text"] == "wrote a"


def test_the_server_wide_scope_is_required_of_every_request(auth_server: AuthServer, server: RunningServer) -> None:
    files_only = token_for(auth_server, server, "files:write")
    forbidden(post(server.url, request("tools/list"), **bearer(files_only)), "mcp:read")
    forbidden(call(server.url, "write_file", {"name": "a"}, **bearer(files_only)), "mcp:read files:write")


def test_a_broader_scope_implies_the_narrower_ones(auth_server: AuthServer, server: RunningServer) -> None:
    admin = token_for(auth_server, server, "mcp:read mcp:admin")
    assert call(server.url, "write_file", {"name": "b"}, **bearer(admin)).status_code == 200
    read = post(server.url, request("resources/read", {"uri": "files://secret"}), **bearer(admin))
    assert read.json()["result"]["contents"][0]["text"] == "the secret file"


def test_resource_and_prompt_scopes(auth_server: AuthServer, server: RunningServer) -> None:
    read_only = token_for(auth_server, server, "mcp:read")
    forbidden(
        post(server.url, request("resources/read", {"uri": "files://secret"}), **bearer(read_only)),
        "mcp:read files:read",
    )
    public = post(server.url, request("resources/read", {"uri": "files://public"}), **bearer(read_only))
    assert public.json()["result"]["contents"][0]["text"] == "the public file"
    get = request("prompts/get", {"name": "review", "arguments": {"path": "x"}})
    forbidden(post(server.url, get, **bearer(read_only)), "mcp:read files:read")
    reader = token_for(auth_server, server, "mcp:read files:read")
    assert post(server.url, get, **bearer(reader)).json()["result"]["messages"]


def test_resource_template_and_completion_scopes(auth_server: AuthServer, server: RunningServer) -> None:
    read_only = token_for(auth_server, server, "mcp:read")
    reader = token_for(auth_server, server, "mcp:read files:read")
    template_read = request("resources/read", {"uri": "files://docs/plan"})
    forbidden(post(server.url, template_read, **bearer(read_only)), "mcp:read files:read")
    assert post(server.url, template_read, **bearer(reader)).json()["result"]["contents"][0]["text"] == "the doc plan"
    # Completing a scoped prompt's or template's arguments needs their scopes (protocol.md P39).
    argument = {"name": "path", "value": "s"}
    for ref in ({"type": "ref/prompt", "name": "review"}, {"type": "ref/resource", "uri": "files://docs/{name}"}):
        complete = request("completion/complete", {"ref": ref, "argument": argument})
        forbidden(post(server.url, complete, **bearer(read_only)), "mcp:read files:read")
        values = post(server.url, complete, **bearer(reader)).json()["result"]["completion"]["values"]
        assert values == ["secret-a.txt", "secret-b.txt"]


# -- MRTR rounds: each is its own request ------------------------------------------------------------------


def test_every_mrtr_round_is_authenticated_and_scope_checked(auth_server: AuthServer, server: RunningServer) -> None:
    writer = token_for(auth_server, server, "mcp:read files:write")
    first = call(server.url, "deploy", {"target": "prod"}, **bearer(writer)).json()["result"]
    assert first["resultType"] == "input_required"
    key = next(iter(first["inputRequests"]))
    answers, state = {key: accept(confirm=True)}, first["requestState"]
    # Without the token, or with a token lacking the tool's scope, the second round is refused.
    assert call(server.url, "deploy", {"target": "prod"}, responses=answers, state=state).status_code == 401
    read_only = token_for(auth_server, server, "mcp:read")
    forbidden(
        call(server.url, "deploy", {"target": "prod"}, responses=answers, state=state, **bearer(read_only)),
        "mcp:read files:write",
    )
    # Another user's valid token cannot continue alice's flow (the state is bound to the principal).
    bob = token_for(auth_server, server, "mcp:read files:write", user="bob")
    stolen = call(server.url, "deploy", {"target": "prod"}, responses=answers, state=state, **bearer(bob))
    assert stolen.json()["error"]["code"] == -32602
    # A fresh token of the same user (a refresh, a step-up) carries on.
    again = token_for(auth_server, server, "mcp:read files:write")
    done = call(server.url, "deploy", {"target": "prod"}, responses=answers, state=state, **bearer(again))
    assert done.json()["result"]["content"][0]["text"] == f"deployed to prod by {auth_server.issuer}|alice"


# -- the 2025-11-25 session path ------------------------------------------------------------------------------


def handshake(
    url: str, method: str, params: dict[str, Any], rid: int, session: str | None, token: str
) -> httpx.Response:
    headers = {"Content-Type": "application/json", "Accept": "application/json", "Authorization": f"Bearer {token}"}
    if session:
        headers |= {"Mcp-Session-Id": session, "MCP-Protocol-Version": HANDSHAKE}
    body = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
    return httpx.post(url, json=body, headers=headers, timeout=10)


def test_a_session_gets_403_on_the_post_and_goes_on(auth_server: AuthServer, server: RunningServer) -> None:
    read_only = token_for(auth_server, server, "mcp:read")
    init = {"protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    resp = handshake(server.url, "initialize", init, 1, None, read_only)
    assert resp.status_code == 200, resp.text
    sid = resp.headers["mcp-session-id"]
    assert handshake(server.url, "notifications/initialized", {}, 2, sid, read_only).status_code in (200, 202)
    denied = handshake(server.url, "tools/call", {"name": "write_file", "arguments": {"name": "a"}}, 3, sid, read_only)
    forbidden(denied, "mcp:read files:write")
    ok = handshake(server.url, "tools/call", {"name": "whoami", "arguments": {}}, 4, sid, read_only)
    assert ok.status_code == 200 and "alice" in ok.json()["result"]["content"][0]["text"]
    # The same user, stepped up, continues the same session.
    writer = token_for(auth_server, server, "mcp:read files:write")
    done = handshake(server.url, "tools/call", {"name": "write_file", "arguments": {"name": "a"}}, 5, sid, writer)
    assert done.json()["result"]["content"][0]["text"] == "wrote a"
    # Subscribing to (or unsubscribing from) a scoped resource needs its scopes too (protocol.md P39).
    forbidden(
        handshake(server.url, "resources/subscribe", {"uri": "files://secret"}, 7, sid, read_only),
        "mcp:read files:read",
    )
    forbidden(
        handshake(server.url, "resources/unsubscribe", {"uri": "files://docs/a"}, 8, sid, read_only),
        "mcp:read files:read",
    )
    reader = token_for(auth_server, server, "mcp:read files:read")
    assert "result" in handshake(server.url, "resources/subscribe", {"uri": "files://secret"}, 9, sid, reader).json()
    no_token = httpx.post(
        server.url,
        json={"jsonrpc": "2.0", "id": 6, "method": "tools/list", "params": {}},
        headers={"Content-Type": "application/json", "Mcp-Session-Id": sid, "MCP-Protocol-Version": HANDSHAKE},
    )
    assert no_token.status_code == 401 and "resource_metadata" in no_token.headers["www-authenticate"]


def test_a_sessions_get_delete_notifications_and_answers_need_the_token(
    auth_server: AuthServer, server: RunningServer
) -> None:
    alice = token_for(auth_server, server, "mcp:read")
    init = {"protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    sid = handshake(server.url, "initialize", init, 1, None, alice).headers["mcp-session-id"]
    session = {"Mcp-Session-Id": sid, "MCP-Protocol-Version": HANDSHAKE}
    posted = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **session}
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    answer = {"jsonrpc": "2.0", "id": 7, "result": {}}
    without = [
        httpx.get(server.url, headers=session, timeout=10),
        httpx.delete(server.url, headers=session, timeout=10),
        httpx.post(server.url, json=note, headers=posted, timeout=10),
        httpx.post(server.url, json=answer, headers=posted, timeout=10),
        httpx.post(server.url, json=note, headers={**posted, **bearer("garbage")}, timeout=10),
    ]
    for resp in without:
        assert resp.status_code == 401, (resp.request.method, resp.text)
        assert "resource_metadata" in resp.headers["www-authenticate"]
    # Another user's valid token does not open alice's session (404); alice's own still does.
    bob = token_for(auth_server, server, "mcp:read", user="bob")
    assert httpx.delete(server.url, headers={**session, **bearer(bob)}, timeout=10).status_code == 404
    assert httpx.post(server.url, json=note, headers={**posted, **bearer(alice)}, timeout=10).status_code == 202
    assert httpx.delete(server.url, headers={**session, **bearer(alice)}, timeout=10).status_code == 200


# -- baton serve --auth-issuer -------------------------------------------------------------------------------


@pytest.mark.process
def test_baton_serve_auth_issuer_discovers_the_issuer_and_protects_the_server(tmp_path: Path) -> None:
    # An issuer with a path whose metadata is only at the OpenID path-inserted URL: discovery falls back.
    with start_as(tmp_path / "as.log", "--discovery", "openid", issuer_path="/tenant1") as tenant:
        port = free_port()
        url = f"http://127.0.0.1:{port}/mcp"
        args = ["--auth-issuer", tenant.issuer, "--auth-audience", url, "--auth-scopes", "mcp:read"]
        with start_server(str(SERVERS / "oauth_plain.py"), *args, port=port, log=tmp_path / "baton.log") as running:
            resp = call(running.url, "whoami")
            assert resp.status_code == 401
            assert challenge(resp.headers["www-authenticate"])["scope"] == "mcp:read"
            doc = httpx.get(f"http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp").json()
            assert doc["authorization_servers"] == [tenant.issuer] and doc["resource"] == url
            token = str(log_in(tenant.issuer, scope="mcp:read", resource=url)["access_token"])
            ok = call(running.url, "whoami", **bearer(token))
            assert ok.json()["result"]["content"][0]["text"] == f"{tenant.issuer}|alice scopes=mcp:read"
            forbidden(call(running.url, "write_file", {"name": "a"}, **bearer(token)), "mcp:read files:write")


@pytest.mark.process
def test_baton_serve_refuses_an_issuer_it_cannot_discover() -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    done = processes.run(
        [BATON, "serve", str(SERVERS / "oauth_plain.py"), "--http", f"127.0.0.1:{free_port()}",
         "--auth-issuer", dead, "--auth-audience", "http://127.0.0.1:1/mcp"],
        capture_output=True, text=True, timeout=60, cwd=ROOT, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert "cannot discover the authorization server" in done.stderr
    assert "/.well-known/oauth-authorization-server" in done.stderr
    missing = processes.run(
        [BATON, "serve", str(SERVERS / "oauth_plain.py"), "--auth-issuer", dead],
        capture_output=True, text=True, timeout=60, cwd=ROOT, check=False,
    )  # fmt: skip
    assert missing.returncode == 2 and "--auth-audience" in missing.stderr


@pytest.mark.process
def test_baton_serve_stdio_notes_that_auth_options_are_for_http() -> None:
    done = processes.run(
        [BATON, "serve", str(SERVERS / "oauth_plain.py"), "--stdio",
         "--auth-issuer", f"http://127.0.0.1:{free_port()}", "--auth-audience", "http://127.0.0.1:1/mcp"],
        capture_output=True, text=True, timeout=60, cwd=ROOT, check=False, input="",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "--auth-* options apply to HTTP only; on stdio the caller is the OS user" in done.stderr


@pytest.mark.process
def test_a_scoped_tool_without_auth_is_refused_at_start_up(tmp_path: Path) -> None:
    done = processes.run(
        [BATON, "serve", str(SERVERS / "oauth_plain.py"), "--http", f"127.0.0.1:{free_port()}"],
        capture_output=True, text=True, timeout=60, cwd=ROOT, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert "tool write_file (scopes files:write) requires OAuth scopes" in done.stderr


def test_a_tool_given_scopes_after_start_up_is_refused_not_open(tmp_path: Path) -> None:
    """protocol.md P41: on a server that authenticates nobody, a tool given scopes at run time is refused (403), also
    after requests that needed no scopes were answered (the runtime remembers whether any handler names scopes)."""
    server = Server("late-scopes")

    @server.tool()
    async def read() -> str:
        return "read"

    async def write() -> str:
        return "written"

    with InProcessServer(server, tmp_path / "server.log") as live:
        assert call(live.url, "read").json()["result"]["content"][0]["text"] == "read"
        server.add_tool(write, scopes=["files:write"])
        refused = call(live.url, "write")
        assert refused.status_code == 403 and "files:write" in refused.headers["www-authenticate"]
        assert call(live.url, "read").status_code == 200


# -- the rules, in process ---------------------------------------------------------------------------------


def test_canonical_resource() -> None:
    assert canonical_resource("HTTPS://MCP.Example.com/mcp") == "https://mcp.example.com/mcp"
    assert canonical_resource("https://mcp.example.com:443/") == "https://mcp.example.com"
    assert canonical_resource("https://mcp.example.com:8443/Mcp") == "https://mcp.example.com:8443/Mcp"
    assert canonical_resource("https://mcp.example.com/mcp/") != canonical_resource("https://mcp.example.com/mcp")
    for bad in ("mcp.example.com", "https://mcp.example.com#x", "https://u:p@mcp.example.com", "ftp://x/y"):
        with pytest.raises(ValueError):
            canonical_resource(bad)


def test_resource_issuer_and_jwks_must_be_https_off_loopback() -> None:
    with pytest.raises(ValueError, match="https"):
        OAuthResource(resource="http://mcp.example.com/mcp", issuer="https://as.example", key="k")
    with pytest.raises(ValueError, match=r"the JWKS URL .* must use https"):
        OAuthResource(
            resource="https://mcp.example.com/mcp", issuer="https://as.example", jwks_url="http://as.example/k"
        )
    OAuthResource(resource="https://mcp.example.com/mcp", issuer="https://as.example", jwks_url="http://127.0.0.1:9/k")
    with pytest.raises(ValueError, match="exactly one"):
        OAuthResource(resource="https://mcp.example.com/mcp", issuer="https://as.example")
    auth = OAuthResource(resource="https://MCP.example.com/mcp", issuer="https://as.example", key="k")
    assert auth.metadata_url == "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
    root = OAuthResource(resource="https://mcp.example.com", issuer="https://as.example", key="k")
    assert root.metadata_path == "/.well-known/oauth-protected-resource"


def test_scopes_are_checked_where_they_are_written() -> None:
    assert scope_list("a b a", "x") == ("a", "b")
    with pytest.raises(ValueError, match="offline_access"):
        scope_list(["offline_access"], "x")
    with pytest.raises(ValueError, match="not an OAuth scope"):
        scope_list(['bad"scope'], "x")
    server = Server("s")
    with pytest.raises(ValueError, match="offline_access"):
        server.tool(scopes=["offline_access"])(lambda: "x")
    chain = Implications({"admin": ["write"], "write": ["read"]})
    assert chain.missing(frozenset({"admin"}), ["read", "write"]) == []
    assert chain.missing(frozenset({"read"}), ["read", "write"]) == ["write"]
    assert chain.missing(None, ["read"]) == ["read"]


def test_auth_and_a_principal_hook_conflict() -> None:
    auth = OAuthResource(resource="https://mcp.example.com/mcp", issuer="https://as.example", key="k")
    with pytest.raises(ConfigurationError, match="not both"):
        Server("s", auth=auth, principal=lambda info: "x")
    server = Server("s", principal=lambda info: "x")
    with pytest.raises(ConfigurationError, match="already names its callers"):
        server.use_auth(auth)


def test_challenge_values_cannot_break_the_header() -> None:
    header = bearer_challenge(error="invalid_token", description='bad "quote" \\ and\nnewline é')
    assert header == 'Bearer error="invalid_token", error_description="bad \'quote\' ? and?newline ?"'
    assert bearer_challenge() == "Bearer"
