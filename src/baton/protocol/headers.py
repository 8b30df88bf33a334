"""The Streamable HTTP standard headers: value encoding and checks against the body (MCP 2026-07-28)."""

from __future__ import annotations

import base64
import binascii
import functools
import re
from typing import Any

from .constants import NAME_PARAM, REQUEST_METHODS, SUPPORTED_VERSIONS
from .errors import HEADER_MISMATCH, McpError

_B64_PREFIX = "=?base64?"
_B64_SUFFIX = "?="
_PLAIN = re.compile(r"[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?\Z")
_VISIBLE = re.compile(r"[\x20-\x7e]*\Z")
_DECIMAL = re.compile(r"-?[0-9]+\Z")
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+\Z")


class Headers:
    """HTTP request headers as the transport received them (lowercase names), decoded on lookup."""

    __slots__ = ("raw",)

    def __init__(self, raw: dict[bytes, bytes]) -> None:
        self.raw = raw

    @classmethod
    def of(cls, items: dict[str, str]) -> Headers:
        return cls({k.lower().encode("latin-1"): v.encode("latin-1") for k, v in items.items()})

    def get(self, name: str, default: str | None = None) -> str | None:
        value = self.raw.get(name.encode("latin-1"))
        return default if value is None else value.decode("latin-1")

    def __contains__(self, name: str) -> bool:
        return name.encode("latin-1") in self.raw

    def to_dict(self) -> dict[str, str]:
        return {k.decode("latin-1"): v.decode("latin-1") for k, v in self.raw.items()}


def encode_value(value: str) -> str:
    """Encode a header value, with the `=?base64?…?=` form when it is not plain visible ASCII."""
    if value and _PLAIN.match(value) and not value.startswith(_B64_PREFIX):
        return value
    return _B64_PREFIX + base64.b64encode(value.encode()).decode() + _B64_SUFFIX


def decode_value(raw: str) -> str:
    """Decode a header value; raises ValueError when it is malformed."""
    value = raw.strip(" \t")
    # Only a value with both markers is encoded; anything else is taken literally.
    if value.startswith(_B64_PREFIX) and value.endswith(_B64_SUFFIX) and len(value) >= 11:
        try:
            data = base64.b64decode(value[len(_B64_PREFIX) : -len(_B64_SUFFIX)], validate=True)
            return data.decode()
        except (binascii.Error, UnicodeDecodeError) as exc:
            raise ValueError(f"invalid base64 header value: {exc}") from None
    if not _VISIBLE.match(value):
        raise ValueError("header value has characters outside visible ASCII")
    return value


def header_text(value: Any) -> str | None:
    """The header form of an argument value (None: no header is expected for it)."""
    if value is None:
        return None
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return value
    return None


def valid_header_name(name: Any) -> bool:
    """Whether an `x-mcp-header` annotation is a usable RFC 9110 token."""
    return isinstance(name, str) and bool(_TOKEN.match(name))


def _mismatch(message: str) -> McpError:
    return McpError(HEADER_MISMATCH, f"Header mismatch: {message}")


def _must_match(raw: dict[bytes, bytes], key: bytes, name: str, body_value: str) -> None:
    """Raise -32020 unless the header `name` is present and equals the body's value (spaces trimmed)."""
    value = raw.get(key)
    if value is None:
        raise _mismatch(f"the {name} header is required")
    header_value = value.decode("latin-1").strip()
    if header_value != body_value:
        raise _mismatch(f"{name} header value {header_value!r} does not match body value {body_value!r}")


def check_standard(headers: Headers, method: str, params: dict[str, Any], version: str) -> None:
    """Raise -32020 when MCP-Protocol-Version, Mcp-Method or Mcp-Name are missing or disagree."""
    raw = headers.raw
    # The usual request, decided by three dict lookups: both headers exactly as the body says.
    if _EXACT.get(raw.get(b"mcp-protocol-version")) != version or _EXACT.get(raw.get(b"mcp-method")) != method:
        # protocol.md P3: a modern-only server answers a missing version header with -32020.
        _must_match(raw, b"mcp-protocol-version", "MCP-Protocol-Version", version)
        _must_match(raw, b"mcp-method", "Mcp-Method", method)
    member = NAME_PARAM.get(method)
    if member is None:
        return
    value = raw.get(b"mcp-name")
    if value is None:
        raise _mismatch(f"the Mcp-Name header is required for {method}")
    body_name = params.get(member)
    try:
        name = _decoded_name(value)
    except ValueError as exc:
        raise _mismatch(f"Mcp-Name: {exc}") from None
    if name != body_name:
        raise _mismatch(f"Mcp-Name header value {name!r} does not match body value {body_name!r}")


# The header values that decode to themselves (no spaces to trim): the versions and methods a client sends.
_EXACT: dict[bytes | None, str] = {v.encode(): v for v in (*SUPPORTED_VERSIONS, *REQUEST_METHODS)}


@functools.lru_cache(maxsize=1024)  # by raw value: the same few names come again and again
def _decoded_name(value: bytes) -> str:
    return decode_value(value.decode("latin-1"))


def argument_at(arguments: Any, path: tuple[str, ...]) -> Any:
    """The argument at `path` (an `x-mcp-header` property's place in the arguments), or None."""
    value = arguments
    for part in path:
        value = value.get(part) if isinstance(value, dict) else None
    return value


def check_params(headers: Headers, arguments: dict[str, Any], specs: dict[str, tuple[str, ...]]) -> None:
    """Raise -32020 when an `Mcp-Param-*` header is missing, malformed or differs from its argument.

    `specs` maps a lowercased header suffix to the path of the argument it mirrors.
    """
    for suffix, path in specs.items():
        value = argument_at(arguments, path)
        expected = header_text(value)
        raw = headers.get("mcp-param-" + suffix)
        if expected is None:
            continue  # a null or absent argument means no header is expected
        if raw is None:
            raise _mismatch(f"the Mcp-Param-{suffix} header is required when the argument is present")
        try:
            got = decode_value(raw)
        except ValueError as exc:
            raise _mismatch(f"Mcp-Param-{suffix}: {exc}") from None
        if got == expected:
            continue
        # Integers compare numerically ("007" is 7), but only as ASCII decimal digits.
        if isinstance(value, int) and not isinstance(value, bool) and _DECIMAL.match(got) and int(got) == value:
            continue
        raise _mismatch(f"Mcp-Param-{suffix} header value {got!r} does not match body value {expected!r}")


def header_param_specs(input_schema: dict[str, Any]) -> dict[str, tuple[str, ...]]:
    """The `x-mcp-header` annotations of a tool's input schema, validated; raises ValueError if invalid."""
    specs: dict[str, tuple[str, ...]] = {}

    def walk(schema: Any, path: tuple[str, ...]) -> None:
        if not isinstance(schema, dict):
            return
        for key, sub in (schema.get("properties") or {}).items():
            if not isinstance(sub, dict):
                continue
            here = (*path, key)
            if "x-mcp-header" in sub:
                name = sub["x-mcp-header"]
                if not valid_header_name(name):
                    raise ValueError(f"x-mcp-header {name!r} on {'.'.join(here)} is not an RFC 9110 token")
                if sub.get("type") not in ("string", "integer", "boolean"):
                    raise ValueError(f"x-mcp-header on {'.'.join(here)} needs type string, integer or boolean")
                if name.lower() in specs:
                    raise ValueError(f"x-mcp-header {name!r} is used twice (names ignore case)")
                specs[name.lower()] = here
            walk(sub, here)

    walk(input_schema, ())
    return specs


__all__ = [
    "Headers",
    "check_params",
    "check_standard",
    "decode_value",
    "encode_value",
    "header_param_specs",
    "header_text",
    "valid_header_name",
]
