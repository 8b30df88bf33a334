"""The client layer: `Client`, its multi round-trip driver, step mode, typed questions and typed results."""

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
