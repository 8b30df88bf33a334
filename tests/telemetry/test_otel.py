"""Telemetry with real components: `baton serve` subprocesses export over OTLP/HTTP to a receiver in the test
(bench/otlp_sink.py, decoded with opentelemetry-proto); Baton's client is traced in a subprocess of its own.

Checked: the MCP semantic-convention attributes and Baton's `baton.mrtr.*`; one trace for every round of a
flow served by two instances that share only a key (protocol.md P61, P63); no answer, token, argument or
requestState in any byte exported (P64); the duration histogram; JSON logs; and that with OpenTelemetry
not configured nothing is exported and no `opentelemetry` module is imported (P60).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support import processes
from support.otel_memory import run
from support.paths import BATON, ROOT
from support.serve import RunningServer, start_server
from wire import accept, call, post, request

from baton import KeyRing, __version__
from baton.telemetry.never import resource_uri, screen

sys.path.insert(0, str(ROOT / "bench"))
from otlp_sink import OtlpSink, tree

pytestmark = pytest.mark.process  # every test here starts processes (support.markers)

SERVER = "tests/servers/otel_server.py"
CARD = "CARD-SECRET-4111"
ANSWER = "ANSWER-SECRET-7f3a"
BEARER = "TOKEN-SECRET-91b2"
SERVER_KIND, CLIENT_KIND = 2, 3


@pytest.fixture
def sink() -> Iterator[OtlpSink]:
    with OtlpSink() as running:
        yield running


def otel_env(sink: OtlpSink, instance: str, keys: str, **extra: str) -> dict[str, str]:
    return {
        "BATON_STATE_KEYS": keys,
        "BATON_INSTANCE": instance,
        "OTEL_EXPORTER_OTLP_ENDPOINT": sink.endpoint,
        "OTEL_SERVICE_NAME": "otel-tests",
        "OTEL_BSP_SCHEDULE_DELAY": "50",
        "OTEL_METRIC_EXPORT_INTERVAL": "200",
        **extra,
    }


@pytest.fixture
def pair(sink: OtlpSink, tmp_path: Path) -> Iterator[tuple[RunningServer, RunningServer]]:
    """Two instances, `alpha` and `beta`, sharing only the state key; both export to the sink."""
    keys = ",".join(k.encode() for k in KeyRing.ephemeral_key().keys)
    alpha = start_server(SERVER, log=tmp_path / "alpha.log", env=otel_env(sink, "alpha", keys))
    try:
        beta = start_server(SERVER, log=tmp_path / "beta.log", env=otel_env(sink, "beta", keys))
        try:
            yield alpha, beta
        finally:
            beta.stop()
    finally:
        alpha.stop()


def wait_for(sink: OtlpSink, check: Any, timeout: float = 15.0) -> list[dict[str, Any]]:
    deadline = time.monotonic() + timeout
    while True:
        spans = sink.spans()
        if check(spans) or time.monotonic() > deadline:
            return spans
        time.sleep(0.05)


def round_trip(alpha: RunningServer, beta: RunningServer) -> list[str]:
    """One flow over three rounds, alpha → beta → alpha, without any traceparent: the note is answered
    badly in round 2 (asked again as invalid), then well. Returns the requestState tokens seen."""
    auth = {"Authorization": f"Bearer {BEARER}"}
    args = {"city": "Oslo", "card": CARD}
    first = call(alpha.url, "book", args, **auth).json()["result"]
    assert first["resultType"] == "input_required", first
    bad = {"confirm": accept(confirm=True), "note": {"action": "accept", "content": {"nope": ANSWER}}}
    second = call(beta.url, "book", args, responses=bad, state=first["requestState"], **auth).json()["result"]
    assert list(second["inputRequests"]) == ["note"], second
    third = call(
        alpha.url, "book", args, responses={"note": accept(note=ANSWER)}, state=second["requestState"], **auth
    ).json()["result"]
    assert third["content"][0]["text"] == "booked Oslo for card ending 4111", third
    return [first["requestState"], second["requestState"]]


def test_a_flow_over_two_instances_is_one_trace(pair: tuple[RunningServer, RunningServer], sink: OtlpSink) -> None:
    alpha, beta = pair
    states = round_trip(alpha, beta)
    post(alpha.url, request("tools/list"))
    post(beta.url, request("tools/call", {"name": "no_such_tool", "arguments": {}}))

    def complete(spans: list[dict[str, Any]]) -> bool:
        names = [s["name"] for s in spans]
        return (
            names.count("tools/call book") == 3
            and "reserve seat" in names
            and "tools/list" in names
            and ("tools/call _OTHER" in names)
        )

    spans = wait_for(sink, complete)
    rounds = sorted(
        (s for s in spans if s["name"] == "tools/call book"), key=lambda s: s["attributes"]["baton.mrtr.round"]
    )
    print("\n" + tree([s for s in spans if s["trace_id"] == rounds[0]["trace_id"]]))
    assert [s["attributes"]["baton.mrtr.round"] for s in rounds] == [1, 2, 3]
    assert len({s["trace_id"] for s in rounds}) == 1, "every round of the flow in one trace"
    assert [s["resource"]["service.instance.id"] for s in rounds] == ["alpha", "beta", "alpha"]
    assert {s["resource"]["service.name"] for s in rounds} == {"otel-tests"}
    assert rounds[0]["parent"] == "" and rounds[1]["parent"] == rounds[0]["span_id"]
    assert rounds[2]["parent"] == rounds[1]["span_id"]
    assert all(s["kind"] == SERVER_KIND for s in rounds)
    (seat,) = [s for s in spans if s["name"] == "reserve seat"]
    assert seat["parent"] == rounds[2]["span_id"] and seat["trace_id"] == rounds[2]["trace_id"]

    one, two, three = (s["attributes"] for s in rounds)
    for a in (one, two, three):
        assert a["mcp.method.name"] == "tools/call"
        assert a["mcp.protocol.version"] == "2026-07-28"
        assert a["gen_ai.tool.name"] == "book"
        assert a["gen_ai.operation.name"] == "execute_tool"
        assert a["network.transport"] == "tcp" and a["network.protocol.name"] == "http"
        assert a["server.address"] == "127.0.0.1" and isinstance(a["server.port"], int)
        assert a["client.address"] == "127.0.0.1" and isinstance(a["client.port"], int)
        assert a["jsonrpc.request.id"].isdigit()
        assert "gen_ai.tool.call.arguments" not in a  # the author did not opt in
    assert one["baton.mrtr.asks"] == ["confirm:form", "note:form"]
    assert one["baton.result_type"] == "input_required"
    assert one["baton.mrtr.request_state.sent_bytes"] == len(states[0])
    assert two["baton.mrtr.request_state.received_bytes"] == len(states[0])
    assert two["baton.mrtr.answers"] == ["confirm:accepted", "note:invalid"]
    assert two["baton.mrtr.asks"] == ["note:form"]
    assert three["baton.mrtr.answers"] == ["note:accepted"]
    assert three["baton.result_type"] == "complete" and "error.type" not in three

    (listed,) = [s for s in spans if s["name"] == "tools/list"]
    assert (
        listed["attributes"]["mcp.method.name"] == "tools/list" and listed["resource"]["service.instance.id"] == "alpha"
    )
    (failed,) = [s for s in spans if s["name"] == "tools/call _OTHER"]  # a tool alpha does not have (P78)
    assert failed["attributes"]["error.type"] == failed["attributes"]["rpc.response.status_code"] == "-32602"
    assert failed["status"] == 2  # STATUS_CODE_ERROR

    deadline = time.monotonic() + 10
    while "mcp.server.operation.duration" not in sink.metric_names() and time.monotonic() < deadline:
        time.sleep(0.1)
    points = sink.histogram_points("mcp.server.operation.duration")
    booked = [p for p in points if p["attributes"].get("gen_ai.tool.name") == "book"]
    assert booked and booked[0]["unit"] == "s" and booked[0]["sum"] < 60
    assert booked[0]["attributes"]["mcp.method.name"] == "tools/call"

    alpha.stop()
    beta.stop()  # exporters flush at exit
    raw = sink.raw()
    for secret in (CARD, ANSWER, BEARER, *states, *(s.rsplit(".", 1)[1][:40] for s in states)):
        assert secret.encode() not in raw, f"{secret[:20]}... left the server in telemetry"


def test_head_sampling_keeps_every_round_of_a_flow_in_or_out(sink: OtlpSink, tmp_path: Path) -> None:
    """`parentbased_traceidratio` (the SDK reads the standard variables): round 1 decides, and the flow's trace
    context sealed in requestState, sampled flag included, makes round 2 on the other instance follow it
    (protocol.md P61, P67). A flow sampled out stays out on beta; one sampled in stays in, in one trace;
    the handler's own span follows its round."""
    keys = ",".join(k.encode() for k in KeyRing.ephemeral_key().keys)
    sampled = {"OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.5"}
    alpha = start_server(SERVER, log=tmp_path / "alpha.log", env=otel_env(sink, "alpha", keys, **sampled))
    try:
        with start_server(SERVER, log=tmp_path / "beta.log", env=otel_env(sink, "beta", keys, **sampled)) as beta:
            flows = 24  # each in with probability 1/2: all in or all out once in 8 million runs
            answers = {"confirm": accept(confirm=True), "note": accept(note="fine")}
            for i in range(flows):
                args = {"city": f"Oslo-{i}", "card": CARD}
                first = call(alpha.url, "book", args).json()["result"]
                assert first["resultType"] == "input_required", first
                done = call(beta.url, "book", args, responses=answers, state=first["requestState"]).json()["result"]
                assert done["content"][0]["text"].startswith("booked"), done
    finally:
        alpha.stop()  # exporters flush at exit: every span that will ever come is in the sink now
    spans = sink.spans()
    books = [s for s in spans if s["name"] == "tools/call book"]
    ones = {s["trace_id"]: s for s in books if s["attributes"]["baton.mrtr.round"] == 1}
    twos = {s["trace_id"]: s for s in books if s["attributes"]["baton.mrtr.round"] == 2}
    assert 0 < len(ones) < flows, f"{len(ones)} of {flows} flows sampled in: the ratio was not applied"
    assert len(books) == len(ones) + len(twos)
    assert {s["resource"]["service.instance.id"] for s in ones.values()} == {"alpha"}
    assert {s["resource"]["service.instance.id"] for s in twos.values()} == {"beta"}
    assert set(twos) == set(ones), "round 2 on beta took round 1's decision, in round 1's trace"
    assert all(twos[t]["parent"] == ones[t]["span_id"] for t in ones)
    seats = [s for s in spans if s["name"] == "reserve seat"]
    assert sorted(s["parent"] for s in seats) == sorted(s["span_id"] for s in twos.values())


def test_the_client_traces_each_round_and_its_context_reaches_the_servers(
    pair: tuple[RunningServer, RunningServer], sink: OtlpSink, tmp_path: Path
) -> None:
    alpha, beta = pair
    env = {
        **os.environ,
        "OTEL_TEST_A": alpha.url,
        "OTEL_TEST_B": beta.url,
        "OTEL_EXPORTER_OTLP_ENDPOINT": sink.endpoint,
        "OTEL_BSP_SCHEDULE_DELAY": "50",
        "OTEL_SERVICE_NAME": "otel-tests",
        "OTEL_METRICS_EXPORTER": "none",
    }
    done = processes.run(
        [sys.executable, str(ROOT / "tests/support/otel_client.py")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    trace_id = done.stdout.strip()

    def complete(spans: list[dict[str, Any]]) -> bool:
        mine = [s for s in spans if s["trace_id"] == trace_id]
        return len([s for s in mine if s["name"] == "tools/call book"]) == 4 and any(
            s["name"] == "reserve seat" for s in mine
        )

    spans = wait_for(sink, complete)
    mine = [s for s in spans if s["trace_id"] == trace_id]
    print("\n" + tree(mine))
    by_id = {s["span_id"]: s for s in mine}
    clients = sorted((s for s in mine if s["kind"] == CLIENT_KIND), key=lambda s: s["start"])
    servers = sorted(
        (s for s in mine if s["kind"] == SERVER_KIND and s["name"] == "tools/call book"), key=lambda s: s["start"]
    )
    assert [s["name"] for s in clients] == ["tools/call book", "tools/call book"]
    assert [c["attributes"]["baton.mrtr.round"] for c in clients] == [1, 1]  # two Client objects: each its first
    assert clients[0]["attributes"]["baton.mrtr.asks"] == ["confirm:form", "note:form"]
    assert (
        clients[0]["attributes"]["server.port"] == alpha.port and clients[1]["attributes"]["server.port"] == beta.port
    )
    # Each server span is the child of the client span that sent it; round 2 also links to round 1.
    assert [by_id[s["parent"]]["span_id"] for s in servers] == [c["span_id"] for c in clients]
    assert [s["resource"]["service.instance.id"] for s in servers] == ["alpha", "beta"]
    assert servers[1]["links"] == [(trace_id, servers[0]["span_id"])]
    assert by_id[clients[0]["parent"]]["name"] == "plan a trip"
    # The stdio server: network.transport is pipe.
    listed = wait_for(sink, lambda spans: any(s["name"] == "tools/list" and s["kind"] == SERVER_KIND for s in spans))
    (piped,) = [s for s in listed if s["name"] == "tools/list" and s["kind"] == SERVER_KIND]
    assert piped["attributes"]["network.transport"] == "pipe"
    raw = sink.raw()
    assert CARD.encode() not in raw and ANSWER.encode() not in raw


def test_tool_arguments_are_on_spans_only_when_the_author_opts_in(sink: OtlpSink, tmp_path: Path) -> None:
    keys = ",".join(k.encode() for k in KeyRing.ephemeral_key().keys)
    env = otel_env(sink, "gamma", keys, BATON_TEST_TRACE_ARGUMENTS="1")
    with start_server(SERVER, log=tmp_path / "gamma.log", env=env) as gamma:
        call(gamma.url, "book", {"city": "Oslo", "card": CARD})
        spans = wait_for(sink, lambda spans: any(s["name"] == "tools/call book" for s in spans))
    (span,) = [s for s in spans if s["name"] == "tools/call book"]
    assert json.loads(span["attributes"]["gen_ai.tool.call.arguments"]) == {"card": CARD, "city": "Oslo"}


@pytest.mark.parametrize("variables", [{}, {"OTEL_SDK_DISABLED": "true"}], ids=["unconfigured", "disabled"])
def test_without_configuration_nothing_is_imported_or_exported(
    variables: dict[str, str], sink: OtlpSink, tmp_path: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    if variables:
        env.update(variables, OTEL_EXPORTER_OTLP_ENDPOINT=sink.endpoint)
    with start_server(SERVER, log=tmp_path / "plain.log", env=env) as plain:
        first = call(plain.url, "book", {"city": "Oslo", "card": CARD}).json()["result"]
        call(
            plain.url,
            "book",
            {"city": "Oslo", "card": CARD},
            responses={"confirm": accept(confirm=True), "note": accept(note="x")},
            state=first["requestState"],
        )
        loaded = call(plain.url, "otel_modules").json()["result"]["content"][0]["text"]
    assert loaded == ""
    time.sleep(0.3)
    assert sink.raw() == b""
    # In a process of its own: `import baton`, a Server answering a request in-process.
    script = (
        "import asyncio, sys\n"
        "import baton\n"
        "from baton.protocol.messages import Message\n"
        "from baton.server import Exchange, RequestInfo\n"
        "s = baton.Server('x', state_keys=baton.KeyRing.ephemeral_key())\n"
        "s.tool(name='ok')(lambda: 'ok')\n"
        "s.check_startup('stdio')\n"
        "from baton.protocol import constants as c\n"
        "info = {'name': 't', 'version': '0'}\n"
        "meta = {c.META_PROTOCOL_VERSION: '2026-07-28', c.META_CLIENT_CAPABILITIES: {}, c.META_CLIENT_INFO: info}\n"
        "msg = Message('tools/call', {'name': 'ok', 'arguments': {}, '_meta': meta}, 1, True)\n"
        "r = asyncio.run(s.runtime.handle(msg, Exchange(RequestInfo('stdio'))))\n"
        "assert 'result' in r.body, r.body\n"
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))\n"
    )
    done = processes.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_json_logs(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    with start_server(
        SERVER, "--log-level", "info", log=tmp_path / "json.log", env={**env, "BATON_LOG_FORMAT": "json"}
    ) as s:
        call(s.url, "book", {"city": "Oslo"})  # a missing argument: logged? at least startup lines are
    lines = [json.loads(line) for line in s.log.read_text().splitlines() if line.startswith("{")]
    assert lines and all({"time", "level", "logger", "message"} <= set(line) for line in lines)


def test_json_logs_and_the_log_level_reach_every_worker_and_uvicorn(sink: OtlpSink, tmp_path: Path) -> None:
    """`baton serve --workers 2 --log-format json --log-level info`: every line on stderr, from the parent, each
    worker and uvicorn in both, is a JSON object; each worker logs at info (its telemetry line) (protocol.md P65)."""
    keys = ",".join(k.encode() for k in KeyRing.ephemeral_key().keys)
    args = ("--workers", "2", "--log-format", "json", "--log-level", "info")
    with start_server(SERVER, *args, log=tmp_path / "json.log", env=otel_env(sink, "alpha", keys)) as s:
        post(s.url, request("tools/list"))
    text = s.log.read_text()
    lines = [json.loads(line) for line in text.splitlines()]
    assert lines and all({"time", "level", "logger", "message"} <= set(line) for line in lines), text
    loggers = [line["logger"] for line in lines]
    assert loggers.count("baton.telemetry") == 2, text  # "OpenTelemetry: exporting as ...", once per worker
    exporting = {line["message"] for line in lines if line["logger"] == "baton.telemetry"}
    assert len(exporting) == 2 and all(" (alpha:" in m for m in exporting), exporting  # $BATON_INSTANCE:pid each
    started = [line for line in lines if line["message"].startswith("Started server process")]
    assert len(started) == 2 and {line["logger"] for line in started} == {"uvicorn.error"}, text
    assert "baton.serve" in loggers  # where it serves, its keys: the announcement


@pytest.mark.parametrize("workers", [1, 2])
def test_sigterm_exports_the_queued_spans_and_metrics(sink: OtlpSink, tmp_path: Path, workers: int) -> None:
    """`baton serve` stopped by SIGTERM, with a batch delay and a metric interval far longer than the test: the spans
    of the last requests and the histogram reach the collector during the graceful shutdown, in every worker, and
    the exit status is that of a `baton serve` without telemetry (protocol.md P70)."""
    keys = ",".join(k.encode() for k in KeyRing.ephemeral_key().keys)
    late = {"OTEL_BSP_SCHEDULE_DELAY": "600000", "OTEL_METRIC_EXPORT_INTERVAL": "600000"}
    args = ("--workers", str(workers)) if workers > 1 else ()
    plain = start_server(SERVER, *args, log=tmp_path / "plain.log", env={"BATON_STATE_KEYS": keys})
    plain_status = plain.process.stop()
    server = start_server(SERVER, *args, log=tmp_path / "traced.log", env=otel_env(sink, "alpha", keys, **late))
    try:
        calls = 8
        for _ in range(calls):
            post(server.url, request("tools/list"))
        time.sleep(0.5)
        assert not sink.spans(), "exported before the shutdown: the test would not show the flush"
    finally:
        status = server.process.stop()
    spans = [s for s in sink.spans() if s["name"] == "tools/list"]
    assert len(spans) == calls
    instances = {s["resource"]["service.instance.id"] for s in spans}
    assert (instances == {"alpha"}) if workers == 1 else all(i.startswith("alpha:") for i in instances), instances
    assert sum(p["count"] for p in sink.histogram_points("mcp.server.operation.duration")) == calls
    assert status == plain_status, server.process.output()
    assert "Traceback" not in server.log.read_text()


def test_metrics_exporter_none_records_no_histogram(sink: OtlpSink, tmp_path: Path) -> None:
    """`OTEL_METRICS_EXPORTER=none`: no meter provider is set and no histogram recorded (protocol.md P69);
    spans are exported as before."""
    keys = ",".join(k.encode() for k in KeyRing.ephemeral_key().keys)
    env = otel_env(sink, "alpha", keys, OTEL_METRICS_EXPORTER="none")
    with start_server(SERVER, log=tmp_path / "alpha.log", env=env) as alpha:
        post(alpha.url, request("tools/list"))
        spans = wait_for(sink, lambda spans: any(s["name"] == "tools/list" for s in spans))
        time.sleep(0.5)  # four metric intervals
    assert [s["name"] for s in spans] == ["tools/list"]
    assert not sink.bodies["/v1/metrics"]


def test_span_names_and_metric_attributes_take_no_made_up_text() -> None:
    """A tool or prompt the server does not have, a method MCP does not have and a version Baton does not speak
    are `_OTHER` in span names, span attributes and the histogram, on the server and the client: what a client
    not yet authenticated sends cannot grow the metric series or write text into span names (protocol.md P78)."""
    found = run(
        """
        from baton import KeyRing, Server
        from baton.client import Client
        from baton.testing import MemoryTransport

        server = Server("p", state_keys=KeyRing.ephemeral_key())
        server.tool(name="ok")(lambda: "ok")
        server.prompt("hello")(lambda: "hi")
        server.check_startup("stdio")

        async def main():
            for i in range(3):
                await send(server, "tools/call", {"name": f"nope-{i}-SECRET", "arguments": {}})
                await send(server, "prompts/get", {"name": f"nope-{i}-SECRET"})
                await send(server, f"made/up-{i}-SECRET")
                await send(server, "tools/call", {"name": "ok", "arguments": {}}, protocolVersion=f"v-{i}-SECRET")
            await send(server, "tools/call", {"name": "ok", "arguments": {}})
            await send(server, "prompts/get", {"name": "hello"})
            async with Client(MemoryTransport(server), protocol="2026-07-28") as client:
                try:
                    await client.request(f"made/up-SECRET", {})
                except Exception:
                    pass

        asyncio.run(main())
        print(json.dumps({"spans": spans(), "server": points("mcp.server.operation.duration"),
                          "client": points("mcp.client.operation.duration")}))
        """
    )
    assert "SECRET" not in json.dumps(found)
    server = [s for s in found["spans"] if s["kind"] == "SERVER"]
    assert sorted({s["name"] for s in server}) == [
        "_OTHER",
        "prompts/get _OTHER",
        "prompts/get hello",
        "tools/call _OTHER",
        "tools/call ok",
    ]
    versions = {s["attributes"].get("mcp.protocol.version") for s in server}
    assert versions == {"2026-07-28", "_OTHER"}
    assert {s["attributes"].get("gen_ai.tool.name") for s in server} == {"ok", "_OTHER", None}
    assert len(found["server"]) == 6  # unknown tool, prompt, method, version; the good tool and prompt
    (client,) = [s for s in found["spans"] if s["kind"] == "CLIENT"]
    assert client["name"] == "_OTHER" and client["attributes"]["mcp.method.name"] == "_OTHER"
    assert [p["mcp.method.name"] for p in found["client"]] == ["_OTHER"]


def test_console_exporters_write_to_stderr_never_into_the_stdio_stream(tmp_path: Path) -> None:
    """`OTEL_TRACES_EXPORTER=console` and `OTEL_METRICS_EXPORTER=console` under `baton serve --stdio`: the spans and
    metrics go to stderr, and stdout carries only the protocol's messages."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.update(OTEL_TRACES_EXPORTER="console", OTEL_METRICS_EXPORTER="console")
    line = json.dumps(request("tools/list")) + "\n"
    done = processes.run(
        [BATON, "serve", SERVER, "--stdio"],
        cwd=ROOT,
        env=env,
        input=line,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    messages = [json.loads(out) for out in done.stdout.splitlines()]
    assert [m.get("jsonrpc") for m in messages] == ["2.0"] and "tools" in messages[0]["result"]
    assert '"name": "tools/list"' in done.stderr and "mcp.server.operation.duration" in done.stderr


def test_resource_uris_lose_userinfo_query_and_fragment_unless_opted_in() -> None:
    """`mcp.resource.uri` on server and client spans, and the server's log line of a failing read, name the URI
    without its userinfo, query and fragment (where tokens travel); `trace_arguments=True` (the server's, the
    client's) keeps it whole on its own spans (protocol.md P64)."""
    found = run(
        """
        import logging
        from baton import KeyRing, Server
        from baton.client import Client
        from baton.testing import MemoryTransport

        lines = []
        handler = logging.Handler()
        handler.emit = lambda record: lines.append(record.getMessage())
        logging.getLogger("baton").addHandler(handler)

        def make(name, **options):
            server = Server(name, state_keys=KeyRing.ephemeral_key(), **options)

            @server.resource("data://x/{name}?{query}")
            def queried(name: str, query: str) -> str:
                raise RuntimeError("broken")

            @server.resource("data://{host}/{name}")
            def hosted(host: str, name: str) -> str:
                raise RuntimeError("broken")

            server.check_startup("stdio")
            return server

        async def main():
            plain, opted = make("plain"), make("opted", trace_arguments=True)
            for server, full in ((plain, False), (opted, True)):
                async with Client(MemoryTransport(server), protocol="2026-07-28", trace_arguments=full) as client:
                    for uri in ("data://x/a?token=SECRET-1", "data://u:SECRET-3@x/b"):
                        try:
                            await client.read_resource(uri)
                        except Exception:
                            pass

        asyncio.run(main())
        print(json.dumps({"spans": spans(), "logs": lines}))
        """
    )
    uris = [(s["kind"], s["attributes"]["mcp.resource.uri"]) for s in found["spans"]]
    assert sorted(uris[:4]) == sorted(
        [("SERVER", "data://x/a"), ("CLIENT", "data://x/a"), ("SERVER", "data://x/b"), ("CLIENT", "data://x/b")]
    )
    whole = ["data://x/a?token=SECRET-1", "data://u:SECRET-3@x/b"]
    assert sorted(uri for _, uri in uris[4:]) == sorted(whole * 2)
    logs = [line for line in found["logs"] if "resources/read" in line]
    assert len(logs) == 4 and not [line for line in logs if "SECRET" in line], logs
    assert resource_uri("https://u:p@h:1/a/b?q=1#f") == "https://h:1/a/b"
    assert resource_uri("file:///tmp/x#f") == "file:///tmp/x" and resource_uri("x:y?z") == "x:y"


def test_a_failing_handler_is_logged_with_its_traceback_and_spans_carry_no_message() -> None:
    """A handler's unexpected exception: the server's JSON log line keeps the traceback under `exception` (the
    operator's own log, P79), while the span and the histogram carry only the exception's class (P64)."""
    found = run(
        """
        import logging
        from baton import KeyRing, Server
        from baton.telemetry.logs import JsonFormatter

        lines = []
        handler = logging.Handler()
        handler.setFormatter(JsonFormatter())
        handler.emit = lambda record: lines.append(json.loads(handler.format(record)))
        logging.getLogger("baton").addHandler(handler)
        server = Server("p", state_keys=KeyRing.ephemeral_key())

        @server.tool()
        def pay(card: str) -> str:
            raise RuntimeError(f"processor refused card {card}")

        server.check_startup("stdio")
        asyncio.run(send(server, "tools/call", {"name": "pay", "arguments": {"card": "4111-SECRET"}}))
        print(json.dumps({"spans": spans(), "logs": lines, "points": points("mcp.server.operation.duration")}))
        """
    )
    (line,) = found["logs"]
    assert line["level"] == "ERROR" and "4111-SECRET" not in line["message"]
    assert "Traceback" in line["exception"] and "processor refused card 4111-SECRET" in line["exception"]
    assert "4111-SECRET" not in json.dumps([found["spans"], found["points"]])


def test_a_span_the_handler_ends_itself_is_not_ended_again() -> None:
    """A handler may end the current span itself: Baton then neither sets its attributes, nor its status, nor ends
    it again (the SDK would warn of each), and the request's histogram point is recorded all the same."""
    found = run(
        """
        import logging
        from opentelemetry import trace
        from baton import KeyRing, Server

        warnings = []
        handler = logging.Handler(logging.WARNING)
        handler.emit = lambda record: warnings.append(record.getMessage())
        logging.getLogger("opentelemetry").addHandler(handler)
        server = Server("p", state_keys=KeyRing.ephemeral_key())

        @server.tool()
        def early() -> str:
            trace.get_current_span().end()
            raise RuntimeError("after the end")

        server.check_startup("stdio")
        asyncio.run(send(server, "tools/call", {"name": "early", "arguments": {}}))
        print(json.dumps({"spans": spans(), "warnings": warnings, "points": points("mcp.server.operation.duration")}))
        """
    )
    assert [s["name"] for s in found["spans"]] == ["tools/call early"]
    assert [p.get("error.type") for p in found["points"]] == ["tool_error"]
    assert found["warnings"] == []


def test_answers_name_only_what_the_flow_asked_and_lists_are_bounded() -> None:
    """300 made-up keys beside the one answer asked for: `baton.mrtr.answers` names the asked key only and
    `baton.mrtr.unsolicited` counts the rest; a list attribute keeps 32 entries at most (protocol.md P62)."""
    found = run(
        """
        from baton import Context, KeyRing, Server

        server = Server("p", state_keys=KeyRing.ephemeral_key())

        @server.tool()
        async def book(ctx: Context, city: str) -> str:
            return "yes" if await ctx.confirm(f"Book {city}?", key="confirm") else "no"

        server.check_startup("stdio")

        async def main():
            params = {"name": "book", "arguments": {"city": "Oslo"}}
            first = await send(server, "tools/call", dict(params))
            answers = {f"junk-{i}-" + "x" * 200: {"action": "accept", "content": {}} for i in range(300)}
            answers["confirm"] = {"action": "accept", "content": {"confirm": True}}
            state = first["result"]["requestState"]
            done = await send(server, "tools/call", {**params, "requestState": state, "inputResponses": answers})
            assert done["result"]["content"][0]["text"] == "yes", done

        asyncio.run(main())
        print(json.dumps(spans()))
        """
    )
    second = found[1]["attributes"]
    assert second["baton.mrtr.answers"] == ["confirm:accepted"]
    assert second["baton.mrtr.unsolicited"] == 300
    assert "junk" not in json.dumps(found)
    kept = screen({"baton.mrtr.asks": [f"k{i}:form" for i in range(100)]})
    assert kept["baton.mrtr.asks"] == [f"k{i}:form" for i in range(32)]


def test_the_kits_in_memory_client_traces_the_server() -> None:
    """The testing kit's in-memory transport runs the server's start-up checks, which instrument it: a test sees
    its server's spans without calling `check_startup` itself (protocol.md P71)."""
    found = run(
        """
        from baton import KeyRing, Server
        from baton.testing import memory_client

        server = Server("p", state_keys=KeyRing.ephemeral_key())
        server.tool(name="ok")(lambda: "ok")

        async def main():
            async with memory_client(server) as client:
                await client.call_tool("ok", {})

        asyncio.run(main())
        print(json.dumps([s["name"] for s in spans() if s["kind"] == "SERVER"]))
        """
    )
    assert found == ["tools/call ok"]


def test_traces_exporter_none_sets_no_tracer_provider_and_metrics_still_flow(sink: OtlpSink) -> None:
    """`OTEL_TRACES_EXPORTER=none` with an endpoint: no tracer provider (no span sampled or built at all), yet the
    server is instrumented and its histogram reaches the collector (protocol.md P80)."""
    script = (
        "import asyncio, json\n"
        "from opentelemetry import trace\n"
        "from baton import KeyRing, Server\n"
        "from baton.telemetry.setup import from_env, shutdown\n"
        "from support.otel_memory import send\n"
        "assert from_env('metrics-only', 'm')\n"
        "server = Server('p', state_keys=KeyRing.ephemeral_key())\n"
        "server.tool(name='ok')(lambda: 'ok')\n"
        "server.check_startup('stdio')\n"
        "asyncio.run(send(server, 'tools/call', {'name': 'ok', 'arguments': {}}))\n"
        "assert shutdown()\n"
        "print(json.dumps([type(trace.get_tracer_provider()).__name__, 'handle' in vars(server.runtime)]))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.update(
        OTEL_EXPORTER_OTLP_ENDPOINT=sink.endpoint,
        OTEL_TRACES_EXPORTER="none",
        PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(ROOT / "tests")]),
    )
    done = processes.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == ["ProxyTracerProvider", True]
    assert sum(p["count"] for p in sink.histogram_points("mcp.server.operation.duration")) == 1
    assert not sink.spans()


def test_a_2025_session_is_traced_end_to_end_its_asks_included() -> None:
    """In a 2025-11-25 session the client's `initialize` and each request are CLIENT spans whose context the
    server continues: its span of each is their child. A request the server asks a question inside is one span
    with no round number (the session has no rounds), and the question is a request of the server's: a CLIENT
    span under the server's, which the client continues with its SERVER span of answering it, so the user's
    time is visible inside the call (protocol.md P63). Each side records the other role's histogram for them."""
    found = run(
        """
        from baton import Context, KeyRing, Server
        from baton.testing import ScriptedUser, memory_client

        from opentelemetry import trace

        server = Server("p", "9.9.9", state_keys=KeyRing.ephemeral_key())

        @server.tool()
        async def book(ctx: Context, city: str) -> str:
            return "booked" if await ctx.confirm(f"Book {city}?", key="go") else "no"

        def host(question):
            with trace.get_tracer("host").start_as_current_span("host asks the user"):
                return {"confirm": True}

        async def main():
            user = ScriptedUser({"go": host})
            async with memory_client(server, user, protocol="2025-11-25") as client:
                result = await client.call_tool("book", {"city": "Oslo"})
                assert result.text == "booked", result
            assert user.keys == ["go"]
            traced = len(spans())

            async def broken(question):
                raise RuntimeError("the host failed")

            async with memory_client(server, protocol="2025-11-25", on_form=broken) as client:
                assert (await client.call_tool("book", {"city": "Oslo"})).is_error
            return traced

        traced = asyncio.run(main())
        print(json.dumps({"spans": spans()[:traced], "failed": spans()[traced:],
                          "client": points("mcp.client.operation.duration"),
                          "server": points("mcp.server.operation.duration")}))
        """
    )
    failed = {(s["kind"], s["name"]): s["attributes"] for s in found["failed"]}
    # The client answered the ask with an error: both sides' spans of it say which, and the call is a tool error.
    assert failed["CLIENT", "elicitation/create"]["error.type"] == "-32603"
    assert failed["SERVER", "elicitation/create"]["error.type"] == "-32603"
    assert failed["SERVER", "tools/call book"]["error.type"] == "tool_error"
    assert "the host failed" not in json.dumps(found)
    by_span = {s["span"]: s for s in found["spans"]}

    def chain(span: dict[str, Any]) -> list[str]:
        """The span's name and kind, then its parent's, up to the root; all in one trace."""
        names = [f"{span['kind']} {span['name']}"]
        while span["parent"] is not None:
            parent = by_span[span["parent"]]
            assert parent["trace"] == span["trace"]
            names.append(f"{parent['kind']} {parent['name']}")
            span = parent
        return names

    leaves = {s["span"] for s in found["spans"]} - {s["parent"] for s in found["spans"]}
    assert sorted(chain(by_span[leaf]) for leaf in leaves) == [
        [
            "INTERNAL host asks the user",
            "SERVER elicitation/create",
            "CLIENT elicitation/create",
            "SERVER tools/call book",
            "CLIENT tools/call book",
        ],
        ["SERVER initialize", "CLIENT initialize"],
    ]
    # The instrumentation scope is Baton at its own version, not the server's ("9.9.9").
    assert {s["scope"] for s in found["spans"] if s["name"] != "host asks the user"} == {f"baton {__version__}"}
    named = {(s["kind"], s["name"]): s["attributes"] for s in found["spans"] if s["kind"] != "INTERNAL"}
    assert all(a["mcp.protocol.version"] == "2025-11-25" for a in named.values())
    call = named["CLIENT", "tools/call book"]
    assert call["gen_ai.tool.name"] == "book" and "baton.mrtr.round" not in call and "error.type" not in call
    assert named["CLIENT", "elicitation/create"]["baton.mrtr.asks"] == ["go:form"]
    assert named["SERVER", "elicitation/create"]["mcp.method.name"] == "elicitation/create"
    assert "jsonrpc.request.id" in named["SERVER", "elicitation/create"]
    methods = ["elicitation/create", "initialize", "tools/call"]
    assert sorted({p["mcp.method.name"] for p in found["client"]}) == methods
    assert sorted({p["mcp.method.name"] for p in found["server"]}) == methods


ASK_PROBE = """
    from opentelemetry import baggage, context, trace
    from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

    from baton import KeyRing, Server
    from baton.client.tracing import ClientObserver
    from baton.server.outbound import PeerError, PeerGone
    from baton.server.tracing import _SERVED

    server = Server("p", state_keys=KeyRing.ephemeral_key())
    server.check_startup("stdio")
    observer = server.runtime.engine.observer
    client = ClientObserver("http://127.0.0.1:1/mcp")
    ask = {"method": "elicitation/create", "params": {"mode": "form", "message": "?", "requestedSchema": {}}}
    sent = []

    def replying(failure=None):
        async def send(params):
            sent.append(params)
            if failure is not None:
                raise failure
            return {"action": "accept"}
        return send

    async def main():
        # Inside a caller's context (a remote parent, and baggage), as a server handling a traced request is.
        remote = SpanContext(0x1234, 0x5678, is_remote=True, trace_flags=TraceFlags(1))
        ctx = baggage.set_baggage("tenant", "acme", trace.set_span_in_context(NonRecordingSpan(remote)))
        token = context.attach(ctx)
        await observer.asking("k", ask, replying())
        for failure in (PeerError(123456789, "made up"), PeerError(-32602, "bad"), PeerGone("EOF")):
            try:
                await observer.asking("k", ask, replying(failure))
            except PeerError:
                pass
        legged = {}
        async def send_leg(body):
            legged.update(body)
            return {}
        await client.leg("tools/list", {}, send_leg, "2025-11-25")
        async def answer(message):
            return {"jsonrpc": "2.0", "id": message["id"], "error": {"code": 987654, "message": "made up"}}
        await client.answering({"jsonrpc": "2.0", "id": 7, "method": "ping"}, answer)
        await client.answering({"jsonrpc": "2.0", "id": 8, "method": "made/up-SECRET"}, answer)
        context.detach(token)
        return legged

    legged = asyncio.run(main())
    print(json.dumps({"sent": [p.get("_meta") for p in sent], "legged": legged,
                      "spans": [(s["kind"], s["name"], s["attributes"].get("error.type")) for s in spans()],
                      "client": points("mcp.client.operation.duration"),
                      "server": points("mcp.server.operation.duration")}))
"""


@pytest.mark.parametrize("traces", [True, False], ids=["traced", "metrics-only"])
def test_session_asks_carry_only_trace_context_and_bounded_codes(traces: bool) -> None:
    """A session's ask carries its span's trace context in `_meta` and none of the request's baggage; with a meter
    provider only, nothing at all is added to what goes on the wire, by the server's asks or the client's requests.
    Error codes a peer chose are `_OTHER` unless JSON-RPC reserves them, a peer gone names no code, a method the
    client does not know from a server is `_OTHER`, and a `ping` is not traced (protocol.md P63, P78)."""
    found = run(ASK_PROBE, traces=traces)
    assert "SECRET" not in json.dumps(found)
    assert "acme" not in json.dumps(found["sent"])  # the server's baggage stays with it
    if traces:
        assert all(set(meta) == {"traceparent"} for meta in found["sent"]), found["sent"]
        assert all(meta["traceparent"].split("-")[1] == f"{0x1234:032x}" for meta in found["sent"])
        assert set(found["legged"]["_meta"]) == {"traceparent", "baggage"}  # the client's own baggage, its choice
        assert sorted(map(str, found["spans"])) == sorted(
            map(
                str,
                [
                    ["CLIENT", "elicitation/create", None],
                    ["CLIENT", "elicitation/create", "_OTHER"],
                    ["CLIENT", "elicitation/create", "-32602"],
                    ["CLIENT", "elicitation/create", "PeerGone"],
                    ["CLIENT", "tools/list", None],
                    ["SERVER", "_OTHER", "_OTHER"],
                ],
            )
        )
    else:
        assert found["sent"] == [None] * 4 and found["legged"] == {}
        assert found["spans"] == []
    asks = sorted(str(p.get("error.type")) for p in found["client"] if p["mcp.method.name"] == "elicitation/create")
    assert asks == ["-32602", "None", "PeerGone", "_OTHER"]
    assert [(p["mcp.method.name"], p["error.type"]) for p in found["server"]] == [("_OTHER", "_OTHER")]


SESSION_PROBE = """
    import itertools

    from baton.client.deadline import Deadlines
    from baton.client.inbound import Inbound
    from baton.client.handshake import ClientSession
    from baton.client.session_http import SessionGone
    from baton.client.tracing import ClientObserver

    class Wire:
        session_id = None

        def __init__(self):
            self.sent, self.gone = [], 1

        async def request(self, message, notify):
            self.sent.append(message)
            if message["method"] == "initialize":
                return {"jsonrpc": "2.0", "id": message["id"], "result": {"protocolVersion": "2025-11-25"}}
            if self.gone:  # the first request finds the session gone (HTTP 404): it initializes again
                self.gone -= 1
                raise SessionGone("404")
            return {"jsonrpc": "2.0", "id": message["id"], "result": {"tools": []}}

        async def send(self, message):
            pass

        async def listen(self):
            pass

        def reset(self):
            pass

        async def end(self):
            pass

    async def main():
        wire = Wire()
        session = ClientSession(wire, Inbound(None, None, None, None), capabilities={}, client_info={"name": "t"},
                          ids=itertools.count(1), deadlines=Deadlines(5), url_retries=1,
                          observer=ClientObserver("http://127.0.0.1:1/mcp"))
        await session.open()
        envelope_only = {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}
        await session.request("tools/list", envelope_only, None)
        await session.request("tools/list", None, None)
        return wire.sent

    sent = asyncio.run(main())
    print(json.dumps({"sent": [(m["method"], m.get("params")) for m in sent],
                      "spans": [(s["kind"], s["name"], s["span"], s["parent"]) for s in spans()]}))
"""


@pytest.mark.parametrize("traces", [True, False], ids=["traced", "metrics-only"])
def test_a_session_opened_again_nests_in_the_request_and_params_keep_their_shape(traces: bool) -> None:
    """The `initialize` a request sends again after a 404 is a child of that request's span (the leg's span is
    current while it is sent). A request's params keep their shape whatever telemetry does: `{}` stays `{}`,
    none stays none, unless there is a trace context to carry (protocol.md P63)."""
    found = run(SESSION_PROBE, traces=traces)
    shapes = [(method, None if params is None else sorted(set(params) - {"_meta"})) for method, params in found["sent"]]
    assert [method for method, _ in shapes] == ["initialize", "tools/list", "initialize", "tools/list", "tools/list"]
    lists = [params for method, params in found["sent"] if method == "tools/list"]
    if not traces:
        assert lists == [{}, {}, None]  # as with telemetry off: nothing added
        assert found["spans"] == []
        return
    assert all(set(params) == {"_meta"} and set(params["_meta"]) == {"traceparent"} for params in lists)
    lists_spans = [span for _, name, span, _ in found["spans"] if name == "tools/list"]  # in the order they ended
    parents = [parent for _, name, _, parent in found["spans"] if name == "initialize"]
    assert parents == [None, lists_spans[0]], found["spans"]  # the second initialize is under the first tools/list


def test_megabyte_trace_headers_are_dropped_before_the_propagator_and_cost_nothing() -> None:
    """`_meta` trace headers come from the client: over their W3C lengths they never reach the propagator
    (protocol.md P100, CVE-2026-126360), so a request carrying megabytes of them is answered as fast as one
    without, in a new trace; a valid traceparent beside an oversized baggage is still followed."""
    found = run(
        """
        import time
        from baton import KeyRing, Server
        from baton.testing import memory_client

        server = Server("p", state_keys=KeyRing.ephemeral_key())
        server.tool(name="ok")(lambda: "ok")
        huge = "00-" + "0af7651916cd43dd8448eb211c80319c" * 32768 + "-b7ad6b7169203331-01"  # 1 MiB
        parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
        cases = {
            "plain": {},
            "huge": {"traceparent": huge, "tracestate": "k=" + "v" * 2**20, "baggage": "b=" + "x" * 2**20},
            "valid": {"traceparent": parent, "baggage": "b=" + "x" * 2**20},
        }
        seconds = {}
        import baton.telemetry.otel as otel_module

        longest = [0]
        extract = otel_module.propagate.extract

        def watched(carrier, *args, **kwargs):  # what the propagator is handed
            longest[0] = max([longest[0], *(len(v) for v in carrier.values())])
            return extract(carrier, *args, **kwargs)

        otel_module.propagate.extract = watched

        async def main():
            async with memory_client(server) as client:
                for name, meta in cases.items():
                    best = 1e9
                    for _ in range(5):
                        started = time.perf_counter()
                        await client.request("tools/call", {"name": "ok", "arguments": {}, "_meta": meta})
                        best = min(best, time.perf_counter() - started)
                    seconds[name] = best

        asyncio.run(main())
        from opentelemetry import trace
        from baton.telemetry.otel import from_meta

        def trace_of(meta):
            ctx = from_meta(meta)
            return None if ctx is None else f"{trace.get_current_span(ctx).get_span_context().trace_id:032x}"

        traces = {name: trace_of(meta) for name, meta in cases.items()}
        print(json.dumps({"seconds": seconds, "traces": traces, "longest": longest[0]}))
        """
    )
    seconds, traces = found["seconds"], found["traces"]
    assert seconds["huge"] < seconds["plain"] * 3 + 0.02, seconds
    assert traces == {"plain": None, "huge": None, "valid": "0af7651916cd43dd8448eb211c80319c"}
    assert 0 < found["longest"] <= 8192  # nothing over its W3C length reached the propagator
