"""Serving a `Server`: the Streamable HTTP ASGI app and the stdio loop. These sit above the server layer.

Public: `serve_stdio(server)` (blocking; the exit status) and `serve_stdio_async`; `lambda_handler(server)`
for AWS Lambda. The HTTP app is `server.asgi()`; the other modules are internal.
"""

from .lambda_handler import lambda_handler
from .stdio import serve_stdio, serve_stdio_async

__all__ = ["lambda_handler", "serve_stdio", "serve_stdio_async"]
