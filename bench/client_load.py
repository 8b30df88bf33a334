"""MRTR client load: the client's own CPU per multi round-trip flow, for Baton's client or the mcp 2.3.0 one.

Each flow is ``call_tool("perform", {"action": "deploy-<i>"})`` through the client's high-level API.
The server answers ``input_required`` with one boolean form elicitation, the client's elicitation
handler accepts it with ``{"confirm": true}``, and the client's own MRTR loop retries until the
result ``done: deploy-<i>`` comes back. The code is what each library's users write:

- ``--client baton``: ``baton.client.Client(url, on_form=handler)``, the handler returning
  ``Accepted({"confirm": True})``. Run it with Baton's venv (``.venv/bin/python``).
- ``--client mcp``: ``mcp.Client(url, elicitation_callback=on_elicit)`` (default ``mode="auto"``,
  which probes ``server/discover`` once at connect), the callback returning
  ``ElicitResult(action="accept", content={"confirm": True})``. Run it with a venv holding
  ``mcp==2.3.0`` (``.cache/bench/mcp``, made by ``bench/compare`` or ``bench/client_compare``).

One client object is shared by ``--concurrency`` tasks that run flows back to back. The figure that
counts is this process's CPU time (``time.process_time``: user + system, all threads) over the
measured phase, after the connect and the warmup, divided by the flows attempted. The report also
gives the requests per flow, counted as 1 + the elicitations answered per flow attempted (each answer
costs one retry), so that the CPU per round trip is the CPU per flow divided by it. Only loopback
URLs are accepted. Exit status: 0 all flows succeeded, 1 some failed, 2 usage or fatal error.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.metadata
import json
import os
import platform
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from load import (
    FatalError,
    FlowError,
    Tally,
    add_limits,
    aligned,
    cpu_seconds,
    event_loop_runner,
    latency_ms,
    memory_mib,
    process_tree,
    require_loopback,
)

TOOL = "perform"
Call = Callable[[str], Awaitable[str]]  # one whole flow for an action; returns the final text


@dataclass
class Counter:
    """Elicitation callbacks seen (the handlers count them: one per flow is expected)."""

    asked: int = 0


# ---------------------------------------------------------------------------------------------------
# The two clients, as their users write them
# ---------------------------------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def baton_client(url: str, counter: Counter) -> AsyncIterator[Call]:
    from baton.client import Accepted, Answer, Client, Question

    async def handler(question: Question) -> Answer[Any]:
        counter.asked += 1
        return Accepted({"confirm": True})

    async with Client(url, on_form=handler) as client:

        async def call(action: str) -> str:
            result = await client.call_tool(TOOL, {"action": action})
            if result.is_error:
                raise FlowError("isError", json.dumps(result.raw.get("content"))[:160])
            return result.text

        yield call


@contextlib.asynccontextmanager
async def mcp_client(url: str, counter: Counter) -> AsyncIterator[Call]:
    from mcp import Client
    from mcp.client import ClientRequestContext
    from mcp.types import ElicitRequestParams, ElicitResult, TextContent

    async def on_elicit(context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
        counter.asked += 1
        return ElicitResult(action="accept", content={"confirm": True})

    async with Client(url, elicitation_callback=on_elicit) as client:

        async def call(action: str) -> str:
            result = await client.call_tool(TOOL, {"action": action})
            if result.is_error:
                raise FlowError("isError", repr(result.content)[:160])
            block = result.content[0] if result.content else None
            return block.text if isinstance(block, TextContent) else repr(block)

        yield call


CLIENTS: dict[str, Callable[[str, Counter], contextlib.AbstractAsyncContextManager[Call]]] = {
    "baton": baton_client,
    "mcp": mcp_client,
}
PACKAGES = {
    "baton": ("mcp-baton", "orjson", "uvloop"),
    "mcp": ("mcp", "mcp-types", "httpx2", "httpcore2", "h11", "anyio", "pydantic", "pydantic-core"),
}


# ---------------------------------------------------------------------------------------------------
# Phases
# ---------------------------------------------------------------------------------------------------


def failure(tally: Tally, exc: BaseException) -> None:
    kind = exc.kind if isinstance(exc, FlowError) else type(exc).__name__
    tally.failure(kind, exc, f"{kind}: {str(exc)[:300]}")


async def lane(call: Call, tally: Tally, prefix: str, limit_s: float) -> None:
    """Run flows back to back until the phase has none left to start."""
    clock = time.perf_counter
    while (i := tally.take()) is not None:
        action = f"{prefix}{i}"
        started = clock()
        try:
            async with asyncio.timeout(limit_s):
                text = await call(action)
        except Exception as exc:  # any failure of one flow is counted, and the lane goes on
            failure(
                tally, FlowError("timeout", f"flow took over {limit_s:g} s") if isinstance(exc, TimeoutError) else exc
            )
            continue
        if text != f"done: {action}":
            failure(tally, FlowError("bad-result", f"expected 'done: {action}', got {text[:120]!r}"))
            continue
        tally.ok += 1
        tally.latencies.append(clock() - started)


async def phase(call: Call, total: int, concurrency: int, prefix: str, limit_s: float, deadline: float | None) -> Tally:
    """Run ``total`` flows on ``concurrency`` lanes; none starts after ``deadline`` (time.monotonic)."""
    tally = Tally(total, deadline)
    await asyncio.gather(*(lane(call, tally, prefix, limit_s) for _ in range(min(concurrency, max(total, 1)))))
    return tally


# ---------------------------------------------------------------------------------------------------
# Measuring
# ---------------------------------------------------------------------------------------------------


def server_cpu_seconds(pid: int) -> float | None:
    """CPU time of ``pid`` and its descendants (`load.cpu_seconds`: Linux, nanoseconds), or None if it is gone."""
    if not os.path.exists(f"/proc/{pid}"):
        return None
    return cpu_seconds(process_tree([pid]))


def versions(client: str) -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in PACKAGES[client]:
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            out[name] = importlib.metadata.version(name)
    return out


def innermost(exc: BaseException) -> BaseException:
    """The first exception inside (nested) exception groups, or ``exc`` itself."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


async def measure(opts: argparse.Namespace) -> dict[str, Any]:
    counter = Counter()
    t_connect = time.perf_counter()
    try:
        async with contextlib.AsyncExitStack() as stack:
            try:
                call = await stack.enter_async_context(CLIENTS[opts.client](opts.url, counter))
            except Exception as exc:
                raise FatalError(f"{opts.client} client could not connect to {opts.url}: {innermost(exc)!r}") from None
            connect_s = time.perf_counter() - t_connect
            if opts.warmup:
                warm = await phase(call, opts.warmup, opts.concurrency, "warmup-", opts.timeout, None)
                if not warm.ok:
                    sample = warm.samples[0] if warm.samples else ""
                    raise FatalError(f"all {opts.warmup} warmup flows failed: {warm.errors}; {sample}")
                if warm.failed:
                    print(f"client_load: warning: {warm.failed}/{opts.warmup} warmup flows failed", file=sys.stderr)
            asked0 = counter.asked
            profiler = None
            if opts.profile:
                import cProfile

                profiler = cProfile.Profile(time.process_time)  # CPU, not wall time, per function
            server0 = server_cpu_seconds(opts.server_pid) if opts.server_pid else None
            times0 = os.times()
            cpu0 = time.process_time()
            t0 = time.perf_counter()
            if profiler is not None:
                profiler.enable()
            tally = await phase(
                call, opts.n, opts.concurrency, "deploy-", opts.timeout, time.monotonic() + opts.time_limit
            )
            if profiler is not None:
                profiler.disable()
            wall = time.perf_counter() - t0
            cpu = time.process_time() - cpu0
            times1 = os.times()
            server1 = server_cpu_seconds(opts.server_pid) if opts.server_pid else None
            asked = counter.asked - asked0
            if profiler is not None:
                profiler.dump_stats(opts.profile)
    except Exception as exc:  # anyio task groups (the mcp client's) wrap what the body raised in a group
        leaf = innermost(exc)
        if isinstance(leaf, FatalError):
            raise leaf from None
        raise FatalError(f"{opts.client} client failed: {leaf!r}") from None
    rss, hwm = memory_mib([os.getpid()])
    if tally.skipped:
        tally.errors["time-limit"] = tally.skipped
    attempted = max(1, opts.n - tally.skipped)
    ordered = sorted(tally.latencies)
    ms = 1000.0
    server_cpu = server1 - server0 if server0 is not None and server1 is not None else None
    return {
        "client": opts.client,
        "url": opts.url,
        "n": opts.n,
        "concurrency": opts.concurrency,
        "warmup": opts.warmup,
        "loop": opts.loop_name,
        "profiled": bool(opts.profile),
        "versions": versions(opts.client),
        "connect_ms": round(connect_s * ms, 2),
        "flows_ok": tally.ok,
        "flows_failed": tally.failed,
        "errors": dict(sorted(tally.errors.items())),
        "error_samples": tally.samples,
        "elicitations": asked,
        "rounds_per_flow": round(1 + asked / attempted, 3),  # tools/call requests: one more per answer
        "wall_s": round(wall, 4),
        "flows_per_s": round(tally.ok / wall, 1) if wall > 0 else 0.0,
        "latency_ms": latency_ms(ordered),
        "client_cpu_ms_per_flow": round(cpu / attempted * ms, 4),
        "client_user_ms_per_flow": round((times1.user - times0.user) / attempted * ms, 4),
        "client_sys_ms_per_flow": round((times1.system - times0.system) / attempted * ms, 4),
        "client_cpu_cores": round(cpu / wall, 3) if wall > 0 else None,
        "client_rss_mib": round(rss, 1),
        "client_hwm_mib": round(hwm, 1),
        "server_cpu_ms_per_flow": round(server_cpu / attempted * ms, 4) if server_cpu is not None else None,
    }


def render(report: dict[str, Any]) -> str:
    lat = report["latency_ms"]
    rows = [
        ("client", f"{report['client']}  ({', '.join(f'{k} {v}' for k, v in report['versions'].items())})"),
        ("target", report["url"]),
        (
            "run",
            f"n {report['n']}, concurrency {report['concurrency']}, warmup {report['warmup']}, loop {report['loop']}",
        ),
        ("flows ok / failed", f"{report['flows_ok']} / {report['flows_failed']}"),
        ("elicitations answered", f"{report['elicitations']}  ({report['rounds_per_flow']:.2f} requests per flow)"),
        ("wall time", f"{report['wall_s']:.2f} s  (connect {report['connect_ms']:.1f} ms before it)"),
        ("flows/s", f"{report['flows_per_s']:.1f}"),
        (
            "latency per flow",
            f"p50 {lat['p50']:.2f}  p90 {lat['p90']:.2f}  p99 {lat['p99']:.2f}  max {lat['max']:.2f} ms",
        ),
        (
            "client CPU per flow",
            f"{report['client_cpu_ms_per_flow']:.3f} ms  (user {report['client_user_ms_per_flow']:.3f}, "
            f"system {report['client_sys_ms_per_flow']:.3f}; {report['client_cpu_cores']:.2f} cores busy)"
            + ("  [under cProfile]" if report["profiled"] else ""),
        ),
        ("client RSS", f"{report['client_rss_mib']:.1f} MiB (peak {report['client_hwm_mib']:.1f})"),
    ]
    if report["server_cpu_ms_per_flow"] is not None:
        rows.append(("server CPU per flow", f"{report['server_cpu_ms_per_flow']:.3f} ms"))
    return aligned(rows, report)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="client_load.py", description="MRTR client CPU per flow: Baton's client or mcp 2.3.0's, on loopback."
    )
    parser.add_argument("--client", choices=sorted(CLIENTS), required=True, help="which client library drives")
    parser.add_argument("--url", required=True, help="the MCP endpoint, e.g. http://127.0.0.1:8800/mcp")
    parser.add_argument("-n", "--n", type=int, default=1000, help="measured flows (default 1000)")
    parser.add_argument(
        "-c", "--concurrency", type=int, default=1, help="tasks sharing the client, flows back to back (default 1)"
    )
    parser.add_argument("--warmup", type=int, default=200, help="unmeasured flows first (default 200)")
    add_limits(
        parser,
        "seconds per flow (default 30)",
        ("asyncio", "uvloop"),
        "event loop (default asyncio, what both libraries get from asyncio.run)",
    )
    parser.add_argument("--server-pid", type=int, help="also report this server's CPU per flow (Linux /proc)")
    parser.add_argument("--profile", metavar="PATH", help="cProfile the measured phase into PATH (inflates the CPU)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    opts = parser.parse_args(argv)
    if opts.n < 1 or opts.concurrency < 1 or opts.warmup < 0 or opts.timeout <= 0 or opts.time_limit <= 0:
        parser.error("--n and --concurrency must be >= 1, --warmup >= 0, --timeout and --time-limit > 0")
    return opts


def main(argv: list[str] | None = None) -> int:
    opts = parse_args(argv)
    try:
        require_loopback(opts.url)
        runner, opts.loop_name = event_loop_runner(opts.loop, " in this venv")
        report: dict[str, Any] = runner(measure(opts))
    except FatalError as exc:
        print(f"client_load: {exc}", file=sys.stderr)
        return 2
    except ImportError as exc:
        print(f"client_load: the {opts.client} client is not installed in {sys.prefix}: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(report) if opts.json else render(report))
    return 1 if report["flows_failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
