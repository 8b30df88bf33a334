"""DPoP on Baton's client (RFC 9449, protocol.md P197), against stub servers on loopback: when a login binds its
token to a key, what its proofs say, the nonce an authorization server asks for, and a key kept with its token.
The suite's `auth/dpop` and `auth/dpop-nonce` scenarios run in tests/conformance/test_conformance_client.py."""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

import jwt
import pytest
from support.stub_http import Reply, Seen, Stub, json_reply, oauth_as, prm, run

from baton.client.http11 import Url
from baton.client.oauth import AuthError, ClientCredentials, MemoryStore
from baton.client.oauth.challenge import Challenge, auth_challenge
from baton.client.oauth.dpop import DpopKey
from baton.client.oauth.login import Attempts, LoginState


def claims_of(proof: str) -> tuple[dict[str, Any], dict[str, Any]]:
    header = jwt.get_unverified_header(proof)
    key = jwt.PyJWK(header["jwk"], "ES256")
    return header, jwt.decode(proof, key.key, algorithms=["ES256"], options={"verify_aud": False})


def test_a_proof_names_the_request_the_token_and_a_fresh_jti() -> None:
    key = DpopKey()
    header, claims = claims_of(key.proof("post", "https://mcp.example.com/mcp?x=1#f", "tok"))
    assert header["typ"] == "dpop+jwt" and header["alg"] == "ES256" and "d" not in header["jwk"]
    assert claims["htm"] == "POST" and claims["htu"] == "https://mcp.example.com/mcp"
    assert claims["ath"] == base64.urlsafe_b64encode(hashlib.sha256(b"tok").digest()).rstrip(b"=").decode()
    assert "nonce" not in claims
    assert key.remember_nonce("https://mcp.example.com/other", "n-1") is True
    assert key.remember_nonce("https://mcp.example.com/mcp", "n-1") is False  # the same nonce: no new retry
    _, again = claims_of(key.proof("POST", "https://mcp.example.com/mcp", "tok"))
    assert again["nonce"] == "n-1" and again["jti"] != claims["jti"]
    restored = DpopKey.from_json(key.to_json())
    assert restored is not None and restored.thumbprint == key.thumbprint
    assert DpopKey.from_json({"kty": "EC"}) is None


def test_the_challenge_reader_knows_the_dpop_scheme() -> None:
    said = auth_challenge('DPoP error="use_dpop_nonce", resource_metadata="https://x/prm"')
    assert said == Challenge({"error": "use_dpop_nonce", "resource_metadata": "https://x/prm"}, "dpop")
    assert auth_challenge('Basic realm="x", Bearer scope="a"') == Challenge({"scope": "a"}, "bearer")


def token_endpoint(seen: list[Seen], nonce: str) -> Any:
    """A token endpoint that asks for `nonce` first, then issues a DPoP token."""

    def answer(request: Seen) -> Reply:
        seen.append(request)
        proof = request.headers.get("dpop")
        if proof is None:
            return json_reply({"access_token": "AT-bearer", "token_type": "Bearer"})
        if claims_of(proof)[1].get("nonce") != nonce:
            return json_reply({"error": "use_dpop_nonce"}, 400, {"DPoP-Nonce": nonce})
        return json_reply({"access_token": "AT-dpop", "token_type": "DPoP", "expires_in": 60})

    return answer


@pytest.mark.process
def test_a_dpop_challenge_binds_the_token_and_the_nonce_is_used_on_the_second_try() -> None:
    seen: list[Seen] = []
    store = MemoryStore()

    async def main() -> tuple[bytes, bytes, str]:
        async with Stub() as stub:
            oauth_as(
                stub,
                token_endpoint_auth_methods_supported=["client_secret_basic"],
                dpop_signing_alg_values_supported=["ES256"],
            )
            stub.routes["POST /token"] = token_endpoint(seen, "as-nonce-7")
            prm(stub, f"{stub.url}/mcp", [stub.url])
            login = LoginState(ClientCredentials(client_id="robot", client_secret="s", store=store), f"{stub.url}/mcp")
            dpop_401 = Challenge({"resource_metadata": f"{stub.url}/prm"}, "dpop")
            header = await login.recover(401, dpop_401, b"", Attempts())
            assert header is not None
            return header, login.proof("POST", Url.parse(f"{stub.url}/mcp")), stub.url

    header, proof_line, url = run(main())
    assert header == b"Authorization: DPoP AT-dpop\r\n"
    assert len(seen) == 2 and claims_of(seen[1].headers["dpop"])[1]["nonce"] == "as-nonce-7"
    _, claims = claims_of(proof_line.decode().removeprefix("DPoP: ").strip())
    assert claims["htu"] == f"{url}/mcp" and claims["htm"] == "POST"
    stored = json.dumps(run(store.get(f"token {url}/mcp")))
    assert '"token_type": "DPoP"' in stored and '"d":' in stored  # the key is kept with the token it binds


@pytest.mark.process
def test_a_bearer_challenge_keeps_bearer_and_dpop_true_is_refused_where_not_offered() -> None:
    async def main() -> None:
        async with Stub() as stub:
            oauth_as(stub, token_endpoint_auth_methods_supported=["client_secret_basic"])
            prm(stub, f"{stub.url}/mcp", [stub.url])
            plain = LoginState(ClientCredentials(client_id="robot", client_secret="s"), f"{stub.url}/mcp")
            challenge = Challenge({"resource_metadata": f"{stub.url}/prm"})
            assert await plain.recover(401, challenge, b"", Attempts()) == b"Authorization: Bearer AT-1\r\n"
            assert plain.proof("POST", Url.parse(f"{stub.url}/mcp")) == b""
            insisting = LoginState(
                ClientCredentials(client_id="robot", client_secret="s", dpop=True), f"{stub.url}/mcp"
            )
            with pytest.raises(AuthError, match="does not offer DPoP"):
                await insisting.recover(401, challenge, b"", Attempts())

    run(main())


def test_dpop_is_a_choice_of_three() -> None:
    with pytest.raises(ValueError, match="dpop is True, False or 'auto'"):
        ClientCredentials(client_id="robot", client_secret="s", dpop="yes")  # type: ignore[arg-type]
