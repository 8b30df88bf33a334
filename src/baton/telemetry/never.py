"""What may never be on a span, a metric or a log line Baton emits (protocol.md P64), enforced here.

Never: an answer's content (only its key and outcome), a `requestState` (only its size), a token or a
secret (a 2025-11-25 session id is a sealed token: only a digest of it), an error's message on a span or
a metric (only its code or class: messages may quote what the user typed; the server's log keeps a
failure's traceback, protocol.md P79), and a tool's arguments unless the server's
author opted in with `Server(trace_arguments=True)`. A resource URI is recorded without its userinfo, query
and fragment (where tokens and signatures travel) unless the same opt-in says otherwise (`resource_uri`, which
the server's log lines use too). Every attribute goes through `screen`, which keeps only the names of
`names.SPAN_ATTRIBUTES` and only scalar values or lists of strings, strings and lists cut to a bound.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import orjson

from . import names

MAX_TEXT = 256
"""Longer attribute strings are cut (a tool name, an ask key, a resource URI)."""
MAX_ITEMS = 32
"""Longer attribute lists are cut (the asks of a round, its answers)."""
MAX_ARGUMENTS = 4096
"""Opted-in tool arguments longer than this, as JSON, are cut."""


_OPTED_IN = frozenset({names.GENAI_TOOL_ARGUMENTS, names.MCP_RESOURCE_URI})
"""The attributes whose whole value only the author's opt-in lets out."""


def screen(attributes: Mapping[str, Any], *, arguments: bool = False) -> dict[str, Any]:
    """The attributes that may be emitted: known names, plain values; the tool arguments and a resource URI's
    userinfo, query and fragment only when opted in (`arguments`)."""
    kept: dict[str, Any] = {}
    known = names.SPAN_ATTRIBUTES
    for name, value in attributes.items():
        if name not in known or value is None:
            continue
        if name in _OPTED_IN:
            if name == names.GENAI_TOOL_ARGUMENTS:
                if arguments:
                    kept[name] = orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()[:MAX_ARGUMENTS]
                continue
            if not arguments and isinstance(value, str):  # a resource URI
                kept[name] = resource_uri(value)[:MAX_TEXT]
                continue
        if type(value) is str:  # the common case first
            kept[name] = value if len(value) <= MAX_TEXT else value[:MAX_TEXT]
        elif isinstance(value, bool | int | float):
            kept[name] = value
        elif isinstance(value, str):
            kept[name] = value[:MAX_TEXT]
        elif isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
            kept[name] = [v[:MAX_TEXT] for v in value[:MAX_ITEMS]]
    return kept


def resource_uri(uri: str) -> str:
    """The URI without userinfo (`user:password@`), query and fragment: what a span or a log line may name."""
    end = len(uri)
    for mark in ("?", "#"):
        at = uri.find(mark)
        if 0 <= at < end:
            end = at
    head = uri[:end]
    scheme, sep, rest = head.partition("://")
    if sep:
        authority, slash, path = rest.partition("/")
        if "@" in authority:
            head = f"{scheme}://{authority.rpartition('@')[2]}{slash}{path}"
    return head


def session_digest(session_id: str) -> str:
    """`mcp.session.id` of a 2025-11-25 session: its sealed id is a credential, so a digest names it."""
    return hashlib.blake2b(session_id.encode(), digest_size=16).hexdigest()


RESERVED_CODES = range(-32768, -32000 + 1)
"""JSON-RPC's reserved error codes, where every code of MCP's and Baton's lies."""


def error_type(code: object) -> str:
    """`error.type` (and `rpc.response.status_code`) of a JSON-RPC error: its code, never its message; `_OTHER`
    for a code outside JSON-RPC's reserved range, which the peer may have made up (protocol.md P78)."""
    return str(code) if type(code) is int and code in RESERVED_CODES else names.OTHER
