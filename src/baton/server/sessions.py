"""2025-11-25 sessions: what one is, and the sealed `Mcp-Session-Id` that carries it (protocol.md P30).

Nothing about a session is stored to make it valid: its id is the session sealed under the key
ring (AES-GCM, as `requestState`), bound to the audience and the principal that initialized it,
so any instance opens it and a tampered id, an expired one, or one shown by another principal
does not open. What changes during a session (its log level, its subscriptions) is soft state a
transport keeps beside it on the instance that serves it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..protocol.capabilities import ASK_KINDS, ClientCapabilities, capability_for, granted
from ..protocol.extensions import capabilities_with
from ..state.journal import Journal
from ..state.keys import KeyRing
from ..state.seal import FlowState, InvalidState, Sealer

DEFAULT_SESSION_TTL_S = 24 * 3600
MAX_INFO_CHARS = 128  # of each clientInfo string a session keeps (and its sealed id carries)
# What a session id is bound to besides audience and principal: a request binding always starts with a
# method name of at least one byte, so an empty one cannot be a requestState's (no token opens as the other).
_SESSION_BINDING = b"\0\0\0\0mcp-session"


@dataclass(slots=True, eq=False)
class ServerSession:
    """One 2025-11-25 session: the stdio connection, or an HTTP `Mcp-Session-Id`."""

    principal: str
    version: str
    capabilities: ClientCapabilities
    client_info: dict[str, Any] = field(default_factory=dict)
    id: str | None = None
    """The sealed `Mcp-Session-Id` (HTTP), None on stdio."""
    log_level: str | None = None
    """Set by `logging/setLevel`; None sends every level (protocol.md P31)."""
    subscriptions: set[str] = field(default_factory=set)
    """Resource URIs this session subscribed to."""


class SessionSeal:
    """Mints and opens sealed session ids for one server."""

    def __init__(self, ring: KeyRing, audience: str, ttl_s: int = DEFAULT_SESSION_TTL_S) -> None:
        self._sealer = Sealer(ring, audience, ttl_s=ttl_s)

    def mint(self, session: ServerSession) -> str:
        """The session's id; only visible ASCII (base64url, dots), a few hundred characters: only what the
        bridge reads of the capabilities is sealed, and `initialize` already cut the client's strings short."""
        caps = capability_for(*(kind for kind in ASK_KINDS if granted(session.capabilities, kind)))
        # The client's extensions, already cut to those this server offers by `initialize` (P142).
        caps = capabilities_with(caps, session.capabilities.extensions)
        journal = Journal(once={"v": session.version, "c": caps, "i": session.client_info})
        return self._sealer.seal(FlowState(journal=journal), session.principal, _SESSION_BINDING)

    def open(self, token: str, principal: str) -> ServerSession | None:
        """The session this id carries, or None if it does not open for this principal (tampered, foreign,
        expired, or sealed under a key no longer in the ring)."""
        try:
            state = self._sealer.open(token, principal, _SESSION_BINDING)
        except InvalidState:
            return None
        data = state.journal.once
        caps = data.get("c")
        info = data.get("i")
        return ServerSession(
            principal,
            str(data.get("v")),
            ClientCapabilities.parse(caps if isinstance(caps, dict) else {}),
            info if isinstance(info, dict) else {},
            id=token,
        )
