"""examples/projects.py, tested only with the testing kit (baton.testing and its pytest fixtures).

Every test talks to the server in memory; the eras are run by parametrizing `baton_era`.
"""

from __future__ import annotations

import asyncio
import copy
import importlib.util
import sys
from collections.abc import Iterator
from types import ModuleType

import pytest
from support.paths import ROOT

from baton import McpError
from baton.client import CallToolResult, Client, Round
from baton.testing import (
    Accepted,
    Cancelled,
    Declined,
    FakeClock,
    Invalid,
    ScriptedUser,
    UnexpectedQuestion,
    check_refusals,
    check_tampering,
)

BOTH_ERAS = pytest.mark.parametrize("baton_era", ["2026-07-28", "2025-11-25"])


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("projects_example", ROOT / "examples" / "projects.py")
    assert spec is not None and spec.loader is not None
    module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)  # dataclasses look it up
    spec.loader.exec_module(module)
    return module


projects = _load()
INITIAL = copy.deepcopy(projects.PROJECTS)


def reset() -> None:
    projects.PROJECTS.clear()
    projects.PROJECTS.update(copy.deepcopy(INITIAL))


def names() -> list[str]:
    return sorted(projects.PROJECTS)


@pytest.fixture(autouse=True)
def fresh_projects() -> Iterator[None]:
    reset()
    yield
    reset()


@pytest.fixture
def baton_server() -> object:
    return projects.server


@BOTH_ERAS
def test_delete_asks_once_and_deletes_on_yes(baton_client: Client, scripted_user: ScriptedUser) -> None:
    scripted_user.on("q1", {"confirm": True})
    result = asyncio.run(baton_client.call_tool("delete_project", {"project_id": "apollo"}))
    assert result.text == "Deleted apollo."
    assert names() == ["gemini"]
    [asked] = scripted_user.asked
    assert (asked.key, asked.mode, asked.fields) == ("q1", "form", ["confirm"])
    assert asked.message == "Delete project apollo? This cannot be undone."


@BOTH_ERAS
@pytest.mark.parametrize("refusal", [Declined(), Cancelled(), {"confirm": False}])
def test_delete_keeps_the_project_unless_confirmed(
    baton_client: Client, scripted_user: ScriptedUser, refusal: object
) -> None:
    scripted_user.when("Delete project", refusal)
    result = asyncio.run(baton_client.call_tool("delete_project", {"project_id": "apollo"}))
    assert result.text == "Deletion was not confirmed."
    assert names() == ["apollo", "gemini"]


@BOTH_ERAS
def test_an_unknown_project_is_not_asked_about(baton_client: Client, scripted_user: ScriptedUser) -> None:
    result = asyncio.run(baton_client.call_tool("delete_project", {"project_id": "voyager"}))
    assert result.text == "There is no project 'voyager'."
    assert scripted_user.asked == []


@BOTH_ERAS
def test_contact_support_gets_a_typed_form(baton_client: Client, scripted_user: ScriptedUser) -> None:
    scripted_user.on("q1", {"name": "Ada", "email": "ada@example.com", "urgency": "high"})
    result = asyncio.run(baton_client.call_tool("contact_support", {"topic": "billing"}))
    assert result.text == "Ticket opened for Ada <ada@example.com>, urgency high."
    [asked] = scripted_user.asked
    assert asked.fields == ["name", "email", "urgency", "call_back_on", "newsletter"]
    assert asked.message == "Support for 'billing': how can we reach you?"


@BOTH_ERAS
def test_create_reasks_an_invalid_template_and_reserves_the_id_once(
    baton_client: Client, scripted_user: ScriptedUser
) -> None:
    scripted_user.on(
        "template", Invalid({"template": "mainframe", "regions": ["eu"]}), {"template": "cli", "regions": ["eu", "us"]}
    )
    scripted_user.on("cost", {"confirm": True})
    result = asyncio.run(baton_client.call_tool("create_project", {"name": "vega"}))
    assert scripted_user.keys == ["template", "template", "cost"]
    first, again, cost = scripted_user.asked
    assert again.message.startswith("Template: must be one of web, data, cli")
    project_id = first.message.split()[2]  # "How should vega-xxxx be set up?"
    assert project_id.startswith("vega-") and project_id in again.message and project_id in cost.message
    assert result.text == f"Created {project_id} (cli in eu, us), $40/month."
    assert project_id in projects.PROJECTS


@BOTH_ERAS
def test_an_unscripted_question_fails_the_call_clearly(baton_client: Client, scripted_user: ScriptedUser) -> None:
    scripted_user.on("template", {"template": "web", "regions": ["eu"]})
    with pytest.raises(UnexpectedQuestion, match=r"unexpected question 'cost' .*will cost \$20 a month"):
        asyncio.run(baton_client.call_tool("create_project", {"name": "vega"}))
    assert names() == ["apollo", "gemini"]


@BOTH_ERAS
@pytest.mark.parametrize(
    ("tool", "arguments", "answers"),
    [
        ("delete_project", {"project_id": "apollo"}, {"q1": {"confirm": True}}),
        (
            "create_project",
            {"name": "vega"},
            {"template": {"template": "web", "regions": ["ap"]}, "cost": {"confirm": True}},
        ),
    ],
)
def test_no_refusal_at_any_ask_acts(
    baton_era: str, tool: str, arguments: dict[str, str], answers: dict[str, object]
) -> None:
    async def call(client: Client) -> CallToolResult:
        return await client.call_tool(tool, arguments)

    outcomes = asyncio.run(
        check_refusals(projects.server, call, answers=answers, probe=names, reset=reset, protocol=baton_era)
    )
    assert {(o.what, o.key) for o in outcomes} == {(what, key) for key in answers for what in ("decline", "cancel")}
    assert all("cancelled" in o.result.text or "not confirmed" in o.result.text for o in outcomes)


def test_a_mutated_request_state_is_refused() -> None:
    outcomes = asyncio.run(
        check_tampering(
            projects.server,
            "tools/call",
            {"name": "delete_project", "arguments": {"project_id": "apollo"}},
            answers={"q1": {"confirm": True}},
            swap={"name": "delete_project", "arguments": {"project_id": "gemini"}},
        )
    )
    assert [o.what for o in outcomes] == [
        "flipped", "truncated", "not a token", "empty", "swapped", "expired", "completed",
    ]  # fmt: skip
    assert all(isinstance(o.result, McpError) and o.result.code == -32602 for o in outcomes[:-1])
    assert outcomes[-1].result["content"][0]["text"] == "Deleted apollo."


def test_a_round_answered_after_the_state_expired_is_refused(
    baton_client: Client, scripted_user: ScriptedUser, fake_clock: FakeClock
) -> None:
    async def late(wait_s: float) -> object:
        step = await baton_client.start("tools/call", {"name": "delete_project", "arguments": {"project_id": "apollo"}})
        assert isinstance(step, Round)
        fake_clock.advance(wait_s)
        return await baton_client.advance(step, {"q1": Accepted({"confirm": True})})

    assert projects.server.settings.state_ttl_s == 600
    with pytest.raises(McpError, match="Invalid or expired requestState"):
        asyncio.run(late(601))
    assert names() == ["apollo", "gemini"]
    done = asyncio.run(late(599))  # within the time to live: answered
    assert CallToolResult.from_raw(done).text == "Deleted apollo."
