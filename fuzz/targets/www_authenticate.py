"""Reading a `WWW-Authenticate` header: the Bearer challenge and its parameters."""

from __future__ import annotations

from baton.client.oauth.challenge import bearer_challenge

from ..harness import Target


def one(data: bytes) -> None:
    challenge = bearer_challenge(data.decode("latin-1"))
    if challenge is not None:
        _ = challenge.resource_metadata, challenge.scopes, challenge.error


TARGET = Target("www_authenticate", "WWW-Authenticate Bearer challenges", one)
