"""Serving the server card over HTTP (protocol.md P194): where, with which headers, and the conditional GET.

Three paths, answered only when `Server(card=...)` is set: `<endpoint>/server-card` and
`/.well-known/mcp/server-card` (the card), `/.well-known/mcp/catalog.json` (the domain's catalog naming it).
Each is public: `Access-Control-Allow-Origin: *`, GET and OPTIONS only, `Cache-Control: public, max-age=3600`,
and an `ETag` (a digest of the body) that an `If-None-Match` is answered 304 against. URLs in them are
under the server's public URL when it has one, else under the scheme and `Host` of the request (which the
transport's host check has already admitted).
"""

from __future__ import annotations

import hashlib
import os
from typing import TYPE_CHECKING, Any, Final

import orjson

from ..connect.kit import ENV_PUBLIC_URL
from ..protocol.asgi import Scope, Send
from ..server.card import card_document, catalog_document
from .asgi import HeaderPairs, send_empty

if TYPE_CHECKING:
    from ..server.core import Server

WELL_KNOWN_CARD: Final = "/.well-known/mcp/server-card"
WELL_KNOWN_CATALOG: Final = "/.well-known/mcp/catalog.json"
CARD_SUFFIX: Final = "/server-card"
_CORS: Final = [
    (b"access-control-allow-origin", b"*"),
    (b"access-control-allow-methods", b"GET, OPTIONS"),
    (b"access-control-allow-headers", b"Content-Type, If-None-Match"),
]


def is_card_path(server: Server, endpoint_path: str, path: str) -> bool:
    """Whether `path` is one of the card's, and the server publishes a card."""
    return server.settings.card is not None and path in (
        endpoint_path + CARD_SUFFIX,
        WELL_KNOWN_CARD,
        WELL_KNOWN_CATALOG,
    )


async def answer_card(server: Server, endpoint_path: str, scope: Scope, send: Send, tag: HeaderPairs) -> None:
    """Answer a request for the card or the catalog (`is_card_path` said it is one)."""
    card = server.settings.card
    assert card is not None
    head = [*_CORS, *tag]
    if scope["method"] == "OPTIONS":
        await send_empty(send, 204, [*head, (b"access-control-max-age", b"86400")])
        return
    if scope["method"] not in ("GET", "HEAD"):
        await send_empty(send, 405, [(b"allow", b"GET, OPTIONS"), *head])
        return
    base = _base_url(server, scope)
    endpoint = base + endpoint_path
    document: dict[str, Any]
    if scope["path"] == WELL_KNOWN_CATALOG:
        document = catalog_document(card, endpoint + CARD_SUFFIX, endpoint, server.version)
    else:
        document = card_document(server, card, endpoint)
    body = orjson.dumps(document)
    etag = b'"' + hashlib.sha256(body).hexdigest()[:32].encode() + b'"'
    head += [(b"cache-control", b"public, max-age=3600"), (b"etag", etag)]
    asked = dict(scope["headers"]).get(b"if-none-match", b"")
    if etag in [tag.strip() for tag in asked.split(b",")] or asked.strip() == b"*":
        await send_empty(send, 304, head)
        return
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [*head, (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else body})


def _base_url(server: Server, scope: Scope) -> str:
    public = server.settings.public_url or os.environ.get(ENV_PUBLIC_URL)
    if public:
        return public.rstrip("/")
    host = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
    return f"{scope.get('scheme', 'http')}://{host}"
