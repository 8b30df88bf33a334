"""The warning about a client's deprecated capabilities (`sampling`, `roots` in MCP 2026-07-28, SEP-2577).

A 2026-07-28 client declares its capabilities on every request, so the warning is kept to one line per
client name and version per process (protocol.md P124), however many requests, connections or `Server`
objects it meets. The names are the client's own words (its `clientInfo`, which may be absent): each is cut
to `MAX_INFO_CHARS` and at most `SEEN_MAX` clients are remembered, the oldest forgotten first, so a stream of
made-up names costs a bounded memory (and, past that many, a line again for a client forgotten).
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from .sessions import MAX_INFO_CHARS

log = logging.getLogger("baton.server")

SEEN_MAX = 1024
"""How many (client name, version, capability) the process remembers having warned about."""

_seen: dict[tuple[str, str, str], None] = {}  # in the order seen: the first is the first forgotten
_lock = threading.Lock()  # servers may run in several threads of one process


def warn_deprecated(client_info: Any, capabilities: tuple[str, ...]) -> None:
    """Log the deprecated `capabilities` this client has not been warned about yet in this process."""
    name, version = _identity(client_info)
    with _lock:
        new = [c for c in capabilities if (name, version, c) not in _seen]
        for capability in new:
            if len(_seen) >= SEEN_MAX:
                del _seen[next(iter(_seen))]
            _seen[(name, version, capability)] = None
    if new:
        who = f"client {name!r} {version!r}" if name else "a client without clientInfo"
        log.warning(
            "%s declared %s, deprecated in MCP 2026-07-28 (SEP-2577); it still works, but plan to move off it"
            " (logged once per client name and version)",
            who,
            " and ".join(f"the {c!r} capability" for c in new),
        )


def _identity(client_info: Any) -> tuple[str, str]:
    if not isinstance(client_info, dict):
        return "", ""
    name, version = client_info.get("name"), client_info.get("version")
    return (
        name[:MAX_INFO_CHARS] if isinstance(name, str) else "",
        version[:MAX_INFO_CHARS] if isinstance(version, str) else "",
    )
