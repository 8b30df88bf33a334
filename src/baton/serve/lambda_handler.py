"""`lambda_handler(server)`: a `Server` on AWS Lambda, behind a Function URL or an API Gateway HTTP API.

Both send version 2.0 events. Mangum, the well-kept ASGI adapter for Lambda, turns each event into one
ASGI request to the server's own Streamable HTTP app (`server.asgi()`) and the whole response back into
the event's answer; writing that translation again would add nothing. This module holds what Lambda
changes for Baton (protocol.md P193):

- The app is built once per instance, at the cold start, and serves every warm invocation: Mangum keeps
  one event loop for the process, so what the runtime holds between requests stays usable.
- No lifespan (Lambda has no start or stop to hang it on): a `Server(lifespan=...)` is refused at once.
- Every instance must open every other's `requestState`, so the keys come from `$BATON_STATE_KEYS`,
  `$BATON_KEY_FILE` or `Server(state_keys=...)`; a key file made by the instance itself is refused.
- Single use needs one ledger for all instances (`$BATON_LEDGER=redis://...`); without one, a server
  that asked for single use gets it turned off, with a warning at the cold start.
- Responses are whole, never streamed. 2026-07-28 asks are rounds, so they work as anywhere; a
  2025-11-25 session has no stream to carry a server's request, so its `initialize` is read without the
  elicitation, sampling and roots it declared (each ask then takes the tool's rung for a client that
  cannot show it: its page, or a tool error), and the session's GET stream answers 405.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Mapping, MutableMapping
from typing import TYPE_CHECKING, Any

from ..extras import MissingExtra
from ..protocol.asgi import Receive, Scope, Send
from ..server.startup import ConfigurationError
from ..state.keys import ENV_DATA_DIR, ENV_KEY_FILE, ENV_KEYS
from ..state.store_url import parse_store_url

if TYPE_CHECKING:
    from ..server.core import Server

log = logging.getLogger("baton.lambda")

LambdaHandler = Callable[[dict[str, Any], Any], dict[str, Any]]
"""What Lambda calls: `(event, context) -> response`."""

ASKING_CAPABILITIES = ("elicitation", "sampling", "roots")
"""What a 2025-11-25 client declares that needs the server to send it requests on a stream."""

NOT_HTTP = {
    "statusCode": 400,
    "headers": {"content-type": "text/plain; charset=utf-8"},
    "body": "baton: this function answers HTTP events only (a Function URL or an API Gateway HTTP API)",
}


def lambda_handler(
    server: Server,
    *,
    path: str = "/mcp",
    allowed_hosts: list[str] | None = None,
    allowed_origins: list[str] | None = None,
    max_body_bytes: int | None = None,
) -> LambdaHandler:
    """The Lambda handler serving `server` at `path`; build it at module level, once per instance:

        server = Server("notes")
        handler = lambda_handler(server)   # the function's handler: module.handler

    `allowed_hosts` defaults to any (a Function URL's host is AWS's, and Lambda is reached only through
    it); the other options are those of `server.asgi()`. Raises `ConfigurationError` when the server
    cannot work on Lambda, and `MissingExtra` without the `[lambda]` extra.
    """
    try:
        from mangum import Mangum  # noqa: PLC0415 (the optional lambda extra)
    except ModuleNotFoundError:
        raise MissingExtra("lambda", "lambda_handler") from None
    if server.runtime.lifespan is not None:
        raise ConfigurationError(
            "Lambda runs no lifespan: open what Server(lifespan=...) opens on first use instead, and drop it",
            setting="Server(lifespan=...)",
        )
    if "LAMBDA_TASK_ROOT" in os.environ:
        os.environ.setdefault(ENV_DATA_DIR, "/tmp/baton")  # the only place a Lambda can write
    _check_keys(server)
    _single_use(server)
    app = server.asgi(
        path=path,
        allowed_hosts=["*"] if allowed_hosts is None else allowed_hosts,
        allowed_origins=allowed_origins,
        max_body_bytes=max_body_bytes,
    )
    _ = server.runtime.sealer  # load the keys at the cold start, not in the first request
    adapter = Mangum(Unstreamed(app), lifespan="off")

    def handle(event: dict[str, Any], context: Any) -> dict[str, Any]:
        if not _is_http(event):
            log.warning("baton: an event that is not an HTTP request was refused (keys: %s)", sorted(event)[:8])
            return dict(NOT_HTTP)
        return dict(adapter(event, context))

    return handle


class Unstreamed:
    """The server's ASGI app behind a transport that cannot stream: no GET stream, no asks in a session."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Any]) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "GET" and _header(scope, b"mcp-session-id"):
            await send({"type": "http.response.start", "status": 405, "headers": [(b"allow", b"POST, DELETE")]})
            await send({"type": "http.response.body", "body": b""})
            return
        if scope["type"] == "http" and scope["method"] == "POST":
            receive = await _without_asking(receive)
        await self.app(scope, receive, send)


async def _without_asking(receive: Receive) -> Receive:
    """`receive` with an `initialize` request's asking capabilities taken out; any other body unchanged."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return _replay([message])
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    body = b"".join(chunks)
    if b'"initialize"' in body:
        body = _strip_asking(body)
    return _replay([{"type": "http.request", "body": body, "more_body": False}])


def _strip_asking(body: bytes) -> bytes:
    try:
        message = json.loads(body)
    except ValueError:
        return body  # the app answers it as it answers any malformed body
    if not (isinstance(message, dict) and message.get("method") == "initialize"):
        return body
    params = message.get("params")
    capabilities = params.get("capabilities") if isinstance(params, dict) else None
    if not isinstance(capabilities, dict) or not any(k in capabilities for k in ASKING_CAPABILITIES):
        return body
    for name in ASKING_CAPABILITIES:
        capabilities.pop(name, None)
    return json.dumps(message).encode()


def _replay(messages: list[MutableMapping[str, Any]]) -> Receive:
    pending = list(messages)

    async def receive() -> MutableMapping[str, Any]:
        if pending:
            return pending.pop(0)
        return {"type": "http.disconnect"}

    return receive


def _header(scope: Scope, name: bytes) -> bool:
    return any(key == name for key, _ in scope["headers"])


def _is_http(event: Mapping[str, Any]) -> bool:
    context = event.get("requestContext")
    return event.get("version") == "2.0" and isinstance(context, dict) and isinstance(context.get("http"), dict)


def _check_keys(server: Server) -> None:
    if server.runtime.keys_shared:
        return
    raise ConfigurationError(
        "on Lambda every instance must open the requestState of every other, and a key file each instance "
        f"makes for itself would not: set ${ENV_KEYS} (`baton keys generate` prints a value; keep it in the "
        f"function's secrets), point ${ENV_KEY_FILE} at a key file shipped with the function, or give "
        "Server(state_keys=...)",
        setting=f"${ENV_KEYS}",
    )


def _single_use(server: Server) -> None:
    if not server.settings.single_use:
        return
    url = server.runtime.ledger_url
    if url is None or parse_store_url(url, "ledger").kind == "redis":  # a Ledger object given is the author's
        return
    server.settings.single_use = False
    log.warning(
        "baton: single use is off: each Lambda instance would keep its own ledger, so a requestState "
        "could be used once per instance; set BATON_LEDGER=redis://... to turn it on"
    )
