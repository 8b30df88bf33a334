"""Errors the client raises itself (never JSON-RPC errors received from a server, which are McpError)."""

from __future__ import annotations


class ClientError(Exception):
    """A failure detected by the client itself: a malformed answer from the server, too many rounds."""


class MalformedQuestion(ClientError):
    """The server asked something the client cannot read (no message, a schema that is not a form)."""


class InvalidReply(ValueError):
    """The host's reply does not satisfy the server's question; the message says why."""
