"""Which era a client message belongs to: 2026-07-28 (stateless, `_meta` on every request) or the
2025-11-25 handshake era (`initialize`, then a session). The one rule, used by both transports
(protocol.md P28)."""

from __future__ import annotations

from typing import Any, Final

from .constants import HANDSHAKE_VERSIONS, META_PROTOCOL_VERSION

MODERN_ONLY_METHODS: Final = frozenset({"server/discover", "subscriptions/listen"})
"""Methods that exist only in 2026-07-28: without `_meta` they still go the 2026 way (and get -32602)."""


def is_modern(method: str, params: dict[str, Any], header_version: str | None = None) -> bool:
    """Whether a request is 2026-era, in this order (first match wins):

    1. `params._meta` names a protocol version (the 2026 envelope): any method, `initialize` included;
    2. (HTTP) the `MCP-Protocol-Version` header is present and not a handshake-era version;
    3. the method exists only in 2026-07-28.

    Anything else is handshake-era: served in its session, or refused for want of one.
    """
    meta = params.get("_meta")
    if isinstance(meta, dict) and META_PROTOCOL_VERSION in meta:
        return True
    if header_version is not None and header_version.strip() not in HANDSHAKE_VERSIONS:
        return True
    return method in MODERN_ONLY_METHODS
