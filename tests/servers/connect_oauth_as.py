"""A real OAuth 2.1 authorization server for the tests, built with Authlib's Flask integration.

`python connect_oauth_as.py PORT REDIRECT_URI`: one public client (`baton-test`, PKCE S256 required,
only REDIRECT_URI), authorization codes redeemable once, and an authorize endpoint that consents at once
for the user named by `?login_hint=` (default `acme-user`). Issued tokens are appended to `$AS_TOKEN_LOG`.
"""

from __future__ import annotations

import os
import secrets
import sys
import time
from dataclasses import dataclass
from typing import Any

from authlib.integrations.flask_oauth2 import AuthorizationServer
from authlib.oauth2.rfc6749 import AuthorizationCodeMixin, ClientMixin, grants
from authlib.oauth2.rfc7636 import CodeChallenge
from flask import Flask, request

PORT = int(sys.argv[1])
REDIRECT_URI = sys.argv[2]
CLIENT_ID = "baton-test"


class Client(ClientMixin):
    client_id = CLIENT_ID

    def get_client_id(self) -> str:
        return self.client_id

    def get_default_redirect_uri(self) -> str:
        return REDIRECT_URI

    def get_allowed_scope(self, scope: str) -> str:
        return " ".join(s for s in (scope or "").split() if s in ("read", "write")) or "read"

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        return redirect_uri == REDIRECT_URI

    def check_client_secret(self, client_secret: str) -> bool:
        return False

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        return method == "none" if endpoint == "token" else True

    def check_response_type(self, response_type: str) -> bool:
        return response_type == "code"

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type == "authorization_code"


@dataclass
class Code(AuthorizationCodeMixin):
    code: str
    client_id: str
    redirect_uri: str
    scope: str
    user: str
    code_challenge: str | None
    code_challenge_method: str | None
    expires_at: float

    def get_redirect_uri(self) -> str:
        return self.redirect_uri

    def get_scope(self) -> str:
        return self.scope

    def is_expired(self) -> bool:
        return time.time() > self.expires_at


CLIENT = Client()
CODES: dict[str, Code] = {}


class CodeGrant(grants.AuthorizationCodeGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = ["none"]  # noqa: RUF012 - Authlib's class attribute

    def save_authorization_code(self, code: str, req: Any) -> None:
        data = req.payload.data
        CODES[code] = Code(
            code,
            req.client.get_client_id(),
            req.payload.redirect_uri,
            req.scope,
            req.user,
            data.get("code_challenge"),
            data.get("code_challenge_method"),
            time.time() + 60,
        )

    def query_authorization_code(self, code: str, client: Any) -> Code | None:
        found = CODES.get(code)
        return found if found is not None and found.client_id == client.get_client_id() else None

    def delete_authorization_code(self, authorization_code: Code) -> None:
        CODES.pop(authorization_code.code, None)

    def authenticate_user(self, authorization_code: Code) -> str:
        return authorization_code.user


def save_token(token: dict[str, Any], req: Any) -> None:
    with open(os.environ["AS_TOKEN_LOG"], "a") as fh:
        fh.write(f"{token['access_token']} {req.user}\n")


app = Flask(__name__)
server = AuthorizationServer(app, query_client=lambda cid: CLIENT if cid == CLIENT_ID else None, save_token=save_token)
server.register_grant(CodeGrant, [CodeChallenge(required=True)])
app.config["OAUTH2_TOKEN_EXPIRES_IN"] = {"authorization_code": 3600}
app.config["OAUTH2_ACCESS_TOKEN_GENERATOR"] = lambda *a, **k: "at-" + secrets.token_urlsafe(24)


@app.route("/authorize")
def authorize() -> Any:
    return server.create_authorization_response(grant_user=request.args.get("login_hint", "acme-user"))


@app.route("/token", methods=["POST"])
def token() -> Any:
    return server.create_token_response()


if __name__ == "__main__":
    app.run("127.0.0.1", PORT)
