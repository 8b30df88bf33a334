"""Every span and metric name Baton emits, in one place (docs/observability.md lists them as emitted).

The MCP names follow the OpenTelemetry semantic conventions for MCP; Baton's own, which make a multi
round-trip flow visible, sit under `baton.` (protocol.md P62). Nothing outside this module spells
an attribute name.
"""

from __future__ import annotations

from typing import Final

INSTRUMENTATION: Final = "baton"
"""The instrumentation scope name of Baton's tracer and meter."""

# -- the MCP semantic conventions ------------------------------------------------------------------
MCP_METHOD: Final = "mcp.method.name"
MCP_PROTOCOL_VERSION: Final = "mcp.protocol.version"
MCP_SESSION_ID: Final = "mcp.session.id"
MCP_RESOURCE_URI: Final = "mcp.resource.uri"
JSONRPC_REQUEST_ID: Final = "jsonrpc.request.id"
RPC_STATUS_CODE: Final = "rpc.response.status_code"
ERROR_TYPE: Final = "error.type"
GENAI_TOOL: Final = "gen_ai.tool.name"
GENAI_OPERATION: Final = "gen_ai.operation.name"
GENAI_PROMPT: Final = "gen_ai.prompt.name"
GENAI_TOOL_ARGUMENTS: Final = "gen_ai.tool.call.arguments"
"""Opt-in only: `Server(trace_arguments=True)` (protocol.md P64)."""
NETWORK_TRANSPORT: Final = "network.transport"
NETWORK_PROTOCOL: Final = "network.protocol.name"
SERVER_ADDRESS: Final = "server.address"
SERVER_PORT: Final = "server.port"
CLIENT_ADDRESS: Final = "client.address"
CLIENT_PORT: Final = "client.port"

EXECUTE_TOOL: Final = "execute_tool"
"""`gen_ai.operation.name` of `tools/call`."""
TOOL_ERROR: Final = "tool_error"
"""`error.type` of a tool result with `isError`."""
OTHER: Final = "_OTHER"
"""What stands for a method, a protocol version, a tool or a prompt a server does not know: span names and
metric attributes take only bounded values, never what an unauthenticated client made up (protocol.md P78)."""
TRANSPORT_TCP: Final = "tcp"
TRANSPORT_PIPE: Final = "pipe"

# -- Baton's multi round-trip requests (protocol.md P62) ------------------------------------------
ROUND: Final = "baton.mrtr.round"
"""This request's round of its flow: 1 without a requestState, then one more per input_required."""
ROUNDS: Final = "baton.mrtr.rounds"
"""2025-11-25 only: the rounds one request ran (its asks went out on its own stream)."""
ASKS: Final = "baton.mrtr.asks"
"""The asks this round answered input_required with, as `key:mode` (mode: form, url, sampling, roots)."""
ANSWERS: Final = "baton.mrtr.answers"
"""The answers this round received to what the flow asked, as `key:outcome` (accepted, declined, cancelled,
invalid)."""
UNSOLICITED: Final = "baton.mrtr.unsolicited"
"""How many keys of this round's inputResponses answered nothing the flow asked (their keys are not recorded)."""
STATE_IN: Final = "baton.mrtr.request_state.received_bytes"
STATE_OUT: Final = "baton.mrtr.request_state.sent_bytes"
SINGLE_USE: Final = "baton.single_use.outcome"
"""claimed, replayed, in_progress, refused or unavailable (protocol.md P19)."""
RESULT_TYPE: Final = "baton.result_type"
"""`complete` or `input_required`."""

# -- resource attributes ---------------------------------------------------------------------------
SERVICE_NAME: Final = "service.name"
SERVICE_INSTANCE: Final = "service.instance.id"

# -- metrics ---------------------------------------------------------------------------------------
SERVER_DURATION: Final = "mcp.server.operation.duration"
CLIENT_DURATION: Final = "mcp.client.operation.duration"
DURATION_UNIT: Final = "s"
DURATION_BUCKETS: Final = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
"""The explicit bucket boundaries the conventions advise for the MCP operation durations."""
METRIC_ATTRIBUTES: Final = frozenset(
    {MCP_METHOD, MCP_PROTOCOL_VERSION, GENAI_TOOL, GENAI_PROMPT, ERROR_TYPE, NETWORK_TRANSPORT}
)
"""The duration histograms' attributes: the few the conventions require or recommend, no more, since the SDK
hashes every one on every record (protocol.md P66). `rpc.response.status_code` would repeat `error.type`."""

SPAN_ATTRIBUTES: Final = frozenset(
    {
        MCP_METHOD,
        MCP_PROTOCOL_VERSION,
        MCP_SESSION_ID,
        MCP_RESOURCE_URI,
        JSONRPC_REQUEST_ID,
        RPC_STATUS_CODE,
        ERROR_TYPE,
        GENAI_TOOL,
        GENAI_OPERATION,
        GENAI_PROMPT,
        GENAI_TOOL_ARGUMENTS,
        NETWORK_TRANSPORT,
        NETWORK_PROTOCOL,
        SERVER_ADDRESS,
        SERVER_PORT,
        CLIENT_ADDRESS,
        CLIENT_PORT,
        ROUND,
        ROUNDS,
        ASKS,
        ANSWERS,
        UNSOLICITED,
        STATE_IN,
        STATE_OUT,
        SINGLE_USE,
        RESULT_TYPE,
    }
)
"""Every attribute a Baton span may carry; `never.screen` drops any other name."""


def span_name(method: str, target: str | None) -> str:
    """`{mcp.method.name} {target}`, the target being a tool or prompt name; a resource URI never names a
    span (high cardinality, per the conventions), so `resources/read` is the method alone."""
    return f"{method} {target}" if target else method
