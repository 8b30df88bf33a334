"""Who sent a request that came through a proxy (protocol.md P228): the `X-Forwarded-For` rule on its own, then
read by a real `baton serve` and its principal hook, and uvicorn's own middleware off in Baton's launcher."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.serve import start_server
from wire import call, headers_for, request

from baton import web
from baton.serve.forwarded import Proxies

PEER = ("127.0.0.1", 50123)


@pytest.mark.parametrize(
    ("forwarded", "client"),
    [
        ([b"203.0.113.7"], ("203.0.113.7", 0)),
        ([b"203.0.113.7:4711"], ("203.0.113.7", 4711)),
        ([b"[2001:db8::1]:443"], ("2001:db8::1", 443)),
        ([b"2001:db8::1"], ("2001:db8::1", 0)),
        # Each proxy appends the peer it saw: the right-most address that is not a trusted proxy is the client.
        ([b"198.51.100.1, 203.0.113.7, 127.0.0.1"], ("203.0.113.7", 0)),
        ([b"198.51.100.1", b"203.0.113.7"], ("203.0.113.7", 0)),  # two header lines read as one list, in order
        ([b"127.0.0.2, ::1"], ("127.0.0.2", 0)),  # every hop a trusted proxy: the left-most
        ([b""], PEER),
        ([b" , "], PEER),
        ([b"203.0.113.7:99999"], ("203.0.113.7", 0)),  # no such port
        ([b"[]:80"], PEER),  # no host in it
        ([b"203.0.113.7:1\xb2"], ("203.0.113.7", 0)),  # "1²": str.isdigit says yes, int says no (it raised)
    ],
)
def test_a_loopback_proxy_names_the_client(forwarded: list[bytes], client: tuple[str, int]) -> None:
    assert Proxies().client(PEER, forwarded) == client


def test_a_peer_that_is_not_a_trusted_proxy_is_the_client_whatever_it_says() -> None:
    assert Proxies().client(("192.0.2.5", 80), [b"203.0.113.7"]) == ("192.0.2.5", 80)
    assert Proxies().client(None, [b"203.0.113.7"]) is None


def test_forwarded_allow_ips_names_the_proxies(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORWARDED_ALLOW_IPS", "10.0.0.0/8, 192.0.2.5,proxy.internal")
    proxies = Proxies.from_environment()
    assert proxies.client(("10.1.2.3", 80), [b"203.0.113.7, 10.9.9.9"]) == ("203.0.113.7", 0)
    assert proxies.client(("192.0.2.5", 80), [b"203.0.113.7"]) == ("203.0.113.7", 0)
    assert proxies.client(("proxy.internal", 0), [b"203.0.113.7"]) == ("203.0.113.7", 0)
    assert proxies.client(PEER, [b"203.0.113.7"]) == PEER  # loopback is trusted only when listed
    monkeypatch.setenv("FORWARDED_ALLOW_IPS", "*")
    anyone = Proxies.from_environment()  # every hop is then a trusted proxy: the left-most is the client
    assert anyone.client(("192.0.2.9", 80), [b"203.0.113.7, 10.0.0.1"]) == ("203.0.113.7", 0)


HOPS = st.lists(
    st.one_of(
        st.sampled_from(["127.0.0.1", "::1", "[::1]:80", "203.0.113.7", "203.0.113.7:99999", "10.0.0.1", "[]", " "]),
        st.text(max_size=40),
    ),
    max_size=6,
)


@given(peer=st.sampled_from([PEER, ("192.0.2.5", 80), None]), lines=st.lists(HOPS, max_size=3))
def test_any_header_gives_the_peer_or_one_of_its_hops(peer: tuple[str, int] | None, lines: list[list[str]]) -> None:
    """Whatever a client writes there (it is untrusted bytes), the answer is the peer or an address it named with a
    port that can be one; an untrusted peer is never replaced."""
    values = [",".join(hops).encode("utf-8", "surrogatepass") for hops in lines]
    client = Proxies().client(peer, values)
    if client == peer:
        return
    assert peer == PEER and client is not None  # only the loopback peer is a trusted proxy here
    host, port = client
    named = ",".join(value.decode("latin-1") for value in values)
    assert host and host in named and 0 <= port <= 65535


SERVER = textwrap.dedent(
    '''
    """Names each caller by the client address its transport saw."""
    from baton import Context, RequestInfo, Server


    def who(info: RequestInfo) -> str:
        return "none" if info.client is None else f"{info.client[0]} {info.client[1]}"


    server = Server("forwarded", principal=who)


    @server.tool()
    async def whoami(ctx: Context) -> str:
        """The caller's principal."""
        return ctx.principal
    '''
)


def whoami(url: str, **headers: str) -> str:
    resp = call(url, "whoami", **headers)
    assert resp.status_code == 200, resp.text
    return str(resp.json()["result"]["content"][0]["text"])


@pytest.mark.process
def test_baton_serve_gives_the_principal_hook_the_forwarded_client(tmp_path: Path) -> None:
    (tmp_path / "who.py").write_text(SERVER)
    with start_server(str(tmp_path / "who.py"), log=tmp_path / "serve.log") as server:
        host, port = whoami(server.url).split()
        assert host == "127.0.0.1" and int(port) > 0
        assert whoami(server.url, **{"X-Forwarded-For": "203.0.113.7"}) == "203.0.113.7 0"
        assert whoami(server.url, **{"X-Forwarded-For": "198.51.100.1, 203.0.113.7:81"}) == "203.0.113.7 81"
        # A proxy may add a header line of its own: every line is read, in order.
        message = request("tools/call", {"name": "whoami", "arguments": {}})
        lines = [*headers_for(message).items(), ("X-Forwarded-For", "203.0.113.7"), ("X-Forwarded-For", "127.0.0.1")]
        resp = httpx.post(server.url, json=message, headers=lines, timeout=10)
        assert resp.json()["result"]["content"][0]["text"] == "203.0.113.7 0"  # the last line alone names 127.0.0.1


@pytest.mark.process
def test_a_proxy_list_without_loopback_leaves_the_loopback_peer_as_the_client(tmp_path: Path) -> None:
    (tmp_path / "who.py").write_text(SERVER)
    env = {"FORWARDED_ALLOW_IPS": "10.0.0.0/8"}
    with start_server(str(tmp_path / "who.py"), log=tmp_path / "serve.log", env=env) as server:
        assert whoami(server.url, **{"X-Forwarded-For": "203.0.113.7"}).startswith("127.0.0.1 ")


@pytest.mark.process
def test_baton_starts_uvicorn_without_its_proxy_header_middleware() -> None:
    """The transport reads the header (above); the launcher must not have uvicorn rewrite the scope first."""
    seen: dict[str, Any] = {}

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await web.lifespan(receive, send)
            return
        seen.update(client=scope["client"], scheme=scope["scheme"])
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def main() -> None:
        sock = web.listen("127.0.0.1", 0)
        port = sock.getsockname()[1]
        running = await web.started(app, sock)
        try:
            async with httpx.AsyncClient() as http:
                headers = {"X-Forwarded-For": "203.0.113.7", "X-Forwarded-Proto": "https"}
                assert (await http.get(f"http://127.0.0.1:{port}/", headers=headers)).status_code == 204
        finally:
            running.stop()
            await running.stopped()
            sock.close()

    asyncio.run(main())
    assert seen["client"][0] == "127.0.0.1" and seen["scheme"] == "http"
