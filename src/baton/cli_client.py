"""`baton tools TARGET` and `baton call TARGET TOOL [key=value ...]`: a client from the command line.

TARGET is a server URL (`http://127.0.0.1:8000/mcp`) or, after `--`, the command that starts a
stdio server; the tool and its arguments come before the `--`:
`baton call my_tool x=1 -- baton serve app.py --stdio`. Questions the server asks are answered at
the terminal through the terminal renderer. Servers of both eras work: the client probes which one
it talks to (protocol.md P34).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from typing import Any

import orjson

from .client import Client, ClientError
from .protocol.errors import McpError
from .render import TerminalRenderer


class UsageError(Exception):
    """Command-line input that cannot be used; the message says how to fix it."""


def split_target(args: Sequence[str]) -> tuple[list[str], str | list[str]]:
    """Split `[words...] [-- command...]` into the words and the target (a URL or a command)."""
    words = list(args)
    if "--" in words:
        cut = words.index("--")
        command = words[cut + 1 :]
        if not command:
            raise UsageError("nothing after --: give the command that starts the stdio server")
        return words[:cut], command
    urls = [w for w in words if w.startswith(("http://", "https://"))]
    if len(urls) != 1:
        raise UsageError("give the server as an http(s) URL, or after -- as a command that starts a stdio server")
    words.remove(urls[0])
    return words, urls[0]


def parse_arguments(pairs: Sequence[str], schema: dict[str, Any]) -> dict[str, Any]:
    """`key=value` pairs as tool arguments: strings stay strings where the schema says so, else JSON."""
    props = schema.get("properties") or {}
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"arguments are written key=value, not {pair!r}")
        if props.get(key, {}).get("type") == "string":
            out[key] = text
            continue
        try:
            out[key] = json.loads(text)
        except json.JSONDecodeError:
            out[key] = text
    return out


def print_result(result: dict[str, Any]) -> int:
    for block in result.get("content") or []:
        kind = block.get("type")
        if kind == "text":
            print(block.get("text", ""))
        elif kind in ("image", "audio"):
            print(f"[{kind} {block.get('mimeType', '')}, {len(block.get('data', '')) * 3 // 4} bytes]")
        elif kind == "resource":
            resource = block.get("resource") or {}
            print(f"[resource {resource.get('uri', '')}]")
            if "text" in resource:
                print(resource["text"])
        elif kind == "resource_link":
            print(f"[link {block.get('uri', '')}]")
    if "structuredContent" in result and not result.get("content"):
        print(orjson.dumps(result["structuredContent"], option=orjson.OPT_INDENT_2).decode())
    return 1 if result.get("isError") else 0


async def _tools(target: str | list[str]) -> int:
    async with Client(target, name="baton-cli", protocol="auto") as client:
        for tool in await client.list_tools():
            props = (tool.get("inputSchema") or {}).get("properties") or {}
            params = ", ".join(f"{name}: {p.get('type', 'any')}" for name, p in props.items())
            print(f"{tool['name']}({params})")
            if tool.get("description"):
                print(f"    {tool['description'].splitlines()[0]}")
    return 0


async def _call(target: str | list[str], tool: str, pairs: Sequence[str]) -> int:
    renderer = TerminalRenderer()
    async with Client(target, on_form=renderer, on_url=renderer, name="baton-cli", protocol="auto") as client:
        tools = {t["name"]: t for t in await client.list_tools()}
        if tool not in tools:
            raise UsageError(f"the server has no tool {tool!r}; it has: {', '.join(sorted(tools)) or 'none'}")
        arguments = parse_arguments(pairs, tools[tool].get("inputSchema") or {})
        return print_result(await client.call_tool(tool, arguments))


def run(command: str, argv: Sequence[str]) -> int:
    """Run `baton tools` or `baton call` with the words after the command."""
    parser = argparse.ArgumentParser(prog=f"baton {command}", description=__doc__)
    try:
        words, target = split_target(argv)
        if command == "tools":
            if words:
                raise UsageError(f"unexpected words: {' '.join(words)}")
            return asyncio.run(_tools(target))
        if not words:
            raise UsageError("name the tool to call: baton call TARGET TOOL [key=value ...]")
        return asyncio.run(_call(target, words[0], words[1:]))
    except UsageError as exc:
        parser.print_usage(sys.stderr)
        print(f"baton {command}: {exc}", file=sys.stderr)
        return 2
    except McpError as exc:
        print(f"baton {command}: the server answered error {exc.code}: {exc.message}", file=sys.stderr)
        return 1
    except ClientError as exc:
        print(f"baton {command}: {exc}", file=sys.stderr)
        return 1
    except (OSError, ConnectionError) as exc:
        print(f"baton {command}: cannot reach the server: {exc}", file=sys.stderr)
        return 1
