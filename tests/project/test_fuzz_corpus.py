"""Every fuzz target's corpus replayed through its harness (fuzz/harness.py): no undocumented exception, no
input over 1 s, no memory growth. The corpus holds the seeds and every input that was once a finding, so each
fixed finding stays fixed (docs/security.md lists them)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from support import processes
from support.paths import ROOT

sys.path.append(str(ROOT))  # the fuzz/ package at the project root, as `./dev fuzz` runs it

from fuzz.harness import Finding, Target, load, names, replay


@pytest.mark.parametrize("name", names())
def test_corpus_replays_without_findings(name: str) -> None:
    target = load(name)
    assert replay(target) >= 3, f"{name}: the seed corpus under {target.corpus} holds fewer than 3 inputs"


def test_a_finding_is_an_undocumented_exception() -> None:
    def parser(data: bytes) -> None:
        if data == b"documented":
            raise ValueError("the parser's answer")
        if data == b"bug":
            raise KeyError("a crash")

    target = Target("probe", "a probe", parser, (ValueError,))
    target.run(b"documented")
    with pytest.raises(KeyError):
        target.run(b"bug")


def test_a_finding_is_a_slow_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fuzz import harness

    monkeypatch.setattr(harness, "CORPUS", tmp_path)
    (tmp_path / "slow").mkdir()
    for i in range(3):
        (tmp_path / "slow" / f"{i}").write_bytes(b"x")
    clock = iter([0.0, 2.0, 2.0, 3.5])
    monkeypatch.setattr(harness.time, "perf_counter", lambda: next(clock))
    with pytest.raises(Finding, match=r"took 2\.00 s, then 1\.50 s"):
        replay(Target("slow", "a slow parser", lambda data: None))


def test_a_slow_first_run_is_timed_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A parser's first run may load what it loads on first use (idna's tables took 1.26 s on a loaded machine):
    an input is a finding only when it is slow twice in a row."""
    from fuzz import harness

    monkeypatch.setattr(harness, "CORPUS", tmp_path)
    (tmp_path / "slow").mkdir()
    for i in range(3):
        (tmp_path / "slow" / f"{i}").write_bytes(b"x")
    clock = iter([0.0, 2.0, 2.0, 2.1, *(x / 10 for x in range(30, 40))])
    monkeypatch.setattr(harness.time, "perf_counter", lambda: next(clock))
    assert replay(Target("slow", "a parser slow once", lambda data: None)) == 3


def test_the_input_of_a_finding_is_written_before_libfuzzer_handles_it(tmp_path: Path) -> None:
    """Under atheris on a busy machine, libFuzzer's one-second alarm once ended the process inside its crash
    handler, before the handler wrote the input: the harness writes it first, under libFuzzer's own name."""
    import hashlib

    from fuzz.__main__ import _run_keeping_findings

    def parser(data: bytes) -> None:
        if data == b"bug":
            raise KeyError("a crash")

    target = Target("probe", "a probe", parser, ())
    _run_keeping_findings(target, tmp_path, b"fine")
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(KeyError):
        _run_keeping_findings(target, tmp_path, b"bug")
    assert (tmp_path / f"crash-{hashlib.sha1(b'bug').hexdigest()}").read_bytes() == b"bug"


@pytest.mark.process
def test_the_fuzz_command_lists_every_target() -> None:
    done = processes.run(
        [str(ROOT / "dev"), "fuzz", "--list"], capture_output=True, text=True, timeout=300, check=False, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    assert [line.split()[0] for line in done.stdout.splitlines()] == names()


@pytest.mark.process
def test_the_fuzz_command_runs_a_target_for_the_seconds_given() -> None:
    done = processes.run(
        [sys.executable, "-m", "fuzz", "www_authenticate", "--seconds", "2"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Done " in done.stderr and "cov: " in done.stderr


def test_finding_a_requested_schema_with_a_constraint_of_the_wrong_type_is_a_malformed_question() -> None:
    """fuzz/corpus/form_answers/finding-max-length-not-a-number.json: `maxLength: "date"` was a TypeError
    when the answer was checked; now the client refuses the question (docs/security.md)."""
    from baton.client.errors import MalformedQuestion
    from baton.client.questions import Question
    from baton.forms import FormError, parse_schema

    schema, _ = json.loads((ROOT / "fuzz/corpus/form_answers/finding-max-length-not-a-number.json").read_bytes())
    with pytest.raises(MalformedQuestion, match="maxLength must be a non-negative integer"):
        Question.from_params("q", {"message": "m", "requestedSchema": schema})
    for key, value in [("minItems", -1), ("maxItems", 1.5), ("minimum", "0"), ("maximum", True)]:
        kind = "array" if "Items" in key else "number"
        prop = {"type": kind, key: value} | ({"items": {"enum": ["a"]}} if kind == "array" else {})
        with pytest.raises(FormError, match=key):
            parse_schema({"type": "object", "properties": {"f": prop}})


def test_finding_a_uri_answer_with_a_stray_bracket_is_an_invalid_answer() -> None:
    """fuzz/corpus/form_answers/finding-uri-bracket-not-ipv6.json: an answer `https://]x.example/` to a field of
    format uri raised urllib's ValueError ("Invalid IPv6 URL") out of the server's validation, a -32603 for
    the client; now both sides say the answer is not a valid uri (docs/security.md)."""
    from baton.client.errors import InvalidReply
    from baton.client.questions import Question
    from baton.forms import Accepted
    from baton.forms.fields import InvalidAnswer

    schema = {"type": "object", "properties": {"site": {"type": "string", "format": "uri"}}}
    question = Question.from_params("q", {"message": "m", "requestedSchema": schema})
    assert question.form is not None
    for bad in ["https://]x.example/", "http://[", "http://[::1"]:
        with pytest.raises(InvalidAnswer, match="valid uri"):
            question.form.validate({"site": bad})
        with pytest.raises(InvalidReply, match="valid uri"):
            question.answer(Accepted({"site": bad}))
    assert question.form.validate({"site": "http://[::1]:8000/x"}) == {"site": "http://[::1]:8000/x"}


def test_finding_an_authorization_server_url_that_cannot_be_sent_is_an_auth_error() -> None:
    """fuzz/corpus/oauth_metadata/finding-unsendable-issuer-url.json: protected-resource metadata naming an
    authorization server whose URL holds a control character made httpx raise InvalidURL out of the login;
    now the endpoint check refuses it as not a URL, an AuthError that says so (docs/security.md)."""
    import asyncio

    import httpx

    from baton.client.errors import AuthError
    from baton.client.oauth.discovery import authorization_server

    def never(request: httpx.Request) -> httpx.Response:
        raise AssertionError(f"nothing is sent for {request.url}")

    async def read() -> None:
        async with httpx.AsyncClient(transport=httpx.MockTransport(never)) as http:
            await authorization_server(http, "https://as.exa\x7fmple", "https://mcp.example/mcp")

    with pytest.raises(AuthError):
        asyncio.run(read())


def test_finding_a_metadata_url_with_a_leading_space_is_refused_before_it_is_fetched() -> None:
    """fuzz/corpus/oauth_metadata/finding-challenge-url-leading-space.json: a challenge's `resource_metadata` of
    " https://..." passed the endpoint check (urlsplit strips the space) and reached httpx, which read it as a
    relative path and raised ValueError; a URL with a space or a control character is now not a URL."""
    from baton.client.errors import AuthError
    from baton.client.oauth.discovery import check_endpoint

    for url in [" https://as.example/x", "https://as.example/x ", "https://as.exa\x7fmple", "https://a\tb.example"]:
        with pytest.raises(AuthError, match="not a URL"):
            check_endpoint(url, "protected resource metadata URL", "https://mcp.example/mcp")
    assert check_endpoint("https://as.example/x", "what", "https://mcp.example/mcp") == "https://as.example/x"


def test_finding_a_url_the_sender_reads_otherwise_is_refused_by_the_check() -> None:
    """fuzz/corpus/oauth_metadata/finding-issuer-url-port-not-a-number.json (and -challenge-url-port-not-a-number,
    -issuer-host-not-idna, -issuer-host-bracket): `https://as.:example` passed the endpoint check (urlsplit reads
    the host `as.`) and httpx, reading an invalid port, raised InvalidURL (not an HTTPError) out of the login;
    `xn--a.example` passed and httpx raised the IDNA codec's error; `https://a]b.example` passed and building
    its metadata URLs with urlsplit raised "Invalid IPv6 URL". The checks and the URLs built from an issuer now
    use httpx's own reading (baton.sent_url, protocol.md P120): the login says, in one AuthError, what is wrong,
    and the server refuses such a JWKS URL."""
    import asyncio

    import httpx

    from baton.auth.jwks import Jwks
    from baton.client.errors import AuthError
    from baton.client.oauth.discovery import authorization_server, protected_resource

    sent: list[str] = []

    def not_found(request: httpx.Request) -> httpx.Response:
        sent.append(str(request.url))
        return httpx.Response(404)

    async def login(issuer: str | None, challenge: str | None) -> None:
        async with httpx.AsyncClient(transport=httpx.MockTransport(not_found)) as http:
            if issuer is not None:
                await authorization_server(http, issuer, "https://mcp.example/mcp")
            await protected_resource(http, "https://mcp.example/mcp", challenge)

    for issuer, challenge in [
        ("https://as.:example", None),
        ("https://xn--a.example", None),
        (None, "https://as.:example/.well-known/oauth-protected-resource/mcp"),
    ]:
        with pytest.raises(AuthError, match=r"is not a URL$"):
            asyncio.run(login(issuer, challenge))
    assert sent == []
    with pytest.raises(AuthError, match=r"no usable metadata for the authorization server https://a\]b\.example"):
        asyncio.run(login("https://a]b.example", None))
    assert sent == [
        "https://a%5db.example/.well-known/oauth-authorization-server",
        "https://a%5db.example/.well-known/openid-configuration",
    ]
    for url in ["https://as.:example/jwks", "https://xn--a.example/jwks"]:
        with pytest.raises(ValueError, match=r"the JWKS URL .* is not a URL"):
            Jwks(url, ttl_s=60)
