"""The `baton` command: one module per command (`serve`, `dev`, `install`, `bridge`, `keys`, and the client
commands of `client_commands`); `main` builds the argparse parser and runs the command it names."""

from .serve import main

__all__ = ["main"]
