"""Hostile input on the Streamable HTTP transport, against examples/everything.py (issue 25): its HTTP app in this
process for what ends in one response (support.inprocess), a `baton serve` on loopback for sessions and streams:
megabyte trace headers in `_meta` with tracing on (P100), an `Origin` that is not `scheme://host[:port]`
(P101), an answer too large for `requestState` (P102), a `Last-Event-ID` past the end of its stream (P103),
and notifications and answers with an unsupported `MCP-Protocol-Version` (P104)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.inprocess import InProcessServer, load_server
from support.paths import ROOT
from support.serve import RunningServer, start_server
from test_http_handshake import Client, message_of, rpc, until
from wire import accept, call, headers_for, post, request

ANSWER = 40_000
"""Bytes of one answer: over the 16 KiB requestState cap on its own."""


@pytest.fixture(scope="module")
def here(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcessServer]:
    """examples/everything.py's HTTP app in this process (support.inprocess): for what ends in one response."""
    work = tmp_path_factory.mktemp("hostile-here")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("BATON_DATA_DIR", str(work))
        with InProcessServer(load_server(ROOT / "examples" / "everything.py"), work / "server.log") as server:
            yield server


@pytest.fixture
def session(everything: RunningServer) -> Client:
    client = Client(everything.url)
    client.initialize()
    return client


def asking() -> dict[str, Any]:
    """A call of the tool that asks twice, in two rounds (its state carries the first answer to the second)."""
    return rpc("tools/call", {"name": "test_input_required_result_multi_round", "arguments": {}})


# -- Origin (P101) ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "origin",
    [
        "http://localhost:80@other.example",
        "http://localhost@other.example",
        "http://user:pw@localhost",
        "http://localhost/path",
        "http://localhost:8000/",
        "http://localhost?x=1",
        "http://localhost#x",
        "http://localhost:80:90",
        "http://local host",
        "localhost",
        "//localhost",
        "null",
    ],
)
def test_an_origin_that_is_not_scheme_host_port_is_refused(here: InProcessServer, origin: str) -> None:
    port_origin = origin.replace(":8000", f":{here.port}")
    resp = post(here.url, request("server/discover"), Origin=port_origin)
    if origin == "http://localhost:8000/":  # a trailing slash is still scheme://host[:port]
        assert resp.status_code == 200, resp.text
        return
    assert resp.status_code == 403, resp.text
    assert "Origin" in resp.json()["error"]["message"]
    # the session side of the endpoint applies the same rule
    init = here.http.post(
        here.url,
        json=rpc(
            "initialize",
            {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
        ),
        headers={"Content-Type": "application/json", "Accept": "application/json", "Origin": port_origin},
        timeout=10,
    )
    assert init.status_code == 403


@pytest.mark.parametrize(
    "origin",
    [
        "http://localhost:{port}",
        "HTTP://LOCALHOST:{port}",
        "http://127.0.0.1:{port}",
        "http://[::1]:{port}",
        "http://localhost",
    ],
)
def test_a_loopback_origin_is_admitted(here: InProcessServer, origin: str) -> None:
    resp = post(here.url, request("server/discover"), Origin=origin.format(port=here.port))
    assert resp.status_code == 200, resp.text


# -- an answer too large for requestState (P102) -------------------------------------------------------


def test_an_answer_too_large_for_the_state_is_a_tool_error_naming_it_in_a_session(
    everything: RunningServer, session: Client
) -> None:
    with session.stream(asking()) as (_, events):
        _, event = until(events, lambda m: m.get("method") == "elicitation/create")
        ask = json.loads(event["data"])
        assert session.answer(ask["id"], accept(name="x" * ANSWER)).status_code == 202
        response = rest_response(events)
    result = response["result"]
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert "'step1'" in text and "'name'" in text and "16384" in text and "Answer with less" in text
    assert_logged_as_client_mistake(everything.log)


def test_an_answer_too_large_for_the_state_is_a_tool_error_naming_it_in_2026(here: InProcessServer) -> None:
    tool = "test_input_required_result_multi_round"
    first = call(here.url, tool).json()["result"]
    assert first["resultType"] == "input_required"
    resp = call(here.url, tool, responses={"step1": accept(name="y" * ANSWER)}, state=first["requestState"])
    assert resp.status_code == 200, resp.text
    result = resp.json()["result"]
    assert result["isError"] is True
    assert "'step1'" in result["content"][0]["text"] and "'name'" in result["content"][0]["text"]
    assert_logged_as_client_mistake(here.log)


def test_an_answer_within_the_cap_goes_on(here: InProcessServer) -> None:
    tool = "test_input_required_result_multi_round"
    first = call(here.url, tool).json()["result"]
    second = call(here.url, tool, responses={"step1": accept(name="z" * 2000)}, state=first["requestState"])
    assert second.json()["result"]["resultType"] == "input_required"


def rest_response(events: Iterator[dict[str, str]]) -> dict[str, Any]:
    for event in events:
        msg = message_of(event)
        if msg is not None and "id" in msg and "method" not in msg:
            return msg
    raise AssertionError("the stream ended without a response")


def assert_logged_as_client_mistake(log: Path) -> None:
    deadline = time.monotonic() + 5
    while "the client sent too much" not in log.read_text():
        assert time.monotonic() < deadline, log.read_text()[-2000:]
        time.sleep(0.05)
    text = log.read_text()
    assert "Traceback" not in text and " ERROR " not in text, text[-3000:]
    assert "WARNING baton.server" in text


# -- Last-Event-ID past the end of a live stream (P103) -------------------------------------------------


def test_a_last_event_id_past_the_end_of_a_live_stream_is_400_and_followers_get_the_response(
    session: Client,
) -> None:
    with session.stream(asking()) as (_, events):
        priming = next(events)
        stream_id = priming["id"].rsplit(":", 1)[0]
        _, event = until(events, lambda m: m.get("method") == "elicitation/create")
        assert event["id"] == f"{stream_id}:1"
        for seq in (2, 99, 10**11):
            with session.get(**{"Last-Event-ID": f"{stream_id}:{seq}"}) as (resp, _):
                assert resp.status_code == 400
                resp.read()
                assert "past the end" in resp.json()["error"]["message"]
        # a follower that resumes at the last event sent gets the rest, the response included
        seen: list[dict[str, Any]] = []
        with session.get(**{"Last-Event-ID": event["id"]}) as (resp, followed):
            assert resp.status_code == 200

            def follow() -> None:
                seen.extend(m for m in map(message_of, followed) if m is not None)

            reader = threading.Thread(target=follow)
            reader.start()
            ask = json.loads(event["data"])
            assert session.answer(ask["id"], accept(name="Ada")).status_code == 202
            _, second = until(events, lambda m: m.get("method") == "elicitation/create")
            assert session.answer(json.loads(second["data"])["id"], accept(color="teal")).status_code == 202
            response = rest_response(events)
            reader.join(10)
            assert not reader.is_alive()
    assert response["result"]["content"][0]["text"] == "Ada likes teal"
    assert seen[-1] == response
    assert [m.get("method") for m in seen[:-1]] == ["elicitation/create"]


# -- an unsupported MCP-Protocol-Version on a notification or an answer (P104) --------------------------


@pytest.mark.parametrize("version", ["1999-01-01", "2025-11-26", "x" * 5000])
def test_a_notification_with_an_unsupported_version_is_400(session: Client, version: str) -> None:
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    resp = session.post(note, **{"MCP-Protocol-Version": version})
    assert resp.status_code == 400
    assert resp.json()["error"]["code"] == -32600
    assert "Unsupported MCP-Protocol-Version" in resp.json()["error"]["message"]
    assert len(resp.content) < 500  # the header is not echoed whole
    # without a session too, and the supported versions still pass
    assert (
        httpx.post(
            session.url,
            json=note,
            headers={"Content-Type": "application/json", "MCP-Protocol-Version": version},
            timeout=10,
        ).status_code
        == 400
    )
    for ok in ("2025-11-25", "2025-06-18", "2026-07-28"):
        assert session.post(note, **{"MCP-Protocol-Version": ok}).status_code == 202


def test_an_answer_or_cancel_with_an_unsupported_version_is_refused_and_not_acted_on(session: Client) -> None:
    msg = asking()
    with session.stream(msg) as (_, events):
        _, event = until(events, lambda m: m.get("method") == "elicitation/create")
        ask = json.loads(event["data"])
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": msg["id"]}}
        assert session.post(cancel, **{"MCP-Protocol-Version": "2099-01-01"}).status_code == 400
        answer = {"jsonrpc": "2.0", "id": ask["id"], "result": accept(name="Mallory")}
        refused = session.post(answer, **{"MCP-Protocol-Version": "2099-01-01"})
        assert refused.status_code == 400
        assert "Unsupported MCP-Protocol-Version" in refused.json()["error"]["message"]
        # the question is still open: the proper answer goes through, and the call was not cancelled
        assert session.answer(ask["id"], accept(name="Ada")).status_code == 202
        _, second = until(events, lambda m: m.get("method") == "elicitation/create")
        assert session.answer(json.loads(second["data"])["id"], accept(color="red")).status_code == 202
        assert rest_response(events)["result"]["content"][0]["text"] == "Ada likes red"


# -- megabyte trace headers in _meta, tracing on (P100) ---------------------------------------------------


@pytest.mark.process
def test_megabyte_trace_headers_are_answered_as_fast_as_none_over_http(tmp_path: Path) -> None:
    env = {"BATON_DATA_DIR": str(tmp_path), "OTEL_TRACES_EXPORTER": "console", "OTEL_METRICS_EXPORTER": "none"}
    parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    huge = {
        "traceparent": "00-" + "0af7651916cd43dd8448eb211c80319c" * 32768 + "-b7ad6b7169203331-01",
        "tracestate": "k=" + "v" * 2**20,
        "baggage": "b=" + "x" * 2**20,
    }
    cases: dict[str, dict[str, str]] = {
        "plain": {},
        "huge": huge,
        "followed": {"traceparent": parent, "baggage": huge["baggage"]},
        "same size": {"padding": "p" * (3 * 2**20 + 100)},
    }
    times: dict[str, list[float]] = {name: [] for name in cases}
    with start_server("examples/everything.py", log=tmp_path / "server.log", env=env) as server, httpx.Client() as http:
        # The cases take turns, round after round, so a burst of load from other tests falls on all of them alike.
        for _ in range(9):
            for name, extra in cases.items():
                msg = request("tools/call", {"name": "test_simple_text", "arguments": {}})
                msg["params"]["_meta"].update(extra)
                started = time.perf_counter()
                resp = http.post(server.url, content=json.dumps(msg), headers={**headers_for(msg)}, timeout=30)
                times[name].append(time.perf_counter() - started)
                assert resp.status_code == 200, resp.text[:300]
                assert resp.json()["result"]["content"][0]["type"] == "text"
        time.sleep(0.5)
    best = {name: min(taken) for name, taken in times.items()}
    spans = (tmp_path / "server.log").read_text()
    # As fast as a request of the same size whose bytes are not trace headers: moving 3 MiB is all it costs.
    assert best["huge"] < best["same size"] * 2 + 0.01, best
    assert best["huge"] < best["plain"] + 0.1, best
    assert "0af7651916cd43dd8448eb211c80319c" in spans  # the valid traceparent beside huge baggage was followed
    assert "xxxxxxxx" not in spans and "vvvvvvvv" not in spans  # nothing oversized reached a span
