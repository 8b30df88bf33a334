"""`python -m baton` runs the `baton` command."""

import sys

from .cli import main

if __name__ == "__main__":  # not when a spawned process (uvicorn's reloader, workers) imports it again
    sys.exit(main())
