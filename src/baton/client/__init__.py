"""The client layer: `Client`, its multi round-trip driver, step mode, typed questions and typed results."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..forms import Accepted, Answer, Cancelled, Declined
    from .core import Client
    from .errors import ClientError, InvalidReply, MalformedQuestion
    from .questions import Question
    from .results import (
        AudioContent,
        CallToolResult,
        ContentBlock,
        EmbeddedResource,
        GetPromptResult,
        ImageContent,
        Prompt,
        PromptArgument,
        PromptMessage,
        ReadResourceResult,
        Resource,
        ResourceContents,
        ResourceLink,
        ResourceTemplate,
        TextContent,
        Tool,
        UnknownContent,
    )
    from .rounds import Round
    from .skills import Skill, SkillFileEntry, SkillVerificationError

# Each public name and the module it lives in: a name is imported on first use (PEP 562), so that a program
# that needs one submodule (`baton serve` needs `client.probe`'s era names) does not load the whole client.
_WHERE = {
    "Accepted": "..forms",
    "Answer": "..forms",
    "Cancelled": "..forms",
    "Declined": "..forms",
    "Client": ".core",
    "ClientError": ".errors",
    "InvalidReply": ".errors",
    "MalformedQuestion": ".errors",
    "Question": ".questions",
    "AudioContent": ".results",
    "CallToolResult": ".results",
    "ContentBlock": ".results",
    "EmbeddedResource": ".results",
    "GetPromptResult": ".results",
    "ImageContent": ".results",
    "Prompt": ".results",
    "PromptArgument": ".results",
    "PromptMessage": ".results",
    "ReadResourceResult": ".results",
    "Resource": ".results",
    "ResourceContents": ".results",
    "ResourceLink": ".results",
    "ResourceTemplate": ".results",
    "TextContent": ".results",
    "Tool": ".results",
    "UnknownContent": ".results",
    "Round": ".rounds",
    "Skill": ".skills",
    "SkillFileEntry": ".skills",
    "SkillVerificationError": ".skills",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))


__all__ = [
    "Accepted",
    "Answer",
    "AudioContent",
    "CallToolResult",
    "Cancelled",
    "Client",
    "ClientError",
    "ContentBlock",
    "Declined",
    "EmbeddedResource",
    "GetPromptResult",
    "ImageContent",
    "InvalidReply",
    "MalformedQuestion",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
    "Question",
    "ReadResourceResult",
    "Resource",
    "ResourceContents",
    "ResourceLink",
    "ResourceTemplate",
    "Round",
    "Skill",
    "SkillFileEntry",
    "SkillVerificationError",
    "TextContent",
    "Tool",
    "UnknownContent",
]
