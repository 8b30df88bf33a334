"""Opaque access tokens checked by RFC 7662 introspection at the real test authorization server
(`oauth_as.py --opaque`), as Baton's confidential client: scopes and audience from the answer, the brief
bounded cache (one round trip for many requests, never past the token's `exp`), revoked and unknown tokens.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import httpx
import pytest
from support.oauth import AuthServer, log_in, start_as, start_protected
from support.serve import RunningServer
from wire import call, post, request

from baton import Server
from baton.auth import OAuthResource
from baton.auth.introspection import Introspection, Introspector
from baton.protocol.headers import Headers
from baton.server.exchange import AuthUnavailable, RequestInfo, Unauthenticated

pytestmark = pytest.mark.process  # every test here starts processes (support.markers)

CACHE_S = 2.0


@pytest.fixture(scope="module")
def auth_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuthServer]:
    with start_as(tmp_path_factory.mktemp("as") / "as.log", "--opaque") as running:
        yield running


@pytest.fixture(scope="module")
def server(auth_server: AuthServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    log = tmp_path_factory.mktemp("baton") / "baton.log"
    introspect = {"BATON_TEST_INTROSPECT": "conf-basic:conf-basic-secret", "BATON_TEST_CACHE_S": str(CACHE_S)}
    with start_protected(auth_server, log, **introspect) as running:
        yield running


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def opaque(auth_server: AuthServer, server: RunningServer, scope: str, resource: str | None = None) -> str:
    token = str(log_in(auth_server.issuer, scope=scope, resource=resource or server.url)["access_token"])
    assert token.startswith("at-")  # not a JWT: only introspection can read it
    return token


def text(resp: httpx.Response) -> str:
    assert resp.status_code == 200, resp.text
    return str(resp.json()["result"]["content"][0]["text"])


def test_an_opaque_token_is_introspected_once_and_cached(auth_server: AuthServer, server: RunningServer) -> None:
    token = opaque(auth_server, server, "mcp:read")
    before = auth_server.stats()["introspections"]
    started = time.monotonic()
    for _ in range(5):
        assert text(call(server.url, "whoami", **bearer(token))) == f"{auth_server.issuer}|alice scopes=mcp:read"
    # One introspection per cache lifetime begun: one, unless a slowed machine took the five calls past 2 s.
    lifetimes = 1 + int((time.monotonic() - started) // CACHE_S)
    assert 1 <= auth_server.stats()["introspections"] - before <= lifetimes < 5
    time.sleep(CACHE_S + 0.5)  # the cache entry expires: the next request asks again
    text(call(server.url, "whoami", **bearer(token)))
    assert auth_server.stats()["introspections"] == before + 2


def test_scopes_come_from_the_introspection_answer(auth_server: AuthServer, server: RunningServer) -> None:
    read_only = opaque(auth_server, server, "mcp:read")
    denied = call(server.url, "write_file", {"name": "a"}, **bearer(read_only))
    assert denied.status_code == 403
    assert 'scope="mcp:read files:write"' in denied.headers["www-authenticate"]
    writer = opaque(auth_server, server, "mcp:read files:write")
    assert text(call(server.url, "write_file", {"name": "a"}, **bearer(writer))) == "wrote a"


def test_a_revoked_token_is_refused_once_its_cache_entry_expires(
    auth_server: AuthServer, server: RunningServer
) -> None:
    token = opaque(auth_server, server, "mcp:read")
    text(call(server.url, "whoami", **bearer(token)))
    revoked = httpx.post(f"{auth_server.issuer}/revoke", data={"token": token, "client_id": "public-client"})
    assert revoked.status_code == 200
    time.sleep(CACHE_S + 0.5)  # at most the cache's lifetime after revocation (protocol.md P44)
    resp = call(server.url, "whoami", **bearer(token))
    assert resp.status_code == 401
    assert 'error="invalid_token"' in resp.headers["www-authenticate"]


def test_an_unknown_token_is_refused_and_the_refusal_is_cached_briefly(
    auth_server: AuthServer, server: RunningServer
) -> None:
    before = auth_server.stats()["introspections"]
    for _ in range(3):
        assert post(server.url, request("tools/list"), **bearer("at-made-up")).status_code == 401
    assert auth_server.stats()["introspections"] == before + 1


def test_an_opaque_token_for_another_resource_is_refused(auth_server: AuthServer, server: RunningServer) -> None:
    token = opaque(auth_server, server, "mcp:read", resource="http://127.0.0.1:1/other")
    resp = call(server.url, "whoami", **bearer(token))
    assert resp.status_code == 401
    assert "another audience" in resp.headers["www-authenticate"]


def test_wrong_client_credentials_fail_closed(auth_server: AuthServer, server: RunningServer) -> None:
    token = opaque(auth_server, server, "mcp:read")
    bad = Introspector(Introspection(f"{auth_server.issuer}/introspect", "conf-basic", "wrong-secret"))
    with pytest.raises(AuthUnavailable, match="cannot be checked"):  # 503: not the client's bad token (P46)
        asyncio.run(bad.claims(token))
    post_client = Introspector(
        Introspection(
            f"{auth_server.issuer}/introspect", "conf-post", "conf-post-secret", auth_method="client_secret_post"
        )
    )
    claims = asyncio.run(post_client.claims(token))
    assert claims["sub"] == "alice" and claims["aud"] == server.url


def test_basic_credentials_are_form_encoded_first(auth_server: AuthServer, server: RunningServer) -> None:
    token = opaque(auth_server, server, "mcp:read")
    odd = Introspector(Introspection(f"{auth_server.issuer}/introspect", "conf:odd%id", "s3cr%41t+/= :x"))
    assert asyncio.run(odd.claims(token))["sub"] == "alice"


def test_the_cache_is_bounded(auth_server: AuthServer, server: RunningServer) -> None:
    introspector = Introspector(
        Introspection(f"{auth_server.issuer}/introspect", "conf-basic", "conf-basic-secret", cache_size=2)
    )
    tokens = [opaque(auth_server, server, "mcp:read") for _ in range(3)]
    for token in tokens:
        asyncio.run(introspector.claims(token))
    assert introspector.calls == 3
    asyncio.run(introspector.claims(tokens[0]))  # evicted (least recently used): asked again
    assert introspector.calls == 4
    asyncio.run(introspector.claims(tokens[2]))  # still cached
    assert introspector.calls == 4


def test_concurrent_requests_with_one_token_share_one_round_trip(
    auth_server: AuthServer, server: RunningServer
) -> None:
    token = opaque(auth_server, server, "mcp:read")
    introspector = Introspector(Introspection(f"{auth_server.issuer}/introspect", "conf-basic", "conf-basic-secret"))

    async def many() -> None:
        answers = await asyncio.gather(*(introspector.claims(token) for _ in range(20)))
        assert {answer["sub"] for answer in answers} == {"alice"}

    asyncio.run(many())
    assert introspector.calls == 1


def test_bad_tokens_cannot_evict_good_answers(auth_server: AuthServer, server: RunningServer) -> None:
    token = opaque(auth_server, server, "mcp:read")
    config = Introspection(f"{auth_server.issuer}/introspect", "conf-basic", "conf-basic-secret", cache_size=8)
    introspector = Introspector(config)

    async def flood() -> None:
        await introspector.claims(token)
        for i in range(50):
            with pytest.raises(Unauthenticated, match="not active"):
                await introspector.claims(f"at-bogus-{i}")
        calls = introspector.calls
        await introspector.claims(token)  # still cached: the inactive answers have their own cache
        assert introspector.calls == calls == 51

    asyncio.run(flood())


def test_one_http_client_is_kept_and_closed_with_the_server(auth_server: AuthServer, server: RunningServer) -> None:
    tokens = [opaque(auth_server, server, "mcp:read") for _ in range(2)]
    resource = OAuthResource(
        resource=server.url,
        issuer=auth_server.issuer,
        introspection=Introspection(f"{auth_server.issuer}/introspect", "conf-basic", "conf-basic-secret"),
    )
    protected = Server("closing", auth=resource)

    async def run() -> None:
        introspector = resource.introspector
        assert introspector is not None
        await introspector.claims(tokens[0])
        client = introspector._http
        await introspector.claims(tokens[1])
        assert client is not None and introspector._http is client and introspector.calls == 2
        await protected.aclose()
        assert client.is_closed

    asyncio.run(run())


def test_an_answer_is_cached_no_longer_than_the_tokens_exp(auth_server: AuthServer, server: RunningServer) -> None:
    short = str(
        log_in(auth_server.issuer, scope="mcp:read", resource=server.url, client_id="short-lived")["access_token"]
    )
    config = Introspection(f"{auth_server.issuer}/introspect", "conf-basic", "conf-basic-secret", cache_ttl_s=60)
    introspector = Introspector(config)
    asyncio.run(introspector.claims(short))
    time.sleep(2.5)  # past its exp (2 s), well within cache_ttl_s: the entry is gone, the AS is asked again
    with pytest.raises(Unauthenticated):
        asyncio.run(introspector.claims(short))
    assert introspector.calls == 2


def test_an_answer_naming_another_issuer_is_refused(auth_server: AuthServer, server: RunningServer) -> None:
    token = opaque(auth_server, server, "mcp:read")
    introspection = Introspection(f"{auth_server.issuer}/introspect", "conf-basic", "conf-basic-secret")
    mine = OAuthResource(resource=server.url, issuer=auth_server.issuer, introspection=introspection)
    info = RequestInfo("http", Headers.of({"authorization": f"Bearer {token}"}))
    assert asyncio.run(mine.authenticate(info)).principal == f"{auth_server.issuer}|alice"
    other = OAuthResource(resource=server.url, issuer="http://127.0.0.1:1/other", introspection=introspection)
    with pytest.raises(Unauthenticated, match="another authorization server"):
        asyncio.run(other.authenticate(info))
