"""Protected-resource metadata (RFC 9728) and authorization-server metadata (RFC 8414) as the client reads
them: the input is a JSON array `[prm, as_metadata, challenge_url]` served from an in-memory endpoint."""

from __future__ import annotations

from typing import Any

import httpx
import orjson

from baton.client.errors import AuthError
from baton.client.oauth.discovery import authorization_server, protected_resource

from ..harness import Target, run_async

SERVER = "https://mcp.example/mcp"
DOCS: dict[str, bytes] = {}


def _endpoint(request: httpx.Request) -> httpx.Response:
    kind = "prm" if "oauth-protected-resource" in request.url.path else "as"
    return httpx.Response(200, content=DOCS.get(kind, b"{}"), headers={"content-type": "application/json"})


HTTP = httpx.AsyncClient(transport=httpx.MockTransport(_endpoint))


async def _read(challenge: str | None) -> None:
    prm = await protected_resource(HTTP, SERVER, challenge)
    meta = await authorization_server(HTTP, prm.authorization_servers[0], SERVER)
    _ = meta.authorization_endpoint, meta.token_endpoint, meta.registration_endpoint
    meta.strings("scopes_supported")
    meta.flag("client_id_metadata_document_supported")


def one(data: bytes) -> None:
    try:
        doc: Any = orjson.loads(data)
    except orjson.JSONDecodeError:
        return
    if not isinstance(doc, list) or len(doc) != 3:
        return
    prm, issuer, challenge = doc
    DOCS["prm"], DOCS["as"] = orjson.dumps(prm), orjson.dumps(issuer)
    run_async(_read(challenge if isinstance(challenge, str) else None))


TARGET = Target("oauth_metadata", "protected-resource and authorization-server metadata", one, (AuthError,))
