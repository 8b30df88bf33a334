"""`baton.oauth_http` is the one place an HTTP client to an OAuth party is built: a scan of src/baton finds no
other, and the clients it builds (the connect kit's token exchange, the resource server's issuer
discovery) refuse an oversized body and ignore the proxy settings of the environment, against stub hosts
on 127.0.0.1 (`support.stub_http`).
"""

from __future__ import annotations

import ast
import asyncio
import json
import socket
from pathlib import Path

import httpx
import pytest
from support.markers import needs
from support.source_tree import parsed
from support.stub_http import Reply, Seen, Stub, endless, json_reply, oversized, run

from baton.auth import DiscoveryError, discover_issuer
from baton.connect.oauth import OAuthProvider, exchange

SRC = Path(__file__).resolve().parent.parent / "src" / "baton"
HOME = SRC / "oauth_http.py"
CLIENT_CLASSES = {"AsyncClient", "Client", "AsyncOAuth2Client", "OAuth2Client", "AsyncHTTPTransport", "HTTPTransport"}
# A module listed here may build its own client, for a reason that is not OAuth. None is needed today.
EXCEPTIONS: dict[str, str] = {}


def constructions(path: Path) -> list[str]:
    """Where `path` builds an httpx or Authlib client or transport, or imports Authlib's client classes."""
    tree = parsed(path)
    modules = {"httpx"}  # names bound to the httpx module, and client classes imported by name
    classes: set[str] = set()
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules |= {a.asname or a.name for a in node.names if a.name == "httpx"}
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            if node.module.startswith("authlib.integrations"):
                found.append(f"{path.name}:{node.lineno} imports {node.module}")
            if node.module == "httpx":
                classes |= {a.asname or a.name for a in node.names if a.name in CLIENT_CLASSES}

    def dotted(expr: ast.expr) -> str | None:
        """`httpx.X` (under any name httpx is bound to) or a class imported from httpx, when X is a client."""
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id in modules:
            return f"{expr.value.id}.{expr.attr}" if expr.attr in CLIENT_CLASSES else None
        if isinstance(expr, ast.Name) and (expr.id in classes or expr.id in CLIENT_CLASSES - {"Client"}):
            return expr.id
        return None

    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):  # a transport or client of one's own
            found += [f"{path.name}:{node.lineno} subclasses {n}" for n in map(dotted, node.bases) if n]
        elif isinstance(node, ast.Call) and (name := dotted(node.func)):
            found.append(f"{path.name}:{node.lineno} calls {name}")
    return found


def test_no_module_but_oauth_http_builds_an_http_client() -> None:
    elsewhere = {
        str(path.relative_to(SRC)): found
        for path in sorted(SRC.rglob("*.py"))
        if path != HOME and str(path.relative_to(SRC)) not in EXCEPTIONS
        for found in [constructions(path)]
        if found
    }
    assert elsewhere == {}, "build HTTP clients to OAuth parties with baton.oauth_http, not by hand"
    assert len(constructions(HOME)) == 5  # the scan sees the two clients, two transports and Authlib's import


def test_the_scan_sees_each_way_of_building_one(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import httpx as h\nfrom httpx import Client as C\n"
        "from authlib.integrations.httpx_client import AsyncOAuth2Client\n"
        "h.AsyncClient()\nC()\nAsyncOAuth2Client()\nh.HTTPTransport()\nclass T(h.AsyncHTTPTransport): pass\n"
    )
    assert len(constructions(probe)) == 6


@pytest.fixture
@needs("process")
def dead_proxy(monkeypatch: pytest.MonkeyPatch) -> str:
    """Every proxy variable names a port on 127.0.0.1 where nothing listens; a client that reads them fails."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        proxy = f"http://127.0.0.1:{sock.getsockname()[1]}"
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.setenv(name, proxy)
    return proxy


TOKEN = {"access_token": "at-1", "token_type": "Bearer", "expires_in": 60}


def provider(url: str) -> OAuthProvider:
    return OAuthProvider("stub", "cid", f"{url}/authorize", f"{url}/token", client_secret="s3cret")


def test_the_connect_kits_exchange_ignores_the_proxy_of_the_environment(dead_proxy: str) -> None:
    async def main() -> tuple[dict[str, object], str]:
        async with Stub({"POST /token": lambda seen: json_reply(TOKEN)}) as stub:
            token = await exchange(provider(stub.url), f"{stub.url}/cb", "code-1", "v" * 64)
            async with httpx.AsyncClient() as plain:  # what an httpx client that reads the environment does
                with pytest.raises(httpx.TransportError):
                    await plain.get(f"{stub.url}/token")
            return token, stub.seen[0].form()["code"]

    token, code = run(main())
    assert token["access_token"] == "at-1" and code == "code-1"


@pytest.mark.process
@pytest.mark.parametrize("with_length", [True, False])
def test_the_connect_kits_exchange_refuses_a_body_over_the_cap(with_length: bool) -> None:
    def huge(seen: Seen) -> Reply:
        return oversized(declared=with_length)

    async def main() -> None:
        async with Stub({"POST /token": huge}) as stub:
            with pytest.raises(httpx.HTTPError, match="larger than 256 KiB"):
                await exchange(provider(stub.url), f"{stub.url}/cb", "code-1", "v" * 64)

    run(main())


def test_issuer_discovery_refuses_a_body_over_the_cap_and_ignores_the_proxy(dead_proxy: str) -> None:
    async def main() -> str:
        async with Stub() as stub:
            issuer = stub.url
            document = {"issuer": issuer, "padding": "x" * 300_000}
            stub.routes["GET /.well-known/oauth-authorization-server"] = lambda seen: Reply(
                200, json.dumps(document).encode(), {"Content-Type": "application/json"}
            )
            stub.routes["GET /.well-known/openid-configuration"] = lambda seen: json_reply({"issuer": issuer})
            found = await asyncio.to_thread(discover_issuer, issuer, timeout_s=5)
            assert found == {"issuer": issuer}  # the first was refused, the second (small) one used
            stub.routes["GET /.well-known/openid-configuration"] = lambda seen: Reply(chunks=endless())
            with pytest.raises(DiscoveryError) as refused:
                await asyncio.to_thread(discover_issuer, issuer, timeout_s=5)
            return str(refused.value)

    assert run(main()).count("ResponseTooLarge") == 2
