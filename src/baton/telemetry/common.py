"""The attributes a request shares with every other request of the same method, target, protocol version and
transport, built and screened once per such key and reused (protocol.md P66).

Per key: the span's name, the attributes a span starts with (the ones a sampler may look at), and the
duration histogram's attributes (`names.METRIC_ATTRIBUTES`: few, as the conventions ask, since each one
costs the SDK on every record). The dicts are shared: nothing may change them; `failed` makes a new one.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, NamedTuple

from ..protocol.constants import ADVERTISED_VERSIONS, HANDSHAKE_VERSIONS, REQUEST_METHODS
from . import names
from .never import screen

_VERSIONS = frozenset(ADVERTISED_VERSIONS) | HANDSHAKE_VERSIONS

KEPT = 512
"""Distinct keys remembered; past that, each request builds its own. Keys are bounded already: a method,
version, tool or prompt the server does not know is `_OTHER` (protocol.md P78)."""


class Common(NamedTuple):
    name: str
    """`{mcp.method.name} {target}` (`names.span_name`)."""
    start: dict[str, Any]
    """A span's attributes at its start, screened: method, version, tool or prompt, operation, transport."""
    metric: dict[str, Any]
    """The histogram's attributes without `error.type`: those of `start` in `names.METRIC_ATTRIBUTES`."""


class CommonAttributes:
    """`get` the `Common` of a request's key, from a bounded cache."""

    def __init__(self) -> None:
        self._known: dict[tuple[str, str | None, str | None, str], Common] = {}

    def get(self, method: str, target: str | None, version: str | None, transport: str) -> Common:
        """The `Common` of a request as it came: `method` and `version` are checked here (`known_method`,
        `known_version`), on a miss, so that a request of a known key costs one lookup; `target` is checked
        already (a name the server has, else `_OTHER`)."""
        key = (method, target, version, transport)
        found = self._known.get(key)
        if found is None:
            known = (known_method(method), target, known_version(version), transport)
            found = self._known.get(known) or _build(*known)
            if len(self._known) < KEPT:  # under what it names: made-up text never becomes a key (P78)
                self._known[known] = found
        return found


def known_method(method: object, methods: Collection[str] = REQUEST_METHODS) -> str:
    """The method, if MCP has it (among `methods`: a client's requests by default); else `_OTHER` (a span name
    and a metric attribute take no made-up text)."""
    return method if isinstance(method, str) and method in methods else names.OTHER


def known_version(version: object) -> str | None:
    """A protocol version Baton knows (served, or one of the handshake era), `_OTHER` for any other string,
    None without one (protocol.md P78)."""
    if not isinstance(version, str):
        return None
    return version if version in _VERSIONS else names.OTHER


def _build(method: str, target: str | None, version: str | None, transport: str) -> Common:
    attributes: dict[str, Any] = {names.MCP_METHOD: method, names.MCP_PROTOCOL_VERSION: version}
    if method == "tools/call":
        attributes[names.GENAI_TOOL] = target
        attributes[names.GENAI_OPERATION] = names.EXECUTE_TOOL
    elif method == "prompts/get":
        attributes[names.GENAI_PROMPT] = target
    attributes[names.NETWORK_TRANSPORT] = transport
    start = screen(attributes)
    metric = {k: v for k, v in start.items() if k in names.METRIC_ATTRIBUTES}
    return Common(names.span_name(method, target), start, metric)


def metric_of(attributes: Mapping[str, Any]) -> dict[str, Any]:
    """The histogram's attributes among a span's (`names.METRIC_ATTRIBUTES`, screened): for a request whose
    attributes are not shared (`Common`), such as a client's or a session's ask."""
    return {k: v for k, v in screen(attributes).items() if k in names.METRIC_ATTRIBUTES}


def failed(metric: dict[str, Any], error: str) -> dict[str, Any]:
    """The histogram's attributes of a failed request: `error.type` added (to a copy)."""
    return screen({**metric, names.ERROR_TYPE: error})
