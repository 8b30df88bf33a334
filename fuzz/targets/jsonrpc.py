"""JSON-RPC messages and their `_meta` checks, then the server's answer (2026-07-28 per request; the
2025-11-25 era's messages through `http_request_heads`, which carries a session). An internal error
(-32603) in the answer is a finding."""

from __future__ import annotations

import contextlib

import orjson

from baton.protocol.capabilities import ClientCapabilities
from baton.protocol.era import is_modern
from baton.protocol.errors import INTERNAL_ERROR, McpError
from baton.protocol.messages import check_meta, check_version, is_response, log_level, parse, request_id_of
from baton.server import Exchange, RequestInfo

from ..harness import Finding, Target, run_async
from ._server import SERVER


def one(data: bytes) -> None:
    request_id_of(data)
    with contextlib.suppress(orjson.JSONDecodeError):
        is_response(orjson.loads(data))
    msg = parse(data)
    log_level(msg.params)
    if not msg.is_request or not is_modern(msg.method, msg.params):
        return
    version, caps = check_meta(msg.params)
    ClientCapabilities.parse(caps)
    check_version(version)
    reply = run_async(SERVER.runtime.handle(msg, Exchange(RequestInfo("http"))))
    if getattr(reply, "code", None) == INTERNAL_ERROR:
        raise Finding(f"internal error: {orjson.dumps(reply.body)[:300]!r}")


TARGET = Target("jsonrpc", "JSON-RPC messages, _meta checks, the server's answer", one, (McpError,))
