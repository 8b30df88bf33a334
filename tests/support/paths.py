"""Where things are: the project root, the `baton` command of this venv, the test servers."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BATON = str(Path(sys.executable).with_name("baton"))
SERVERS = ROOT / "tests" / "servers"
