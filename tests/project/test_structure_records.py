"""Records of many fields (what a server registers: tools, resources, templates, prompts, their `Flow` and
`Signature`; a login's `TokenGrant`; a client command's `Invocation`; a client's `Round`; a page's `Ticket`;
a task's `TaskJob`) are built by keyword and never changed after: a change is a new record
(`dataclasses.replace`). A task's `Task` is built by keyword too, but is the task's live state on its instance
and changes as its rounds run (its store write checks the version)."""

from __future__ import annotations

import dataclasses

import pytest

from baton.cli.client_commands.args import Invocation
from baton.client.oauth.flow import TokenGrant
from baton.client.rounds import Round
from baton.connect.tickets import Ticket
from baton.server.registry import Flow, RegisteredPrompt, RegisteredResource, RegisteredTemplate, RegisteredTool
from baton.server.signature import Signature
from baton.server.tasks import Task, TaskJob

RECORDS = (
    RegisteredTool,
    RegisteredResource,
    RegisteredTemplate,
    RegisteredPrompt,
    Flow,
    Signature,
    TokenGrant,
    Invocation,
    Round,
    Ticket,
    TaskJob,
)


@pytest.mark.parametrize("record", RECORDS, ids=lambda record: record.__name__)
def test_a_registered_record_is_keyword_only_and_frozen(record: type) -> None:
    params = record.__dataclass_params__  # type: ignore[attr-defined]
    assert params.frozen, f"{record.__name__} can be changed after it is built"
    assert all(f.kw_only for f in dataclasses.fields(record)), f"{record.__name__} takes positional arguments"


def test_a_tasks_live_record_is_built_by_keyword() -> None:
    assert all(f.kw_only for f in dataclasses.fields(Task)), "Task takes positional arguments"


def test_a_registered_tool_cannot_be_changed_after_registration() -> None:
    from baton import Server

    server = Server("records")

    @server.tool()
    async def add(a: int, b: int) -> int:
        return a + b

    tool = server.tools["add"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        tool.scopes = ("admin",)  # type: ignore[misc]
    assert tool.flow is not None and tool.flow.method == "tools/call"
