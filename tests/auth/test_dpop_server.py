"""DPoP on a Baton resource server (RFC 9449, protocol.md P198), in this process: honest proofs made by Baton's own
client key (`baton.client.oauth.dpop`) are accepted; forged, replayed, mis-bound and stale ones are refused with
`invalid_dpop_proof`; a bound token never passes as Bearer; `dpop="require"` says so in its metadata and challenge."""

from __future__ import annotations

import base64
import hashlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from support.inprocess import InProcessServer
from wire import headers_for, meta

from baton import Server
from baton.auth import OAuthResource
from baton.client.oauth.dpop import DpopKey

RESOURCE = "https://notes.example.com/mcp"
ISSUER = "https://as.example.com"
ISSUER_KEY = ec.generate_private_key(ec.SECP256R1())


def token(jkt: str | None = None, sub: str = "alice") -> str:
    claims: dict[str, Any] = {"iss": ISSUER, "aud": RESOURCE, "sub": sub, "exp": int(time.time()) + 600}
    if jkt is not None:
        claims["cnf"] = {"jkt": jkt}
    return jwt.encode(claims, ISSUER_KEY, algorithm="ES256")


def notes(tmp_path: Path, **options: Any) -> InProcessServer:
    auth = OAuthResource(resource=RESOURCE, issuer=ISSUER, key=ISSUER_KEY.public_key(), **options)
    server = Server("notes", auth=auth)

    @server.tool()
    def count() -> int:
        return 3

    return InProcessServer(server, tmp_path / "server.log")


@pytest.fixture
def live(tmp_path: Path) -> Iterator[InProcessServer]:
    with notes(tmp_path) as running:
        yield running


def call(live: InProcessServer, authorization: str | None, proof: str | None = None) -> httpx.Response:
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "count", "_meta": meta()}}
    headers = headers_for(message)
    if authorization is not None:
        headers["Authorization"] = authorization
    if proof is not None:
        headers["DPoP"] = proof
    return live.http.post(live.url, json=message, headers=headers)


def refusal(resp: httpx.Response) -> str:
    assert resp.status_code == 401, resp.text
    return resp.headers["www-authenticate"]


def test_an_honest_proof_from_batons_client_key_is_accepted_every_time(live: InProcessServer) -> None:
    key = DpopKey()
    bound = token(key.thumbprint)
    for _ in range(3):  # a fresh proof each request
        resp = call(live, f"DPoP {bound}", key.proof("POST", RESOURCE, bound))
        assert resp.status_code == 200, resp.text
        assert resp.json()["result"]["content"][0]["text"] == "3"
    assert call(live, f"Bearer {token()}").status_code == 200  # Bearer still accepted by default


def test_a_bound_token_never_passes_as_bearer(live: InProcessServer) -> None:
    key = DpopKey()
    said = refusal(call(live, f"Bearer {token(key.thumbprint)}", key.proof("POST", RESOURCE, token(key.thumbprint))))
    assert 'error="invalid_token"' in said and "DPoP" in said


def forge(key: DpopKey, **claims: Any) -> str:
    """A proof signed by `key` whose claims are the honest ones changed by `claims` (None: left out)."""
    honest = jwt.decode(key.proof("POST", RESOURCE, claims.pop("_token")), options={"verify_signature": False})
    honest.update({k: v for k, v in claims.items() if v is not None})
    for name in [k for k, v in claims.items() if v is None]:
        honest.pop(name, None)
    return jwt.encode(honest, key._key, algorithm="ES256", headers={"typ": "dpop+jwt", "jwk": key.jwk()})


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"htm": "GET"}, "htm"),
        ({"htu": "https://other.example.com/mcp"}, "htu"),
        ({"htu": RESOURCE + "?x=1"}, "htu"),
        ({"iat": int(time.time()) - 3600}, "iat"),
        ({"ath": "AAAA"}, "ath"),
        ({"ath": None}, "ath"),
        ({"jti": None}, "jti"),
    ],
)
def test_a_proof_that_does_not_fit_the_request_is_refused(
    live: InProcessServer, change: dict[str, Any], said: str
) -> None:
    key = DpopKey()
    bound = token(key.thumbprint)
    header = refusal(call(live, f"DPoP {bound}", forge(key, _token=bound, **change)))
    assert 'error="invalid_dpop_proof"' in header and said in header


def test_a_proof_by_another_key_or_a_forged_signature_is_refused(live: InProcessServer) -> None:
    key, thief = DpopKey(), DpopKey()
    bound = token(key.thumbprint)
    assert "cnf.jkt" in refusal(call(live, f"DPoP {bound}", thief.proof("POST", RESOURCE, bound)))
    honest = key.proof("POST", RESOURCE, bound)
    head, body, _sig = honest.split(".")
    other_sig = thief.proof("POST", RESOURCE, bound).split(".")[2]
    assert "signature" in refusal(call(live, f"DPoP {bound}", f"{head}.{body}.{other_sig}"))
    private_jwk = key.to_json()
    leaked = jwt.encode({"jti": "x"}, key._key, algorithm="ES256", headers={"typ": "dpop+jwt", "jwk": private_jwk})
    assert "public key" in refusal(call(live, f"DPoP {bound}", leaked))
    assert "exactly one" in refusal(call(live, f"DPoP {bound}", None))
    wrong_typ = jwt.encode({"jti": "x"}, key._key, algorithm="ES256", headers={"typ": "JWT", "jwk": key.jwk()})
    assert "typ" in refusal(call(live, f"DPoP {bound}", wrong_typ))


def test_the_dpop_scheme_with_an_unbound_token_is_refused(live: InProcessServer) -> None:
    key = DpopKey()
    plain = token()
    assert "not bound" in refusal(call(live, f"DPoP {plain}", key.proof("POST", RESOURCE, plain)))


def test_a_replayed_proof_is_refused_when_the_operator_asks(tmp_path: Path) -> None:
    key = DpopKey()
    bound = token(key.thumbprint)
    with notes(tmp_path, dpop_replay="memory:") as live:
        proof = key.proof("POST", RESOURCE, bound)
        assert call(live, f"DPoP {bound}", proof).status_code == 200
        assert "used before" in refusal(call(live, f"DPoP {bound}", proof))
        assert call(live, f"DPoP {bound}", key.proof("POST", RESOURCE, bound)).status_code == 200


def test_require_takes_dpop_only_and_says_so(tmp_path: Path) -> None:
    with notes(tmp_path, dpop="require") as live:
        bearer = call(live, f"Bearer {token()}")
        assert refusal(bearer).startswith("DPoP ")  # no error code: another scheme was used (RFC 6750 section 3.1)
        assert "DPoP-bound token is required" in bearer.json()["error"]["message"]
        assert refusal(call(live, None)).startswith("DPoP")
        document = live.http.get(live.url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")).json()
        assert document["dpop_bound_access_tokens_required"] is True
        assert "ES256" in document["dpop_signing_alg_values_supported"]
        key = DpopKey()
        bound = token(key.thumbprint)
        assert call(live, f"DPoP {bound}", key.proof("POST", RESOURCE, bound)).status_code == 200


def test_off_takes_bearer_only_and_bad_options_are_refused(tmp_path: Path) -> None:
    with notes(tmp_path, dpop="off") as live:
        key = DpopKey()
        bound = token(key.thumbprint)
        assert refusal(call(live, f"DPoP {bound}", key.proof("POST", RESOURCE, bound)))
        document = live.http.get(live.url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")).json()
        assert "dpop_signing_alg_values_supported" not in document
    with pytest.raises(ValueError, match="dpop is one of"):
        OAuthResource(resource=RESOURCE, issuer=ISSUER, key=ISSUER_KEY.public_key(), dpop="maybe")  # type: ignore[arg-type]


def test_the_thumbprint_is_rfc_7638s_on_both_sides() -> None:
    from baton.dpop_rules import thumbprint

    key = DpopKey()
    jwk = key.jwk()
    canonical = f'{{"crv":"P-256","kty":"EC","x":"{jwk["x"]}","y":"{jwk["y"]}"}}'.encode()
    expected = base64.urlsafe_b64encode(hashlib.sha256(canonical).digest()).rstrip(b"=").decode()
    assert thumbprint({**jwk, "alg": "ES256", "use": "sig"}) == key.thumbprint == expected  # extra members ignored
    assert thumbprint({"kty": "oct", "k": "x"}) is None
