"""Protocol versions, `_meta` keys and method names of MCP 2026-07-28 (and the 2025-11-25 handshake era)."""

from __future__ import annotations

from typing import Final

PROTOCOL_VERSION: Final = "2026-07-28"
SUPPORTED_VERSIONS: Final = (PROTOCOL_VERSION,)
"""The versions served statelessly, per request (the `_meta` envelope)."""
HANDSHAKE_VERSION: Final = "2025-11-25"
"""The one handshake-era version Baton speaks, through `initialize` and sessions (protocol.md P28)."""
HANDSHAKE_VERSIONS: Final = frozenset({"2024-11-05", "2025-03-26", "2025-06-18", HANDSHAKE_VERSION})
"""Versions of the `initialize` era: a header naming one of them never marks a request as 2026-era."""
ADVERTISED_VERSIONS: Final = (PROTOCOL_VERSION, HANDSHAKE_VERSION)
"""What `server/discover` and -32022 list: every version this server speaks, either way (protocol.md P28)."""

META_PROTOCOL_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"
META_LOG_LEVEL: Final = "io.modelcontextprotocol/logLevel"
META_SERVER_INFO: Final = "io.modelcontextprotocol/serverInfo"
META_SUBSCRIPTION_ID: Final = "io.modelcontextprotocol/subscriptionId"

REQUEST_METHODS: Final = frozenset(
    {
        "initialize",
        "ping",
        "server/discover",
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "resources/subscribe",
        "resources/unsubscribe",
        "prompts/list",
        "prompts/get",
        "completion/complete",
        "logging/setLevel",
        "subscriptions/listen",
        "tasks/get",
        "tasks/update",
        "tasks/cancel",
    }
)
"""Every request method a client may send a server, in either era: telemetry names any other `_OTHER`
(protocol.md P78)."""
SERVER_REQUEST_METHODS: Final = frozenset({"ping", "elicitation/create", "sampling/createMessage", "roots/list"})
"""Every request method a 2025-11-25 server may send its client in a session; telemetry names any other
`_OTHER` (protocol.md P78)."""

# For each method, the params member that the Mcp-Name header mirrors.
# The Tasks extension's methods route by task id (SEP-2663's routing headers, protocol.md P166).
NAME_PARAM: Final = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}

LOG_LEVELS: Final = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
