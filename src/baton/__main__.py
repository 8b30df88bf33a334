"""`python -m baton` runs the `baton` command."""

import sys

from .cli import main

sys.exit(main())
