"""The six client subcommands, each one `Client` session: list, or run one request and print its result.

`call`, `read` and `prompt` answer the server's questions at the terminal (`TerminalRenderer`), in
both eras: MRTR rounds on 2026-07-28 (protocol.md P23), server requests in a 2025-11-25 session found
by the era probe (protocol.md P34). With `--json` the questions go to stderr, so stdout carries only
the JSON. A server without a feature (-32601 to its list) offers none of it: the lists say so and
exit 0; a request for something it does not offer is a usage error.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Sequence
from contextlib import asynccontextmanager
from typing import Any

from ...client import Client, Prompt, Resource, ResourceTemplate, Skill, Tool
from ...client.errors import listed
from ...client.oauth import OAuth, ProgramLogin
from ...client.oauth.rules import may_carry_tokens
from ...client.tasks import TaskWatcher
from ...protocol import skills as skills_wire
from ...protocol.errors import METHOD_NOT_FOUND, McpError
from ...protocol.tasks import TASKS
from ...render import TerminalRenderer
from . import oauth_setup, show
from .args import CommandLineError, Invocation, OneLineError, parse_arguments, split_pairs
from .given_answers import GivenAnswers, read_answers

CLIENT_NAME = "baton-cli"


class NotOffered(Exception):
    """The server answered -32601 to a request: it does not offer that feature at all."""


@asynccontextmanager
async def client(
    run: Invocation,
    renderer: TerminalRenderer | None = None,
    command: str = "",
    tasks: TaskWatcher | None = None,
    **options: Any,
) -> AsyncIterator[Client]:
    """The client for one subcommand; with a `renderer`, questions are answered at the terminal (or by
    `--answer`, and an answer no question used is a warning line of `baton COMMAND` at the end, P125).
    With `tasks`, it declares the Tasks extension and `tasks` sees each status of a task it follows (P173).
    An HTTP server that answers 401 gets a login through the browser (`oauth_setup`)."""
    handlers: dict[str, Any] = dict(options)
    given: GivenAnswers | None = None
    if renderer is not None:
        given = GivenAnswers(read_answers(run.answers, run.answers_file), renderer)
        handlers |= {f"on_{mode}": given for mode in run.elicitation}  # --elicitation (protocol.md P138)
    if run.timeout is not None:
        handlers["deadline_s"] = run.timeout
    if tasks is not None:
        handlers |= {"extensions": {**handlers.get("extensions", {}), TASKS: {}}, "on_task": tasks}
    # A command (stdio), or plain http to another computer, gets no login: a 401 there is an error.
    auth: OAuth | ProgramLogin | None = None
    browser = None
    if run.login != "browser":
        if not _may_log_in(run.target):
            raise OneLineError(f"--login {run.login} sends a token: give an https URL (or http to this computer)")
        auth = oauth_setup.program(run.login, store=run.token_store)
    elif _may_log_in(run.target):
        auth, browser = oauth_setup.oauth(store=run.token_store)
    try:
        async with Client(run.target, name=CLIENT_NAME, protocol=run.protocol, auth=auth, **handlers) as c:
            yield c
        warning = given.unused_warning() if given is not None else None
        if warning is not None:
            print(f"baton {command}: {warning}", file=sys.stderr)
    finally:
        if browser is not None:
            await browser.aclose()


def asker(run: Invocation) -> TerminalRenderer:
    """The terminal renderer of a command whose server may ask (on stderr with --json, stdout is the result)."""
    return TerminalRenderer(stdout=sys.stderr if run.json else None)


def _may_log_in(target: str | Sequence[str]) -> bool:
    return isinstance(target, str) and may_carry_tokens(target)


def offers_none(c: Client, what: str) -> str:
    return f"{f'the server {c.server_name!r}' if c.server_name else 'the server'} offers no {what}"


async def requested(c: Client, what: str, request: Awaitable[Any]) -> Any:
    """The result of a request; -32601 (the server has no such method) says the server offers no `what`."""
    try:
        return await request
    except McpError as exc:
        if exc.code == METHOD_NOT_FOUND:
            raise NotOffered(offers_none(c, what)) from None
        raise


# -- lists ---------------------------------------------------------------------------------------------------


async def tools(run: Invocation) -> int:
    async with client(run) as c:
        items: list[Tool] = await listed(c.list_tools) or []
        if run.json:
            show.as_json({"tools": [tool.raw for tool in items]})
        elif not items:
            show.out(offers_none(c, "tools"))
        else:
            show.tools(items)
    return 0


async def resources(run: Invocation) -> int:
    async with client(run) as c:
        items: list[Resource] = await listed(c.list_resources) or []
        templates: list[ResourceTemplate] = await listed(c.list_resource_templates) or []
        if run.json:
            show.as_json({"resources": [r.raw for r in items], "resourceTemplates": [t.raw for t in templates]})
        elif not items and not templates:
            show.out(offers_none(c, "resources"))
        else:
            show.resources(items, templates)
    return 0


async def prompts(run: Invocation) -> int:
    async with client(run) as c:
        items: list[Prompt] = await listed(c.list_prompts) or []
        if run.json:
            show.as_json({"prompts": [prompt.raw for prompt in items]})
        elif not items:
            show.out(offers_none(c, "prompts"))
        else:
            show.prompts(items)
    return 0


async def skills(run: Invocation) -> int:
    """`baton skills URL`: the skills, read from their entries only; `baton skills URL NAME`: that skill's
    SKILL.md, fetched and verified against its entry (protocol.md P183), and its other files, not fetched."""
    # The client declares the extension, for servers that answer its methods only to clients that do.
    async with client(run, extensions={skills_wire.EXTENSION: {}}) as c:
        offered = skills_wire.EXTENSION in await c.server_extensions()
        items: list[Skill] = await c.list_skills() if offered else []
        if not run.words:
            if run.json:
                show.as_json({"skills": [skill.raw for skill in items]})
            elif not items:
                show.out(offers_none(c, "skills"))
            else:
                show.skills(items)
            return 0
        wanted = run.words[0]
        found = [skill for skill in items if wanted in (skill.name, skill.uri)]
        if not found:
            has = f"it has: {', '.join(sorted(s.name for s in items))}" if items else offers_none(c, "skills")
            raise CommandLineError(f"the server has no skill {wanted!r}; {has.replace('the server ', 'it ', 1)}")
        skill = found[0]
        text = (await c.read_skill_file(skill)).decode("utf-8")
    if run.json:
        show.as_json({"skill": skill.raw, "text": text})
    else:
        show.skill(skill, text)
    return 0


# -- requests that may ask -------------------------------------------------------------------------------------


async def call(run: Invocation) -> int:
    name, pairs = run.words[0], run.words[1:]
    renderer = asker(run)
    async with client(run, renderer, "call", show.TaskLines(renderer)) as c:
        found = {tool.name: tool for tool in await listed(c.list_tools) or []}
        if name not in found:
            has = f"it has: {', '.join(sorted(found))}" if found else "it offers no tools"
            raise CommandLineError(f"the server has no tool {name!r}; {has}")
        arguments = parse_arguments(pairs, found[name].input_schema)
        result = await c.call_tool(name, arguments, progress=show.Notices(renderer))
    if run.json:
        show.as_json(result.raw)
    else:
        show.tool_result(result)
    return 1 if result.is_error else 0


async def read(run: Invocation) -> int:
    renderer = asker(run)
    async with client(run, renderer, "read") as c:
        result = await requested(c, "resources", c.read_resource(run.words[0], progress=show.Notices(renderer)))
    if run.json:
        show.as_json(result.raw)
    else:
        show.resource_result(result)
    return 0


async def prompt(run: Invocation) -> int:
    name, arguments = run.words[0], dict(split_pairs(run.words[1:]))
    renderer = asker(run)
    async with client(run, renderer, "prompt") as c:
        found = {p.name: p for p in await listed(c.list_prompts) or []}
        if name not in found:
            has = f"it has: {', '.join(sorted(found))}" if found else "it offers no prompts"
            raise CommandLineError(f"the server has no prompt {name!r}; {has}")
        missing = [a.name for a in found[name].arguments if a.required and a.name not in arguments]
        if missing:
            given = " ".join(f"{m}=..." for m in missing)
            raise CommandLineError(f"prompt {name!r} needs {', '.join(missing)}: add {given}")
        result = await c.get_prompt(name, arguments, progress=show.Notices(renderer))
    if run.json:
        show.as_json(result.raw)
    else:
        show.prompt_result(result)
    return 0


RUN: dict[str, Callable[[Invocation], Coroutine[Any, Any, int]]] = {
    "tools": tools,
    "call": call,
    "resources": resources,
    "read": read,
    "prompts": prompts,
    "prompt": prompt,
    "skills": skills,
}
