"""The client login's guards, each checked directly against stub hosts on 127.0.0.1 (`support.stub_http`)
that say exactly what a hostile or broken server would: bodies too large or never ending, metadata that
points elsewhere, tokens of the wrong kind, grants and clients bound to another authorization server,
the bounds on logins per request, and the token store and the loopback listener under concurrent use.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from support import processes
from support.stub_http import Reply, Seen, Stub, consent, endless, json_reply, oauth_as, oversized, prm, run

from baton.client.oauth import AuthError, FileStore, MemoryStore, OAuth
from baton.client.oauth.challenge import Challenge
from baton.client.oauth.login import Attempts, LoginState

REDIRECT = "http://127.0.0.1:9/callback"


class Browser:
    """A browser that consents at once (`consent`), keeping every sign-in URL it was shown in `opened`."""

    def __init__(self) -> None:
        self.opened: list[str] = []

    async def __call__(self, url: str) -> str:
        self.opened.append(url)
        return await consent(url)


def config(browser: Callable[[str], Awaitable[str]] = consent, **kw: Any) -> OAuth:
    return OAuth(redirect_uri=REDIRECT, open_browser=browser, store=kw.pop("store", None) or MemoryStore(), **kw)


async def login_at(server: Stub, auth: OAuth, challenge: Challenge | None = None) -> bytes | None:
    """One recovery from a 401 of the server at `server.url/mcp`, its challenge pointing at `/prm`."""
    login = LoginState(auth, f"{server.url}/mcp")
    return await login.recover(401, challenge or Challenge({"resource_metadata": f"{server.url}/prm"}), b"", Attempts())


# -- size and time bounds (protocol.md P49) ---------------------------------------------------------------


async def _drip() -> AsyncIterator[bytes]:
    yield b"{"
    while True:
        await asyncio.sleep(0.3)
        yield b" "


@pytest.mark.process
def test_a_metadata_host_that_drips_its_answer_is_cut_off_by_the_overall_bound() -> None:
    async def main() -> float:
        async with Stub({"GET /prm": lambda seen: Reply(chunks=_drip())}) as stub:
            started = time.monotonic()
            with pytest.raises(AuthError, match="longer than 2 s"):
                await login_at(stub, config(http_timeout_s=2))
            return time.monotonic() - started

    assert run(main()) < 5


@pytest.mark.process
@pytest.mark.parametrize("with_length", [True, False])
def test_a_metadata_body_over_the_cap_is_refused_without_reading_it_all(with_length: bool) -> None:
    def huge(seen: Seen) -> Reply:
        return oversized(declared=with_length)

    async def main() -> None:
        async with Stub({"GET /prm": huge}) as stub:
            with pytest.raises(AuthError, match="larger than 256 KiB"):
                await login_at(stub, config())

    run(main(), 20)


@pytest.mark.process
def test_a_token_response_over_the_cap_is_refused() -> None:
    async def main() -> None:
        async with Stub() as stub:
            oauth_as(stub)
            prm(stub, f"{stub.url}/mcp", [stub.url])
            stub.routes["POST /token"] = lambda seen: Reply(chunks=endless())
            with pytest.raises(AuthError, match="larger than 256 KiB"):
                await login_at(stub, config())

    run(main(), 20)


@pytest.mark.process
def test_at_most_three_authorization_servers_are_tried() -> None:
    async def main() -> list[str]:
        async with Stub() as stub:
            issuers = [f"{stub.url}/as{i}" for i in range(6)]
            prm(stub, f"{stub.url}/mcp", issuers)
            with pytest.raises(AuthError, match="no usable metadata"):
                await login_at(stub, config())
            return stub.paths("GET")

    fetched = run(main())
    assert any(p.endswith("/as2") for p in fetched)
    assert not any(p.endswith(("/as3", "/as4", "/as5")) for p in fetched)


@pytest.mark.process
def test_the_person_at_the_browser_is_not_counted_against_the_exchange_bound() -> None:
    async def slow_person(url: str) -> str:
        await asyncio.sleep(2.5)
        return await consent(url)

    async def main() -> bytes | None:
        async with Stub() as stub:
            oauth_as(stub)
            prm(stub, f"{stub.url}/mcp", [stub.url])
            return await login_at(stub, config(slow_person, http_timeout_s=2))

    assert run(main()) == b"Authorization: Bearer AT-1\r\n"


# -- where tokens and logins may go (protocol.md P52) -------------------------------------------------------


@pytest.mark.parametrize("url", ["http://mcp.example.com/mcp", "http://192.0.2.7:8080/mcp", "http://[2001:db8::1]/mcp"])
def test_auth_is_refused_for_a_server_a_token_would_reach_in_clear_text(url: str) -> None:
    from baton.client import Client

    with pytest.raises(ValueError, match="clear text"):
        Client(url, auth=config())


@pytest.mark.parametrize("url", ["https://mcp.example.com/mcp", "http://127.0.0.1:9/mcp", "http://localhost:9/mcp"])
def test_auth_is_accepted_for_https_and_for_this_computer(url: str) -> None:
    from baton.client import Client

    Client(url, auth=config())


@pytest.mark.process
def test_a_remote_server_cannot_point_the_login_at_this_computer() -> None:
    browser = Browser()

    async def main() -> None:
        async with Stub() as stub:  # metadata and an authorization server on 127.0.0.1
            oauth_as(stub)
            prm(stub, "https://mcp.example.com/mcp", [stub.url])
            login = LoginState(config(browser), "https://mcp.example.com/mcp")
            challenge = Challenge({"resource_metadata": f"{stub.url}/prm"})
            with pytest.raises(AuthError, match=r"on this computer, but the server https://mcp\.example\.com/mcp"):
                await login.recover(401, challenge, b"", Attempts())
            assert stub.seen == []  # not even the metadata was fetched

    run(main())
    assert browser.opened == []


@pytest.mark.parametrize(
    ("url", "server", "ok"),
    [
        ("https://as.example.com/authorize", "https://mcp.example.com/mcp", True),
        ("https://as.example.com/authorize", "http://127.0.0.1:3000/mcp", True),
        ("http://127.0.0.1:8080/authorize", "http://127.0.0.1:3000/mcp", True),
        ("http://localhost:8080/authorize", "http://localhost:3000/mcp", True),
        ("http://[::1]:8080/authorize", "http://127.0.0.1:3000/mcp", True),
        ("http://as.example.com/authorize", "https://mcp.example.com/mcp", False),  # plain http elsewhere
        ("http://as.example.com/authorize", "http://127.0.0.1:3000/mcp", False),
        ("http://127.0.0.1:8080/authorize", "https://mcp.example.com/mcp", False),  # local, for a remote server
        ("https://localhost:8443/authorize", "https://mcp.example.com/mcp", False),
        ("javascript:alert(1)", "http://127.0.0.1:3000/mcp", False),
        ("ftp://as.example.com/x", "https://mcp.example.com/mcp", False),
        ("https:///nohost", "https://mcp.example.com/mcp", False),
    ],
)
def test_check_endpoint(url: str, server: str, ok: bool) -> None:
    from baton.client.oauth.discovery import check_endpoint

    if ok:
        assert check_endpoint(url, "endpoint", server) == url
    else:
        with pytest.raises(AuthError):
            check_endpoint(url, "endpoint", server)


# -- which client, bound to which authorization server (protocol.md P53, P57) ------------------------------


def test_a_pre_registered_secret_needs_its_issuer() -> None:
    with pytest.raises(ValueError, match="client_secret belongs to one authorization server: give its issuer="):
        config(client_id="app", client_secret="s3cret")


@pytest.mark.process
def test_a_public_pre_registered_client_stays_with_the_first_authorization_server_across_servers_and_objects() -> None:
    store = MemoryStore()
    browser = Browser()

    async def main() -> None:
        async with Stub() as one, Stub() as two:
            for stub in (one, two):
                oauth_as(stub, token_endpoint_auth_methods_supported=["none"])
                prm(stub, f"{stub.url}/mcp", [stub.url])
            auth = config(browser, client_id="desktop-app", store=store)
            assert await login_at(one, auth) == b"Authorization: Bearer AT-1\r\n"
            with pytest.raises(AuthError, match=f"belongs to the authorization server {one.url}"):
                await login_at(two, auth)  # the same OAuth object, another server
            later = config(browser, client_id="desktop-app", store=store)  # a new process, the same store
            with pytest.raises(AuthError, match=f"belongs to the authorization server {one.url}"):
                await login_at(two, later)
            assert two.paths("POST") == []  # the second authorization server never saw the client

    run(main())
    assert len(browser.opened) == 1


# -- the file store (protocol.md P58) -----------------------------------------------------------------------


def test_two_file_stores_on_one_path_in_one_process_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "client" / "oauth.json"
    one, two = FileStore(path), FileStore(path)

    async def writer(store: FileStore, name: str) -> None:
        for i in range(60):
            await store.set(f"token {name}", {"access_token": "x" * 2000, "i": i})

    async def main() -> tuple[Any, Any]:
        await asyncio.gather(writer(one, "A"), writer(two, "B"), writer(one, "C"))
        return await one.get("token A"), await two.get("token B")

    a, b = run(main())
    assert a is not None and a["i"] == 59 and b is not None and b["i"] == 59
    assert set(json.loads(path.read_text())) == {"token A", "token B", "token C"}
    assert [p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")] == []


WRITER = """\
import asyncio, sys
from baton.client.oauth import FileStore
async def main():
    store = FileStore(sys.argv[1])
    for i in range(40):
        await store.set(f"token {sys.argv[2]} {i}", {"i": i})
asyncio.run(main())
"""


@pytest.mark.process
def test_two_processes_writing_one_file_store_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "client" / "oauth.json"
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    procs = [processes.popen([sys.executable, str(script), str(path), name], env=env) for name in ("P", "Q")]
    assert [p.wait(timeout=60) for p in procs] == [0, 0]
    assert len(json.loads(path.read_text())) == 80


def test_a_store_directory_others_may_write_to_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o777)
    with pytest.raises(AuthError, match="may be written by other users"):
        run(FileStore(folder / "oauth.json").set("k", {"v": 1}))
    assert list(folder.iterdir()) == []


def test_a_store_that_cannot_be_read_or_written_is_an_auth_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    (tmp_path / "folder.json").mkdir()
    with pytest.raises(AuthError, match="token store"):
        run(FileStore(tmp_path / "file" / "oauth.json").set("k", {"v": 1}))
    with pytest.raises(AuthError, match="token store"):
        run(FileStore(tmp_path / "folder.json").set("k", {"v": 1}))


@pytest.mark.process
def test_a_pre_registered_secret_is_never_stored_and_still_refreshes(tmp_path: Path) -> None:
    path = tmp_path / "oauth.json"

    async def main() -> Stub:
        async with Stub() as stub:
            oauth_as(stub, token_endpoint_auth_methods_supported=["client_secret_basic"])
            prm(stub, f"{stub.url}/mcp", [stub.url])
            stub.token = {"access_token": "AT-1", "token_type": "Bearer", "refresh_token": "RT-1"}  # type: ignore[attr-defined]
            auth = config(client_id="app", client_secret="THE-SECRET", issuer=stub.url, store=FileStore(path))
            login = LoginState(auth, f"{stub.url}/mcp")
            challenge = Challenge({"resource_metadata": f"{stub.url}/prm"})
            sent = await login.recover(401, challenge, b"", Attempts())
            assert "THE-SECRET" not in path.read_text()
            stub.token = {"access_token": "AT-2", "token_type": "Bearer"}  # type: ignore[attr-defined]
            again = LoginState(auth, f"{stub.url}/mcp")  # a later client: the grant comes from the file
            assert await again.current() == sent
            assert await again.recover(401, challenge, sent or b"", Attempts()) == b"Authorization: Bearer AT-2\r\n"
            return stub

    stub = run(main())
    tokens = [s for s in stub.seen if s.path == "/token"]
    assert [t.form()["grant_type"] for t in tokens] == ["authorization_code", "refresh_token"]
    basic = "Basic " + base64.b64encode(b"app:THE-SECRET").decode()
    assert all(t.headers.get("authorization") == basic for t in tokens)
    assert "THE-SECRET" not in path.read_text()


# -- discovery (protocol.md P50, P51) -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("resource", "well_known", "ok"),
    [
        ("https://x.example/mcp", False, True),
        ("https://X.example:443/mcp/", False, True),  # host case, default port, trailing slash
        ("https://x.example", True, True),  # the origin, from the origin's own well-known document
        ("https://x.example/", True, True),
        ("https://x.example", False, False),  # ...but not from a URL the challenge named
        ("https://x.example/tenant", False, False),
        ("https://x.example/mcp/sub", True, False),  # a child is not this server
        ("https://x.example/mc", True, False),  # a prefix that is not a path segment
        ("https://x.example/other", True, False),  # a sibling
        ("http://x.example/mcp", True, False),  # another scheme
        ("https://x.example:8443/mcp", True, False),  # another port
        ("https://y.example/mcp", True, False),  # another host
        ("https://x.example/mcp#f", True, False),
        ("https://x.example/mcp?tenant=b", True, False),
        ("ftp://x.example/mcp", True, False),
    ],
)
def test_resource_matches(resource: str, well_known: bool, ok: bool) -> None:
    from baton.client.oauth.discovery import resource_matches

    assert resource_matches(resource, "https://x.example/mcp", from_well_known=well_known) is ok


@pytest.mark.process
def test_a_prm_from_the_challenge_url_cannot_widen_the_token_to_the_origin() -> None:
    async def main() -> None:
        async with Stub() as stub:
            oauth_as(stub)
            prm(stub, stub.url, [stub.url], path="/tenant-a/prm")  # a tenant's document names the whole origin
            challenge = Challenge({"resource_metadata": f"{stub.url}/tenant-a/prm"})
            with pytest.raises(AuthError, match="not for this server"):
                await login_at(stub, config(), challenge)
            prm(stub, stub.url, [stub.url], path="/.well-known/oauth-protected-resource")  # the origin's own
            assert await login_at(stub, config(), Challenge()) == b"Authorization: Bearer AT-1\r\n"

    run(main())


@pytest.mark.process
def test_metadata_whose_issuer_is_not_the_same_string_is_not_used() -> None:
    async def main() -> list[str]:
        async with Stub() as stub:
            meta = oauth_as(stub)
            meta["issuer"] = stub.url + "/"  # differs only by normalisation
            stub.routes["GET /.well-known/openid-configuration"] = lambda seen: json_reply({**meta, "issuer": "x"})
            prm(stub, f"{stub.url}/mcp", [stub.url])
            with pytest.raises(AuthError, match=r"no usable metadata.*its issuer is"):
                await login_at(stub, config())
            return stub.paths("POST")

    assert run(main()) == []  # neither registration nor token endpoint was used


@pytest.mark.process
@pytest.mark.parametrize("methods", [["plain"], [], None])
def test_an_authorization_server_without_s256_is_refused(methods: list[str] | None) -> None:
    async def main() -> list[str]:
        async with Stub() as stub:
            meta = oauth_as(stub, code_challenge_methods_supported=methods)
            if methods is None:
                del meta["code_challenge_methods_supported"]
            prm(stub, f"{stub.url}/mcp", [stub.url])
            with pytest.raises(AuthError, match="S256"):
                await login_at(stub, config())
            return stub.paths("POST")

    assert run(main()) == []


# -- tokens and grants (protocol.md P55, P57) ------------------------------------------------------------------


@pytest.mark.process
@pytest.mark.parametrize("kind", ["DPoP", "mac", None, 7])
def test_a_token_that_is_not_bearer_is_refused(kind: Any) -> None:
    async def main() -> None:
        async with Stub() as stub:
            oauth_as(stub)
            prm(stub, f"{stub.url}/mcp", [stub.url])
            stub.token = {"access_token": "AT-1", "token_type": kind}  # type: ignore[attr-defined]
            with pytest.raises(AuthError, match="Bearer"):
                await login_at(stub, config())

    run(main())


@pytest.mark.process
def test_a_grant_from_the_old_authorization_server_never_reaches_the_new_one() -> None:
    store = MemoryStore()

    async def main() -> tuple[Stub, Stub]:
        async with Stub() as old, Stub() as new:
            for stub in (old, new):
                oauth_as(stub)
                stub.token = {"access_token": f"AT-{stub.url}", "token_type": "Bearer", "refresh_token": "RT-OLD"}  # type: ignore[attr-defined]
            server = f"{old.url}/mcp"
            prm(old, server, [old.url])
            login = LoginState(config(store=store), server)
            challenge = Challenge({"resource_metadata": f"{old.url}/prm"})
            sent = await login.recover(401, challenge, b"", Attempts())
            assert (await store.get(f"token {server}"))["refresh_token"] == "RT-OLD"  # type: ignore[index]
            prm(old, server, [new.url])  # the server moves to another authorization server
            renewed = await login.recover(401, challenge, sent or b"", Attempts())
            assert renewed == f"Authorization: Bearer AT-{new.url}\r\n".encode()
            return old, new

    old, new = run(main())
    to_new = [s for s in new.seen if s.method == "POST"]
    assert [s.path for s in to_new] == ["/register", "/token"]
    assert all(b"RT-OLD" not in s.body for s in to_new)
    assert new.seen[-1].form()["grant_type"] == "authorization_code"
    assert [s.form()["grant_type"] for s in old.seen if s.path == "/token"] == ["authorization_code"]  # no refresh


@pytest.mark.process
def test_an_expired_dynamic_registration_is_made_again() -> None:
    from baton.state import clock

    store = MemoryStore()

    async def main() -> list[str]:
        async with Stub() as stub:
            oauth_as(stub)
            prm(stub, f"{stub.url}/mcp", [stub.url])
            expired = {
                "client_id": "old-cid",
                "client_secret": "old",
                "auth_method": "client_secret_post",
                "kind": "dynamic",
                "issuer": stub.url,
                "redirect_uris": [REDIRECT],
                "secret_expires_at": int(clock.now()) - 10,
            }
            await store.set(f"client {stub.url}", expired)
            await login_at(stub, config(store=store))
            return [s.form().get("client_id", "") for s in stub.seen if s.path == "/token"]

    assert run(main()) == ["cid-1"]  # registered again; the expired client was not used


@pytest.mark.process
def test_a_registration_stored_for_another_issuer_is_not_used() -> None:
    store = MemoryStore()

    async def main() -> list[str]:
        async with Stub() as stub:
            oauth_as(stub)
            prm(stub, f"{stub.url}/mcp", [stub.url])
            other = {
                "client_id": "other-cid",
                "client_secret": None,
                "auth_method": "none",
                "kind": "dynamic",
                "issuer": "https://other.example",
                "redirect_uris": [REDIRECT],
            }
            await store.set(f"client {stub.url}", other)  # under this issuer's key, but made by another
            await login_at(stub, config(store=store))
            return stub.paths("POST")

    assert run(main()) == ["/register", "/token"]


# -- how often a request may log in (protocol.md P49, P54) ---------------------------------------------------


@pytest.mark.process
def test_step_up_is_bounded_per_request() -> None:
    browser = Browser()

    async def main() -> None:
        async with Stub() as stub:
            oauth_as(stub)
            prm(stub, f"{stub.url}/mcp", [stub.url])
            login = LoginState(config(browser), f"{stub.url}/mcp")
            attempts = Attempts()
            sent = b""
            for i in range(2):  # every challenge asks for one scope more: the union keeps growing
                words = " ".join(f"s{j}" for j in range(i + 2))
                challenge = Challenge({"resource_metadata": f"{stub.url}/prm", "scope": words})
                sent = await login.recover(403, challenge, sent, attempts) or b""
            challenge = Challenge({"resource_metadata": f"{stub.url}/prm", "scope": "s0 s1 s2 s3"})
            with pytest.raises(AuthError, match="asking again cannot get it"):
                await login.recover(403, challenge, sent, attempts)

    run(main())
    assert len(browser.opened) == 2


@pytest.mark.process
def test_a_401_after_a_fresh_login_is_not_met_with_another_login() -> None:
    browser = Browser()

    async def main() -> None:
        async with Stub() as stub:
            oauth_as(stub)
            prm(stub, f"{stub.url}/mcp", [stub.url])
            login = LoginState(config(browser), f"{stub.url}/mcp")
            attempts = Attempts()
            challenge = Challenge({"resource_metadata": f"{stub.url}/prm"})
            sent = await login.recover(401, challenge, b"", attempts) or b""
            with pytest.raises(AuthError, match=r"refused the token .* just issued"):
                await login.recover(401, challenge, sent, attempts)

    run(main())
    assert len(browser.opened) == 1


@pytest.mark.process
def test_a_delete_never_opens_the_browser() -> None:
    from baton.client.http11 import Url
    from baton.client.oauth.pool import AuthPool

    browser = Browser()

    async def main() -> tuple[int, int]:
        async with Stub() as stub:
            oauth_as(stub)
            prm(stub, f"{stub.url}/mcp", [stub.url])
            header = {"WWW-Authenticate": f'Bearer resource_metadata="{stub.url}/prm"'}
            stub.routes["DELETE /mcp"] = lambda seen: json_reply({}, 401, header)
            stub.routes["POST /mcp"] = lambda seen: json_reply({}, 401, header)
            pool = AuthPool(LoginState(config(browser), f"{stub.url}/mcp"))
            try:
                url = Url.parse(f"{stub.url}/mcp")
                deleted = await pool.send(url, "DELETE", b"", b"")
                deleted.release()
                assert browser.opened == []
                with pytest.raises(AuthError):  # a POST does log in (and is refused again: bounded)
                    await pool.send(url, "POST", b"", b"{}")
                return deleted.status, len(browser.opened)
            finally:
                await pool.close()

    assert run(main()) == (401, 1)
