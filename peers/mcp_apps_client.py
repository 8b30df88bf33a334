"""Interop peer: `mcp==2.3.0`'s client reads a server's MCP Apps tool and page as its own Apps extension would.

Usage: `python mcp_apps_client.py URL TOOL [legacy]`. Declares `io.modelcontextprotocol/ui` with the app
MIME type, lists the tools, follows TOOL's `_meta.ui.resourceUri` to the page with `resources/read`, and
checks what it got against `mcp.server.apps`: the extension identifier and MIME type, the page's `_meta.ui`
read through the SDK's own `ResourceCsp` and `ResourcePermissions` models with nothing left over, and the
same page and tool declared with the SDK's `Apps` extension (in process) carrying the same `_meta.ui`.
Then calls TOOL and requires text content. `legacy` opens a 2025-11-25 session instead of 2026-07-28.
Prints `apps: ok` and exits 0, or prints what differed and exits 1. Runs in `.cache/interop/mcp`.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from mcp import Client
from mcp.client import advertise
from mcp.server.apps import APP_MIME_TYPE, EXTENSION_ID, Apps, ResourceCsp, ResourcePermissions
from mcp.server.mcpserver import MCPServer
from mcp.types import TextContent


def dumped(model: Any) -> Any:
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


def reference(uri: str, html: str, listed: dict[str, Any], ui: dict[str, Any], tool: dict[str, Any]) -> MCPServer:
    """The same page and tool declared with the SDK's own Apps extension."""
    apps = Apps()
    csp, permissions = ui.get("csp"), ui.get("permissions")
    apps.add_html_resource(
        uri,
        html,
        name=listed.get("name"),
        title=listed.get("title"),
        description=listed.get("description"),
        csp=None if csp is None else ResourceCsp.model_validate(csp),
        permissions=None if permissions is None else ResourcePermissions.model_validate(permissions),
        domain=ui.get("domain"),
        prefers_border=ui.get("prefersBorder"),
    )

    def same_tool() -> str:
        return "reference"

    tool_ui = tool["_meta"]["ui"]
    apps.tool(resource_uri=uri, visibility=tool_ui.get("visibility"), name=tool["name"])(same_tool)
    return MCPServer("reference", extensions=[apps])


async def run(url: str, tool_name: str, mode: str) -> list[str]:
    problems: list[str] = []

    def expect(what: str, got: Any, wanted: Any) -> None:
        if got != wanted:
            problems.append(f"{what}: got {got!r}, expected {wanted!r}")

    declared = [advertise(EXTENSION_ID, {"mimeTypes": [APP_MIME_TYPE]})]
    async with Client(url, extensions=declared, mode=mode) as client:  # type: ignore[arg-type]
        print(f"protocol: {client.protocol_version}", file=sys.stderr)
        extensions = dumped(client.server_capabilities).get("extensions") or {}
        expect("the server's declaration of the Apps extension", EXTENSION_ID in extensions, True)
        tools = {t.name: dumped(t) for t in (await client.list_tools()).tools}
        tool = tools[tool_name]
        uri = tool["_meta"]["ui"]["resourceUri"]
        expect("the legacy flat key", tool["_meta"].get("ui/resourceUri"), uri)
        listed = {r.uri: dumped(r) for r in (await client.list_resources()).resources}.get(uri, {})
        expect("the listed page's MIME type", listed.get("mimeType"), APP_MIME_TYPE)
        (item,) = [dumped(c) for c in (await client.read_resource(uri)).contents]
        expect("the read page's MIME type", item.get("mimeType"), APP_MIME_TYPE)
        ui = (item.get("_meta") or {}).get("ui") or {}
        for key, model in (("csp", ResourceCsp), ("permissions", ResourcePermissions)):
            if key in ui:
                expect(
                    f"_meta.ui.{key} read by the SDK's {model.__name__}", dumped(model.model_validate(ui[key])), ui[key]
                )
        called = await client.call_tool(tool_name, {})
        text = "".join(b.text for b in called.content if isinstance(b, TextContent))
        expect("the tool's text content is there", bool(text.strip()), True)
        print(f"text: {text}", file=sys.stderr)
        print(f"result _meta keys: {sorted((dumped(called).get('_meta') or {}).keys())}", file=sys.stderr)

    async with Client(reference(uri, item["text"], listed, ui, tool)) as ref:
        ref_tool = dumped((await ref.list_tools()).tools[0])
        expect("the tool's _meta.ui, as the SDK's Apps stamps it", tool["_meta"]["ui"], ref_tool["_meta"]["ui"])
        (ref_item,) = [dumped(c) for c in (await ref.read_resource(uri)).contents]
        expect("the read page, as the SDK's Apps serves it", {**item, "text": "..."}, {**ref_item, "text": "..."})
        ref_listed = dumped((await ref.list_resources()).resources[0])
        expect("the listed page, as the SDK's Apps lists it", listed, ref_listed)
    return problems


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4) or sys.argv[3:] not in ([], ["legacy"]):
        print("usage: mcp_apps_client.py URL TOOL [legacy]", file=sys.stderr)
        sys.exit(2)
    found = asyncio.run(run(sys.argv[1], sys.argv[2], "legacy" if sys.argv[3:] else "auto"))
    for problem in found:
        print(problem)
    print("apps: ok" if not found else f"apps: {len(found)} differences")
    sys.exit(1 if found else 0)
