"""Load driver for the scale-out tests: many concurrent `transfer` flows, each round's instance recorded.

A raw client on Baton's HTTP/1.1 pool (cheap enough that the driver does not starve the servers on a
small machine) posts MCP 2026-07-28 requests exactly as a client would: round 1 without state, then
each round with the answers to the questions just asked and the `requestState` byte for byte. Every
response's `baton-instance` header, HTTP status and requestState key id are kept per flow, so tests
can prove which instances served the rounds of one flow.

A state-only `input_required` (a duplicate arrived while the round was running) is retried after a
pause, as the spec says (for at least STATE_ONLY_S). With `retry_s > 0`, a -32603 "ledger is
unavailable" is retried too, with the same state, until `retry_s` after the error first came: that is
a client following "try again later".
Anything else that is not a result ends the flow with its error.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
from wire import headers_for, request

from baton.client.http11 import Pool, Url, encode_headers

TOOL = "transfer"
LEDGER_DOWN = "single-use ledger"  # both "is unavailable (not run)" and "could not record (ran)": retry
MAX_LEGS = 400
STATE_ONLY_S = 5.0  # how long a state-only "still running" answer is retried at least
_ids = itertools.count(1_000_000)


@dataclass(frozen=True, slots=True)
class Leg:
    """One HTTP exchange: who answered, how, and the key id of the requestState it carried back."""

    instance: str
    status: int
    outcome: str  # "input_required", "retry" (state only), "complete", or "error"
    kid: str | None
    at: float


@dataclass
class Flow:
    flow_id: str
    started: float = 0.0
    legs: list[Leg] = field(default_factory=list)
    text: str | None = None
    error: str | None = None

    @property
    def complete(self) -> bool:
        return self.text is not None

    @property
    def rounds(self) -> list[Leg]:
        """The legs that moved the flow on (a question or the result), not retries or errors."""
        return [leg for leg in self.legs if leg.outcome in ("input_required", "complete")]

    @property
    def instances(self) -> list[str]:
        return [leg.instance for leg in self.rounds]

    @property
    def first_kid(self) -> str | None:
        return next((leg.kid for leg in self.legs if leg.kid), None)

    @property
    def kids(self) -> set[str]:
        return {leg.kid for leg in self.legs if leg.kid}


def kid_of(token: Any) -> str | None:
    """The key id of a sealed token `b1.<kid>.<body>`."""
    return token.split(".")[1] if isinstance(token, str) and token.count(".") == 2 else None


def answers(requests: dict[str, Any], flow_id: str) -> dict[str, Any]:
    """Accept every form: booleans true, strings a note naming the flow (what a cooperative user does)."""
    out = {}
    for key, ask in requests.items():
        schema = ask["params"]["requestedSchema"]
        content = {
            name: True if prop.get("type") == "boolean" else f"note {flow_id}"
            for name, prop in schema["properties"].items()
        }
        out[key] = {"action": "accept", "content": content}
    return out


class Driver:
    """Flows through one URL (nginx); `retry_s` bounds how long a ledger outage is retried per round."""

    def __init__(self, url: str, *, retry_s: float = 0.0, timeout_s: float = 30.0) -> None:
        self.url = Url.parse(url)
        self.retry_s = retry_s
        self.timeout_s = timeout_s
        self.pool = Pool(max_idle=256)
        sample = request("tools/call", {"name": TOOL, "arguments": {}})
        self._headers = encode_headers(headers_for(sample).items())
        self._meta = sample["params"]["_meta"]

    async def close(self) -> None:
        await self.pool.close()

    async def _post(self, params: dict[str, Any]) -> tuple[int, str, Any]:
        body = orjson.dumps({"jsonrpc": "2.0", "id": next(_ids), "method": "tools/call", "params": params})
        response = await asyncio.wait_for(self.pool.send(self.url, "POST", self._headers, body), self.timeout_s)
        data = await asyncio.wait_for(response.read(), self.timeout_s)
        try:
            message = orjson.loads(data)
        except orjson.JSONDecodeError:
            message = None  # nginx's own error pages are HTML
        return response.status, response.headers.get("baton-instance", ""), message

    async def start(self, flow_id: str, amount: int = 1) -> tuple[Flow, dict[str, Any]]:
        """Round 1; returns the flow and the parameters of its next request ({} once it ended)."""
        flow = Flow(flow_id, started=time.monotonic())
        params = {"name": TOOL, "arguments": {"flow": flow_id, "amount": amount}, "_meta": self._meta}
        return flow, await self._round(flow, params)

    async def advance(self, flow: Flow, params: dict[str, Any]) -> dict[str, Any]:
        """One more round (with retries); returns the next parameters, {} once the flow ended."""
        return await self._round(flow, params)

    async def run(self, flow_id: str) -> Flow:
        """A whole flow, round after round, as fast as the servers answer."""
        flow, params = await self.start(flow_id)
        while params:
            params = await self.advance(flow, params)
        return flow

    async def _round(self, flow: Flow, params: dict[str, Any]) -> dict[str, Any]:
        first_failure: float | None = None
        while len(flow.legs) < MAX_LEGS:
            try:
                status, instance, message = await self._post(params)
            except (ConnectionError, OSError, TimeoutError) as exc:
                flow.legs.append(Leg("", 0, "error", None, time.monotonic()))
                flow.error = f"{type(exc).__name__}: {exc}"
                return {}
            now = time.monotonic()
            result = message.get("result") if isinstance(message, dict) else None
            if isinstance(result, dict):
                kind = result.get("resultType", "complete")
                state = result.get("requestState")
                if kind == "complete":
                    flow.legs.append(Leg(instance, status, "complete", None, now))
                    flow.text = str(result["content"][0]["text"])
                    return {}
                if kind == "input_required" and "inputRequests" in result:
                    flow.legs.append(Leg(instance, status, "input_required", kid_of(state), now))
                    return {
                        **params,
                        "inputResponses": answers(result["inputRequests"], flow.flow_id),
                        "requestState": state,
                    }
                if kind == "input_required":  # state only: the round is still running elsewhere
                    flow.legs.append(Leg(instance, status, "retry", kid_of(state), now))
                    if not self._may_retry(first_failure, now, max(self.retry_s, STATE_ONLY_S)):
                        flow.error = "the round stayed in progress (state-only input_required) until the deadline"
                        return {}
                    first_failure = first_failure or now
                    await asyncio.sleep(0.1)
                    continue
            error = message.get("error") if isinstance(message, dict) else None
            flow.legs.append(Leg(instance, status, "error", None, now))
            text = f"{error.get('code')} {error.get('message')}" if isinstance(error, dict) else f"HTTP {status}"
            if (
                isinstance(error, dict)
                and LEDGER_DOWN in str(error.get("message"))
                and self._may_retry(first_failure, now, self.retry_s)
            ):
                first_failure = first_failure or now
                await asyncio.sleep(0.2)
                continue
            flow.error = text
            return {}
        flow.error = f"more than {MAX_LEGS} legs"
        return {}

    @staticmethod
    def _may_retry(first_failure: float | None, now: float, budget: float) -> bool:
        return now - (first_failure or now) < budget

    async def load(
        self,
        *,
        concurrency: int,
        duration_s: float,
        prefix: str,
        until: Callable[[], bool] | None = None,
        limit_s: float = 60.0,
    ) -> list[Flow]:
        """`concurrency` workers each running flows back to back; new flows start until `duration_s`, and then
        on until `until()` says enough (a load that must outlast something slow on a busy machine), never past
        `limit_s`."""
        loop = asyncio.get_running_loop()
        start = loop.time()

        def more() -> bool:
            now = loop.time() - start
            return now < duration_s or (until is not None and not until() and now < limit_s)

        flows: list[Flow] = []

        async def worker(w: int) -> None:
            for i in itertools.count():
                if not more():
                    return
                flows.append(await self.run(f"{prefix}-{w}-{i}"))

        await asyncio.gather(*(worker(w) for w in range(concurrency)))
        return flows
