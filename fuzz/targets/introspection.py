"""Token introspection answers (RFC 7662): the input is the endpoint's HTTP status byte and JSON body;
each input introspects a fresh token, so the answer is read (never a cached one)."""

from __future__ import annotations

import itertools

import httpx

from baton.auth.introspection import Introspection, Introspector
from baton.server.exchange import AuthUnavailable, Unauthenticated

from ..harness import Target, run_async

ANSWER: list[tuple[int, bytes]] = [(200, b"{}")]
COUNTER = itertools.count()


def _endpoint(request: httpx.Request) -> httpx.Response:
    status, body = ANSWER[0]
    return httpx.Response(status, content=body, headers={"content-type": "application/json"})


async def _client() -> Introspector:
    introspector = Introspector(Introspection("https://as.example/introspect", "baton", "secret"))
    introspector._client()  # bound to this loop, then given the in-memory endpoint
    introspector._http = httpx.AsyncClient(transport=httpx.MockTransport(_endpoint))
    return introspector


INTROSPECTOR = run_async(_client())


def one(data: bytes) -> None:
    if not data:
        return
    ANSWER[0] = (200 if data[0] < 200 else 100 + data[0] * 2, data[1:])
    answer = run_async(INTROSPECTOR.claims(f"token-{next(COUNTER)}"))
    if not isinstance(answer, dict):
        raise TypeError(f"an introspection answer of {type(answer).__name__}")


TARGET = Target("introspection", "token introspection answers", one, (Unauthenticated, AuthUnavailable))
