"""Serving a `Server`: the Streamable HTTP ASGI app and the stdio loop. These sit above the server layer."""
