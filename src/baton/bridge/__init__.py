"""`baton bridge URL`: a stdio MCP server for a host that forwards to a Streamable HTTP server at URL.

Each side speaks its own era (protocol.md P134): the host either version (its `initialize`, or the 2026
`_meta` on each request), the server either version (probed as `baton call` does, or `--protocol`).
`host` reads and writes the host's lines, `remote` is what each request becomes at the server (one
`Client`), `ask` puts the server's questions to the host (`held`: a 2025-11-25 server's, to a 2026 host, as
rounds); the command line is `baton.cli.bridge` (and `baton.cli.bridge_http`, `--serve-http`).
"""

__all__: list[str] = []  # a command, not a library: `baton.cli.bridge` runs it

ASK_TIMEOUT_S = 600.0
"""How long a question waits for the host's answer before it reads as cancelled (as `baton serve`'s default).
Here, not in `replies`, so that `baton`'s parser reads it without loading the forms."""
