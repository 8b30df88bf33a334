"""guarded.py's server plus a prompt named like its tool, for replaying a tools/call token on prompts/get.

The prompt takes the same argument and asks the same question as `delete_project`, so only the method
differs; like every guarded handler it writes to the run log whenever its body runs.
"""

from __future__ import annotations

from guarded import ran, server

from baton import Context


@server.prompt("delete_project")
async def delete_project_prompt(ctx: Context, project: str) -> str:
    """The prompt twin of the delete_project tool."""
    ran(f"prompt:delete_project:{project}")
    if not await ctx.confirm(f"Delete {project}?"):
        return "kept"
    return f"Delete {project} now."
