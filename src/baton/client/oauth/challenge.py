"""Reading a `WWW-Authenticate` header: the `Bearer` or `DPoP` challenge and its parameters (RFC 9110 §11.6.1,
RFC 6750 §3, RFC 9449 §7.1).

A header may hold several challenges (`Bearer realm="x", Basic realm="y"`); only the first Bearer or DPoP
one is read, and `scheme` says which. Parameters are `name=token` or `name="quoted string"` (backslash
escapes), names compared without regard to case. The parameters an MCP client uses: `resource_metadata` (RFC 9728 §5.1),
`scope` (space-separated), `error` (`invalid_token`, `insufficient_scope`) and `error_description`.
A header that cannot be read yields no challenge rather than an exception: the client then falls back
to the well-known locations.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_TOKEN = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
_TOKEN68 = r"[A-Za-z0-9\-._~+/]+=*"
_TOKEN68_PARAM = re.compile(rf"\s*{_TOKEN68}\s*(?:,|$)")
_PARAM = re.compile(rf'\s*({_TOKEN})\s*=\s*(?:"((?:[^"\\]|\\.)*)"|({_TOKEN}))\s*')
_SCHEME = re.compile(rf"\s*({_TOKEN})(?:\s+|$)")


@dataclass(frozen=True, slots=True)
class Challenge:
    """The Bearer (or DPoP) challenge of a response: its parameters, names lowercased, and its scheme."""

    params: dict[str, str] = field(default_factory=dict)
    scheme: str = "bearer"

    @property
    def resource_metadata(self) -> str | None:
        return self.params.get("resource_metadata") or None

    @property
    def scopes(self) -> tuple[str, ...] | None:
        """The scopes the challenge names, in order without repeats; None when it names none."""
        words = tuple(dict.fromkeys(self.params.get("scope", "").split()))
        return words or None

    @property
    def error(self) -> str | None:
        return self.params.get("error") or None


def auth_challenge(header: str | None) -> Challenge | None:
    """The first Bearer or DPoP challenge in a `WWW-Authenticate` value (repeated fields joined with ", ")."""
    if not header:
        return None
    pos = 0
    while pos < len(header):
        while pos < len(header) and header[pos] in " ,\t":
            pos += 1
        scheme = _SCHEME.match(header, pos)
        if scheme is None:
            return None
        pos = scheme.end()
        params: dict[str, str] = {}
        token68 = _TOKEN68_PARAM.match(header, pos)
        if token68 is not None and not _PARAM.match(header, pos):
            pos = token68.end()
        else:
            while pos < len(header):
                param = _PARAM.match(header, pos)
                if param is None:
                    break
                value = param.group(2)
                value = re.sub(r"\\(.)", r"\1", value) if value is not None else param.group(3)
                params.setdefault(param.group(1).lower(), value)
                pos = param.end()
                if pos < len(header) and header[pos] == ",":
                    pos += 1
                    continue
                break
        if scheme.group(1).lower() in ("bearer", "dpop"):
            return Challenge(params, scheme.group(1).lower())
    return None
