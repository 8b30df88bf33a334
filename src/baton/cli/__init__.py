"""The `baton` command: one module per command (`serve`, `install`, `bridge` with `bridge_http`, `dev`, `keys`,
`publish`, and the client commands of `client_commands`), each adding its argparse subparser; `main` parses and runs."""

from .main import main

__all__ = ["main"]
