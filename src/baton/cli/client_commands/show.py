"""What the client subcommands print: results for people, or the MCP result as JSON for scripts.

For people, text from the server is printed with control and invisible characters escaped (newlines
and tabs kept), so a result cannot move the cursor or repaint the terminal; binary content is named
with its MIME type and size, never written out. `--json` prints the raw result instead, indented.
While a request runs, the server's progress notifications are shown on stderr (`Notices`): asking for
them also makes the response a stream, which Ctrl-C closes, and closing it cancels the request on the
server (protocol.md P93).
"""

from __future__ import annotations

import sys
import unicodedata
from collections.abc import Sequence
from typing import Any

import orjson

from ...client import (
    AudioContent,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    GetPromptResult,
    ImageContent,
    Prompt,
    ReadResourceResult,
    Resource,
    ResourceContents,
    ResourceLink,
    ResourceTemplate,
    Skill,
    TextContent,
    Tool,
)
from ...client.results import base64_size
from ...render import TerminalRenderer


def safe(text: str) -> str:
    """Server text made safe to print: controls and invisible characters as `\\uXXXX`, newlines and tabs kept."""
    if text.isprintable():
        return text
    return "".join(
        f"\\u{ord(c):04x}" if c not in "\n\t" and unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") else c
        for c in text
    )


def out(text: str = "") -> None:
    sys.stdout.write(safe(text) + "\n")


def as_json(value: Any) -> None:
    sys.stdout.write(orjson.dumps(value, option=orjson.OPT_INDENT_2).decode() + "\n")


def first_line(text: str | None) -> str:
    return text.strip().splitlines()[0] if text and text.strip() else ""


# -- lists ---------------------------------------------------------------------------------------------------


def tools(items: Sequence[Tool]) -> None:
    """Each tool as `name(param: type, optional?: type)`: a parameter the schema does not require gets a `?`,
    as `prompts` marks an argument that is not required."""
    for tool in items:
        props = tool.input_schema.get("properties")
        props = props if isinstance(props, dict) else {}
        required = tool.input_schema.get("required")
        required = required if isinstance(required, list) else []
        params = ", ".join(
            f"{name}{'' if name in required else '?'}: {p.get('type', 'any') if isinstance(p, dict) else 'any'}"
            for name, p in props.items()
        )
        out(f"{tool.name}({params})")
        if first_line(tool.description):
            out(f"    {first_line(tool.description)}")


def resources(items: Sequence[Resource], templates: Sequence[ResourceTemplate]) -> None:
    for resource in items:
        kind = f" ({resource.mime_type})" if resource.mime_type else ""
        out(f"{resource.uri}  {resource.name}{kind}")
        if first_line(resource.description):
            out(f"    {first_line(resource.description)}")
    if templates:
        if items:
            out()
        out("Resource templates (read them with the variables filled in):")
    for template in templates:
        kind = f" ({template.mime_type})" if template.mime_type else ""
        out(f"{template.uri_template}  {template.name}{kind}")
        if first_line(template.description):
            out(f"    {first_line(template.description)}")


def prompts(items: Sequence[Prompt]) -> None:
    for prompt in items:
        params = ", ".join(a.name if a.required else f"{a.name}?" for a in prompt.arguments)
        out(f"{prompt.name}({params})")
        if first_line(prompt.description):
            out(f"    {first_line(prompt.description)}")


def skills(items: Sequence[Skill]) -> None:
    for skill in items:
        files = "dynamic files" if skill.files is None else f"{len(skill.files)} file{'s' * (len(skill.files) != 1)}"
        out(f"{skill.name}  {skill.uri} ({files})")
        if first_line(skill.description):
            out(f"    {first_line(skill.description)}")


# -- results ---------------------------------------------------------------------------------------------------


def _size(size: int, mime_type: str | None) -> str:
    return f"{mime_type or 'unknown type'}, {size} bytes"


def contents(item: ResourceContents, *, heading: bool = False) -> None:
    if heading:
        out(f"[resource {item.uri}]")
    if item.text is not None:
        out(item.text)
    elif item.blob is not None:
        out(f"[binary {_size(base64_size(item.blob), item.mime_type)}]")


def block(item: ContentBlock) -> None:
    if isinstance(item, TextContent):
        out(item.text)
    elif isinstance(item, ImageContent | AudioContent):
        out(f"[{item.type} {_size(item.size, item.mime_type)}]")
    elif isinstance(item, EmbeddedResource):
        contents(item.resource, heading=True)
    elif isinstance(item, ResourceLink):
        out(f"[link {item.uri}{f'  {item.name}' if item.name else ''}]")
    else:
        out(f"[{item.type or 'untyped'} content]")


def tool_result(result: CallToolResult) -> None:
    for item in result.content:
        block(item)
    if result.structured is not None and not result.content:
        out(orjson.dumps(result.structured, option=orjson.OPT_INDENT_2).decode())


def resource_result(result: ReadResourceResult) -> None:
    for item in result.contents:
        contents(item, heading=len(result.contents) > 1)


def skill(item: Skill, text: str) -> None:
    """A skill's SKILL.md (verified), then its other files, which are fetched only when a host needs them."""
    out(text.rstrip("\n"))
    others = [f for f in item.files or () if f.uri != item.uri]
    if others:
        out()
        out("Its other files (listed, not fetched):")
    for file in others:
        out(f"    {file.uri}  {file.size} bytes")


def prompt_result(result: GetPromptResult) -> None:
    for message in result.messages:
        out(f"[{message.role}]")
        block(message.content)


class Notices:
    """The progress callback of a request: each progress notification as one line on stderr, written
    between the renderer's questions (never into an open prompt, protocol.md P92)."""

    def __init__(self, renderer: TerminalRenderer) -> None:
        self.renderer = renderer

    async def __call__(self, message: dict[str, Any]) -> None:
        params = message.get("params")
        if message.get("method") != "notifications/progress" or not isinstance(params, dict):
            return
        done, total, note = params.get("progress"), params.get("total"), params.get("message")
        shown = f"{done:g}" if isinstance(done, (int, float)) else "?"
        if isinstance(total, (int, float)):
            shown += f"/{total:g}"
        if isinstance(note, str) and note:
            shown += f" {safe(note)}"
        self.renderer.between_dialogs(f"... {shown}")


class TaskLines:
    """The task watcher of `baton call` (protocol.md P173): a line on stderr each time the task's status or
    status message changes, between the renderer's questions."""

    def __init__(self, renderer: TerminalRenderer) -> None:
        self.renderer = renderer
        self._last: tuple[Any, Any] | None = None

    def __call__(self, task: dict[str, Any]) -> None:
        now = (task.get("status"), task.get("statusMessage"))
        if now == self._last:
            return
        self._last = now
        status, note = now
        line = f"... task {safe(str(task.get('taskId', '?'))[:8])}: {safe(str(status))}"
        if isinstance(note, str) and note:
            line += f" - {safe(note)}"
        self.renderer.between_dialogs(line)
