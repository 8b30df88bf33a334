"""Everything: the server the official MCP conformance suite tests, written only with Baton's public API.

Run it:   baton serve examples/everything.py --http 127.0.0.1:3101
Then:     python tools/conformance.py server http://127.0.0.1:3101/mcp
          python tools/conformance.py server http://127.0.0.1:3101/mcp --spec-version 2025-11-25

It exposes the suite's fixture tools, resources and prompts (their names are fixed by the suite),
plus `perform(action)`, the tool the benchmarks drive: one boolean confirmation, then `done: <action>`.

One set of handlers serves both protocol versions (protocol.md P28). A 2026-07-28 client gets each
ask inside an `input_required` result and retries; in a 2025-11-25 session the server sends the ask
as a request on the call's own stream and runs the next round itself (P29). Either way a handler
replays from the top on every round, so what it does before an ask (a log line, progress) happens
again in the next round; the fixtures that ask do nothing before their ask.
"""

from __future__ import annotations

import asyncio
import base64
import secrets
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from baton import (
    Accepted,
    Cancelled,
    CapabilityMissing,
    Choice,
    Context,
    Declined,
    EnumField,
    Field,
    MultiSelectField,
    Param,
    Server,
    ToolError,
    content,
    form,
)

server = Server(
    "baton-everything",
    "0.1.0",
    instructions="Conformance fixtures for MCP 2026-07-28 and 2025-11-25, plus perform(action) for benchmarks.",
)

# A 1x1 transparent PNG and a short silent WAV, for the image and audio fixtures.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)
WAV = base64.b64decode("UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=")


# -- the benchmark tool ------------------------------------------------------------------------------


@server.tool()
async def perform(ctx: Context, action: str) -> str:
    """Perform an action after the user confirms it."""
    if not await ctx.confirm(f"Really perform {action!r}?"):
        return f"not confirmed: {action}"
    return f"done: {action}"


@server.tool(single_use=True)
async def perform_once(ctx: Context, action: str) -> str:
    """`perform`, single-use: each round runs at most once, and a duplicate gets the same reply.

    The result carries a fresh random id each time the body runs, so a replay that re-ran it would show.
    """
    if not await ctx.confirm(f"Really perform {action!r}, once?"):
        return f"not confirmed: {action}"
    return f"done: {action} (run {secrets.token_hex(8)})"


# -- content fixtures --------------------------------------------------------------------------------


@server.tool()
def test_simple_text() -> str:
    """Returns a simple text block."""
    return "This is a simple text response for testing."


@server.tool()
def test_image_content() -> dict[str, Any]:
    """Returns an image block."""
    return content.image(PNG, "image/png")


@server.tool()
def test_audio_content() -> dict[str, Any]:
    """Returns an audio block."""
    return content.audio(WAV, "audio/wav")


@server.tool()
def test_embedded_resource() -> dict[str, Any]:
    """Returns an embedded text resource."""
    return content.embedded(
        "test://embedded-resource", text="This is an embedded resource content.", mime_type="text/plain"
    )


@server.tool()
def test_multiple_content_types() -> list[dict[str, Any]]:
    """Returns text, an image and an embedded resource."""
    return [
        content.text("Multiple content types test:"),
        content.image(PNG, "image/png"),
        content.embedded(
            "test://mixed-content-resource",
            text='{"test": "data", "value": 123}',
            mime_type="application/json",
        ),
    ]


@server.tool()
def test_error_handling() -> str:
    """Always fails, as a tool error the model can see."""
    raise ToolError("This tool intentionally returns an error for testing")


@server.tool()
async def test_tool_with_progress(ctx: Context) -> str:
    """Reports progress 0, 50, 100 of 100."""
    for step in (0, 50, 100):
        await ctx.progress(step, 100, f"step {step}")
        if step < 100:
            await asyncio.sleep(0.05)
    return "Progress test completed"


async def _log_three(ctx: Context, logger: str, pause_s: float) -> None:
    """Three info lines, `pause_s` apart. A 2026-07-28 client sees them only if it sent the deprecated
    logLevel; a 2025-11-25 session sees them at or above its logging/setLevel (every level until set)."""
    lines = ("Tool execution started", "Tool processing data", "Tool execution completed")
    for i, text in enumerate(lines):
        if i:
            await asyncio.sleep(pause_s)
        await ctx.log("info", text, logger=logger)


@server.tool()
async def test_logging_tool(ctx: Context) -> str:
    """Logs three messages; the client sees them only if it asked with the deprecated logLevel."""
    await _log_three(ctx, "test_logging_tool", 0.01)
    return "Logging test completed"


@server.tool()
async def test_tool_with_logging(ctx: Context) -> str:
    """Logs three info messages about 50 ms apart (the suite's 2025-11-25 logging fixture)."""
    await _log_three(ctx, "test_tool_with_logging", 0.05)
    return "Tool with logging completed"


@server.tool()
async def test_reconnection() -> str:
    """Answers after a short pause: a client whose stream drops meanwhile resumes it and still gets this."""
    await asyncio.sleep(0.2)
    return "Reconnection test completed"


@server.tool()
async def test_missing_capability(ctx: Context) -> str:
    """Needs sampling; without it the request fails with -32021 (the ask never reaches the wire)."""
    answer = await ctx.sample("Say hello", max_tokens=20)
    return f"model said: {answer.get('content')}"


@server.tool()
async def test_streaming_elicitation(ctx: Context) -> str:
    """Asks for a name the 2026-07-28 way: inside the result, never as a request on the response stream."""
    answer = await ctx.elicit(Name, "What is your name?", key="user_name")
    return f"Hello, {answer.data.name}!" if isinstance(answer, Accepted) else "Hello, stranger!"


@server.tool()
def test_trigger_tool_change() -> str:
    """Adds and removes a tool, so listen streams hear tools/list_changed."""

    def temporary_tool() -> str:
        return "temporary"

    server.add_tool(temporary_tool)
    server.remove_tool("temporary_tool")
    return "Tool list changed"


@server.tool()
def test_trigger_prompt_change() -> str:
    """Adds and removes a prompt, so listen streams hear prompts/list_changed."""

    def temporary_prompt() -> str:
        return "temporary"

    server.add_prompt(temporary_prompt)
    server.remove_prompt("temporary_prompt")
    return "Prompt list changed"


@server.tool(
    input_schema={
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addr",
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
            }
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contact": {"anyOf": [{"type": "string", "format": "email"}, {"type": "string", "pattern": "^\\+"}]},
            "kind": {"type": "string"},
        },
        "allOf": [{"required": ["name"]}, {"anyOf": [{"required": ["contact"]}, {"required": ["address"]}]}],
        "if": {"properties": {"kind": {"const": "business"}}},
        "then": {"required": ["address"]},
        "else": {},
        "additionalProperties": False,
    }
)
def json_schema_2020_12_tool(**arguments: Any) -> str:
    """Publishes a JSON Schema 2020-12 input schema with $defs, $anchor, composition and if/then/else."""
    return f"received: {sorted(arguments)}"


@server.tool()
def test_x_mcp_header(region: Annotated[str, Param("Deployment region", header="Region")]) -> str:
    """Its region argument travels in the Mcp-Param-Region header too."""
    return f"region: {region}"


# -- asks (2025-11-25 sends them as server requests; 2026-07-28 as input_required) ---------------------


@form
@dataclass
class UserInfo:
    username: Annotated[str, Field(description="User's response")]
    email: Annotated[str, Field(description="User's email address")]


@form
@dataclass
class Defaults:
    """Every primitive field with a default the client pre-fills (SEP-1034)."""

    name: str = "John Doe"
    age: int = 30
    score: float = 95.5
    status: Literal["active", "inactive", "pending"] = "active"
    verified: bool = True


# The five enum shapes (SEP-1330), as an explicit field list: untitled, titled, the deprecated enumNames,
# and the two multi-selects.
ENUMS = [
    EnumField(name="untitledSingle", values=["option1", "option2", "option3"]),
    EnumField(
        name="titledSingle",
        values=[Choice("value1", "First Option"), Choice("value2", "Second Option"), Choice("value3", "Third Option")],
    ),
    EnumField(
        name="legacyEnum",
        values=[Choice("opt1", "Option One"), Choice("opt2", "Option Two"), Choice("opt3", "Option Three")],
        legacy_titles=True,
    ),
    MultiSelectField(name="untitledMulti", values=["option1", "option2", "option3"]),
    MultiSelectField(
        name="titledMulti",
        values=[Choice("value1", "First Choice"), Choice("value2", "Second Choice"), Choice("value3", "Third Choice")],
    ),
]


def _outcome(answer: Accepted[Any] | Declined | Cancelled) -> str:
    if isinstance(answer, Accepted):
        data = answer.data if isinstance(answer.data, dict) else asdict(answer.data)
        return f"action=accept, content={data}"
    return "action=decline" if isinstance(answer, Declined) else "action=cancel"


@server.tool()
async def test_sampling(ctx: Context, prompt: Annotated[str, Param("The prompt to send to the model")]) -> str:
    """Asks the client's model to answer the prompt (deprecated sampling, kept for compatibility)."""
    answer = await ctx.sample(prompt, max_tokens=100, key="sampling")
    return f"LLM response: {_text_of(answer)}"


@server.tool()
async def test_elicitation(ctx: Context, message: Annotated[str, Param("The message to show the user")]) -> str:
    """Asks the user for a username and an email address."""
    answer = await ctx.elicit(UserInfo, message, key="user_info")
    return f"User response: {_outcome(answer)}"


@server.tool()
async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
    """Asks a form whose every field has a default: a string, an integer, a number, an enum and a boolean."""
    answer = await ctx.elicit(Defaults, "Please review these values", key="defaults")
    return f"Elicitation completed: {_outcome(answer)}"


@server.tool()
async def test_elicitation_sep1330_enums(ctx: Context) -> str:
    """Asks a form with every enum shape: single and multiple choice, with and without titles."""
    answer = await ctx.elicit(ENUMS, "Please choose", key="enums")
    return f"Elicitation completed: {_outcome(answer)}"


# -- multi round-trip fixtures ------------------------------------------------------------------------


@form
@dataclass
class Name:
    name: str


@form
@dataclass
class Ok:
    ok: bool


@form
@dataclass
class Color:
    color: str


@form
@dataclass
class UserContext:
    context: str


@server.tool()
async def test_input_required_result_elicitation(ctx: Context) -> str:
    """Asks for the user's name."""
    answer = await ctx.elicit(Name, "What is your name?", key="user_name")
    return f"Hello, {answer.data.name}!" if isinstance(answer, Accepted) else "Hello, stranger!"


@server.tool()
async def test_input_required_result_sampling(ctx: Context) -> str:
    """Asks the client's model a question (deprecated sampling, for compatibility)."""
    answer = await ctx.sample("What is the capital of France?", max_tokens=100, key="capital_question")
    return f"The model answered: {_text_of(answer)}"


@server.tool()
async def test_input_required_result_list_roots(ctx: Context) -> str:
    """Asks the client for its roots (deprecated roots, for compatibility)."""
    roots = await ctx.list_roots(key="client_roots")
    return f"Roots: {', '.join(r['uri'] for r in roots) or 'none'}"


@server.tool()
async def test_input_required_result_request_state(ctx: Context) -> str:
    """Asks a confirmation; the answer is only trusted with the sealed requestState it came back with."""
    answer = await ctx.elicit(Ok, "Please confirm", key="confirm")
    return f"state-ok: confirmed={isinstance(answer, Accepted) and answer.data.ok}"


@server.tool()
async def test_input_required_result_multiple_inputs(ctx: Context) -> str:
    """Asks three things in one round: a form, a model completion and the roots."""
    name, greeting, roots = await ctx.gather(
        ctx.elicit(Name, "What is your name?", key="user_name"),
        ctx.sample("Generate a greeting", max_tokens=50, key="greeting"),
        ctx.list_roots(key="client_roots"),
    )
    who = name.data.name if isinstance(name, Accepted) else "stranger"
    return f"{_text_of(greeting)} {who}; {len(roots)} root(s)"


@server.tool()
async def test_input_required_result_multi_round(ctx: Context) -> str:
    """Asks two questions in two rounds."""
    name = await ctx.elicit(Name, "What is your name?", key="step1")
    color = await ctx.elicit(Color, "What is your favorite color?", key="step2")
    who = name.data.name if isinstance(name, Accepted) else "stranger"
    hue = color.data.color if isinstance(color, Accepted) else "no colour"
    return f"{who} likes {hue}"


@server.tool()
async def test_input_required_result_tampered_state(ctx: Context) -> str:
    """Any change to its requestState is refused with a JSON-RPC error."""
    answer = await ctx.elicit(Ok, "Please confirm", key="confirm")
    return f"confirmed={isinstance(answer, Accepted) and answer.data.ok}"


@server.tool()
async def test_input_required_result_capabilities(ctx: Context) -> str:
    """Asks only through what the client declared: a form if it can, else the model, else its roots."""
    for kind, ask in (
        ("form", lambda: ctx.elicit(Name, "What is your name?", key="user_name")),
        ("sampling", lambda: ctx.sample("What is your name?", max_tokens=20, key="capital_question")),
        ("roots", lambda: ctx.list_roots(key="client_roots")),
    ):
        if ctx.can_ask(kind):
            try:
                await ask()
            except CapabilityMissing:
                continue
            return f"answered through {kind}"
    return "the client declared nothing to ask through"


def _text_of(answer: dict[str, Any]) -> str:
    block = answer.get("content")
    if isinstance(block, list):
        block = block[0] if block else {}
    return str(block.get("text", "")) if isinstance(block, dict) else ""


# -- resources ---------------------------------------------------------------------------------------


@server.resource("test://static-text", name="static-text", mime_type="text/plain")
def static_text() -> str:
    """A fixed text resource."""
    return "This is the content of the static text resource."


@server.resource("test://static-binary", name="static-binary", mime_type="image/png")
def static_binary() -> bytes:
    """A fixed binary resource (a PNG)."""
    return PNG


@server.resource("test://template/{id}/data", name="template-data", mime_type="application/json")
def template_data(id: str) -> str:
    """Data for one id."""
    return f'{{"id": "{id}", "templateTest": true, "data": "Data for ID: {id}"}}'


@server.resource("test://example-resource", name="example-resource", mime_type="text/plain")
def example_resource() -> str:
    """The resource the embedded-resource prompt points at."""
    return "Embedded resource content for testing."


_watched = {"version": 1}


@server.resource("test://watched-resource", name="watched-resource", mime_type="text/plain")
def watched_resource() -> str:
    """A resource that changes: 2025-11-25 sessions may subscribe to it."""
    return f"Watched resource, version {_watched['version']}."


@server.tool()
def test_update_watched_resource() -> str:
    """Changes test://watched-resource; subscribed 2025-11-25 sessions hear notifications/resources/updated."""
    _watched["version"] += 1
    server.resource_updated("test://watched-resource")
    return f"test://watched-resource is now at version {_watched['version']}"


# -- prompts -----------------------------------------------------------------------------------------


@server.prompt()
def test_simple_prompt() -> str:
    """A prompt without arguments."""
    return "This is a simple prompt for testing."


@server.prompt()
def test_prompt_with_arguments(
    arg1: Annotated[str, "First test argument"], arg2: Annotated[str, "Second test argument"]
) -> str:
    """A prompt with two required arguments."""
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@server.prompt()
def test_prompt_with_embedded_resource(
    resourceUri: Annotated[str, "URI of the resource to embed"],
) -> list[Any]:
    """A prompt that embeds a resource."""
    return [
        content.user(
            content.embedded(resourceUri, text="Embedded resource content for testing.", mime_type="text/plain")
        ),
        content.user("Please process the embedded resource above."),
    ]


@server.prompt()
def test_prompt_with_image() -> list[Any]:
    """A prompt with an image."""
    return [content.user(content.image(PNG, "image/png")), content.user("Please analyze the image above.")]


@server.prompt()
async def test_input_required_result_prompt(ctx: Context) -> list[Any]:
    """A prompt that first asks the user for context."""
    answer = await ctx.elicit(UserContext, "What context should the prompt use?", key="user_context")
    context_text = answer.data.context if isinstance(answer, Accepted) else "none"
    return [content.user(f"Use this context: {context_text}")]


@server.completion
def complete(ref: dict[str, Any], argument: dict[str, Any], context: dict[str, Any]) -> list[str]:
    """Completes prompt arguments from a small fixed vocabulary."""
    words = ["alpha", "beta", "gamma", "delta"]
    prefix = str(argument.get("value", ""))
    return [w for w in words if w.startswith(prefix)]


# -- skills (SEP-2640): one skill from examples/skills, for any client to find (docs/skills.md) ---------

server.add_skills(Path(__file__).resolve().parent / "skills")

# -- end of skills ------------------------------------------------------------------------------------


if __name__ == "__main__":
    server.run()  # stdio, as a host starts it; server.run("http", port=8000) for Streamable HTTP
