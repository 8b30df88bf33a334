"""Typed results: what `call_tool`, `read_resource`, `get_prompt` and the lists return.

Each object is a typed view over the dict the server sent, which stays at hand as `.raw` (nothing is
copied or dropped, so fields this module does not know survive). Attributes read the raw dict when
asked for, so a result costs one object until you look inside it; content blocks, messages and
contents are parsed on first access and kept.

Every view is also a read-only `Mapping` over its raw dict: `result["content"][0]["text"]` and
`tool.get("name")`, which worked when these methods returned plain dicts, still work and still give
the raw values. New code should use the attributes (`result.text`, `result.content[0]`, `tool.name`).

Content blocks follow the spec's five kinds (`TextContent`, `ImageContent`, `AudioContent`,
`EmbeddedResource`, `ResourceLink`); a block of another kind is an `UnknownContent`, never an error.
A field of the wrong type reads as absent (`None`, `""` or empty), so a sloppy server cannot make an
attribute lie about its type.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Self, TypeAlias, overload


def base64_size(text: str) -> int:
    """How many bytes base64 `text` decodes to, from its length, without decoding."""
    return max(0, len(text) * 3 // 4 - text[-2:].count("="))


class RawView(Mapping[str, Any]):
    """A typed view over one raw MCP object; `.raw` is the dict as received, and item access reads it."""

    __slots__ = ("raw",)
    _shown: tuple[str, ...] = ()  # the attributes `repr` shows

    def __init__(self, raw: Mapping[str, Any]) -> None:
        if isinstance(raw, RawView):
            raw = raw.raw
        self.raw: dict[str, Any] = raw if isinstance(raw, dict) else dict(raw)

    @classmethod
    def from_raw(cls, raw: Mapping[str, Any]) -> Self:
        """The view over `raw` (for results from step mode, `drive` or `request`, which stay raw)."""
        return cls(raw)

    def __getitem__(self, key: str) -> Any:
        return self.raw[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.raw)

    def __len__(self) -> int:
        return len(self.raw)

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._shown)
        return f"{type(self).__name__}({shown})"

    @property
    def meta(self) -> dict[str, Any]:
        """The object's `_meta` (empty when it has none)."""
        return _dict(self.raw.get("_meta")) or {}

    def _str(self, key: str) -> str | None:
        value = self.raw.get(key)
        return value if isinstance(value, str) else None


class _OptText:
    """A string member of the raw dict, read when asked for: None when absent or not a string."""

    __slots__ = ("key",)

    def __init__(self, key: str) -> None:
        self.key = key

    @overload
    def __get__(self, view: None, owner: type) -> Self: ...
    @overload
    def __get__(self, view: RawView, owner: type) -> str | None: ...

    def __get__(self, view: RawView | None, owner: type) -> Self | str | None:
        if view is None:
            return self
        value = view.raw.get(self.key)
        return value if isinstance(value, str) else None


class _Text(_OptText):
    """A string member of the raw dict, read when asked for: "" when absent or not a string."""

    __slots__ = ()

    @overload
    def __get__(self, view: None, owner: type) -> Self: ...
    @overload
    def __get__(self, view: RawView, owner: type) -> str: ...

    def __get__(self, view: RawView | None, owner: type) -> Self | str:
        if view is None:
            return self
        value = view.raw.get(self.key)
        return value if isinstance(value, str) else ""


def _dict(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


# -- content blocks -----------------------------------------------------------------------------------------


class Content(RawView):
    """A content block (tool results, prompt messages); `type` says which kind."""

    __slots__ = ()

    type = _Text("type")

    @property
    def annotations(self) -> dict[str, Any] | None:
        return _dict(self.raw.get("annotations"))

    @property
    def text(self) -> str:
        """The block's text: a text block's text, an embedded text resource's text; otherwise empty."""
        return ""


class TextContent(Content):
    __slots__ = ()
    _shown = ("text",)

    text = _Text("text")


class _Media(Content):
    __slots__ = ()
    _shown = ("mime_type", "size")

    @property
    def data(self) -> str:
        """The base64 text as sent."""
        return self._str("data") or ""

    mime_type = _OptText("mimeType")

    @property
    def size(self) -> int:
        """How many bytes `data` decodes to (computed from its length, without decoding)."""
        return base64_size(self.data)

    def decode(self) -> bytes:
        """The bytes; raises `binascii.Error` if the server sent invalid base64."""
        return base64.b64decode(self.data, validate=True)


class ImageContent(_Media):
    __slots__ = ()


class AudioContent(_Media):
    __slots__ = ()


class ResourceContents(RawView):
    """One resource's contents: text (`text` set) or binary (`blob`, base64), with its URI and MIME type."""

    __slots__ = ()
    _shown = ("uri", "mime_type")

    uri = _Text("uri")

    mime_type = _OptText("mimeType")

    text = _OptText("text")

    blob = _OptText("blob")

    @property
    def data(self) -> bytes:
        """The contents as bytes: the blob decoded, or the text in UTF-8."""
        if self.blob is not None:
            return base64.b64decode(self.blob, validate=True)
        return (self.text or "").encode()


class EmbeddedResource(Content):
    __slots__ = ()
    _shown = ("resource",)

    @property
    def resource(self) -> ResourceContents:
        return ResourceContents(_dict(self.raw.get("resource")) or {})

    @property
    def text(self) -> str:
        return self.resource.text or ""


class ResourceLink(Content):
    __slots__ = ()
    _shown = ("uri", "name")

    uri = _Text("uri")

    name = _Text("name")

    title = _OptText("title")

    description = _OptText("description")

    mime_type = _OptText("mimeType")


class UnknownContent(Content):
    """A block of a kind this client does not know; `.raw` has all of it."""

    __slots__ = ()
    _shown = ("type",)


ContentBlock: TypeAlias = TextContent | ImageContent | AudioContent | EmbeddedResource | ResourceLink | UnknownContent
_KINDS: dict[str, Callable[[Mapping[str, Any]], ContentBlock]] = {
    "text": TextContent,
    "image": ImageContent,
    "audio": AudioContent,
    "resource": EmbeddedResource,
    "resource_link": ResourceLink,
}


def content_block(raw: Mapping[str, Any]) -> ContentBlock:
    """The typed block for one raw content dict."""
    kind = raw.get("type")
    return _KINDS.get(kind, UnknownContent)(raw) if isinstance(kind, str) else UnknownContent(raw)


def _blocks(value: Any) -> list[ContentBlock]:
    return [content_block(item) for item in _dicts(value)]


def _joined(texts: Iterator[str]) -> str:
    return "\n".join(text for text in texts if text)


# -- results of the three multi round-trip requests ---------------------------------------------------------


class CallToolResult(RawView):
    """What `call_tool` returns: `content` blocks, `structured` content, `is_error`, and `text`."""

    __slots__ = ("_content",)
    _shown = ("content", "structured", "is_error")

    def __init__(self, raw: Mapping[str, Any]) -> None:
        super().__init__(raw)
        self._content: list[ContentBlock] | None = None

    @property
    def content(self) -> list[ContentBlock]:
        if self._content is None:
            self._content = _blocks(self.raw.get("content"))
        return self._content

    @property
    def structured(self) -> Any:
        """`structuredContent` (any JSON value), or None when the tool sent none."""
        return self.raw.get("structuredContent")

    @property
    def is_error(self) -> bool:
        """Whether the tool reported an error (`isError`); the error's text is in `content`."""
        return self.raw.get("isError") is True

    @property
    def text(self) -> str:
        """The text of the text blocks (and of embedded text resources), one block per line."""
        return _joined(block.text for block in self.content)


class ReadResourceResult(RawView):
    """What `read_resource` returns: `contents` (one or more), and `text`."""

    __slots__ = ("_contents",)
    _shown = ("contents",)

    def __init__(self, raw: Mapping[str, Any]) -> None:
        super().__init__(raw)
        self._contents: list[ResourceContents] | None = None

    @property
    def contents(self) -> list[ResourceContents]:
        if self._contents is None:
            self._contents = [ResourceContents(item) for item in _dicts(self.raw.get("contents"))]
        return self._contents

    @property
    def text(self) -> str:
        """The text of the text contents, one per line (binary contents are left out)."""
        return _joined(item.text or "" for item in self.contents)


class PromptMessage(RawView):
    """One message of a prompt: `role` (`"user"` or `"assistant"`) and one `content` block."""

    __slots__ = ()
    _shown = ("role", "content")

    role = _Text("role")

    @property
    def content(self) -> ContentBlock:
        return content_block(_dict(self.raw.get("content")) or {})

    @property
    def text(self) -> str:
        return self.content.text


class GetPromptResult(RawView):
    """What `get_prompt` returns: `description`, `messages`, and `text`."""

    __slots__ = ("_messages",)
    _shown = ("description", "messages")

    def __init__(self, raw: Mapping[str, Any]) -> None:
        super().__init__(raw)
        self._messages: list[PromptMessage] | None = None

    description = _OptText("description")

    @property
    def messages(self) -> list[PromptMessage]:
        if self._messages is None:
            self._messages = [PromptMessage(item) for item in _dicts(self.raw.get("messages"))]
        return self._messages

    @property
    def text(self) -> str:
        """The text of the messages, one per line."""
        return _joined(message.text for message in self.messages)


# -- descriptors from the lists -----------------------------------------------------------------------------


class _Described(RawView):
    __slots__ = ()

    name = _Text("name")

    title = _OptText("title")

    description = _OptText("description")

    @property
    def icons(self) -> list[dict[str, Any]]:
        return _dicts(self.raw.get("icons"))


class Tool(_Described):
    """A tool from `list_tools`: `name`, `title`, `description`, `input_schema`, `output_schema`, `annotations`."""

    __slots__ = ()
    _shown = ("name",)

    @property
    def input_schema(self) -> dict[str, Any]:
        return _dict(self.raw.get("inputSchema")) or {"type": "object"}

    @property
    def output_schema(self) -> dict[str, Any] | None:
        return _dict(self.raw.get("outputSchema"))

    @property
    def annotations(self) -> dict[str, Any]:
        """Hints such as `readOnlyHint` and `destructiveHint` (empty when the tool has none)."""
        return _dict(self.raw.get("annotations")) or {}

    @property
    def task_support(self) -> str:
        """`execution.taskSupport`: "optional" or "required" for a tool that runs as a task, else "forbidden"."""
        support = (_dict(self.raw.get("execution")) or {}).get("taskSupport")
        return support if support in ("optional", "required") else "forbidden"


class PromptArgument(RawView):
    """One argument a prompt takes (prompt arguments are strings)."""

    __slots__ = ()
    _shown = ("name", "required")

    name = _Text("name")

    description = _OptText("description")

    @property
    def required(self) -> bool:
        return self.raw.get("required") is True


class Prompt(_Described):
    """A prompt from `list_prompts`: `name`, `title`, `description`, `arguments`."""

    __slots__ = ()
    _shown = ("name", "arguments")

    @property
    def arguments(self) -> list[PromptArgument]:
        return [PromptArgument(item) for item in _dicts(self.raw.get("arguments"))]


class Resource(_Described):
    """A resource from `list_resources`: `uri`, `name`, `title`, `description`, `mime_type`, `size`."""

    __slots__ = ()
    _shown = ("uri", "name")

    uri = _Text("uri")

    mime_type = _OptText("mimeType")

    @property
    def size(self) -> int | None:
        size = self.raw.get("size")
        return size if isinstance(size, int) and not isinstance(size, bool) else None


class ResourceTemplate(_Described):
    """A resource template from `list_resource_templates`: `uri_template` (RFC 6570), `name`, `mime_type`."""

    __slots__ = ()
    _shown = ("uri_template", "name")

    uri_template = _Text("uriTemplate")

    mime_type = _OptText("mimeType")


__all__ = [
    "AudioContent",
    "CallToolResult",
    "Content",
    "ContentBlock",
    "EmbeddedResource",
    "GetPromptResult",
    "ImageContent",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
    "RawView",
    "ReadResourceResult",
    "Resource",
    "ResourceContents",
    "ResourceLink",
    "ResourceTemplate",
    "TextContent",
    "Tool",
    "UnknownContent",
    "content_block",
]
