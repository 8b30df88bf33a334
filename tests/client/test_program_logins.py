"""Logins with no person, against stub authorization servers on loopback: `ClientCredentials` (SEP-1046, with a
secret or a signed JWT), `WorkloadIdentity` (a platform token as a JWT-bearer assertion) and `EnterpriseLogin`
(SEP-990: token exchange for an ID-JAG, then the JWT-bearer grant); what each sends, refuses and never shows.
The suite's own scenarios (`auth/client-credentials-*`, `auth/wif-jwt-bearer`,
`auth/enterprise-managed-authorization`) run in tests/conformance/test_conformance_client.py."""

from __future__ import annotations

import base64
import os
import re
import subprocess
import sys
from pathlib import Path

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from support import processes
from support.stub_http import Seen, Stub, json_reply, oauth_as, prm, run

from baton.client.oauth import AuthError, ClientCredentials, EnterpriseLogin, WorkloadIdentity
from baton.client.oauth.challenge import Challenge
from baton.client.oauth.login import Attempts, LoginState


def pem(key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey) -> str:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()


async def login_at(
    server: Stub, creds: ClientCredentials, status: int = 401, challenge: Challenge | None = None
) -> bytes:
    login = LoginState(creds, f"{server.url}/mcp")
    said = challenge or Challenge({"resource_metadata": f"{server.url}/prm"})
    header = await login.recover(status, said, b"", Attempts())
    assert header is not None
    return header


@pytest.mark.process
def test_a_secret_goes_as_basic_auth_with_the_resource_and_no_browser() -> None:
    async def main() -> tuple[bytes, Seen]:
        async with Stub() as stub:
            oauth_as(stub, token_endpoint_auth_methods_supported=["client_secret_basic"])
            prm(stub, f"{stub.url}/mcp", [stub.url])
            creds = ClientCredentials(client_id="robot", client_secret="s3cret", scopes=["mcp:read"])
            header = await login_at(stub, creds)
            (token_request,) = [s for s in stub.seen if s.path == "/token"]
            return header, token_request

    header, sent = run(main())
    assert header == b"Authorization: Bearer AT-1\r\n"
    form = sent.form()
    assert form["grant_type"] == "client_credentials"
    assert form["resource"].endswith("/mcp") and form["scope"] == "mcp:read"
    assert "client_secret" not in form
    assert sent.headers["authorization"] == "Basic " + base64.b64encode(b"robot:s3cret").decode()


@pytest.mark.process
@pytest.mark.parametrize(
    ("make", "alg"),
    [
        (lambda: ec.generate_private_key(ec.SECP256R1()), "ES256"),
        (lambda: rsa.generate_private_key(65537, 2048), "RS256"),
    ],
)
def test_a_private_key_signs_a_fresh_assertion_for_the_issuer(make: object, alg: str) -> None:
    key = make()  # type: ignore[operator]

    async def main() -> tuple[str, Seen]:
        async with Stub() as stub:
            oauth_as(stub, token_endpoint_auth_methods_supported=["private_key_jwt"])
            prm(stub, f"{stub.url}/mcp", [stub.url])
            await login_at(stub, ClientCredentials(client_id="robot", private_key=pem(key)))
            (token_request,) = [s for s in stub.seen if s.path == "/token"]
            return stub.url, token_request

    issuer, sent = run(main())
    form = sent.form()
    assert form["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    assert "authorization" not in sent.headers and "client_secret" not in form
    claims = jwt.decode(form["client_assertion"], key.public_key(), algorithms=[alg], audience=issuer)
    assert claims["iss"] == claims["sub"] == "robot"
    assert claims["exp"] - claims["iat"] == 60 and len(claims["jti"]) >= 16
    assert jwt.get_unverified_header(form["client_assertion"])["alg"] == alg


@pytest.mark.process
def test_credentials_are_never_shown_to_another_authorization_server() -> None:
    async def main() -> None:
        async with Stub() as stub:
            oauth_as(stub, token_endpoint_auth_methods_supported=["client_secret_basic"])
            prm(stub, f"{stub.url}/mcp", [stub.url])
            creds = ClientCredentials(client_id="robot", client_secret="s3cret", issuer="https://as.example")
            with pytest.raises(AuthError, match=r"belongs to the authorization server https://as\.example"):
                await login_at(stub, creds)
            assert not [s for s in stub.seen if s.path == "/token"]

    run(main())


@pytest.mark.process
def test_a_refused_grant_names_the_error_and_never_the_secret() -> None:
    async def main() -> None:
        async with Stub() as stub:
            oauth_as(stub, token_endpoint_auth_methods_supported=["client_secret_basic"])
            prm(stub, f"{stub.url}/mcp", [stub.url])
            stub.routes["POST /token"] = lambda seen: json_reply({"error": "invalid_client"}, 401)
            with pytest.raises(AuthError) as refused:
                await login_at(stub, ClientCredentials(client_id="robot", client_secret="s3cret"))
            assert "invalid_client" in str(refused.value) and "s3cret" not in str(refused.value)

    run(main())


@pytest.mark.process
def test_a_step_up_asks_for_the_union_of_scopes() -> None:
    async def main() -> list[str]:
        async with Stub() as stub:
            oauth_as(stub, token_endpoint_auth_methods_supported=["client_secret_basic"])
            prm(stub, f"{stub.url}/mcp", [stub.url])
            creds = ClientCredentials(client_id="robot", client_secret="s3cret")
            login = LoginState(creds, f"{stub.url}/mcp")
            first = Challenge({"resource_metadata": f"{stub.url}/prm", "scope": "read"})
            await login.recover(401, first, b"", Attempts())
            more = Challenge({"resource_metadata": f"{stub.url}/prm", "scope": "write", "error": "insufficient_scope"})
            await login.recover(403, more, login.header, Attempts())
            return [s.form().get("scope", "") for s in stub.seen if s.path == "/token"]

    assert run(main()) == ["read", "read write"]


def test_construction_refuses_what_cannot_work(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="exactly one"):
        ClientCredentials(client_id="robot")
    with pytest.raises(ValueError, match="exactly one"):
        ClientCredentials(client_id="robot", client_secret="s", private_key="x")
    with pytest.raises(ValueError, match="not an unencrypted PEM"):
        ClientCredentials(client_id="robot", private_key="-----BEGIN NOTHING-----")
    with pytest.raises(ValueError, match="does not fit"):
        ClientCredentials(
            client_id="robot", private_key=pem(ec.generate_private_key(ec.SECP256R1())), signing_alg="RS256"
        )
    shown = repr(ClientCredentials(client_id="robot", client_secret="s3cret"))
    assert "s3cret" not in shown and "robot" in shown


def test_from_the_environment(tmp_path: Path) -> None:
    key_file = tmp_path / "robot.pem"
    key_file.write_text(pem(ec.generate_private_key(ec.SECP256R1())))
    by_key = ClientCredentials.from_environment({"BATON_CLIENT_ID": "robot", "BATON_CLIENT_KEY_FILE": str(key_file)})
    assert by_key.method == "private_key_jwt" and by_key.signing_alg == "ES256"
    by_secret = ClientCredentials.from_environment({"BATON_CLIENT_ID": "robot", "BATON_CLIENT_SECRET": "s"})
    assert by_secret.method == "client_secret_basic"
    with pytest.raises(ValueError, match="BATON_CLIENT_ID"):
        ClientCredentials.from_environment({})
    with pytest.raises(ValueError, match="cannot read"):
        ClientCredentials.from_environment({"BATON_CLIENT_ID": "r", "BATON_CLIENT_KEY_FILE": str(tmp_path / "none")})


@pytest.mark.process
def test_the_command_line_takes_them_from_the_environment_only() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BATON_CLIENT_", "BATON_ID", "BATON_WORKLOAD"))}

    def tools(url: str, kind: str, **extra: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "baton", "tools", url, "--login", kind]
        return processes.run(command, env={**env, **extra}, capture_output=True, text=True, timeout=60, check=False)

    local = "http://127.0.0.1:9/mcp"
    said = {kind: tools(local, kind) for kind in ("client-credentials", "workload-identity", "enterprise")}
    assert all(done.returncode == 2 for done in said.values()), said
    assert said["client-credentials"].stderr.strip().splitlines() == [
        "baton tools: --login client-credentials: $BATON_CLIENT_ID is not set: it names the client the "
        "authorization server issued"
    ]
    assert "$BATON_WORKLOAD_TOKEN_FILE is not set" in said["workload-identity"].stderr
    assert "$BATON_ID_TOKEN_FILE is not set" in said["enterprise"].stderr
    remote = tools("http://mcp.example/mcp", "client-credentials", BATON_CLIENT_ID="robot", BATON_CLIENT_SECRET="s3")
    assert remote.returncode == 2 and "https URL" in remote.stderr and "s3" not in remote.stderr
    bad = tools(local, "password")
    assert bad.returncode == 2 and "invalid choice: 'password'" in bad.stderr


def test_workload_and_enterprise_logins_read_their_files_at_each_login(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("first\n")
    workload = WorkloadIdentity.from_environment({"BATON_WORKLOAD_TOKEN_FILE": str(token_file)})
    assert run(workload.platform_token()) == "first" and workload.client_id is None
    token_file.write_text("rotated")
    assert run(workload.platform_token()) == "rotated"
    enterprise = EnterpriseLogin.from_environment(
        {
            "BATON_ID_TOKEN_FILE": str(token_file),
            "BATON_IDP_TOKEN_ENDPOINT": "https://idp.example/token",
            "BATON_IDP_CLIENT_ID": "mcp-at-idp",
            "BATON_CLIENT_ID": "mcp-client",
            "BATON_CLIENT_SECRET": "s3cret",
        }
    )
    assert run(enterprise.identity_token()) == "rotated" and enterprise.method == "client_secret_basic"
    token_file.unlink()
    with pytest.raises(ValueError, match="cannot read"):
        run(workload.platform_token())


@pytest.mark.process
def test_a_workload_presents_its_platform_token_once_and_a_refusal_is_not_retried() -> None:
    reads: list[int] = []

    def platform_token() -> str:  # read at each login: platforms rotate these
        reads.append(1)
        return f"platform-jwt-{len(reads)}"

    async def main() -> tuple[list[dict[str, str]], str]:
        async with Stub() as stub:
            oauth_as(stub, token_endpoint_auth_methods_supported=["none"])
            prm(stub, f"{stub.url}/mcp", [stub.url])
            await login_at(stub, WorkloadIdentity(assertion=platform_token, client_id="workload"))
            stub.routes["POST /token"] = lambda seen: json_reply({"error": "invalid_grant"}, 400)
            with pytest.raises(AuthError) as refused:
                await login_at(stub, WorkloadIdentity(assertion=platform_token))
            return [s.form() for s in stub.seen if s.path == "/token"], str(refused.value)

    forms, refusal = run(main())
    assert len(forms) == 2  # one each: the refused one is not tried again, nor with another grant
    assert forms[0]["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer"
    assert forms[0]["assertion"] == "platform-jwt-1" and forms[0]["client_id"] == "workload"
    assert forms[1]["assertion"] == "platform-jwt-2"
    assert "invalid_grant" in refusal and "platform-jwt" not in refusal


@pytest.mark.process
def test_an_enterprise_login_exchanges_the_id_token_then_presents_the_grant() -> None:
    id_jag = "eyJ.id-jag.sig"

    async def main() -> tuple[dict[str, str], Seen, str]:
        async with Stub() as idp, Stub() as stub:
            idp.routes["POST /token"] = lambda seen: json_reply(
                {
                    "access_token": id_jag,
                    "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag",
                    "token_type": "N_A",
                }
            )
            oauth_as(stub, token_endpoint_auth_methods_supported=["client_secret_basic"])
            prm(stub, f"{stub.url}/mcp", [stub.url])
            login = EnterpriseLogin(
                id_token=lambda: "person-id-token",
                idp_token_endpoint=f"{idp.url}/token",
                idp_client_id="mcp-at-idp",
                client_id="mcp-client",
                client_secret="s3cret",
            )
            await login_at(stub, login)
            (exchange,) = [s.form() for s in idp.seen]
            (grant,) = [s for s in stub.seen if s.path == "/token"]
            return exchange, grant, stub.url

    exchange, grant, issuer = run(main())
    assert exchange == {
        "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
        "subject_token": "person-id-token",
        "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
        "requested_token_type": "urn:ietf:params:oauth:token-type:id-jag",
        "audience": issuer,
        "resource": f"{issuer}/mcp",
        "client_id": "mcp-at-idp",
    }
    assert grant.form()["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer"
    assert grant.form()["assertion"] == id_jag
    assert grant.headers["authorization"] == "Basic " + base64.b64encode(b"mcp-client:s3cret").decode()


@pytest.mark.process
@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (json_reply({"error": "invalid_grant", "error_description": "expired"}, 400), "invalid_grant (expired)"),
        (
            json_reply({"access_token": "x", "issued_token_type": "urn:ietf:params:oauth:token-type:access_token"}),
            "did not issue an identity assertion grant",
        ),
    ],
)
def test_an_identity_provider_that_refuses_or_issues_the_wrong_thing_stops_the_login(answer: object, said: str) -> None:
    async def main() -> None:
        async with Stub() as idp, Stub() as stub:
            idp.routes["POST /token"] = lambda seen: answer
            oauth_as(stub, token_endpoint_auth_methods_supported=["client_secret_basic"])
            prm(stub, f"{stub.url}/mcp", [stub.url])
            login = EnterpriseLogin(
                id_token="t", idp_token_endpoint=f"{idp.url}/token", idp_client_id="i", client_id="c", client_secret="s"
            )
            with pytest.raises(AuthError, match=re.escape(said)):
                await login_at(stub, login)
            assert not [s for s in stub.seen if s.path == "/token"]  # nothing reaches the authorization server

    run(main())


def test_an_identity_provider_must_be_reached_safely() -> None:
    with pytest.raises(ValueError, match="https"):
        EnterpriseLogin(id_token="t", idp_token_endpoint="http://idp.example/token", idp_client_id="i", client_id="c")
