"""Typed client results (issue 13): what `call_tool`, `read_resource`, `get_prompt` and the lists return.

Against real servers on loopback (examples/everything.py and tests/servers/first_hour.py), in both eras:
typed content blocks, `.text`, `.structured`, `.is_error`, prompt messages, resource contents, and the
tool, prompt and resource descriptors; the raw dict is `.raw`, and dict-style access still reads it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Coroutine, Iterator
from typing import Any, TypeVar

import pytest
from servers.mock_mcp import MockMcp
from support.markers import needs
from support.processes import free_port
from support.serve import RunningServer, start_for_module

from baton.client import (
    Accepted,
    Answer,
    AudioContent,
    CallToolResult,
    Client,
    Declined,
    EmbeddedResource,
    GetPromptResult,
    ImageContent,
    Prompt,
    PromptArgument,
    Question,
    ReadResourceResult,
    Resource,
    ResourceLink,
    ResourceTemplate,
    Round,
    TextContent,
    Tool,
    UnknownContent,
)
from baton.client.probe import ProtocolChoice
from baton.client.results import content_block

Serve = Callable[..., RunningServer]
T = TypeVar("T")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
ERAS: list[ProtocolChoice] = ["2026-07-28", "2025-11-25"]


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(asyncio.wait_for(coro, 60))


def answering(reply: Answer[Any]) -> Callable[[Question], Coroutine[Any, Any, Answer[Any]]]:
    async def on_form(question: Question) -> Answer[Any]:
        return reply

    return on_form


@pytest.fixture(scope="module")
@needs("process")
def shapes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with start_for_module(tmp_path_factory, "tests/servers/first_hour.py:shapes") as server:
        yield server


@pytest.mark.parametrize("era", ERAS)
def test_call_tool_gives_typed_blocks_and_the_joined_text(everything: RunningServer, era: ProtocolChoice) -> None:
    async def flow() -> tuple[CallToolResult, CallToolResult]:
        async with Client(everything.url, protocol=era) as client:
            return (
                await client.call_tool("test_multiple_content_types"),
                await client.call_tool("test_audio_content"),
            )

    mixed, audio = run(flow())
    assert isinstance(mixed, CallToolResult)
    text, image, embedded = mixed.content
    assert isinstance(text, TextContent) and text.text == "Multiple content types test:"
    assert isinstance(image, ImageContent) and image.type == "image" and image.mime_type == "image/png"
    assert image.decode().startswith(PNG_MAGIC) and image.size == len(image.decode())
    assert isinstance(embedded, EmbeddedResource)
    assert embedded.resource.uri == "test://mixed-content-resource"
    assert embedded.resource.mime_type == "application/json"
    assert json.loads(embedded.resource.data) == {"test": "data", "value": 123}
    assert mixed.text == 'Multiple content types test:\n{"test": "data", "value": 123}'
    assert mixed.is_error is False and mixed.structured is None
    (sound,) = audio.content
    assert isinstance(sound, AudioContent) and sound.mime_type == "audio/wav"
    assert sound.decode().startswith(b"RIFF") and audio.text == ""


@pytest.mark.parametrize("era", ERAS)
def test_structured_content_errors_and_links(shapes: RunningServer, era: ProtocolChoice) -> None:
    async def flow() -> list[CallToolResult]:
        async with Client(shapes.url, on_form=answering(Accepted({"confirm": True})), protocol=era) as yes:
            results = [await yes.call_tool("square", {"side": 3}), await yes.call_tool("flip", {"side": 2})]
        async with Client(shapes.url, on_form=answering(Declined()), protocol=era) as no:
            results.append(await no.call_tool("flip", {"side": 2}))
        return results

    square, flipped, refused = run(flow())
    assert square.structured == {"area": 9.0, "perimeter": 12.0}
    assert json.loads(square.text) == square.structured and not square.is_error
    assert flipped.text == "flipped a square of side 2\nit looks the same"
    link = flipped.content[2]
    assert isinstance(link, ResourceLink)
    assert (link.uri, link.name, link.title, link.mime_type) == (
        "shape://square",
        "square",
        "The square",
        "application/json",
    )
    assert link.text == ""  # a link is not text
    assert refused.is_error is True and refused.text == "not flipped" and refused.structured is None


@pytest.mark.parametrize("era", ERAS)
def test_read_resource_and_get_prompt_are_typed(everything: RunningServer, serve: Serve, era: ProtocolChoice) -> None:
    asking = serve("tests/servers/first_hour.py:asking")

    async def flow() -> tuple[list[ReadResourceResult], list[GetPromptResult]]:
        async with Client(everything.url, protocol=era) as client:
            reads = [
                await client.read_resource("test://static-text"),
                await client.read_resource("test://static-binary"),
            ]
            prompts = [
                await client.get_prompt(
                    "test_prompt_with_embedded_resource", {"resourceUri": "test://example-resource"}
                ),
                await client.get_prompt("test_prompt_with_image"),
            ]
        async with Client(asking.url, on_form=answering(Accepted({"confirm": True})), protocol=era) as client:
            reads.append(await client.read_resource("diary://today"))  # asks first
            prompts.append(await client.get_prompt("letter", {"to": "Ada"}))  # asks first
        return reads, prompts

    (text, binary, diary), (embedded, image, letter) = run(flow())
    assert text.text == "This is the content of the static text resource."
    (contents,) = text.contents
    assert (contents.uri, contents.mime_type, contents.blob) == ("test://static-text", "text/plain", None)
    assert binary.text == "" and binary.contents[0].text is None
    assert binary.contents[0].data.startswith(PNG_MAGIC) and binary.contents[0].mime_type == "image/png"
    assert diary.text == "Dear diary: it rained."
    assert [m.role for m in embedded.messages] == ["user", "user"]
    first = embedded.messages[0].content
    assert isinstance(first, EmbeddedResource) and first.resource.uri == "test://example-resource"
    assert embedded.text == "Embedded resource content for testing.\nPlease process the embedded resource above."
    picture = image.messages[0].content
    assert isinstance(picture, ImageContent) and picture.decode().startswith(PNG_MAGIC)
    assert image.messages[1].text == "Please analyze the image above."
    assert [(m.role, m.text) for m in letter.messages] == [
        ("user", "Dear Ada, the weather is fine. Signed."),
        ("assistant", "Sent."),
    ]


@pytest.mark.parametrize("era", ERAS)
def test_lists_give_descriptors(everything: RunningServer, shapes: RunningServer, era: ProtocolChoice) -> None:
    async def flow() -> tuple[list[Tool], list[Prompt], list[Resource], list[ResourceTemplate]]:
        async with Client(shapes.url, protocol=era) as client:
            tools = await client.list_tools()
        async with Client(everything.url, protocol=era) as client:
            return (
                tools,
                await client.list_prompts(),
                await client.list_resources(),
                await client.list_resource_templates(),
            )

    tools, prompts, resources, templates = run(flow())
    square = next(tool for tool in tools if tool.name == "square")
    assert (square.title, square.description) == ("Measure a square", "Area and perimeter of a square.")
    assert square.annotations == {"readOnlyHint": True}
    assert square.input_schema["properties"] == {"side": {"type": "number"}}
    assert square.output_schema is not None and square.output_schema["required"] == ["area", "perimeter"]
    flip = next(tool for tool in tools if tool.name == "flip")
    assert flip.title is None and flip.annotations == {} and flip.output_schema is None
    by_name = {prompt.name: prompt for prompt in prompts}
    arguments = by_name["test_prompt_with_arguments"].arguments
    assert all(isinstance(a, PromptArgument) for a in arguments)
    assert [(a.name, a.description, a.required) for a in arguments] == [
        ("arg1", "First test argument", True),
        ("arg2", "Second test argument", True),
    ]
    assert by_name["test_simple_prompt"].arguments == [] and by_name["test_simple_prompt"].description
    text = next(r for r in resources if r.uri == "test://static-text")
    assert (text.name, text.mime_type, text.description) == ("static-text", "text/plain", "A fixed text resource.")
    assert [(t.uri_template, t.name, t.mime_type) for t in templates] == [
        ("test://template/{id}/data", "template-data", "application/json")
    ]


def test_the_raw_dict_is_at_hand_and_dict_access_still_works(everything: RunningServer) -> None:
    async def flow() -> tuple[CallToolResult, list[Tool]]:
        async with Client(everything.url) as client:
            return await client.call_tool("test_simple_text"), await client.list_tools()

    result, tools = run(flow())
    assert isinstance(result.raw, dict) and result.raw["content"][0]["text"] == result.text
    assert result["content"][0]["text"] == "This is a simple text response for testing."  # as before 0.x typing
    assert result.get("isError") is None and "content" in result and result == result.raw
    assert dict(result) == result.raw and json.loads(json.dumps(result.raw)) == result.raw
    assert {tool["name"] for tool in tools} == {tool.name for tool in tools}
    assert tools[0].raw is tools[0].raw and isinstance(tools[0].raw, dict)


def test_step_mode_results_wrap_with_from_raw(everything: RunningServer) -> None:
    async def flow() -> dict[str, Any]:
        async with Client(everything.url, declare=("form",)) as client:
            step = await client.start("tools/call", {"name": "perform", "arguments": {"action": "x"}})
            assert isinstance(step, Round)
            done = await client.advance(step, {q.key: Accepted({"confirm": True}) for q in step.questions()})
            assert not isinstance(done, Round)
            return done

    result = CallToolResult.from_raw(run(flow()))
    assert result.text == "done: x" and CallToolResult.from_raw(result).raw is result.raw


def test_odd_blocks_and_fields_never_raise() -> None:
    unknown = content_block({"type": "hologram", "frames": 3})
    assert isinstance(unknown, UnknownContent) and unknown.type == "hologram" and unknown.text == ""
    untyped = content_block({"text": 5})
    assert isinstance(untyped, UnknownContent) and untyped.type == ""
    sloppy = CallToolResult(
        {"content": [{"type": "text", "text": 7}, "not a block", {"type": "image"}], "isError": "yes"}
    )
    assert [type(b) for b in sloppy.content] == [TextContent, ImageContent]
    assert sloppy.text == "" and sloppy.is_error is False  # only `true` is an error
    empty = sloppy.content[1]
    assert isinstance(empty, ImageContent) and empty.size == 0 and empty.mime_type is None
    assert GetPromptResult({"messages": [{"role": "user"}]}).messages[0].content.type == ""
    assert Tool({"name": "t"}).input_schema == {"type": "object"}
    assert Resource({"uri": "x://y", "size": True}).size is None
    assert repr(Tool({"name": "t"})) == "Tool(name='t')"
    assert "TextContent(text='hi')" in repr(CallToolResult({"content": [{"type": "text", "text": "hi"}]}))


@pytest.mark.process
def test_list_items_that_are_not_objects_are_left_out() -> None:
    mock = MockMcp()
    mock.on(
        "prompts/list", {"prompts": [{"name": "p"}, "junk", 7], "nextCursor": "2"}, {"prompts": [None, {"name": "q"}]}
    )
    mock.on("resources/list", {"resources": "not a list"})
    mock.start(free_port())

    async def flow() -> tuple[list[Prompt], list[Resource]]:
        async with Client(mock.url, protocol="2026-07-28", cache=False) as client:
            return await client.list_prompts(), await client.list_resources()

    try:
        prompts, resources = run(flow())
    finally:
        mock.stop()
    assert [p.name for p in prompts] == ["p", "q"] and resources == []
