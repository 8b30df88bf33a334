"""`baton.web` is the one place Baton's pages get their security headers, read a capped body, answer a lifespan
and start uvicorn, and `baton.targets` the one place a `FILE.py[:ATTR]` target is split: a scan of src/baton finds
no other (as `test_oauth_http` pins the OAuth HTTP client). Then what those functions do, on real sockets where a
socket is the thing tested.
"""

from __future__ import annotations

import ast
import asyncio
import functools
import socket
from collections.abc import Callable, MutableMapping
from pathlib import Path
from typing import Any

import pytest
from support.source_tree import parsed, walked

from baton.targets import split_target
from baton.web import BodyTooLarge, ClientGone, PortTaken, lifespan, listen, read_body, security_headers

SRC = Path(__file__).resolve().parent.parent / "src" / "baton"
WEB = SRC / "web.py"
TARGETS = SRC / "targets.py"
HEADER_NAMES = ("content-security-policy", "x-frame-options", "x-content-type-options", "referrer-policy")
# The MCP endpoint's hot path looks at its first body message itself and hands the rest to `read_body`. On Lambda,
# `Unstreamed` reads the body Mangum already holds whole (from the event) to rewrite an `initialize`, and replays it to
# the MCP endpoint, which caps it.
# `baton.http_protocol`'s `send` reads `more_body` of the messages an app sends (a response), not of a request.
BODY_EXCEPTIONS = {"serve/http.py": 1, "serve/lambda_handler.py": 1, "http_protocol.py": 1}
# `baton.http_protocol` is the HTTP protocol `baton.web` gives uvicorn: built on uvicorn's, it starts nothing.
UVICORN_EXCEPTIONS = {"http_protocol.py"}
# The MCP endpoint's lifespan starts the server (its lifespan, its answer bus): work, not a bare answer.
LIFESPAN_EXCEPTIONS = {"serve/http.py"}


def _modules() -> list[tuple[str, ast.Module]]:
    return [(str(p.relative_to(SRC)), parsed(p)) for p in sorted(SRC.rglob("*.py"))]


def elsewhere(scan: Callable[[ast.Module], list[int]], home: Path) -> dict[str, list[int]]:
    """What `scan` finds in each module of src/baton but `home`, by module."""
    here = str(home.relative_to(SRC))
    return {name: found for name, tree in _modules() if name != here if (found := scan(tree))}


def _docstrings(tree: ast.Module) -> set[int]:
    """The ids of the docstring constants of a module, its classes and functions (prose, not code)."""
    found = set()
    for node in walked(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


@functools.cache  # each tree's strings are read by two scans
def _strings(tree: ast.Module) -> list[tuple[int, str]]:
    """Every str or bytes constant of the code (docstrings left out), lower-cased, with its line."""
    prose = _docstrings(tree)
    out = []
    for node in walked(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str | bytes) and id(node) not in prose:
            value = node.value.decode("latin-1") if isinstance(node.value, bytes) else node.value
            out.append((node.lineno, value.lower()))
    return out


def security_header_writers(tree: ast.Module) -> list[int]:
    return [line for line, text in _strings(tree) if any(name in text for name in HEADER_NAMES)]


def body_readers(tree: ast.Module) -> list[int]:
    """Where a module reads `more_body` of a received message (`message.get("more_body")`)."""
    return [
        node.lineno
        for node in walked(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "get"
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and node.args[0].value == "more_body"
    ]


def lifespan_answers(tree: ast.Module) -> list[int]:
    return [line for line, text in _strings(tree) if text.startswith("lifespan.") or text == ".complete"]


def uvicorn_users(tree: ast.Module) -> list[int]:
    """Where a module imports uvicorn (to run it, configure it, or patch it)."""
    return [
        node.lineno
        for node in walked(tree)
        if (isinstance(node, ast.Import) and any(a.name.split(".")[0] == "uvicorn" for a in node.names))
        or (isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "uvicorn")
    ]


def target_splitters(tree: ast.Module) -> list[int]:
    """Where a module tests for a drive letter, `target[1] == ":"`: the mark of a target split by hand."""
    return [
        node.lineno
        for node in walked(tree)
        if isinstance(node, ast.Compare)
        and isinstance(node.left, ast.Subscript)
        and isinstance(node.left.slice, ast.Constant)
        and node.left.slice.value == 1
        and any(isinstance(c, ast.Constant) and c.value == ":" for c in node.comparators)
    ]


def test_no_module_but_web_writes_the_security_headers_of_a_page() -> None:
    assert elsewhere(security_header_writers, WEB) == {}, "send a page's headers with baton.web.security_headers(csp)"
    assert security_header_writers(ast.parse(WEB.read_text()))  # the scan sees the one place


def test_no_module_but_web_reads_a_request_body() -> None:
    counts = {name: len(found) for name, found in elsewhere(body_readers, WEB).items()}
    assert counts == BODY_EXCEPTIONS, "read a request body with baton.web.read_body(receive, limit)"
    assert body_readers(ast.parse(WEB.read_text()))


def test_no_module_but_web_answers_a_bare_lifespan() -> None:
    assert set(elsewhere(lifespan_answers, WEB)) == LIFESPAN_EXCEPTIONS, "answer a lifespan with baton.web.lifespan"
    assert lifespan_answers(ast.parse(WEB.read_text()))


def test_no_module_but_web_starts_uvicorn() -> None:
    users = set(elsewhere(uvicorn_users, WEB))
    assert users == UVICORN_EXCEPTIONS, "serve with baton.web.run (blocking) or baton.web.started (in a loop)"
    source = WEB.read_text()
    assert len(uvicorn_users(ast.parse(source))) == 2 and "bind_socket" not in source  # no patching of uvicorn


def test_no_module_but_targets_splits_a_target() -> None:
    assert elsewhere(target_splitters, TARGETS) == {}, "split FILE.py[:ATTR] with baton.targets.split_target"
    assert target_splitters(ast.parse(TARGETS.read_text()))


def test_the_scans_see_each_copy(tmp_path: Path) -> None:
    probe = ast.parse(
        'import uvicorn.config\nH = [(b"X-Frame-Options", b"DENY")]\nm = {}\nm.get("more_body")\n'
        'T = "{}.complete"\nok = t[1] == ":"\n'
    )
    assert uvicorn_users(probe) == [1] and security_header_writers(probe) == [2] and body_readers(probe) == [4]
    assert target_splitters(probe) == [6]
    assert lifespan_answers(ast.parse('x = {"type": "lifespan.startup.complete"}')) == [1]


@pytest.mark.parametrize(
    ("target", "split"),
    [
        ("server.py", ("server.py", "")),
        ("server.py:app", ("server.py", "app")),
        ("pkg.mod:make", ("pkg.mod", "make")),
        ("m:app", ("m", "app")),  # a one-letter module is no drive
        ("dir/server.py:", ("dir/server.py", "")),
        ("C:\\srv\\server.py", ("C:\\srv\\server.py", "")),
        ("C:/srv/server.py:app", ("C:/srv/server.py", "app")),  # a drive and an attribute
    ],
)
def test_split_target(target: str, split: tuple[str, str]) -> None:
    assert split_target(target) == split


def test_security_headers_carry_the_pages_csp_and_referrer_policy() -> None:
    headers = dict(security_headers("default-src 'none'", referrer="same-origin"))
    assert headers == {
        b"content-security-policy": b"default-src 'none'",
        b"x-frame-options": b"DENY",
        b"referrer-policy": b"same-origin",
        b"x-content-type-options": b"nosniff",
        b"cache-control": b"no-store",
    }
    assert dict(security_headers("x"))[b"referrer-policy"] == b"no-referrer"


def _messages(*items: MutableMapping[str, Any]) -> Any:
    queue = list(items)

    async def receive() -> MutableMapping[str, Any]:
        return queue.pop(0)

    return receive


def test_read_body_joins_the_chunks_up_to_the_limit() -> None:
    def chunk(body: bytes, more: bool) -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": more}

    assert asyncio.run(read_body(_messages(chunk(b"ab", True), chunk(b"cd", False)), 4)) == b"abcd"
    first = chunk(b"ab", True)
    assert asyncio.run(read_body(_messages(chunk(b"c", False)), 4, first=first)) == b"abc"
    with pytest.raises(BodyTooLarge):  # refused as soon as the limit is passed: the rest is never read
        asyncio.run(read_body(_messages(chunk(b"abc", True), chunk(b"de", True)), 4))
    with pytest.raises(ClientGone):
        asyncio.run(read_body(_messages(chunk(b"ab", True), {"type": "http.disconnect"}), 4))


def test_lifespan_answers_startup_and_shutdown() -> None:
    sent: list[str] = []

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(message["type"])

    asyncio.run(lifespan(_messages({"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}), send))
    assert sent == ["lifespan.startup.complete", "lifespan.shutdown.complete"]


@pytest.mark.process
def test_listen_sets_nodelay_on_what_it_accepts_and_says_when_the_port_is_taken() -> None:
    with listen("127.0.0.1", 0) as sock, socket.create_connection(sock.getsockname()[:2]) as client:
        sock.setblocking(True)
        accepted, _ = sock.accept()
        with accepted:
            assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
        port = sock.getsockname()[1]
        with pytest.raises(PortTaken, match=rf"^cannot listen on 127\.0\.0\.1:{port}: Address already in use$"):
            listen("127.0.0.1", port).close()
        assert client.fileno() >= 0


def test_a_target_on_a_windows_drive_keeps_its_attribute() -> None:
    """`baton dev C:/srv/server.py:app` looks for the file C:/srv/server.py (it used to look for `server.py:app`)."""
    from baton.devui.dev_target import DevTargetError, parse_target

    with pytest.raises(DevTargetError, match=r"^no such file: C:/nowhere/server\.py$"):
        parse_target("C:/nowhere/server.py:app", [])
