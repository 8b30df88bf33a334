"""`baton install`: put a Baton server into the MCP host a person uses (Claude Desktop, Claude Code, Cursor,
VS Code, or any host through the generic `mcpServers` block), so that the host starts it from anywhere.

`host_apps` knows each host's file and entry shape, `config_file` reads and writes those files without losing
anything in them, the command line is `baton.cli.install`. See docs/hosts.md. Internal: the CLI is its interface.
"""

__all__: list[str] = []
