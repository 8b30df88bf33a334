"""A server whose state key lives only in its own process: fine alone, refused with --workers."""

from baton import KeyRing, Server

server = Server("ephemeral", state_keys=KeyRing.ephemeral_key())


@server.tool()
def hello() -> str:
    return "hello"
