"""Reading a `WWW-Authenticate` header: the Bearer or DPoP challenge and its parameters."""

from __future__ import annotations

from baton.client.oauth.challenge import auth_challenge

from ..harness import Target


def one(data: bytes) -> None:
    challenge = auth_challenge(data.decode("latin-1"))
    if challenge is not None:
        _ = challenge.resource_metadata, challenge.scopes, challenge.error, challenge.scheme


TARGET = Target("www_authenticate", "WWW-Authenticate Bearer and DPoP challenges", one)
