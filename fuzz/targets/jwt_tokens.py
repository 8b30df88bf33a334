"""JWT verification: any token text; tokens signed with the right key whose header and claims the input
chooses (the claims' types too); and JWKS documents (`jwks._parse`)."""

from __future__ import annotations

import time
from typing import Any

import atheris
import jwt
import orjson
from cryptography.hazmat.primitives.asymmetric import ec

from baton.auth.claims import identity, scopes_of
from baton.auth.jwks import _parse as parse_jwks
from baton.auth.jwt_verify import JwtVerifier
from baton.server.exchange import Unauthenticated

from ..harness import Target, run_async

ISSUER = "https://as.example"
AUDIENCE = "https://mcp.example/mcp"
PRIVATE = ec.generate_private_key(ec.SECP256R1())
VERIFIER = JwtVerifier(issuer=ISSUER, audiences=[AUDIENCE], key=PRIVATE.public_key())


def _claim(fdp: atheris.FuzzedDataProvider, good: Any) -> Any:
    return fdp.PickValueInList(
        [good, good, None, 10**30, -1, 1.5e308, "x", [good, "y"], {"a": good}, True, fdp.ConsumeUnicodeNoSurrogates(8)]
    )


def one(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    mode = fdp.ConsumeIntInRange(0, 2)
    if mode == 0:
        verified(fdp.ConsumeUnicodeNoSurrogates(fdp.remaining_bytes()))
    elif mode == 1:
        now = int(time.time())
        payload = {
            name: _claim(fdp, good)
            for name, good in (
                ("iss", ISSUER),
                ("aud", AUDIENCE),
                ("sub", "alice"),
                ("exp", now + 600),
                ("nbf", now - 5),
                ("iat", now),
                ("scope", "read write"),
            )
            if fdp.ConsumeIntInRange(0, 7)
        }
        headers = {"kid": _claim(fdp, "k1"), "alg": fdp.PickValueInList(["ES256", "RS256", "none", "HS256", "EdDSA"])}
        try:
            token = jwt.encode(payload, PRIVATE, algorithm="ES256", headers=headers)
        except (TypeError, ValueError, OverflowError, jwt.PyJWTError):
            return  # PyJWT will not sign it: no such token reaches a server from it
        verified(token)
    else:
        try:
            document = orjson.loads(fdp.ConsumeBytes(fdp.remaining_bytes()))
        except orjson.JSONDecodeError:
            return
        parse_jwks(document)


def verified(token: str) -> None:
    claims = run_async(VERIFIER.claims(token))
    identity(ISSUER, claims)
    scopes_of(claims)


TARGET = Target("jwt_tokens", "JWT verification, its claims, JWKS documents", one, (Unauthenticated, ValueError))
