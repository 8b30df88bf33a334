"""Extensions (SEP-2133): identifiers, settings objects, and the rule that one is used only when both sides
declared it (protocol.md P141).

Each side declares the extensions it supports under `capabilities.extensions`, a map from an identifier
(`reverse.dns/name`, the `_meta` key grammar with its prefix mandatory) to a settings object (`{}` for
none). What a peer declared is read tolerantly (malformed entries are ignored, as unknown ones are);
what this side declares is checked strictly, so a typo fails where it is written.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final

# A prefix of dot-separated labels (a letter first, a letter or digit last, hyphens inside), a slash, and
# a name that starts and ends alphanumeric with hyphens, underscores and dots inside.
_LABEL: Final = r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_NAME: Final = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_IDENTIFIER: Final = re.compile(rf"{_LABEL}(?:\.{_LABEL})*/{_NAME}")

Extensions = Mapping[str, Mapping[str, Any]]
"""Declared extensions: identifier -> settings object."""

NONE: Final[Extensions] = MappingProxyType({})


def is_identifier(name: object) -> bool:
    """Whether `name` is a valid extension identifier, such as `io.modelcontextprotocol/tasks`."""
    return isinstance(name, str) and _IDENTIFIER.fullmatch(name) is not None


def peer_extensions(capabilities: Mapping[str, Any]) -> Extensions:
    """The extensions a peer declared in its capabilities object. An `extensions` that is not an object, an
    entry whose key is not an identifier or whose settings are not an object, are ignored: the peer then
    simply did not declare them, and the core behaviour applies (protocol.md P141)."""
    declared = capabilities.get("extensions")
    if not isinstance(declared, dict) or not declared:
        return NONE
    return MappingProxyType(
        {name: settings for name, settings in declared.items() if is_identifier(name) and isinstance(settings, dict)}
    )


def checked_extensions(extensions: Mapping[str, Any] | None, where: str) -> dict[str, dict[str, Any]]:
    """This side's own declaration, checked: `ValueError` naming `where` for a bad identifier or settings."""
    checked: dict[str, dict[str, Any]] = {}
    for name, settings in (extensions or {}).items():
        checked[name] = checked_extension(name, settings, where)
    return checked


def checked_extension(name: object, settings: Any, where: str) -> dict[str, Any]:
    """One extension of this side's declaration, checked; its settings as a fresh dict (`{}` for None)."""
    if not is_identifier(name):
        raise ValueError(
            f"{where}: {name!r} is not an extension identifier; write it as reverse.dns/name, "
            "for example 'io.modelcontextprotocol/tasks' or 'com.example/audit'"
        )
    if settings is None:
        return {}
    if not isinstance(settings, Mapping):
        raise ValueError(f"{where}: the settings of {name} must be a JSON object (a dict), or None for none")
    return dict(settings)


def negotiated(ours: Extensions, theirs: Extensions, name: str) -> Mapping[str, Any] | None:
    """The peer's settings for extension `name` if both sides declared it, else None: the extension is then
    not used and the core behaviour applies."""
    if name not in ours:
        return None
    return theirs.get(name)


def capabilities_with(capabilities: Mapping[str, Any], extensions: Extensions) -> dict[str, Any]:
    """`capabilities` with `extensions` declared under its `extensions` key (left out when there are none)."""
    out = dict(capabilities)
    if extensions:
        out["extensions"] = {name: dict(settings) for name, settings in extensions.items()}
    return out
