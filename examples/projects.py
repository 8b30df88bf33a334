"""Projects: a small, realistic Baton server, the one the README's demo drives.

- `delete_project` is destructive, so it is gated by `ctx.confirm`;
- `contact_support` asks a typed form (a dataclass) and gets a validated instance back;
- `create_project` is a multi-step flow: a step that must not repeat (reserving an id) runs
  through `ctx.once`, then two questions are asked in two rounds;
- `release_project` runs as a task when the client supports tasks (docs/tasks.md): it builds, asks for
  approval half-way, then releases; the build runs once, whatever the rounds.

`delete_project` and `create_project` take the page rung (`when_unasked="page"`): in a host that cannot
show their questions, the call answers with a link to the server's own page, and the next identical
call goes on with what the user answered there (docs/asking-in-every-host.md). The page needs the
server's public URL: `BATON_PUBLIC_URL=http://127.0.0.1:8000` for the command below.

Serve it:  baton serve examples/projects.py --http 127.0.0.1:8000
"""

from __future__ import annotations

import asyncio
import datetime as dt
import secrets
from dataclasses import dataclass
from enum import Enum
from typing import Annotated, Literal

from baton import Accepted, Context, Field, Server, form

server = Server("projects", "1.0.0", instructions="Manage projects: list, create, delete; contact support.")

# The demo keeps projects in memory; a real server would use its database.
PROJECTS: dict[str, dict[str, str]] = {
    "apollo": {"owner": "ada", "template": "web"},
    "gemini": {"owner": "grace", "template": "data"},
}


class Urgency(Enum):
    LOW = "low"
    NORMAL = "normal"
    HIGH = "high"


@form
@dataclass
class SupportRequest:
    """What support needs to get back to you."""

    name: Annotated[str, Field(title="Your name", min_length=1)]
    email: Annotated[str, Field(title="Email", format="email")]
    urgency: Annotated[
        Urgency,
        Field(title="Urgency", titles={"low": "Whenever", "normal": "This week", "high": "Today, please"}),
    ] = Urgency.NORMAL
    call_back_on: Annotated[dt.date | None, Field(title="Call me back on (optional)")] = None
    newsletter: Annotated[bool, Field(title="Subscribe to the newsletter")] = False


@form
@dataclass
class Template:
    template: Annotated[Literal["web", "data", "cli"], Field(title="Template")]
    regions: Annotated[
        list[Literal["eu", "us", "ap"]], Field(title="Regions", min_items=1, description="Where to deploy")
    ]


@server.tool(annotations={"readOnlyHint": True})
def list_projects() -> str:
    """List the projects."""
    if not PROJECTS:
        return "No projects."
    return "\n".join(f"{name} (owner {p['owner']}, template {p['template']})" for name, p in sorted(PROJECTS.items()))


@server.tool(annotations={"destructiveHint": True}, when_unasked="page")
async def delete_project(ctx: Context, project_id: str) -> str:
    """Delete a project after the user confirms."""
    if project_id not in PROJECTS:
        return f"There is no project {project_id!r}."
    if not await ctx.confirm(f"Delete project {project_id}? This cannot be undone."):
        return "Deletion was not confirmed."
    del PROJECTS[project_id]
    return f"Deleted {project_id}."


@server.tool()
async def contact_support(ctx: Context, topic: str) -> str:
    """Open a support ticket; asks for contact details."""
    answer = await ctx.elicit(SupportRequest, f"Support for {topic!r}: how can we reach you?")
    if not isinstance(answer, Accepted):
        return "No ticket opened."
    req = answer.data
    when = f", call back on {req.call_back_on:%A %d %B}" if req.call_back_on else ""
    return f"Ticket opened for {req.name} <{req.email}>, urgency {req.urgency.value}{when}."


@server.tool(when_unasked="page")
async def create_project(ctx: Context, name: str) -> str:
    """Create a project: reserve an id, choose a template and regions, confirm the monthly cost."""
    # Runs once per flow, not once per round: the reserved id is recorded in the sealed state.
    project_id = await ctx.once("reserve", lambda: f"{name}-{secrets.token_hex(2)}")
    answer = await ctx.elicit(Template, f"How should {project_id} be set up?", key="template")
    if not isinstance(answer, Accepted):
        return "Creation cancelled."
    cost = 20 * len(answer.data.regions)
    if not await ctx.confirm(f"{project_id} will cost ${cost} a month. Create it?", key="cost"):
        return "Creation cancelled."
    PROJECTS[project_id] = {"owner": ctx.principal, "template": answer.data.template}
    return f"Created {project_id} ({answer.data.template} in {', '.join(answer.data.regions)}), ${cost}/month."


if __name__ == "__main__":
    server.run()  # stdio, as a host starts it; server.run("http", port=8000) for Streamable HTTP


@server.tool(task="optional", annotations={"destructiveHint": True})
async def release_project(ctx: Context, project_id: str) -> str:
    """Build a project, ask for approval, then release it (a task when the client supports tasks)."""
    if project_id not in PROJECTS:
        return f"There is no project {project_id!r}."
    build = await ctx.once("build", lambda: _build(project_id))  # once, though the handler replays
    await ctx.progress(1, 2, f"built {build}; waiting for approval")
    if not await ctx.confirm(f"Build {build} of {project_id} is ready. Release it?", key="approve"):
        return f"Build {build} was not released."
    await ctx.progress(2, 2, f"releasing {build}")
    await asyncio.sleep(0.2)  # the demo's stand-in for the rollout
    return f"Released build {build} of {project_id}."


async def _build(project_id: str) -> str:
    await asyncio.sleep(0.2)  # the demo's stand-in for a build
    return f"{project_id}-{secrets.token_hex(3)}"
