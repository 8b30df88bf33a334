"""Single-use flows over real HTTP: one ledger (SQLite file or a real redis-server) shared by two servers."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from support.markers import needs
from support.paths import SERVERS
from support.redis_server import RedisServer
from support.serve import RunningServer
from wire import accept, call, headers_for, request

TARGET = str(SERVERS / "single_use.py")
ALICE = {"Authorization": "Bearer alice"}


def runs(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def final_round(url: str, amount: int = 5) -> tuple[dict, str]:
    first = call(url, "transfer", {"amount": amount}, **ALICE).json()["result"]
    assert first["resultType"] == "input_required"
    message = request(
        "tools/call",
        {
            "name": "transfer",
            "arguments": {"amount": amount},
            "inputResponses": {"q1": accept(confirm=True)},
            "requestState": first["requestState"],
        },
    )
    return message, first["requestState"]


async def send_many(urls: list[str], message: dict, count: int) -> list[httpx.Response]:
    async with httpx.AsyncClient(timeout=30) as http:

        async def one(i: int) -> httpx.Response:
            body = {**message, "id": 10_000 + i}
            return await http.post(urls[i % len(urls)], json=body, headers=headers_for(body, **ALICE))

        return await asyncio.gather(*(one(i) for i in range(count)))


def settle(urls: list[str], message: dict, responses: list[httpx.Response]) -> list[str]:
    """Retry the state-only answers (a round still in progress) until every caller has the final text."""
    texts = []
    for i, first in enumerate(responses):
        resp = first
        for _ in range(100):
            result = resp.json()["result"]
            if result["resultType"] == "complete":
                texts.append(result["content"][0]["text"])
                break
            assert "inputRequests" not in result, result  # only the state-only "retry shortly" shape
            time.sleep(0.05)
            resp = httpx.post(urls[i % len(urls)], json=message, headers=headers_for(message, **ALICE))
        else:
            raise AssertionError("a duplicate never got the final reply")
    return texts


@pytest.fixture(params=["sqlite", "redis"])
@needs("redis")
def ledger_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite://{tmp_path}/ledger.sqlite3"
    server = RedisServer(tmp_path)
    server.start()
    request.addfinalizer(server.stop)
    return server.url


def two_servers(serve: Callable[..., RunningServer], ledger: str, log: Path) -> tuple[RunningServer, RunningServer]:
    env = {"BATON_LEDGER": ledger, "BATON_TEST_RUNLOG": str(log)}
    return serve(TARGET, env=env), serve(TARGET, env=env)


def test_fifty_duplicates_across_two_servers_run_once(serve, ledger_url: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    log = tmp_path / "runs.log"
    a, b = two_servers(serve, ledger_url, log)
    message, _ = final_round(a.url)
    responses = asyncio.run(send_many([a.url, b.url], message, 50))
    texts = settle([a.url, b.url], message, responses)
    assert len(runs(log)) == 1, runs(log)
    assert len(set(texts)) == 1 and texts[0].startswith("transferred 5 (run ")
    assert runs(log)[0].split()[0] in texts[0]  # the one run is the one every caller saw


def test_duplicate_from_another_principal_is_refused(serve, ledger_url: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    log = tmp_path / "runs.log"
    a, b = two_servers(serve, ledger_url, log)
    message, _ = final_round(a.url)
    done = httpx.post(a.url, json=message, headers=headers_for(message, **ALICE)).json()["result"]
    assert done["content"][0]["text"].startswith("transferred")
    stolen = httpx.post(b.url, json=message, headers=headers_for(message, Authorization="Bearer mallory")).json()
    assert stolen["error"] == {"code": -32602, "message": "Invalid or expired requestState"}
    assert len(runs(log)) == 1


@pytest.mark.redis
def test_redis_outage_fails_closed_then_recovers(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    redis_server = RedisServer(tmp_path)
    redis_server.start()
    try:
        log = tmp_path / "runs.log"
        server = serve(TARGET, env={"BATON_LEDGER": redis_server.url, "BATON_TEST_RUNLOG": str(log)})
        message, _ = final_round(server.url)
        redis_server.stop()
        refused = httpx.post(server.url, json=message, headers=headers_for(message, **ALICE), timeout=30).json()
        assert refused["error"]["code"] == -32603
        assert "ledger is unavailable" in refused["error"]["message"]
        assert runs(log) == []  # failed closed: the body did not run
        redis_server.start()  # same port: the server recovers without a restart
        done = httpx.post(server.url, json=message, headers=headers_for(message, **ALICE), timeout=30).json()
        assert done["result"]["content"][0]["text"].startswith("transferred 5")
        assert len(runs(log)) == 1
    finally:
        redis_server.stop()


def test_perform_once_in_the_example_server(serve) -> None:  # type: ignore[no-untyped-def]
    server = serve("examples/everything.py")
    first = call(server.url, "perform_once", {"action": "ship"}).json()["result"]
    texts = {
        call(
            server.url,
            "perform_once",
            {"action": "ship"},
            responses={"q1": accept(confirm=True)},
            state=first["requestState"],
        ).json()["result"]["content"][0]["text"]
        for _ in range(3)
    }
    assert len(texts) == 1 and next(iter(texts)).startswith("done: ship (run ")
