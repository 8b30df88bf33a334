"""Errors the client raises itself (never JSON-RPC errors received from a server, which are McpError),
and `result_of`, which tells the two apart in a JSON-RPC response."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from ..protocol.errors import METHOD_NOT_FOUND, McpError

Item = TypeVar("Item")


class ClientError(Exception):
    """A failure detected by the client itself: a malformed answer from the server, too many rounds."""


class AuthError(ClientError):
    """Logging in to the server failed or was refused (OAuth, `baton.client.oauth`); the message says why
    and never carries a token or a secret."""


class MalformedQuestion(ClientError):
    """The server asked something the client cannot read (no message, a schema that is not a form)."""


class InvalidReply(ValueError):
    """The host's reply does not satisfy the server's question; the message says why."""


def result_of(reply: dict[str, Any], method: str) -> dict[str, Any]:
    """The result object of a JSON-RPC response to `method`: raises the server's error as `McpError`, and
    `ClientError` when the response carries neither an error nor a result object."""
    if "error" in reply:
        err = reply["error"] if isinstance(reply["error"], dict) else {}
        raise McpError(err.get("code", 0), err.get("message", ""), err.get("data"))
    result = reply.get("result")
    if not isinstance(result, dict):
        raise ClientError(f"the server answered {method} without a result object")
    return result


async def listed(fetch: Callable[[], Awaitable[list[Item]]]) -> list[Item] | None:
    """Every item of a list, or None if the server does not offer that list (-32601)."""
    try:
        return await fetch()
    except McpError as exc:
        if exc.code == METHOD_NOT_FOUND:
            return None
        raise
