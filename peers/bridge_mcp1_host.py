"""Interop peer: a 2025-11-25 host (`mcp==1.30.0`, no 2026 support) driving `baton bridge` over stdio.

Usage: `python bridge_mcp1_host.py SCENARIO -- COMMAND ...`, COMMAND being the bridge to start. Prints one
JSON object. SCENARIO is `flows`: in one session, the tool list, a plain call, resources, templates, a read,
prompts, a prompt, a completion, a two-round asking tool
answered by the elicitation callback, the same answered decline, (when the bridge offers list changes) a
tool that changes the tool list until the host hears `tools/list_changed`, a call with progress and one with log
messages, then a call whose question the host leaves unanswered and cancels (the report says whether the
callback was cancelled in turn), then a plain call again; or `mute`: a host that declares no elicitation
calls the two-round tool; or `subscribe`: the host subscribes to test://watched-resource and calls the tool
that updates it until it hears `notifications/resources/updated`. Runs in `.cache/interop/mcp1`, never in Baton's venv.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.shared.context import RequestContext
from pydantic import AnyUrl

TWO_ROUNDS = "test_input_required_result_multi_round"
WATCHED = "test://watched-resource"


def text_of(result: types.CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, types.TextContent))


async def flows(session: ClientSession, state: dict[str, Any]) -> dict[str, Any]:
    report: dict[str, Any] = {}
    tools = await session.list_tools()
    report["tools"] = sorted(tool.name for tool in tools.tools)
    report["simple"] = text_of(await session.call_tool("test_simple_text", {}))
    resources = await session.list_resources()
    report["resources"] = sorted(str(r.uri) for r in resources.resources)
    templates = await session.list_resource_templates()
    report["templates"] = [t.uriTemplate for t in templates.resourceTemplates]
    read = await session.read_resource(AnyUrl("test://static-text"))
    report["read"] = [c.text for c in read.contents if isinstance(c, types.TextResourceContents)]
    prompts = await session.list_prompts()
    report["prompts"] = sorted(p.name for p in prompts.prompts)
    got = await session.get_prompt("test_prompt_with_arguments", {"arg1": "a", "arg2": "b"})
    report["prompt"] = [m.content.text for m in got.messages if isinstance(m.content, types.TextContent)]
    ref = types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments")
    completed = await session.complete(ref, {"name": "arg1", "value": "g"})
    report["completion"] = completed.completion.values
    report["list_changed"] = None  # the bridge offered no list changes
    if state["init"].capabilities.tools and state["init"].capabilities.tools.listChanged:
        # Until the notification comes: the bridge's stream to the server may not be open yet at first.
        with anyio.move_on_after(10):
            while not state["changed"].is_set():
                await session.call_tool("test_trigger_tool_change", {})
                with anyio.move_on_after(0.5):
                    await state["changed"].wait()
        report["list_changed"] = state["changed"].is_set()
    state["mode"] = "accept"
    report["two_rounds"] = text_of(await session.call_tool(TWO_ROUNDS, {}))
    report["asked"] = list(state["asked"])
    state["mode"] = "decline"
    report["declined"] = text_of(await session.call_tool(TWO_ROUNDS, {}))
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    report["progress_result"] = text_of(
        await session.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
    )
    report["progress"] = progress
    report["logged_result"] = text_of(await session.call_tool("test_tool_with_logging", {}))
    report["logs"] = [str(data) for data in state["logs"]]
    state["mode"] = "hang"
    async with anyio.create_task_group() as group:
        group.start_soon(session.call_tool, TWO_ROUNDS, {})
        with anyio.fail_after(20):
            await state["hanging"].wait()
        rid = session._request_id - 1  # the call's id: the last request this session sent
        cancel = types.CancelledNotification(params=types.CancelledNotificationParams(requestId=rid, reason="test"))
        await session.send_notification(types.ClientNotification(cancel))
        with anyio.fail_after(20):
            await state["withdrawn"].wait()  # the bridge withdrew its question (mcp 1.x reads on only after it)
        group.cancel_scope.cancel()  # the call itself gets no answer once cancelled
    report["question_withdrawn"] = state["withdrawn"].is_set()
    report["after_cancel"] = text_of(await session.call_tool("test_simple_text", {}))
    return report


async def subscribe(session: ClientSession, state: dict[str, Any]) -> dict[str, Any]:
    report: dict[str, Any] = {"offered": bool(state["init"].capabilities.resources.subscribe)}
    await session.subscribe_resource(AnyUrl(WATCHED))
    with anyio.move_on_after(15):  # the bridge's listen stream to the server may not be open yet at first
        while not state["updated"]:
            await session.call_tool("test_update_watched_resource", {})
            await anyio.sleep(0.5)
    report["updated"] = sorted(set(state["updated"]))
    return report


async def main(scenario: str, command: list[str]) -> None:
    state: dict[str, Any] = {"mode": "accept", "asked": [], "logs": [], "updated": []}
    state["hanging"], state["withdrawn"], state["changed"] = anyio.Event(), anyio.Event(), anyio.Event()
    answers = {"What is your name?": {"name": "Ada"}, "What is your favorite color?": {"color": "teal"}}

    async def elicit(context: RequestContext[Any, Any], params: types.ElicitRequestParams) -> types.ElicitResult:
        state["asked"].append(params.message)
        if state["mode"] == "hang":
            state["hanging"].set()
            with anyio.move_on_after(20):
                await state["withdrawn"].wait()
        if state["mode"] == "decline":
            return types.ElicitResult(action="decline")
        return types.ElicitResult(action="accept", content=answers.get(params.message, {}))

    async def log(params: types.LoggingMessageNotificationParams) -> None:
        state["logs"].append(params.data)

    async def on_message(message: Any) -> None:
        root = getattr(message, "root", None)
        if isinstance(message, types.ServerNotification) and isinstance(root, types.ToolListChangedNotification):
            state["changed"].set()
        if isinstance(message, types.ServerNotification) and isinstance(root, types.ResourceUpdatedNotification):
            state["updated"].append(str(root.params.uri))

    server = StdioServerParameters(command=command[0], args=command[1:])
    callback = elicit if scenario == "flows" else None
    async with stdio_client(server) as (read, write), anyio.create_task_group() as pumps:
        # A tap on what the bridge writes, read at once: mcp 1.x reads no message while a callback runs.
        tapped, seen = anyio.create_memory_object_stream[Any](1000)

        async def pump() -> None:
            async with tapped:
                async for item in read:
                    root = getattr(getattr(item, "message", None), "root", None)
                    if getattr(root, "method", None) == "notifications/cancelled":
                        state["withdrawn"].set()
                    await tapped.send(item)

        pumps.start_soon(pump)
        async with ClientSession(
            seen, write, elicitation_callback=callback, logging_callback=log, message_handler=on_message
        ) as session:
            await run(session, scenario, state)
        pumps.cancel_scope.cancel()


async def run(session: ClientSession, scenario: str, state: dict[str, Any]) -> None:
    init = await session.initialize()
    state["init"] = init
    try:
        if scenario == "flows":
            report = await flows(session, state)
        elif scenario == "subscribe":
            report = await subscribe(session, state)
        else:
            report = {"result": text_of(await session.call_tool(TWO_ROUNDS, {}))}
    except Exception as exc:  # the SDK's task group would hide it behind BrokenResourceError
        inner = getattr(exc, "exceptions", [exc])
        report = {"failed": "; ".join(f"{type(e).__name__}: {e}" for e in inner), "asked": state["asked"]}
    report["server"] = init.serverInfo.name
    report["version"] = init.protocolVersion
    print(json.dumps(report), flush=True)  # before the SDK closes: it may fail on a line still on its way


if __name__ == "__main__":
    cut = sys.argv.index("--")
    asyncio.run(main(sys.argv[1], sys.argv[cut + 1 :]))
