"""Content blocks and prompt messages a handler may return (MCP Tools, Prompts)."""

from __future__ import annotations

import base64
from typing import Any, Literal

Block = dict[str, Any]

__all__ = ["Block", "assistant", "audio", "embedded", "image", "message", "resource_link", "text", "user"]


def _data(data: bytes | str) -> str:
    return base64.b64encode(data).decode() if isinstance(data, bytes) else data


def text(value: str, **extra: Any) -> Block:
    return {"type": "text", "text": value, **extra}


def image(data: bytes | str, mime_type: str, **extra: Any) -> Block:
    """An image block; `data` is raw bytes or already base64 text."""
    return {"type": "image", "data": _data(data), "mimeType": mime_type, **extra}


def audio(data: bytes | str, mime_type: str, **extra: Any) -> Block:
    """An audio block; `data` is raw bytes or already base64 text."""
    return {"type": "audio", "data": _data(data), "mimeType": mime_type, **extra}


def embedded(uri: str, *, text: str | None = None, blob: bytes | None = None, mime_type: str | None = None) -> Block:
    """An embedded resource block carrying either text or binary contents."""
    resource: dict[str, Any] = {"uri": uri}
    if mime_type is not None:
        resource["mimeType"] = mime_type
    if blob is not None:
        resource["blob"] = base64.b64encode(blob).decode()
    else:
        resource["text"] = text if text is not None else ""
    return {"type": "resource", "resource": resource}


def resource_link(uri: str, name: str, **extra: Any) -> Block:
    return {"type": "resource_link", "uri": uri, "name": name, **extra}


def message(role: Literal["user", "assistant"], content: Block | str) -> dict[str, Any]:
    """A prompt message; a string becomes a text block."""
    return {"role": role, "content": text(content) if isinstance(content, str) else content}


def user(content: Block | str) -> dict[str, Any]:
    return message("user", content)


def assistant(content: Block | str) -> dict[str, Any]:
    return message("assistant", content)
