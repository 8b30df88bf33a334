"""The client program the official MCP conformance suite runs, written only with Baton's public API.

The suite starts a mock server per scenario and runs `python examples/conformance_client.py <url>`
with the scenario's name in `MCP_CONFORMANCE_SCENARIO` (and, for some, a JSON context in
`MCP_CONFORMANCE_CONTEXT`). The client probes which era the mock speaks (`protocol="auto"`,
protocol.md P34): the 2026-07-28 mocks answer `server/discover`, the 2025-11-25 ones do not, and get
the `initialize` handshake. In the `auth/` scenarios the mock server answers 401 and the client logs
in (`baton.client.oauth`): its "browser" follows the mock authorization server's redirect with one
GET, without following it to the redirect URI, and hands back where it pointed; a pre-registered
client comes from the context, and the CIMD URL is the one the suite expects. Run the client
scenarios with:

    .venv/bin/python tools/conformance.py client tools_call request-metadata ... -- \\
        .venv/bin/python examples/conformance_client.py
    .venv/bin/python tools/conformance.py client --spec-version 2025-11-25 initialize sse-retry ... -- \\
        .venv/bin/python examples/conformance_client.py
    .venv/bin/python tools/conformance.py client --spec-version extension 'sep-2640-*' -- \\
        .venv/bin/python examples/conformance_client.py

In the skills scenarios (`sep-2640-client-*`) the client lists the skills, and, except in the no-prefetch
one, loads each as a host would when a model picks it: every file verified against its entry, and a
tampered one refused before anything after it is fetched.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from typing import Any

import httpx

from baton import McpError
from baton.client import Accepted, Answer, Client, Declined, Question, SkillVerificationError
from baton.client.oauth import (
    AuthError,
    ClientCredentials,
    EnterpriseLogin,
    MemoryStore,
    OAuth,
    ProgramLogin,
    WorkloadIdentity,
)

log = logging.getLogger("conformance-client")
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"  # the suite's CIMD scenario expects it
REDIRECT_URI = "http://127.0.0.1:3000/callback"
SKILLS = "io.modelcontextprotocol/skills"


async def follow_authorization(url: str) -> str:
    """The browser part of a login against the suite's mock authorization server, which redirects at once."""
    async with httpx.AsyncClient() as http:
        resp = await http.get(url, follow_redirects=False)
    location = resp.headers.get("location")
    if resp.status_code not in (302, 303) or not location:
        raise AuthError(f"the mock authorization server answered {resp.status_code} without a redirect")
    return str(location)


def oauth(scenario: str, context: dict[str, Any]) -> OAuth | ProgramLogin:
    if scenario.startswith("auth/client-credentials-"):  # a program logging in as itself, no browser
        return ClientCredentials(
            client_id=context["client_id"],
            client_secret=context.get("client_secret"),
            private_key=context.get("private_key_pem"),
            signing_alg=context.get("signing_algorithm"),
        )
    if scenario == "auth/wif-jwt-bearer":  # the platform's token for this workload, as the grant's assertion
        return WorkloadIdentity(assertion=context["valid_jwt"], client_id=context.get("client_id"))
    if scenario == "auth/enterprise-managed-authorization":  # the person's ID token, exchanged for an ID-JAG
        return EnterpriseLogin(
            id_token=context["idp_id_token"],
            idp_token_endpoint=context["idp_token_endpoint"],
            idp_client_id=context["idp_client_id"],
            client_id=context["client_id"],
            client_secret=context.get("client_secret"),
        )
    return OAuth(
        redirect_uri=REDIRECT_URI,
        open_browser=follow_authorization,
        store=MemoryStore(),
        client_id=context.get("client_id"),
        client_secret=context.get("client_secret"),
        issuer=context.get("issuer"),
        client_metadata_url=CLIENT_METADATA_URL,
        client_name="baton-conformance-client",
    )


def sample_value(schema: dict[str, Any]) -> Any:
    """A value that fits a (simple) JSON Schema, for calling tools the scenario does not describe."""
    kind = schema.get("type")
    if "enum" in schema:
        return schema["enum"][0]
    if kind == "boolean":
        return True
    if kind in ("integer", "number"):
        return schema.get("minimum", 1)
    if kind == "array":
        return []
    if kind == "object":
        props = schema.get("properties") or {}
        return {name: sample_value(sub) for name, sub in props.items() if name in (schema.get("required") or [])}
    return "test"


async def answer_form(question: Question) -> Answer:
    """Accept every form with a value for each field that has no default; Baton's client sends the
    default of a field the answer leaves out."""
    assert question.form is not None
    content: dict[str, Any] = {}
    for field in question.form.fields:
        prop = field.schema()
        if "default" in prop:
            continue
        if prop.get("type") == "array":
            items = prop["items"]
            choices = items.get("enum") or [c["const"] for c in items.get("anyOf", [])]
            content[field.name] = choices[: max(1, prop.get("minItems", 1))]
        elif "oneOf" in prop:
            content[field.name] = prop["oneOf"][0]["const"]
        else:
            content[field.name] = sample_value(prop)
    return Accepted(content)


async def decline_url(question: Question) -> Answer:
    return Declined()  # an unattended program never opens URLs


async def call_quietly(client: Client, name: str, arguments: dict[str, Any]) -> None:
    try:
        result = await client.call_tool(name, arguments)
        log.info("%s -> %s", name, result.content)
    except McpError as exc:
        log.info("%s -> error %s %s", name, exc.code, exc.message)


async def exercise_everything(client: Client) -> None:
    """List and use whatever the server offers (tools, resources, prompts)."""
    for tool in await client.list_tools():
        await call_quietly(client, tool.name, sample_value(tool.input_schema))
    for kind in ("resources", "prompts"):
        try:
            if kind == "resources":
                resources = await client.list_resources()
                if resources:
                    await client.read_resource(resources[0].uri)
            else:
                prompts = await client.list_prompts()
                if prompts:
                    args = {a.name: "test" for a in prompts[0].arguments if a.required}
                    await client.get_prompt(prompts[0].name, args)
        except McpError as exc:
            log.info("%s: error %s %s", kind, exc.code, exc.message)


async def run(url: str, scenario: str) -> None:
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    async with Client(
        url,
        on_form=answer_form,
        on_url=decline_url,
        name="baton-conformance-client",
        protocol="auto",
        auth=oauth(scenario, context) if scenario.startswith("auth/") else None,
        extensions={SKILLS: {}} if scenario.startswith("sep-2640-") else None,
    ) as client:
        if scenario == "initialize":
            await client.list_tools()
        elif scenario == "tools_call":
            await client.list_tools()
            await client.call_tool("add_numbers", {"a": 5, "b": 3})
        elif scenario == "sep-2322-client-request-state":
            await client.list_tools()
            # Two flows in parallel: neither's inputs or state may leak into the other.
            await asyncio.gather(client.call_tool("test_mrtr_echo_state"), client.call_tool("test_mrtr_unrelated"))
            await client.call_tool("test_mrtr_no_state")
            result = await client.call_tool("test_mrtr_no_result_type")
            log.info("no resultType -> %s", result.content)
        elif scenario == "http-custom-headers":
            await client.list_tools()
            for call in context.get("toolCalls", []):
                await call_quietly(client, call["name"], call.get("arguments") or {})
        elif scenario == "elicitation-sep1034-client-defaults":
            await client.list_tools()
            await client.call_tool("test_client_elicitation_defaults")
        elif scenario == "sse-retry":
            await client.list_tools()
            await client.call_tool("test_reconnection")
        elif scenario == "json-schema-2020-12-preservation":
            tools = {t.name: t for t in await client.list_tools()}
            focal = tools["json_schema_2020_12_tool"].input_schema
            await client.call_tool("json_schema_echo", {"schema": focal})
        elif scenario.startswith("sep-2640-client-"):
            await use_skills(client, load=scenario != "sep-2640-client-no-prefetch")
        else:
            await exercise_everything(client)


async def use_skills(client: Client, *, load: bool) -> None:
    """List the skills (which fetches none of their files); when `load`, load each as a host would when the
    model picks it: every file verified, a tampered one refused and nothing after it fetched."""
    for skill in await client.list_skills():
        log.info("skill %s: %s", skill.name, skill.description)
        if not load:
            continue
        try:
            files = await client.load_skill(skill)
            log.info("loaded %s: %d file(s)", skill.name, len(files))
        except SkillVerificationError as exc:
            log.info("not loaded: %s", exc)


def main() -> int:
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    if len(sys.argv) < 2:
        print("usage: conformance_client.py SERVER_URL", file=sys.stderr)
        return 2
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    try:
        asyncio.run(run(sys.argv[-1], scenario))
    except AuthError as exc:  # the scenarios that test a refusal end here
        log.error("login refused: %s", exc)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
