"""The CLI's `key=value` tool arguments, read against the tool's input schema: the input is NUL-separated words
after a first word naming which properties the schema types as strings."""

from __future__ import annotations

from baton.cli.client_commands.args import CommandLineError, parse_arguments

from ..harness import Target


def one(data: bytes) -> None:
    first, *words = data.decode("utf-8", "replace").split("\0")
    schema = {"type": "object", "properties": {name: {"type": "string"} for name in first.split(",")}}
    parse_arguments(words, schema)


TARGET = Target("cli_arguments", "the CLI's key=value arguments", one, (CommandLineError,))
