"""The YAML of a SKILL.md's frontmatter, read with YAML 1.2's core schema (protocol.md P180-P184).

Apart from `baton.protocol.skills` so that PyYAML, and the regular expressions it compiles on import, load
with the first SKILL.md read rather than with every server and command line (about 15 ms of CPU each).
"""

from __future__ import annotations

import re
from typing import Any

import yaml


class _Core(yaml.SafeLoader):
    """PyYAML's safe loader with YAML 1.2's core schema for plain scalars, no aliases, string keys once each."""

    yaml_implicit_resolvers: dict[Any, Any] = {}  # noqa: RUF012 (PyYAML's class-level table, rebuilt below)

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            raise yaml.YAMLError("frontmatter must not use YAML aliases (*name)")
        return super().compose_node(parent, index)

    def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
        if not isinstance(node, yaml.MappingNode):
            raise yaml.YAMLError("expected a mapping")
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=deep)
            if not isinstance(key, str):
                raise yaml.YAMLError(f"the key {key!r} is not a string")
            if key in out:
                raise yaml.YAMLError(f"the key {key!r} appears twice")
            out[key] = self.construct_object(value_node, deep=deep)
        return out

    def construct_yaml_int(self, node: Any) -> int:
        text = str(self.construct_scalar(node))
        return int(text, 0) if text[:2] in ("0x", "0o") else int(text, 10)


_Core.add_implicit_resolver("tag:yaml.org,2002:null", re.compile(r"^(?:~|null|Null|NULL|)$"), ["~", "n", "N", ""])
_Core.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)
_Core.add_implicit_resolver(
    "tag:yaml.org,2002:int", re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"), list("-+0123456789")
)
_Core.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
    ),
    list("-+0123456789."),
)
_Core.add_constructor("tag:yaml.org,2002:int", _Core.construct_yaml_int)


def _bool(loader: _Core, node: yaml.ScalarNode) -> bool:
    return str(loader.construct_scalar(node)).lower() == "true"


_Core.add_constructor("tag:yaml.org,2002:bool", _bool)


def load_yaml(block: str) -> Any:
    """The value of the YAML `block` (a SafeLoader with the core schema); `ValueError` saying what is wrong."""
    try:
        return yaml.load(block, Loader=_Core)  # a SafeLoader with the core schema
    except yaml.YAMLError as exc:
        raise ValueError(f"its frontmatter is not valid YAML: {' '.join(str(exc).split())}") from None
