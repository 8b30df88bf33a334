"""Turning what a handler returns into the result shapes of the wire."""

from __future__ import annotations

import base64
import dataclasses
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..content import text

_BLOCK_TYPES = frozenset({"text", "image", "audio", "resource", "resource_link"})


class ToolError(Exception):
    """Raise from a tool to return `isError: true` with this message, so the model can correct itself."""


@dataclass(slots=True)
class ToolResult:
    """An explicit tool result: content blocks, optional structured content, and the error flag."""

    content: list[dict[str, Any]] = field(default_factory=list)
    structured: Any = None
    is_error: bool = False


def _is_block(value: Any) -> bool:
    return isinstance(value, dict) and value.get("type") in _BLOCK_TYPES


def to_jsonable(value: Any) -> Any:
    """A JSON-compatible form of dataclasses, pydantic models and plain values."""
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return orjson.loads(orjson.dumps(value))
    return value


def structured_tool_result(value: Any) -> dict[str, Any]:
    """The CallToolResult of a tool with an output schema: also `structuredContent`."""
    return tool_result(value, True)


def tool_result(value: Any, structured: bool = False) -> dict[str, Any]:
    """The CallToolResult for a tool's return value."""
    if isinstance(value, ToolResult):
        out: dict[str, Any] = {"resultType": "complete", "content": value.content}
        if value.structured is not None:
            out["structuredContent"] = to_jsonable(value.structured)
        if value.is_error:
            out["isError"] = True
        return _sendable(out)
    if isinstance(value, str):
        return {"resultType": "complete", "content": [{"type": "text", "text": value}]}
    if _is_block(value):
        return _sendable({"resultType": "complete", "content": [value]})
    if isinstance(value, list) and value and all(_is_block(v) for v in value):
        return _sendable({"resultType": "complete", "content": value})
    if value is None:
        return {"resultType": "complete", "content": []}
    data = to_jsonable(value)
    out = {"resultType": "complete", "content": [text(orjson.dumps(data).decode())]}
    if structured:
        out["structuredContent"] = data
    return out


def _sendable(result: dict[str, Any]) -> dict[str, Any]:
    """`result`, once known to encode: blocks and a `ToolResult` are the author's dicts, and a value the
    transport could not encode would fail there, where no one knows which tool returned it."""
    orjson.dumps(result)  # raises orjson.JSONEncodeError (a TypeError), which the replay engine reports
    return result


def error_result(message: str) -> dict[str, Any]:
    return {"resultType": "complete", "content": [text(message)], "isError": True}


def resource_contents(uri: str, value: Any, mime_type: str | None) -> list[dict[str, Any]]:
    """The `contents` of a ReadResourceResult for a resource handler's return value."""
    if isinstance(value, list) and all(isinstance(v, dict) and "uri" in v for v in value):
        return value
    if isinstance(value, dict) and "uri" in value and ("text" in value or "blob" in value):
        return [value]
    item: dict[str, Any] = {"uri": uri}
    if mime_type is not None:
        item["mimeType"] = mime_type
    if isinstance(value, (bytes, bytearray)):
        item["blob"] = base64.b64encode(value).decode()
    elif isinstance(value, str):
        item["text"] = value
    else:
        item["text"] = orjson.dumps(to_jsonable(value)).decode()
        item.setdefault("mimeType", "application/json")
    return [item]


def prompt_result(value: Any, description: str | None) -> dict[str, Any]:
    """The GetPromptResult for a prompt handler's return value."""
    if isinstance(value, dict) and "messages" in value:
        out = {"resultType": "complete", **value}
    else:
        if isinstance(value, str):
            messages = [{"role": "user", "content": text(value)}]
        elif isinstance(value, dict):
            messages = [value]
        else:
            messages = list(value)
        out = {"resultType": "complete", "messages": messages}
    if description is not None:
        out.setdefault("description", description)
    return out


async def ready(result: dict[str, Any]) -> dict[str, Any]:
    """A result already known, as the coroutine a method handler (or the replay engine) returns."""
    return result
