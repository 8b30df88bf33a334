"""Parsing and checking messages, in the order of protocol.md P1, and the one place JSON-RPC envelopes are built.

`result_response`, `error_response` and `notification` are the one way to build a JSON-RPC envelope on the
serving side (the server core and both transports use them). They return plain dicts, built in one literal
and never copied: the transports serialise each once with orjson, and the dict stays open to inspection
(tests, `Reply.body`). Error codes come from `baton.protocol.errors`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from .constants import (
    ADVERTISED_VERSIONS,
    HANDSHAKE_VERSION,
    META_CLIENT_CAPABILITIES,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    SUPPORTED_VERSIONS,
)
from .errors import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, UNSUPPORTED_VERSION, McpError

RequestId = str | int


@dataclass(slots=True)
class Message:
    """One parsed client message: a request (with `id`) or a notification (without)."""

    method: str
    params: dict[str, Any]
    id: RequestId | None
    is_request: bool


def parse(body: bytes | str) -> Message:
    """Parse one JSON-RPC message; raises -32700 for bad JSON and -32600 for a bad envelope."""
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise McpError(PARSE_ERROR, f"Parse error: the body is not valid JSON ({exc})") from None
    return from_object(data)


def from_object(data: Any) -> Message:
    """Check a decoded JSON-RPC object; raises -32600 when it is not a single request or notification."""
    # `type(x) is T` first: what orjson decodes is never a subclass, and it spares an isinstance call.
    if type(data) is not dict:
        if isinstance(data, list):
            raise McpError(INVALID_REQUEST, "Invalid request: JSON-RPC batches are not supported")
        if not isinstance(data, dict):
            raise McpError(INVALID_REQUEST, "Invalid request: expected a JSON-RPC object")
    if data.get("jsonrpc") != "2.0":
        raise McpError(INVALID_REQUEST, 'Invalid request: "jsonrpc" must be "2.0"', None)
    method = data.get("method")
    is_request = "id" in data
    rid = data.get("id")
    if (
        is_request
        and type(rid) is not int
        and type(rid) is not str
        and (type(rid) is bool or not isinstance(rid, (str, int)))
    ):
        raise McpError(INVALID_REQUEST, "Invalid request: id must be a string or an integer")
    if type(method) is not str and not isinstance(method, str):
        raise McpError(INVALID_REQUEST, 'Invalid request: "method" must be a string (responses are not accepted)')
    params = data.get("params")
    if params is None:
        params = {}
    elif type(params) is not dict and not isinstance(params, dict):
        raise McpError(INVALID_REQUEST, 'Invalid request: "params" must be an object')
    return Message(method, params, rid if is_request else None, is_request)


def is_response(data: Any) -> bool:
    """Whether a decoded message is a JSON-RPC response (a client's answer to a server request in a
    2025-11-25 session): an id, exactly one of `result` and `error`, and no method."""
    return (
        isinstance(data, dict)
        and data.get("jsonrpc") == "2.0"
        and "method" not in data
        and "id" in data
        and (("result" in data) != ("error" in data))
    )


def request_id_of(body: bytes | str) -> RequestId | None:
    """The id of a message that failed to parse as a request, when it can still be read."""
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    rid = data.get("id") if isinstance(data, dict) else None
    return rid if isinstance(rid, (str, int)) and not isinstance(rid, bool) else None


def check_meta(params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The protocol version and capabilities from `params._meta`; raises -32602 when missing (step 1)."""
    meta = params.get("_meta")
    if not isinstance(meta, dict):
        raise McpError(INVALID_PARAMS, _missing_meta("params._meta is required"))
    version = meta.get(META_PROTOCOL_VERSION)
    if not isinstance(version, str):
        raise McpError(INVALID_PARAMS, _missing_meta(f"params._meta[{META_PROTOCOL_VERSION!r}] is required"))
    caps = meta.get(META_CLIENT_CAPABILITIES)
    if not isinstance(caps, dict):
        raise McpError(
            INVALID_PARAMS,
            _missing_meta(f"params._meta[{META_CLIENT_CAPABILITIES!r}] is required (an object)"),
        )
    return version, caps


def _missing_meta(what: str) -> str:
    # 2025-11-25 clients learn the supported versions only from this message (protocol.md P5).
    return (
        f"Invalid params: {what}; this server speaks MCP {', '.join(SUPPORTED_VERSIONS)} (per request) and"
        f" {HANDSHAKE_VERSION} (send initialize without _meta)"
    )


def check_version(version: str) -> None:
    """Raise -32022 when the requested version is not supported (step 3)."""
    if version not in SUPPORTED_VERSIONS:
        # protocol.md P28: both eras are listed; the handshake one is reached through initialize.
        raise McpError(
            UNSUPPORTED_VERSION,
            f"Unsupported protocol version {version!r} in _meta; supported: {', '.join(SUPPORTED_VERSIONS)} per"
            f" request, {HANDSHAKE_VERSION} through initialize (without _meta)",
            {"supported": list(ADVERTISED_VERSIONS), "requested": version},
        )


def log_level(params: dict[str, Any]) -> str | None:
    """The deprecated per-request log level, if the request asked for log notifications."""
    meta = params.get("_meta")
    level = meta.get(META_LOG_LEVEL) if isinstance(meta, dict) else None
    return level if isinstance(level, str) else None


def request(rid: RequestId, method: str, params: dict[str, Any] | None) -> dict[str, Any]:
    """A JSON-RPC request (what a client sends, and a server's own request in a 2025-11-25 session);
    `params` None leaves the member out."""
    if params is None:
        return {"jsonrpc": "2.0", "id": rid, "method": method}
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


def result_response(rid: RequestId | None, result: dict[str, Any]) -> dict[str, Any]:
    """The JSON-RPC response that carries a result."""
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def error_response(rid: RequestId | None, error: McpError) -> dict[str, Any]:
    """The JSON-RPC response that carries an error (`id` null when the request's id could not be read)."""
    return {"jsonrpc": "2.0", "id": rid, "error": error.to_dict()}


def notification(method: str, params: dict[str, Any]) -> dict[str, Any]:
    """A JSON-RPC notification (no `id`): progress, log and list-changed messages, cancellations."""
    return {"jsonrpc": "2.0", "method": method, "params": params}
