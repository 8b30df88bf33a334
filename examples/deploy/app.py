"""The server examples/deploy/Dockerfile puts in a container: replace this file with yours.

docker build -f examples/deploy/Dockerfile -t baton-app .     # from the root of Baton's checkout
"""

from baton import Server

server = Server("deploy-example", version="1.0.0", instructions="Adds numbers; a server to deploy.")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b
