"""The wire protocol of MCP 2026-07-28: shapes, error codes, `_meta`, capabilities, headers.

No I/O lives here: dicts and bytes in, dicts and bytes out. Internal: `McpError` and `PROTOCOL_VERSION`
are public from `baton`; the modules here may change.
"""

__all__: list[str] = []
