"""The ASGI apps bench/granian_compare.py serves under both granian and uvicorn, so each pair differs only in the
HTTP server: ``baton`` is examples/everything.py's ``server.asgi()`` (its key file in ``$BATON_DATA_DIR``, which
the driver points at a temporary folder); ``floor_app`` is bench/floor.py's app."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "examples")]

import floor  # noqa: E402
from everything import server  # noqa: E402

baton = server.asgi()
floor_app = floor.app
