"""Transports: the ASGI app for Streamable HTTP and the stdio server; they know nothing of tools."""
