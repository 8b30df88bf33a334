"""`baton publish`: what registries and hosts read about a server without running it, written from the server
itself: a `server.json` for the MCP Registry (`server_json`) and an MCPB bundle for desktop hosts (`mcpb`).
The command line is `baton.cli.publish`."""

__all__: list[str] = []  # a command, not an API: `baton publish` (baton.cli.publish)
