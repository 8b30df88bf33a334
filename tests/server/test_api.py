"""The registration API refuses what it cannot honour where it is written, and Baton's own misuse errors
never reach the model as tool errors. Driven in-process through `server.runtime.handle` (no transport)."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

import pytest
from wire import meta

from baton import Context, KeyRing, Server
from baton.client import Answer as ClientAnswer
from baton.forms import Answer
from baton.protocol.messages import Message
from baton.server import Exchange, Reply, RequestInfo, UsageError


def make_server() -> Server:
    return Server("api-tests", state_keys=KeyRing.ephemeral_key())


def run(server: Server, method: str, params: dict[str, Any]) -> dict[str, Any]:
    body = {**params, "_meta": meta()}
    reply = asyncio.run(server.runtime.handle(Message(method, body, 1, True), Exchange(RequestInfo("stdio"))))
    assert isinstance(reply, Reply)
    return reply.body


# -- decorators: both forms, or a loud refusal ---------------------------------------------------------


def test_prompt_decorator_bare_and_called() -> None:
    server = make_server()

    @server.prompt
    def bare(topic: str) -> str:
        return f"bare {topic}"

    @server.prompt()
    def called(topic: str) -> str:
        return f"called {topic}"

    @server.prompt("named", title="Named")
    def third(topic: str) -> str:
        return f"named {topic}"

    assert set(server.prompts) == {"bare", "called", "named"}
    assert bare("x") == "bare x"  # the bare form returns the function itself
    result = run(server, "prompts/get", {"name": "bare", "arguments": {"topic": "t"}})["result"]
    assert result["messages"][0]["content"]["text"] == "bare t"


def test_prompt_decorator_refuses_a_name_that_is_not_a_string() -> None:
    server = make_server()
    with pytest.raises(TypeError, match="must be a string"):
        server.prompt(42)  # type: ignore[call-overload]


def test_completion_decorator_bare_and_called() -> None:
    for form in ("bare", "called"):
        server = make_server()

        def complete(ref: dict[str, Any], argument: dict[str, Any], context: dict[str, Any]) -> list[str]:
            return ["a", "b"]

        registered = server.completion(complete) if form == "bare" else server.completion()(complete)
        assert registered is complete
        assert "completions" in server.runtime.capabilities()
        argument = {"name": "x", "value": ""}
        result = run(server, "completion/complete", {"ref": {"type": "ref/prompt", "name": "p"}, "argument": argument})
        assert result["result"]["completion"] == {"values": ["a", "b"]}


def test_completion_params_of_the_wrong_shape_are_invalid_params() -> None:
    """mcp-fuzzer sent refs of made-up types and arguments of other JSON types, and the author's handler was
    called with them: they are -32602 naming what is wrong, and the handler is not called (protocol.md P107)."""
    server = make_server()
    called: list[Any] = []

    @server.completion
    def complete(ref: dict[str, Any], argument: dict[str, Any], context: dict[str, Any]) -> list[str]:
        called.append(ref)
        return ["a"]

    good_ref, good_arg = {"type": "ref/resource", "uri": "files://{name}"}, {"name": "name", "value": "s"}
    cases = [
        ({"type": "cursor_AAAA", "uri": "x"}, good_arg, None, "ref.type must be"),
        ({"type": "ref/prompt", "uri": "x"}, good_arg, None, "ref.name must be a string"),
        ({"type": "ref/resource", "uri": 5}, good_arg, None, "ref.uri must be a string"),
        (good_ref, {"name": "name"}, None, "string name and a string value"),
        (good_ref, {"name": 1, "value": "s"}, None, "string name and a string value"),
        (good_ref, good_arg, {"arguments": {"a": 1}}, "context.arguments"),
        (good_ref, good_arg, {"arguments": "a"}, "context.arguments"),
    ]
    for ref, argument, context, words in cases:
        params: dict[str, Any] = {"ref": ref, "argument": argument}
        if context is not None:
            params["context"] = context
        error = run(server, "completion/complete", params)["error"]
        assert error["code"] == -32602 and words in error["message"], (params, error)
    assert called == []
    ok = run(
        server, "completion/complete", {"ref": good_ref, "argument": good_arg, "context": {"arguments": {"a": "b"}}}
    )
    assert ok["result"]["completion"] == {"values": ["a"]}


def test_completion_decorator_refuses_arguments() -> None:
    with pytest.raises(TypeError, match="takes no arguments"):
        make_server().completion("oops")  # type: ignore[call-overload]


def test_tool_decorator_bare_and_called() -> None:
    server = make_server()

    @server.tool
    def one() -> str:
        return "1"

    @server.tool(name="two", title="Two")
    def second() -> str:
        return "2"

    assert set(server.tools) == {"one", "two"}
    assert server.tools["two"].title == "Two"


def test_tool_option_typo_fails_at_the_decorator_with_a_suggestion() -> None:
    server = make_server()
    with pytest.raises(TypeError, match=r"unknown option 'singel_use'; did you mean 'single_use'\?"):
        server.tool(singel_use=True)  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="unknown option 'colour'"):
        server.add_tool(lambda: "x", colour="red")  # type: ignore[call-arg]
    assert server.tools == {}


def test_tool_decorator_refuses_a_positional_name() -> None:
    with pytest.raises(TypeError, match="keyword options"):
        make_server().tool("name")  # type: ignore[call-overload]


def test_resource_decorator_refuses_the_bare_form() -> None:
    server = make_server()
    with pytest.raises(TypeError, match="needs the resource's URI"):

        @server.resource  # type: ignore[arg-type]
        def readme() -> str:
            return "x"

    assert server.resources == {}


def test_tool_options_reach_the_tool() -> None:
    server = make_server()
    server.add_tool(lambda: "x", name="once", single_use=True, annotations={"readOnlyHint": True})
    assert server.tools["once"].single_use is True
    assert server.tools["once"].describe()["annotations"] == {"readOnlyHint": True}


# -- one name for the answer union ---------------------------------------------------------------------


def test_one_answer_union_for_client_and_forms() -> None:
    assert ClientAnswer is Answer
    import baton.client

    assert not hasattr(baton.client, "Reply")


# -- Baton's own misuse is the author's bug, not the model's ---------------------------------------------


@dataclass
class Nested:
    inner: dict[str, int]  # not expressible in an elicitation form


def test_library_misuse_is_an_internal_error_not_a_tool_error(caplog: pytest.LogCaptureFixture) -> None:
    server = make_server()

    @server.tool()
    async def bad_level(ctx: Context) -> str:
        await ctx.log("verbose", "starting")
        return "unreachable"

    # A form the wire cannot carry is refused where the tool is registered, naming the field (protocol.md P97).
    with pytest.raises(TypeError, match=r"the form Nested asked with ctx.elicit: Nested.inner: type .dict."):

        @server.tool()
        async def bad_form(ctx: Context) -> str:
            await ctx.elicit(Nested, "Fill in")
            return "unreachable"

    @server.tool()
    async def author_value_error(ctx: Context) -> str:
        raise ValueError("the project name must be lowercase")

    caplog.set_level(logging.ERROR, logger="baton.server")
    for tool, leaked in (("bad_level", "log level"),):
        result = run(server, "tools/call", {"name": tool, "arguments": {}})["result"]
        text = result["content"][0]["text"]
        assert result["isError"] is True
        assert text.startswith(f"Tool {tool} failed with an internal error")
        assert leaked not in text  # the model is not told the author's bug
    assert "log level must be one of" in caplog.text  # the author is told, in the log
    # The author's own ValueError is still a tool error the model reads (it can fix its arguments).
    result = run(server, "tools/call", {"name": "author_value_error", "arguments": {}})["result"]
    assert result["isError"] is True
    assert result["content"][0]["text"] == "the project name must be lowercase"


def test_usage_error_is_still_a_value_error() -> None:
    # Code that caught ValueError around Baton's calls keeps working.
    assert issubclass(UsageError, ValueError)


def test_context_is_built_with_keywords_only() -> None:
    with pytest.raises(TypeError):
        Context("tools/call", 1)  # type: ignore[misc]


def test_unknown_log_level_is_refused_before_a_single_use_token_is_spent() -> None:
    server = Server("api-tests", state_keys=KeyRing.ephemeral_key(), ledger="memory:", single_use=True)
    ran: list[str] = []

    @server.tool()
    async def transfer(ctx: Context) -> str:
        if not await ctx.confirm("Transfer?"):
            return "no"
        ran.append("transfer")
        return "done"

    first = run(server, "tools/call", {"name": "transfer", "arguments": {}})["result"]
    retry = {
        "name": "transfer",
        "arguments": {},
        "requestState": first["requestState"],
        "inputResponses": {"q1": {"action": "accept", "content": {"confirm": True}}},
    }
    body = {**retry, "_meta": meta(**{"io.modelcontextprotocol/logLevel": "loud"})}
    reply = asyncio.run(server.runtime.handle(Message("tools/call", body, 2, True), Exchange(RequestInfo("stdio"))))
    assert isinstance(reply, Reply)
    assert reply.body["error"]["code"] == -32602 and "log level" in reply.body["error"]["message"]
    # The token was not claimed by the refused request: the corrected retry runs the tool once.
    assert run(server, "tools/call", retry)["result"]["content"][0]["text"] == "done"
    assert ran == ["transfer"]


def test_a_refused_elicit_url_is_the_authors_bug_not_a_tool_error() -> None:
    server = make_server()

    @server.tool()
    async def open_link(ctx: Context) -> str:
        await ctx.elicit_url("Open this", "https://example.com/pay?access_token=abcdefghijklmnop")
        return "unreachable"

    body = {"name": "open_link", "arguments": {}, "_meta": meta({"elicitation": {"url": {}}})}
    reply = asyncio.run(server.runtime.handle(Message("tools/call", body, 1, True), Exchange(RequestInfo("stdio"))))
    assert isinstance(reply, Reply)
    result = reply.body["result"]
    assert result["isError"] is True
    assert result["content"][0]["text"] == "Tool open_link failed with an internal error (UsageError)"


def test_the_server_holds_the_authors_api_only() -> None:
    """What transports call lives on `server.runtime`, the configuration on `server.settings`: the names an author
    meets on a Server stay few (FastMCP's has about 30)."""
    public = sorted(n for n in dir(make_server()) if not n.startswith("_"))
    assert len(public) <= 30, public
    for transport_only in ("handle", "initialize", "handle_handshake", "admit", "sealer", "sessions", "hub"):
        assert transport_only not in public


def test_add_and_remove_a_resource_and_a_template() -> None:
    server = make_server()
    seen: list[tuple[str, dict[str, Any]]] = []
    server.runtime.hub.watch(lambda method, params: seen.append((method, params)))

    def note() -> str:
        """A note."""
        return "the note"

    def page(n: str) -> str:
        return f"page {n}"

    resource = server.add_resource(note, "notes://one", mime_type="text/plain")
    template = server.add_resource(page, "pages://{n}", name="pages")
    assert (resource.name, resource.description, template.name) == ("note", "A note.", "pages")
    assert set(server.resources) == {"notes://one"} and set(server.templates) == {"pages://{n}"}
    assert "resources" in server.runtime.capabilities()
    read = run(server, "resources/read", {"uri": "pages://7"})
    assert read["result"]["contents"][0]["text"] == "page 7"
    with pytest.raises(ValueError, match="already registered"):
        server.add_resource(note, "notes://one")
    server.remove_resource("notes://one")
    server.remove_resource("pages://{n}")
    assert not server.resources and not server.templates
    assert "resources" not in server.runtime.capabilities()
    with pytest.raises(KeyError):
        server.remove_resource("notes://one")
    assert [m for m, _ in seen] == ["notifications/resources/list_changed"] * 4
