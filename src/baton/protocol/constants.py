"""Protocol version, `_meta` keys and method names of MCP 2026-07-28."""

from __future__ import annotations

from typing import Final

PROTOCOL_VERSION: Final = "2026-07-28"
SUPPORTED_VERSIONS: Final = (PROTOCOL_VERSION,)

META_PROTOCOL_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"
META_LOG_LEVEL: Final = "io.modelcontextprotocol/logLevel"
META_SERVER_INFO: Final = "io.modelcontextprotocol/serverInfo"
META_SUBSCRIPTION_ID: Final = "io.modelcontextprotocol/subscriptionId"

# The only methods that may answer `input_required` (digest §4.2).
INPUT_METHODS: Final = frozenset({"tools/call", "resources/read", "prompts/get"})
# Methods whose complete results carry ttlMs/cacheScope (digest §11.1).
CACHEABLE_METHODS: Final = frozenset(
    {
        "server/discover",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
    }
)
# For each method, the params member that the Mcp-Name header mirrors.
NAME_PARAM: Final = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}

LOG_LEVELS: Final = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
