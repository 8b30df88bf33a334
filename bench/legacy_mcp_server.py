"""The mcp 2.3.0 peer of bench/legacy_compare: peers/mcp_server.py's ``perform``, served with 2025-11-25 sessions.

The tool is the one the 2026 benchmark runs (``peers/mcp_server.py``, imported, not copied): a resolver asks
one boolean confirmation and the tool returns ``done: <action>``. The SDK follows the negotiated version: in a
2025-11-25 session it sends the question as an ``elicitation/create`` request on the call's SSE stream and waits
for the client's answer. Served with ``mcp.run("streamable-http")`` in the SDK's stateful mode (its default:
``stateless_http=False``, SSE responses) at ``/mcp`` on 127.0.0.1 only.

Run it in its own venv, never in Baton's (bench/legacy_compare uses ``.cache/bench/mcp``, made with
``mcp==2.3.0``).
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "peers"))

from mcp_server import mcp  # the 2026 bench's peer, whose tool this serves in sessions


def main() -> None:
    parser = argparse.ArgumentParser(description="mcp 2.3.0 peer with 2025-11-25 sessions (127.0.0.1, path /mcp).")
    parser.add_argument("--port", type=int, default=8766, help="TCP port on 127.0.0.1 (default 8766)")
    opts = parser.parse_args()
    mcp.run("streamable-http", host="127.0.0.1", port=opts.port, stateless_http=False, json_response=False)


if __name__ == "__main__":
    main()
