"""Which era a server speaks, read from its answer to a 2026 `server/discover` (protocol.md P34).

Only a sure sign of a 2026-07-28 server counts as one: a `DiscoverResult` that lists a version this
client speaks per request, or an error only a 2026 server sends (-32020, -32021, or -32022 naming a
version both sides speak). Everything else (an error a 2025-11-25 server sends, such as -32601,
-32602 or -32600 about a missing session, a result that is not a `DiscoverResult`, an HTTP 4xx
without a JSON-RPC error, no answer in time on stdio) means the `initialize` handshake.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from ..protocol.constants import HANDSHAKE_VERSION, PROTOCOL_VERSION, SUPPORTED_VERSIONS
from ..protocol.errors import HEADER_MISMATCH, MISSING_CAPABILITY, UNSUPPORTED_VERSION

ProtocolChoice = Literal["auto", "2026-07-28", "2025-11-25"]
"""`Client(protocol=...)`: probe, or pin one era."""
AUTO: Final = "auto"
MODERN: Final = PROTOCOL_VERSION
HANDSHAKE: Final = HANDSHAKE_VERSION
CHOICES: Final = (AUTO, MODERN, HANDSHAKE)
STDIO_PROBE_S: Final = 3.0
"""How long a stdio server has to answer the probe; a 2025-11-25 server may never answer it."""


def era_of_result(result: Any) -> str:
    """The era of a server that answered the probe with this result."""
    if not isinstance(result, dict) or not isinstance(result.get("capabilities"), dict):
        return HANDSHAKE
    versions = result.get("supportedVersions")
    if not isinstance(versions, list) or not any(v in SUPPORTED_VERSIONS for v in versions):
        return HANDSHAKE
    kind = result.get("resultType", "complete")
    return MODERN if kind == "complete" else HANDSHAKE


def era_of_error(code: Any, data: Any) -> str:
    """The era of a server that answered the probe with this JSON-RPC error."""
    if code in (HEADER_MISMATCH, MISSING_CAPABILITY):
        return MODERN
    if code == UNSUPPORTED_VERSION and common_versions(data):
        return MODERN
    return HANDSHAKE


def common_versions(data: Any) -> list[str]:
    """The versions both sides speak, the client's preferred first, from an unsupported-version error's data."""
    supported = data.get("supported") if isinstance(data, dict) else None
    if not isinstance(supported, list):
        return []
    return [v for v in SUPPORTED_VERSIONS if v in supported]
