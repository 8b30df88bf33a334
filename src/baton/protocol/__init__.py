"""The wire protocol of MCP 2026-07-28: shapes, error codes, `_meta`, capabilities, headers.

No I/O lives here: dicts and bytes in, dicts and bytes out.
"""
