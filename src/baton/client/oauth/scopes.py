"""Which scopes to ask for: the first login, `offline_access`, and step-up after `insufficient_scope`.

First login: the `scope` of the server's challenge; else every scope of the PRM's `scopes_supported`;
else no `scope` parameter at all. The host's own `OAuth(scopes=...)` are added. `offline_access` is
added when the authorization server lists it in its `scopes_supported` and a scope parameter is sent
at all (protocol.md P55). Step-up asks for the union of what was asked before and what the challenge
names, in both eras (protocol.md P54); a challenge that adds nothing cannot be met by asking again.
"""

from __future__ import annotations

from collections.abc import Iterable

OFFLINE_ACCESS = "offline_access"


def first_scopes(
    challenged: tuple[str, ...] | None, prm_supported: tuple[str, ...] | None, extra: Iterable[str] = ()
) -> tuple[str, ...] | None:
    """The scopes of a first login (None: send no scope parameter)."""
    chosen = challenged if challenged else prm_supported
    words = tuple(dict.fromkeys([*(chosen or ()), *extra]))
    return words or None


def with_offline_access(scopes: tuple[str, ...] | None, as_supported: tuple[str, ...] | None) -> tuple[str, ...] | None:
    """`scopes` plus `offline_access` when the authorization server lists it and a scope is sent at all."""
    if scopes is None or OFFLINE_ACCESS in scopes or OFFLINE_ACCESS not in (as_supported or ()):
        return scopes
    return (*scopes, OFFLINE_ACCESS)


def step_up(previous: tuple[str, ...] | None, challenged: tuple[str, ...] | None) -> tuple[str, ...] | None:
    """The scopes of a re-authorization after `insufficient_scope`, or None when the challenge adds nothing."""
    before = tuple(previous or ())
    union = tuple(dict.fromkeys([*before, *(challenged or ())]))
    return union if set(union) != set(before) else None
