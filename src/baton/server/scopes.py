"""OAuth scopes: how they are written, which scopes an operation needs, and when granted scopes suffice.

- `scope_list` checks what an author wrote (`@server.tool(scopes=[...])`, `OAuthResource(scopes=...)`):
  RFC 6749 scope tokens, no `offline_access` (refresh tokens are not a resource requirement).
- `required_for` is the one place that says what a request needs: the server-wide scopes, plus the
  scopes of the tool, resource (or template) or prompt it names, completes (`completion/complete`)
  or subscribes to (2025-11-25 `resources/subscribe`, `resources/unsubscribe`) (protocol.md P39).
- `Implications.missing` decides: exact string match, widened only by the author's `implies` mapping
  (`{"files:admin": ["files:read", "files:write"]}`), followed transitively (protocol.md P40).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .core import Server

_SCOPE_TOKEN = re.compile(r"[\x21\x23-\x5B\x5D-\x7E]+\Z")  # RFC 6749 section 3.3: scope-token
_MAX_WRITTEN = 200  # what an author may write; a token's scopes are the issuer's business
OFFLINE_ACCESS = "offline_access"


def is_scope_token(value: object) -> bool:
    """Whether `value` is an RFC 6749 scope-token: printable ASCII without space, `"` or `\\`."""
    return isinstance(value, str) and _SCOPE_TOKEN.match(value) is not None


def scope_list(scopes: Iterable[str] | str | None, where: str) -> tuple[str, ...]:
    """The scopes as a tuple without duplicates (a string is split on spaces); ValueError naming `where`."""
    if scopes is None:
        return ()
    items = scopes.split() if isinstance(scopes, str) else list(scopes)
    out: list[str] = []
    for item in items:
        if not is_scope_token(item) or len(item) > _MAX_WRITTEN:
            raise ValueError(f"{where}: {item!r} is not an OAuth scope (printable ASCII without spaces, quotes or \\)")
        if item == OFFLINE_ACCESS:
            raise ValueError(f"{where}: offline_access asks for refresh tokens; it is not a scope to require")
        if item not in out:
            out.append(item)
    return tuple(out)


class Implications:
    """The author's scope hierarchy: which scopes each broader scope implies (transitively)."""

    def __init__(self, implies: Mapping[str, Iterable[str]] | None = None) -> None:
        table = {broad: scope_list(narrow, f"implies[{broad!r}]") for broad, narrow in (implies or {}).items()}
        for broad in table:
            scope_list([broad], "implies")
        self._closure: dict[str, frozenset[str]] = {}
        for broad in table:
            seen: set[str] = set()
            todo = [broad]
            while todo:
                scope = todo.pop()
                if scope not in seen:
                    seen.add(scope)
                    todo.extend(table.get(scope, ()))
            self._closure[broad] = frozenset(seen)

    def expand(self, granted: Iterable[str]) -> frozenset[str]:
        """The granted scopes with everything they imply."""
        out: set[str] = set()
        for scope in granted:
            out |= self._closure.get(scope, frozenset((scope,)))
        return frozenset(out)

    def missing(self, granted: frozenset[str] | None, required: Iterable[str]) -> list[str]:
        """The required scopes the grant does not cover (all of them when it carries no scopes)."""
        have = self.expand(granted or ())
        return [scope for scope in required if scope not in have]


def required_for(server: Server, method: str | None, params: Mapping[str, Any] | None) -> tuple[str, ...]:
    """Every scope this request needs, server-wide first, in one list (the one challenge, protocol.md P39)."""
    base = server.settings.auth.scopes if server.settings.auth is not None else ()
    if method is None or params is None:
        return base
    extra = _handler_scopes(server, method, params)
    if not extra:
        return base
    return base + tuple(s for s in extra if s not in base)


def _handler_scopes(server: Server, method: str, params: Mapping[str, Any]) -> tuple[str, ...]:
    """The scopes of the tool, prompt, resource or template the request names (or completes, or
    subscribes to); none when it names nothing known (the method handler then refuses it as usual)."""
    if method == "completion/complete":
        ref = params.get("ref")
        if not isinstance(ref, Mapping):
            return ()
        if ref.get("type") == "ref/prompt":
            method, target = "prompts/get", ref.get("name")
        elif ref.get("type") == "ref/resource":
            target = ref.get("uri")
            template = server.templates.get(target) if isinstance(target, str) else None
            if template is not None:  # the template's own text, as completion names it
                return template.scopes
            method = "resources/read"
        else:
            return ()
    else:
        target = params.get("name" if method in ("tools/call", "prompts/get") else "uri")
    if not isinstance(target, str):
        return ()
    if method == "tools/call":
        tool = server.tools.get(target)
        return tool.scopes if tool is not None else ()
    if method == "prompts/get":
        prompt = server.prompts.get(target)
        return prompt.scopes if prompt is not None else ()
    if method in ("resources/read", "resources/subscribe", "resources/unsubscribe"):
        found = server.runtime.find_resource(target)
        return found[0].scopes if found is not None else ()
    return ()


def declared_scopes(server: Server) -> list[str]:
    """Every scope the server's configuration and handlers name, in order of first mention."""
    out: list[str] = list(server.settings.auth.scopes) if server.settings.auth is not None else []
    items: list[Any] = [*server.tools.values(), *server.resources.values(), *server.templates.values()]
    items += list(server.prompts.values())
    for item in items:
        for scope in item.scopes:
            if scope not in out:
                out.append(scope)
    return out
