"""Scale-out at 2025-11-25: sessions through a real nginx in front of three instances, on raw HTTP (httpx).

nginx runs examples/deploy/nginx.conf, which routes every request that carries `Mcp-Session-Id` by a
consistent hash of it, so a session's requests and the answers it POSTs to the server's
`elicitation/create` reach the instance holding its open request; requests without one (initialize,
every 2026-07-28 request) stay spread. The instances share only the key file and Redis, as in
tests/scaleout/test_scaleout.py (the harness and the `transfer` tool are the same: two questions, then one
recorded execution).

- 64 concurrent sessions, each running `transfer` twice: initialize, notifications/initialized, then
  per call a `tools/call` answered with SSE, each `elicitation/create` read from that stream and
  answered by a POSTed JSON-RPC response with the session id, then the result. 2026-07-28 flows run
  beside them through the same nginx and stay spread.
- Instance b SIGKILLed while every session has a call waiting for its first answer: only the calls
  open on b fail (their streams end without a result, their answers refused with 421 since the instance
  that asked is gone), the others complete, and a new call on every session succeeds, the sessions of
  b now on a or c (they open the sealed id).

The client is httpx on raw HTTP, so these tests do not depend on Baton's client. Every process is
started by tests/scaleout.py on loopback and stopped at teardown.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
import orjson
import pytest
from loaddriver import Driver, Flow
from scaleout import Cluster, fixtures, run

pytestmark = pytest.mark.scaleout

VERSION = "2025-11-25"
SESSIONS = 64
CALLS_PER_SESSION = 2
FLOWS_2026 = 64
NAMES = {"a", "b", "c"}
TIMEOUT_S = 30.0


cluster, report = fixtures("scaleout-legacy")


# -- a 2025-11-25 session on raw HTTP ------------------------------------------------------------------


@dataclass
class Call:
    """One `tools/call transfer` of a session: who served it, its asks and answers, and how it ended."""

    flow: str
    instance: str = ""
    """`baton-instance` of the SSE response: the instance running the call."""
    asks: int = 0
    answers: list[tuple[int, str]] = field(default_factory=list)
    """(HTTP status, `baton-instance`) of each POSTed answer."""
    text: str | None = None
    error: str | None = None

    @property
    def complete(self) -> bool:
        return self.text is not None


def answer(params: dict[str, Any], flow: str) -> dict[str, Any]:
    """Accept the form: booleans true, strings a note naming the flow (as tests/loaddriver.py answers)."""
    schema = params["requestedSchema"]
    content = {
        name: True if prop.get("type") == "boolean" else f"note {flow}" for name, prop in schema["properties"].items()
    }
    return {"action": "accept", "content": content}


async def sse_messages(response: httpx.Response) -> AsyncIterator[dict[str, Any]]:
    """The JSON-RPC messages of an SSE body, as its events complete (the priming event has no data)."""
    data: list[str] = []
    async for line in response.aiter_lines():
        if line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
        elif not line and data:
            text = "\n".join(data)
            data = []
            if text:
                yield orjson.loads(text)


class Session:
    """A 2025-11-25 session through nginx: `open()` initializes it, `call()` runs one eliciting tool call."""

    _ids = itertools.count(1)

    def __init__(self, client: httpx.AsyncClient, url: str, name: str) -> None:
        self.client = client
        self.url = url
        self.name = name
        self.id = ""
        self.opened_on = ""
        self.calls: list[Call] = []

    def headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if self.id:
            headers |= {"Mcp-Session-Id": self.id, "MCP-Protocol-Version": VERSION}
        return headers

    async def post(self, message: dict[str, Any]) -> httpx.Response:
        return await self.client.post(self.url, headers=self.headers(), content=orjson.dumps(message))

    async def open(self) -> None:
        params = {
            "protocolVersion": VERSION,
            "capabilities": {"elicitation": {"form": {}}},
            "clientInfo": {"name": f"scaleout-{self.name}", "version": "1"},
        }
        response = await self.post({"jsonrpc": "2.0", "id": next(self._ids), "method": "initialize", "params": params})
        assert response.status_code == 200, (response.status_code, response.text)
        assert response.json()["result"]["protocolVersion"] == VERSION
        self.id = response.headers["mcp-session-id"]
        self.opened_on = response.headers.get("baton-instance", "")
        response = await self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert response.status_code == 202, (response.status_code, response.text)

    async def call(self, flow: str, *, asked: asyncio.Event | None = None, go: asyncio.Event | None = None) -> Call:
        """`transfer(flow)`: every ask answered by POST; with `asked` and `go`, the first answer waits for `go`
        (after `asked` is set), so the request stays open on its instance meanwhile. Never raises for a
        transport failure: it ends the call with `error`."""
        call = Call(flow)
        self.calls.append(call)
        call_id = next(self._ids)
        request = {
            "jsonrpc": "2.0",
            "id": call_id,
            "method": "tools/call",
            "params": {"name": "transfer", "arguments": {"flow": flow, "amount": 1}},
        }
        try:
            async with self.client.stream("POST", self.url, headers=self.headers(), content=orjson.dumps(request)) as r:
                call.instance = r.headers.get("baton-instance", "")
                if r.status_code != 200 or not r.headers.get("content-type", "").startswith("text/event-stream"):
                    call.error = f"HTTP {r.status_code} {r.headers.get('content-type')}: {(await r.aread())[:200]!r}"
                    return call
                async for message in sse_messages(r):
                    if message.get("method") == "elicitation/create" and "id" in message:
                        call.asks += 1
                        if call.asks == 1 and asked is not None and go is not None:
                            asked.set()
                            await go.wait()
                        reply = {"jsonrpc": "2.0", "id": message["id"], "result": answer(message["params"], flow)}
                        posted = await self.post(reply)
                        call.answers.append((posted.status_code, posted.headers.get("baton-instance", "")))
                    elif message.get("id") == call_id:
                        if "result" in message:
                            content = message["result"].get("content") or [{}]
                            call.text = content[0].get("text")
                        else:
                            call.error = f"JSON-RPC error {message.get('error')}"
                        return call
            call.error = "the stream ended without a result"
        except httpx.HTTPError as exc:
            call.error = f"the stream failed without a result: {type(exc).__name__}: {exc}"
        return call


def client() -> httpx.AsyncClient:
    limits = httpx.Limits(max_connections=4 * SESSIONS, max_keepalive_connections=4 * SESSIONS)
    return httpx.AsyncClient(limits=limits, timeout=httpx.Timeout(TIMEOUT_S))


def ran_once(cluster: Cluster, calls: list[Call]) -> None:
    """Completed calls ran their transfer exactly once, on the instance that served their stream, and got its
    reply; calls that did not complete never ran."""
    runs = cluster.executions()
    ran_on = cluster.executed_on()
    doubled = {flow: n for flow, n in runs.items() if n > 1}
    assert not doubled, f"transfers executed more than once: {doubled}"
    for call in calls:
        if call.complete:
            assert runs[call.flow] == 1, f"{call.flow} completed without its execution on record"
            assert ran_on[call.flow] == call.instance, (call.flow, ran_on[call.flow], call.instance)
            assert call.text == f"done {call.flow} on {call.instance}: note {call.flow}", call.text
        else:
            assert call.flow not in runs, f"{call.flow} failed, yet its transfer ran on {ran_on[call.flow]}"


def affinity_broken(sessions: list[Session]) -> list[str]:
    """Answers that reached another instance than their call's, and sessions served by more than one instance."""
    broken = [
        f"{s.name}/{c.flow}: call on {c.instance}, answers {c.answers}"
        for s in sessions
        for c in s.calls
        if c.complete and any(status != 202 or on != c.instance for status, on in c.answers)
    ]
    broken += [
        f"{s.name}: calls on {[c.instance for c in s.calls]}"
        for s in sessions
        if len({c.instance for c in s.calls if c.complete}) > 1
    ]
    return broken


def failed(calls: list[Call]) -> list[str]:
    return [f"{c.flow} on {c.instance}: {c.error}" for c in calls if not c.complete]


# -- 64 sessions, each eliciting, beside 2026 traffic ---------------------------------------------------


def test_64_sessions_elicit_through_nginx(cluster: Cluster, report: Callable[[str], None]) -> None:
    async def session_life(http: httpx.AsyncClient, i: int) -> Session:
        session = Session(http, cluster.url, f"s{i}")
        await session.open()
        for k in range(CALLS_PER_SESSION):
            await session.call(f"legacy-{i}-{k}")
        return session

    async def main() -> tuple[list[Session], list[Flow]]:
        driver = Driver(cluster.url)
        async with client() as http:
            sessions, flows = await asyncio.gather(
                asyncio.gather(*(session_life(http, i) for i in range(SESSIONS))),
                asyncio.gather(*(driver.run(f"modern-{i}") for i in range(FLOWS_2026))),
            )
        await driver.close()
        return list(sessions), list(flows)

    started = time.monotonic()
    sessions, flows = run(main)
    elapsed = time.monotonic() - started
    calls = [c for s in sessions for c in s.calls]
    assert not failed(calls), f"{len(failed(calls))} failed calls: {failed(calls)[:5]}\n{cluster.logs()}"
    assert all(c.asks == 2 and len(c.answers) == 2 for c in calls), "a call did not ask exactly twice"
    assert not affinity_broken(sessions), affinity_broken(sessions)[:5]
    ran_once(cluster, calls)
    by_instance = collections.Counter(s.calls[0].instance for s in sessions)
    assert set(by_instance) == NAMES, f"the sessions were not spread over the three instances: {by_instance}"
    moved = sum(s.opened_on != s.calls[0].instance for s in sessions)
    assert moved >= SESSIONS // 4, f"only {moved} sessions were served by another instance than their initialize's"

    modern_failed = [f"{f.flow_id}: {f.error}" for f in flows if not f.complete]
    assert not modern_failed, modern_failed[:5]
    rounds_2026 = collections.Counter(name for f in flows for name in f.instances)
    assert set(rounds_2026) == NAMES, f"2026 rounds not spread: {rounds_2026}"
    crossed = sum(len(set(f.instances)) > 1 for f in flows)
    assert crossed >= len(flows) // 2, f"only {crossed} of {len(flows)} 2026 flows crossed instances"
    assert cluster.nginx is not None and cluster.nginx.retried_requests() == 0
    report(
        f"{SESSIONS} concurrent 2025-11-25 sessions x {CALLS_PER_SESSION} eliciting calls (2 asks each, answered by "
        f"POST) beside {FLOWS_2026} 2026 flows, in {elapsed:.1f} s: all {len(calls)} calls completed, each once, "
        f"every answer on its call's instance; sessions per instance {dict(sorted(by_instance.items()))}, {moved} "
        f"served by another instance than the one that initialized them; 2026 rounds per instance "
        f"{dict(sorted(rounds_2026.items()))}, {crossed} of {len(flows)} flows crossed instances"
    )


# -- an instance killed while sessions have requests open -----------------------------------------------


def test_instance_killed_with_open_requests(cluster: Cluster, report: Callable[[str], None]) -> None:
    victim = cluster.instance("b")

    async def main() -> tuple[list[Session], list[Call], list[Call]]:
        async with client() as http:
            sessions = [Session(http, cluster.url, f"k{i}") for i in range(SESSIONS)]
            await asyncio.gather(*(s.open() for s in sessions))
            asked = [asyncio.Event() for _ in sessions]
            go = asyncio.Event()
            open_calls = [
                asyncio.ensure_future(s.call(f"open-{i}", asked=asked[i], go=go)) for i, s in enumerate(sessions)
            ]
            try:
                await asyncio.wait_for(asyncio.gather(*(e.wait() for e in asked)), TIMEOUT_S)
            except TimeoutError:
                ended = [c.result() for c in open_calls if c.done()]
                pytest.fail(f"not every call reached its first ask: {failed(ended)[:5]}\n{cluster.logs()}")
            await asyncio.to_thread(victim.kill)  # every session has a call waiting for its first answer
            await asyncio.sleep(0.2)
            go.set()
            first = list(await asyncio.gather(*open_calls))
            after = list(await asyncio.gather(*(s.call(f"after-{i}") for i, s in enumerate(sessions))))
        return sessions, first, after

    sessions, first, after = run(main)
    on_victim = [c for c in first if c.instance == "b"]
    elsewhere = [c for c in first if c.instance != "b"]
    assert on_victim, "no session had its open request on the killed instance"
    assert elsewhere, "every session had its open request on the killed instance"
    assert all(not c.complete and c.error for c in on_victim), [c.text for c in on_victim if c.complete]
    assert not failed(elsewhere), f"calls open on a or c failed: {failed(elsewhere)[:5]}\n{cluster.logs()}"
    # the instance that asked is gone, and its question with it: the answer is refused, never 202 (P113)
    refused = [c.answers for c in on_victim]
    assert all(len(a) == 1 and a[0][0] == 421 and a[0][1] in ("a", "c") for a in refused), refused[:5]
    assert not failed(after), f"new calls on the sessions failed: {failed(after)[:5]}\n{cluster.logs()}"
    assert all(c.instance in ("a", "c") for c in after), [c.instance for c in after]
    pairs = list(zip(first, after, strict=True))
    assert all(a.instance == f.instance for f, a in pairs if f.instance != "b"), "a session not on b moved"
    assert not affinity_broken([_only(s, s.calls[-1]) for s in sessions]), "an answer missed its call's instance"
    ran_once(cluster, first + after)
    retried = cluster.nginx.retried_requests() if cluster.nginx else 0
    assert retried >= 1, "nginx never passed a request on from the dead instance"
    report(
        f"instance b SIGKILLed with {SESSIONS} sessions each waiting for an answer: the {len(on_victim)} calls "
        f"open on b ended without a result ({_kinds(on_victim)}), their answers refused by a or c (421: b is "
        "gone); the "
        f"{len(elsewhere)} calls open on a and c completed; a new call on each of the {SESSIONS} sessions completed, "
        f"those of b on {dict(collections.Counter(a.instance for f, a in pairs if f.instance == 'b'))}; nginx passed "
        f"{retried} request(s) on after a refused connection"
    )


def _only(session: Session, call: Call) -> Session:
    view = Session(session.client, session.url, session.name)
    view.calls = [call]
    return view


def _kinds(calls: list[Call]) -> str:
    kinds = collections.Counter((c.error or "").partition(":")[0] for c in calls)
    return ", ".join(f"{n} {kind}" for kind, n in kinds.items())
