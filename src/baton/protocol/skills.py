"""Skills (SEP-2640, `io.modelcontextprotocol/skills`): the wire rules both sides share (protocol.md P180-P184).

A skill is a folder whose `SKILL.md` begins with YAML frontmatter (`name`, `description`, ...). A server
lists each skill as an entry: `uri` (`skill://<name>/SKILL.md`), `frontmatter` (that YAML as JSON) and
`resources` (every file as `{uri, digest, size}`, the digest `sha256:<hex>` of the file's raw bytes). The
frontmatter is read here one way for both sides: YAML 1.2's core schema (a date stays a string, `yes` is
a word), no aliases, string keys once each, JSON values only.
"""

from __future__ import annotations

import hashlib
import math
import re
from typing import Any, Final

EXTENSION: Final = "io.modelcontextprotocol/skills"
SKILL_FILE: Final = "SKILL.md"
SCHEME: Final = "skill://"
DIRECTORY_MIME: Final = "inode/directory"
MARKDOWN_MIME: Final = "text/markdown"
MAX_FILES: Final = 512  # per skill, SKILL.md included: servers should not serve more
MAX_BYTES: Final = 16 * 1024 * 1024  # per skill, summed over its files
MAX_DESCRIPTION: Final = 1024

_NAME: Final = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_DIGEST: Final = re.compile(r"sha256:[0-9a-f]{64}")
# A leading `---` line, the YAML, a closing `---` line (a byte-order mark before it is allowed).
_FRONTMATTER: Final = re.compile(r"---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)")


def digest(data: bytes) -> str:
    """The digest of a skill file: `sha256:` and 64 lowercase hex digits of its raw bytes."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def is_digest(value: object) -> bool:
    return isinstance(value, str) and _DIGEST.fullmatch(value) is not None


def name_problem(name: object) -> str | None:
    """Why `name` is not a skill name (1-64 lowercase letters, digits and single inner hyphens); None if it is."""
    if not isinstance(name, str) or not name:
        return "the frontmatter needs a name (a non-empty string)"
    if len(name) > 64 or _NAME.fullmatch(name) is None:
        return (
            f"the name {name!r} is not a skill name: 1-64 lowercase letters, digits and hyphens, "
            "with no hyphen first, last or twice in a row"
        )
    return None


def skill_name(uri: str) -> str | None:
    """The skill name a `<scheme>://<path>/SKILL.md` URI carries (its segment before SKILL.md); else None."""
    _, sep, rest = uri.partition("://")
    parts = [part for part in rest.split("/") if part]
    if not sep or len(parts) < 2 or parts[-1] != SKILL_FILE:
        return None
    return parts[-2]


def frontmatter_text(text: str) -> str | None:
    """The YAML between the `---` lines that begin a SKILL.md, or None when it does not begin with them."""
    found = _FRONTMATTER.match(text[1:] if text.startswith("\ufeff") else text)
    return found.group(1) if found else None


def parse_frontmatter(text: str) -> dict[str, Any]:
    """The frontmatter of a SKILL.md's text as a JSON object; `ValueError` saying what is wrong with it."""
    block = frontmatter_text(text)
    if block is None:
        raise ValueError("SKILL.md must begin with YAML frontmatter: a line '---', the YAML, and a line '---'")
    from .skill_yaml import load_yaml  # noqa: PLC0415 (PyYAML and its regular expressions load with a SKILL.md)

    value = load_yaml(block)
    if not isinstance(value, dict):
        raise ValueError("its frontmatter must be a mapping of fields (name: ..., description: ...)")
    problem = _json_problem(value, "frontmatter")
    if problem:
        raise ValueError(problem)
    return value


def _json_problem(value: Any, where: str) -> str | None:
    if value is None or isinstance(value, (str, bool, int)):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{where} is {value}, which JSON cannot carry"
    if isinstance(value, list):
        return next((p for i, v in enumerate(value) if (p := _json_problem(v, f"{where}[{i}]"))), None)
    if isinstance(value, dict):
        return next((p for k, v in value.items() if (p := _json_problem(v, f"{where}.{k}"))), None)
    return f"{where} is not a JSON value"


def same_json(a: Any, b: Any) -> bool:
    """Whether two JSON values are equal as JSON (`true` is not `1`; `1` is `1.0`)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def frontmatter_differences(entry: dict[str, Any], parsed: dict[str, Any]) -> list[str]:
    """The fields whose values differ between an entry's frontmatter and the file's (a missing field is null)."""
    return sorted(k for k in entry.keys() | parsed.keys() if not same_json(entry.get(k), parsed.get(k)))
