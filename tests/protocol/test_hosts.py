"""`baton.protocol.hosts`: what is loopback, the host of a Host header, and the callers that ask.

`is_loopback` is the one rule for the HTTP app's Host and Origin checks, the URL checks, the URL-mode
guard and `baton serve`'s warning; the tests at the end show the callers that had their own lists now
agree with it (the guard's and the URL checks' own tests are in test_form_guard.py and test_url_safety.py).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from support.paths import SERVERS

from baton import Server
from baton.protocol.hosts import host_without_port, is_loopback
from baton.serve.http import HttpApp

LOOPBACK = [
    "localhost", "LOCALHOST", "LocalHost",
    "127.0.0.1", "127.0.0.2", "127.255.255.254", "127.0.0.0",
    "::1", "[::1]", "0:0:0:0:0:0:0:1", "[0:0:0:0:0:0:0:1]", "0000:0000::0001",
    "::ffff:127.0.0.1", "[::ffff:127.0.0.1]", "[::FFFF:127.1.2.3]",
]  # fmt: skip

NOT_LOOPBACK = [
    "", "example.com", "localhost.", "app.localhost", "localhost.example.com", "localhostx", "xlocalhost",
    "[localhost]", "[127.0.0.1]", "::1]", "[::1", "[[::1]]",
    "0.0.0.0", "::", "[::]", "128.0.0.1", "126.255.255.255", "10.0.0.1", "192.168.1.1", "169.254.0.1",
    "::2", "fe80::1", "::ffff:10.0.0.1", "::1%lo", "[::1%25lo]",
    "127.1", "2130706433", "0x7f.0.0.1", "0177.0.0.1", "127.0.0.1.", " localhost", "localhost ",
    "127.0.0.1:8000", "[::1]:8000", "localhost:8000",
    # full-width letters, a capital I for the l, a Cyrillic a
    "\uff4c\uff4f\uff43\uff41\uff4c\uff48\uff4f\uff53\uff54", "locaIhost", "loc\u0430lhost",
]  # fmt: skip


@pytest.mark.parametrize("host", LOOPBACK)
def test_loopback(host: str) -> None:
    assert is_loopback(host)


@pytest.mark.parametrize("host", NOT_LOOPBACK)
def test_not_loopback(host: str) -> None:
    assert not is_loopback(host)


@pytest.mark.parametrize(
    ("authority", "host"),
    [
        ("localhost", "localhost"),
        ("localhost:8000", "localhost"),
        ("127.0.0.1:1", "127.0.0.1"),
        ("[::1]", "[::1]"),
        ("[::1]:8000", "[::1]"),
        ("[0:0:0:0:0:0:0:1]:80", "[0:0:0:0:0:0:0:1]"),
        ("[::1", ""),  # an unclosed bracket is no host
        ("::1", "::1"),  # more than one ':' without brackets: no port to take off
        ("example.com:443", "example.com"),
    ],
)
def test_host_without_port(authority: str, host: str) -> None:
    assert host_without_port(authority) == host


# -- the HTTP app's Host and Origin checks ------------------------------------------------------------


def http_status(app: HttpApp, host: str, origin: str | None = None) -> int:
    """The status the app answers a GET with: 403 when the Host or Origin is refused, else 405 (POST only)."""
    headers = [(b"host", host.encode())] + ([(b"origin", origin.encode())] if origin else [])
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Any) -> None:
        sent.append(dict(message))

    scope = {"type": "http", "path": "/mcp", "method": "GET", "headers": headers, "client": ("127.0.0.1", 1)}
    asyncio.run(app(scope, receive, send))
    return int(sent[0]["status"])


@pytest.fixture
def app() -> HttpApp:
    return HttpApp(Server("hosts"))


@pytest.mark.parametrize(
    "host",
    [
        "localhost:8000", "LOCALHOST:8000", "127.0.0.1:8000", "[::1]:8000", "[::1]",
        # Refused before: only the spellings "localhost", "127.0.0.1" and "[::1]" were admitted.
        "127.0.0.2:8000", "[0:0:0:0:0:0:0:1]:8000", "[::ffff:127.0.0.1]:8000", "::1",
    ],
)  # fmt: skip
def test_http_admits_every_loopback_host(app: HttpApp, host: str) -> None:
    assert http_status(app, host) == 405


@pytest.mark.parametrize(
    "host", ["evil.example", "evil.example:8000", "localhost.evil.example", "app.localhost:8000", "[::2]:8000", ""]
)
def test_http_refuses_other_hosts(app: HttpApp, host: str) -> None:
    assert http_status(app, host) == 403


def test_http_admits_configured_hosts_besides_loopback() -> None:
    app = HttpApp(Server("hosts"), allowed_hosts=["mcp.example.com"])
    assert http_status(app, "mcp.example.com:443") == 405
    assert http_status(app, "[::1]:8000") == 405
    assert http_status(app, "other.example.com") == 403


@pytest.mark.parametrize(
    ("origin", "status"),
    [
        ("http://localhost:3000", 405),
        ("http://[::1]:3000", 405),
        # Refused before: an origin on another spelling of a loopback address.
        ("http://[0:0:0:0:0:0:0:1]:3000", 405),
        ("http://127.0.0.2:3000", 405),
        ("https://evil.example", 403),
        ("http://localhost.evil.example", 403),
        ("null", 403),
    ],
)
def test_http_origin_check(app: HttpApp, origin: str, status: int) -> None:
    assert http_status(app, "localhost:8000", origin) == status


# -- `baton serve`'s warning about a non-loopback address ---------------------------------------------


@pytest.mark.parametrize(
    ("address", "warned"),
    [
        ("127.0.0.1:8000", False),
        ("[::1]:8000", False),
        ("::1:8000", False),
        # Warned before: loopback, but not one of the spellings "127.0.0.1", "localhost", "::1".
        ("LOCALHOST:8000", False),
        ("127.0.0.2:8000", False),
        ("[0:0:0:0:0:0:0:1]:8000", False),
        ("0.0.0.0:8000", True),
        ("[::]:8000", True),
    ],
)
def test_serve_warns_only_off_loopback(
    address: str, warned: bool, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from baton import web
    from baton.cli import main

    monkeypatch.setattr(web, "run", lambda *args, **kwargs: 0)  # the one uvicorn launcher: nothing served
    with caplog.at_level(logging.WARNING, logger="baton"):
        assert main(["serve", str(SERVERS / "guarded.py"), "--http", address]) == 0
    assert ("only loopback Host headers are admitted" in caplog.text) is warned
