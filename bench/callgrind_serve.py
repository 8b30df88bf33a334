"""A server for bench/callgrind_flows.py: Baton or the floor, as each is served, with its requests counted.

Run under `valgrind --tool=callgrind --instr-atstart=no` by `callgrind_flows.py`, not by hand. The ASGI app is
wrapped in a counter of HTTP requests: when the `--start`th request has been answered, callgrind starts counting
(`CALLGRIND_START_INSTRUMENTATION`, `CALLGRIND_ZERO_STATS`); when the `--stop`th has, it dumps what it counted
(`CALLGRIND_DUMP_STATS`) and stops. The window is whole requests of a warm server, the same for every server.
The client requests are two C functions in a small shared library built from `callgrind.h`
(`callgrind_flows.py` builds it), called through ctypes.

Baton is served as `baton serve examples/everything.py --http` serves it (`ready`, `Server.asgi`, `web.run`); the
floor as `bench/floor.py` serves itself (uvicorn.run, its defaults).
"""

from __future__ import annotations

import ctypes
import sys
from typing import Any

from options import OneLineParser


class Marked:
    """An ASGI app that marks the callgrind window by counting the HTTP requests it has answered."""

    def __init__(self, app: Any, marks: Any, start: int, stop: int) -> None:
        self.app, self.marks, self.start, self.stop = app, marks, start, stop
        self.answered = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.app(scope, receive, send)
        if scope["type"] == "http":
            self.answered += 1
            if self.answered == self.start:
                self.marks.bench_start()
            elif self.answered == self.stop:
                self.marks.bench_stop()


def main() -> int:
    parser = OneLineParser(description="Baton or the floor for callgrind_flows.py, its window marked.")
    parser.add_argument("--server", choices=("baton", "floor"), required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--marks", required=True, help="the shared library with bench_start and bench_stop")
    parser.add_argument("--start", type=int, required=True, help="requests answered before counting starts")
    parser.add_argument("--stop", type=int, required=True, help="requests answered when counting stops")
    opts = parser.parse_args()
    marks = ctypes.CDLL(opts.marks)
    if opts.server == "floor":
        import floor
        import uvicorn

        uvicorn.run(
            Marked(floor.app, marks, opts.start, opts.stop),
            host="127.0.0.1",
            port=opts.port,
            log_level="warning",
            access_log=False,
        )
        return 0
    from baton import web
    from baton.serve.run import ready
    from baton.serve.target import load_server

    server = load_server("examples/everything.py")
    refusal = ready(server, "http")
    if refusal:
        print(refusal, file=sys.stderr)
        return 2
    app = Marked(server.asgi(), marks, opts.start, opts.stop)
    return web.run(app, "127.0.0.1", opts.port, log_level="warning", graceful_s=1)


if __name__ == "__main__":
    sys.exit(main())
