"""The client layer: `Client`, its multi round-trip driver, step mode, typed questions and typed results."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy_exports import lazy_exports

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

# Each public name and the module it lives in, imported on first use (baton.lazy_exports): `baton serve` needs
# `client.probe`'s era names, not the whole client.
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


__getattr__, __dir__ = lazy_exports(__name__, _WHERE)

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
