"""What `baton bridge --serve-http` adds: latency per two-round flow, and the bridge's memory at rest.

Usage: `.venv/bin/python bench/bridge_http_latency.py [--flows 200]`

The stdio server is `baton serve examples/everything.py --stdio`. It times `--flows` two-round flows
(`test_input_required_result_multi_round`: two questions, two rounds) with Baton's client five ways:
straight to the stdio server, as a 2026-07-28 client and as a 2025-11-25 one; and over HTTP through
`baton bridge --serve-http 0 -- baton serve ... --stdio`, as a 2026-07-28 client (the rounds pass through
as `input_required`), as a 2025-11-25 client (each round becomes `elicitation/create` on the session's SSE
stream), and as a 2026-07-28 client of a bridge that speaks 2025-11-25 to the stdio server (its
`elicitation/create` become rounds held by the bridge). Each way warms up first; then the ways take turns
flow by flow, and each one's median is printed with what the bridge adds to the direct way that speaks
the same version to the stdio server (2025-11-25 for a 2025-11-25 client, and for any client of the bridge
pinned to 2025-11-25). Then the resident memory (VmRSS) of the bridge process, its child not counted, after a
list and a second's rest.
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import time
from pathlib import Path

from bridge_latency import BATON, ROOT, TOOL, answer, take_turns
from processes import servers_environment

from baton.client import Client

STDIO = [BATON, "serve", str(ROOT / "examples" / "everything.py"), "--stdio", "--quiet"]


def start_bridge(*options: str) -> tuple[subprocess.Popen[bytes], str]:
    """`baton bridge --serve-http 0 [options] -- STDIO` and the URL it printed."""
    bridge = subprocess.Popen(
        [BATON, "bridge", "--serve-http", "0", *options, "--", *STDIO],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert bridge.stdout is not None
    url = bridge.stdout.readline().decode().strip()
    if not url.startswith("http://"):
        raise SystemExit("the bridge did not start")
    return bridge, url


async def measure(url: str, pinned_url: str, flows: int) -> dict[str, float]:
    """The median per way; the ways take turns flow by flow (the first way rotating), so that a machine
    busy with other work slows them alike."""
    ways: dict[str, Client] = {
        "direct stdio, 2026-07-28": Client(STDIO, on_form=answer, protocol="2026-07-28"),
        "direct stdio, 2025-11-25": Client(STDIO, on_form=answer, protocol="2025-11-25"),
        "via HTTP, 2026-07-28 client": Client(url, on_form=answer, protocol="2026-07-28"),
        "via HTTP, 2025-11-25 client": Client(url, on_form=answer, protocol="2025-11-25"),
        "via HTTP, 2026 client, 2025 stdio": Client(pinned_url, on_form=answer, protocol="2026-07-28"),
    }
    return await take_turns(ways, flows)


def rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS line")


async def listed(url: str) -> None:
    async with Client(url) as client:
        await client.list_tools()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flows", type=int, default=200)
    args = parser.parse_args()
    bridge, url = start_bridge()
    pinned, pinned_url = start_bridge("--protocol", "2025-11-25")
    try:
        medians = asyncio.run(measure(url, pinned_url, args.flows))
        print(f"median of {args.flows} two-round flows ({TOOL}):")
        for name, ms in medians.items():
            old = "2025-11-25 client" in name or "2025 stdio" in name  # the stdio server speaks 2025-11-25
            base = medians["direct stdio, 2025-11-25" if old else "direct stdio, 2026-07-28"]
            added = "" if name.startswith("direct") else f"  ({ms - base:+.2f} ms, {(ms - base) / 2:+.2f} ms per round)"
            print(f"  {name:36} {ms:7.2f} ms{added}")
        asyncio.run(listed(url))
        time.sleep(1.0)
        print(f"bridge at rest after a list: {rss(bridge.pid) / 1024:.1f} MiB resident (its stdio server not counted)")
    finally:
        for process in (bridge, pinned):
            process.terminate()
            process.wait(timeout=15)


if __name__ == "__main__":
    with servers_environment():  # its own data directory, not the home one
        main()
