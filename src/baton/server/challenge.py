"""The text of a `WWW-Authenticate: Bearer ...` challenge (RFC 6750 section 3, RFC 9728 section 5.1).

Every 401 and 403 Baton sends builds its header here, so quoting is done once: parameter values are
quoted strings, and what RFC 6750 does not allow in them (`"`, `\\`, control and non-ASCII characters)
is replaced, so no value (an error description that quotes a library's message) can break the header.
"""

from __future__ import annotations

from collections.abc import Iterable

_ALLOWED = frozenset(chr(c) for c in range(0x20, 0x7F)) - {'"', "\\"}


def _quoted(value: str) -> str:
    return '"' + "".join(ch if ch in _ALLOWED else ("'" if ch == '"' else "?") for ch in value) + '"'


def bearer_challenge(
    *,
    error: str | None = None,
    description: str | None = None,
    scope: Iterable[str] = (),
    resource_metadata: str | None = None,
    scheme: str = "Bearer",
) -> str:
    """`Bearer error="...", error_description="...", scope="a b", resource_metadata="..."` with only the
    parameters given (a bare `Bearer` when none is); `scheme` "DPoP" for a resource that takes only DPoP."""
    params: list[str] = []
    if error:
        params.append(f"error={_quoted(error)}")
        if description:
            params.append(f"error_description={_quoted(description[:300])}")
    scopes = " ".join(scope)
    if scopes:
        params.append(f"scope={_quoted(scopes)}")
    if resource_metadata:
        params.append(f"resource_metadata={_quoted(resource_metadata)}")
    return f"{scheme} " + ", ".join(params) if params else scheme
