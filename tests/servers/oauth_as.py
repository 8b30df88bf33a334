"""A complete OAuth 2.1 authorization server for end-to-end tests, built with Authlib (Flask), in one process.

    python tests/servers/oauth_as.py --port N [--issuer-path /tenant] [--token-ttl S] [--opaque]
        [--scopes "a b offline_access"] [--discovery both|oauth|openid] [--redirect-uri URI ...]

It binds 127.0.0.1:N, then prints one line `oauth_as ready <issuer>` on stdout (wait for it with
`support.processes.OutputLine("oauth_as ready")`). The issuer is `http://127.0.0.1:N<issuer-path>`.

What it offers (every endpoint below sits under the issuer's path):

- Metadata: RFC 8414 at `/.well-known/oauth-authorization-server<path>` and OpenID Connect Discovery at
  `/.well-known/openid-configuration<path>` and `<path>/.well-known/openid-configuration`
  (`--discovery oauth|openid` serves only one kind, for discovery-fallback tests). It says
  `code_challenge_methods_supported: ["S256"]`, `authorization_response_iss_parameter_supported: true`,
  `client_id_metadata_document_supported: true`, and `scopes_supported` (`--scopes`, which should
  include `offline_access`; default `mcp:read mcp:write mcp:admin files:read files:write offline_access`).
- `/authorize`: authorization code with PKCE S256 (required; `plain` refused). Without `login_hint` it
  answers a small HTML page (a `username` field and an "Allow" button, `id="allow"`; "Deny" too) for a
  headless browser; with `?login_hint=NAME` it consents at once as NAME (for non-browser tests). The
  `resource` parameter (RFC 8707, required) becomes the access token's `aud`. Redirects carry `iss`
  (RFC 9207). Requested scopes outside `scopes_supported` are refused (`invalid_scope`).
- `/token`: `authorization_code` and `refresh_token` grants. Access tokens are RS256 JWTs (`kid`
  `test-key-1`, published at `/jwks.json`; `--key-file PEM` signs with that RSA private key instead of a
  fresh one, so two issuers can share a key) with `iss`, `sub` (the user name), `aud` (the resource),
  `client_id`, `scope`, `iat`, `exp` (`--token-ttl`, default 300 s; short for expiry tests), `jti`;
  with `--opaque` they are random strings that only introspection can read. A refresh token is issued
  only when `offline_access` was granted; refreshing rotates it (the old one is revoked).
- `/introspect` (RFC 7662), for confidential clients (basic or post; any of them may introspect any
  token), and `/revoke` (RFC 7009), for the client the token was issued to (public ones by `client_id`).
- `/register`: dynamic client registration (RFC 7591), open; public clients (`none`) get no secret.
- Pre-registered clients: `conf-basic` / `conf-basic-secret` (client_secret_basic), `conf-post` /
  `conf-post-secret` (client_secret_post), `conf:odd%id` / `s3cr%41t+/= :x` (client_secret_basic, with
  characters that must be form-encoded before Base64), `public-client` (public, `none`), and `short-lived` (public,
  its access tokens expire after 2 s whatever `--token-ttl` says). Their redirect URIs
  may be any `http://127.0.0.1:*` or `http://localhost:*` URI (RFC 8252 loopback), or a `--redirect-uri`.
- Client ID Metadata Documents: a `client_id` that is an https URL (or, in this test server only, an
  http URL on 127.0.0.1/localhost) is fetched; its `client_id` must be that URL and the redirect URI
  must be one of its `redirect_uris`. Such clients are public (`none`).
- `/test/stats`: `{"introspections": n, "tokens": n}`, so tests can see what was cached.

Nothing here is for production: users are whoever they say they are, and everything lives in memory.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import secrets
import sys
import threading
import time
from dataclasses import dataclass, field
from html import escape
from typing import Any
from urllib.parse import urlsplit

import httpx
import jwt
from authlib.integrations.flask_oauth2 import AuthorizationServer
from authlib.oauth2.rfc6749 import AuthorizationCodeMixin, ClientMixin, grants
from authlib.oauth2.rfc6749.errors import InvalidRequestError, OAuth2Error
from authlib.oauth2.rfc6750 import BearerTokenGenerator
from authlib.oauth2.rfc7009 import RevocationEndpoint
from authlib.oauth2.rfc7591 import ClientRegistrationEndpoint
from authlib.oauth2.rfc7636 import CodeChallenge
from authlib.oauth2.rfc7662 import IntrospectionEndpoint
from authlib.oauth2.rfc9207 import IssuerParameter
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from flask import Flask, g, jsonify, request
from werkzeug.serving import make_server

DEFAULT_SCOPES = "mcp:read mcp:write mcp:admin files:read files:write offline_access"
KID = "test-key-1"
PRE_REGISTERED = {
    "conf-basic": ("conf-basic-secret", "client_secret_basic"),
    "conf-post": ("conf-post-secret", "client_secret_post"),
    "conf:odd%id": ("s3cr%41t+/= :x", "client_secret_basic"),  # RFC 6749 2.3.1: form-encoded before Base64
    "public-client": (None, "none"),
    "short-lived": (None, "none"),  # public, and its access tokens expire after SHORT_TTL_S (expiry tests)
}
SHORT_TTL_S = 2

args = argparse.Namespace()
SIGNING = {"key": rsa.generate_private_key(public_exponent=65537, key_size=2048)}  # or --key-file
LOCK = threading.Lock()
STATS = {"introspections": 0, "tokens": 0}


def _loopback(uri: str) -> bool:
    parts = urlsplit(uri)
    return parts.scheme == "http" and parts.hostname in ("127.0.0.1", "localhost")


@dataclass
class User:
    name: str

    def get_user_id(self) -> str:
        return self.name


@dataclass
class Client(ClientMixin):  # type: ignore[misc]
    client_id: str
    client_secret: str | None
    auth_method: str
    redirect_uris: list[str] = field(default_factory=list)
    any_loopback: bool = False  # pre-registered: any loopback redirect (RFC 8252 section 7.3)
    grant_types: tuple[str, ...] = ("authorization_code", "refresh_token")

    def get_client_id(self) -> str:
        return self.client_id

    def get_default_redirect_uri(self) -> str | None:
        return self.redirect_uris[0] if self.redirect_uris else None

    def get_allowed_scope(self, scope: str) -> str:
        supported = args.scopes.split()
        return " ".join(s for s in (scope or "").split() if s in supported)

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        if redirect_uri in self.redirect_uris or redirect_uri in args.redirect_uri:
            return True
        return self.any_loopback and _loopback(redirect_uri)

    def check_client_secret(self, client_secret: str) -> bool:
        return self.client_secret is not None and secrets.compare_digest(client_secret, self.client_secret)

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        if endpoint == "introspect":
            return self.client_secret is not None and method == self.auth_method
        return method == self.auth_method

    def check_response_type(self, response_type: str) -> bool:
        return response_type == "code"

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type in self.grant_types


CLIENTS: dict[str, Client] = {
    cid: Client(cid, secret, method, any_loopback=True) for cid, (secret, method) in PRE_REGISTERED.items()
}
METADATA_DOCS: dict[str, tuple[float, Client]] = {}


def metadata_document_client(client_id: str) -> Client | None:
    """A Client ID Metadata Document client: fetch the URL, check it names itself, cache it a minute."""
    parts = urlsplit(client_id)
    if parts.scheme != "https" and not _loopback(client_id):
        return None
    cached = METADATA_DOCS.get(client_id)
    if cached is not None and cached[0] > time.time():
        return cached[1]
    try:
        resp = httpx.get(client_id, timeout=5, follow_redirects=False, headers={"accept": "application/json"})
        doc = resp.json() if resp.status_code == 200 else None
    except (httpx.HTTPError, ValueError):
        return None
    if not isinstance(doc, dict) or doc.get("client_id") != client_id:
        return None
    uris = doc.get("redirect_uris")
    if not isinstance(uris, list) or not all(isinstance(u, str) for u in uris):
        return None
    if doc.get("token_endpoint_auth_method", "none") != "none":
        return None  # private_key_jwt is not offered here
    client = Client(client_id, None, "none", list(uris))
    METADATA_DOCS[client_id] = (time.time() + 60, client)
    return client


def query_client(client_id: str) -> Client | None:
    found = CLIENTS.get(client_id)
    if found is None and "://" in client_id:
        return metadata_document_client(client_id)
    return found


@dataclass
class Code(AuthorizationCodeMixin):  # type: ignore[misc]
    code: str
    client_id: str
    redirect_uri: str
    scope: str
    user: str
    resource: str
    code_challenge: str | None
    code_challenge_method: str | None
    expires_at: float

    def get_redirect_uri(self) -> str:
        return self.redirect_uri

    def get_scope(self) -> str:
        return self.scope

    def is_expired(self) -> bool:
        return time.time() > self.expires_at


@dataclass
class Token:
    """An issued access or refresh token, as introspection and revocation see it."""

    value: str
    kind: str  # access_token | refresh_token
    client_id: str
    user: str
    scope: str
    resource: str
    expires_at: float
    revoked: bool = False

    def check_client(self, client: Client) -> bool:
        return self.client_id == client.get_client_id()

    def get_scope(self) -> str:
        return self.scope

    def get_expires_in(self) -> int:
        return max(0, int(self.expires_at - time.time()))

    def is_expired(self) -> bool:
        return time.time() >= self.expires_at

    def is_revoked(self) -> bool:
        return self.revoked

    def get_user(self) -> User:
        return User(self.user)

    def get_client(self) -> Client | None:
        return query_client(self.client_id)


CODES: dict[str, Code] = {}
TOKENS: dict[str, Token] = {}


def _resource_param() -> str:
    value = request.values.get("resource", "")
    if value:
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.fragment:
            raise InvalidRequestError("resource must be an absolute URI without a fragment (RFC 8707)")
    return value


def _keep_resource(granted: str, grant: str) -> None:
    """The token request's `resource`, if any, must be the one granted; the token is issued for that one."""
    asked = _resource_param()
    if asked and asked != granted:
        raise InvalidRequestError(f"resource differs from {grant}")
    g.resource = granted


class CodeGrant(grants.AuthorizationCodeGrant):  # type: ignore[misc]
    TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic", "client_secret_post", "none"]  # noqa: RUF012

    def save_authorization_code(self, code: str, req: Any) -> None:
        data = req.payload.data
        resource = _resource_param()
        if not resource:
            raise InvalidRequestError("the resource parameter is required (RFC 8707)")
        CODES[code] = Code(
            code,
            req.client.get_client_id(),
            req.payload.redirect_uri,
            req.scope or "",
            req.user.name,
            resource,
            data.get("code_challenge"),
            data.get("code_challenge_method"),
            time.time() + 60,
        )

    def query_authorization_code(self, code: str, client: Client) -> Code | None:
        found = CODES.get(code)
        if found is None or found.client_id != client.get_client_id():
            return None
        _keep_resource(found.resource, "the authorization request's")
        return found

    def delete_authorization_code(self, authorization_code: Code) -> None:
        CODES.pop(authorization_code.code, None)

    def authenticate_user(self, authorization_code: Code) -> User:
        return User(authorization_code.user)


class RefreshGrant(grants.RefreshTokenGrant):  # type: ignore[misc]
    TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_basic", "client_secret_post", "none"]  # noqa: RUF012
    INCLUDE_NEW_REFRESH_TOKEN = True

    def authenticate_refresh_token(self, refresh_token: str) -> Token | None:
        found = TOKENS.get(refresh_token)
        if found is None or found.kind != "refresh_token" or found.revoked or found.is_expired():
            return None
        _keep_resource(found.resource, "the original grant's")
        return found

    def authenticate_user(self, refresh_token: Token) -> User:
        return User(refresh_token.user)

    def revoke_old_credential(self, refresh_token: Token) -> None:
        refresh_token.revoked = True


class Generator(BearerTokenGenerator):  # type: ignore[misc]
    """JWT (or, with --opaque, random) access tokens whose `aud` is the requested resource; a refresh
    token only when `offline_access` was granted."""

    def __init__(self) -> None:
        super().__init__(self.access_token, self.refresh_token, self.expires_in)

    @staticmethod
    def refresh_token(*_: Any, **__: Any) -> str:
        return "rt-" + secrets.token_urlsafe(24)

    @staticmethod
    def expires_in(client: Client, grant_type: str) -> int:
        return SHORT_TTL_S if client.get_client_id() == "short-lived" else int(args.token_ttl)

    def access_token(self, client: Client, grant_type: str, user: User | None, scope: str) -> str:
        if args.opaque:
            return "at-" + secrets.token_urlsafe(24)
        now = int(time.time())
        claims = {
            "iss": args.issuer,
            "sub": user.name if user is not None else client.get_client_id(),
            "aud": g.get("resource") or "urn:oauth-as:no-resource",
            "client_id": client.get_client_id(),
            "scope": scope or "",
            "iat": now,
            "exp": now + self.expires_in(client, grant_type),
            "jti": secrets.token_urlsafe(12),
        }
        return jwt.encode(claims, SIGNING["key"], algorithm="RS256", headers={"kid": KID, "typ": "at+jwt"})

    def generate(
        self,
        grant_type: str,
        client: Client,
        user: Any = None,
        scope: Any = None,
        expires_in: Any = None,
        include_refresh_token: bool = True,
    ) -> Any:
        token = super().generate(grant_type, client, user, scope, expires_in, include_refresh_token)
        if "offline_access" not in (scope or "").split():
            token.pop("refresh_token", None)
        return token


def save_token(token: dict[str, Any], req: Any) -> None:
    user = req.user.name if req.user is not None else req.client.get_client_id()
    resource = g.get("resource") or ""
    scope = token.get("scope", "")
    with LOCK:
        STATS["tokens"] += 1
        TOKENS[token["access_token"]] = Token(
            token["access_token"],
            "access_token",
            req.client.get_client_id(),
            user,
            scope,
            resource,
            time.time() + token["expires_in"],
        )
        if token.get("refresh_token"):
            TOKENS[token["refresh_token"]] = Token(
                token["refresh_token"],
                "refresh_token",
                req.client.get_client_id(),
                user,
                scope,
                resource,
                time.time() + 86400,
            )


class Introspect(IntrospectionEndpoint):  # type: ignore[misc]
    CLIENT_AUTH_METHODS = ["client_secret_basic", "client_secret_post"]  # noqa: RUF012

    def query_token(self, token_string: str, token_type_hint: str | None) -> Token | None:
        with LOCK:
            STATS["introspections"] += 1
        return TOKENS.get(token_string)

    def introspect_token(self, token: Token) -> dict[str, Any]:
        return {
            "active": True,
            "client_id": token.client_id,
            "token_type": token.kind,
            "username": token.user,
            "scope": token.scope,
            "sub": token.user,
            "aud": token.resource,
            "iss": args.issuer,
            "exp": int(token.expires_at),
            "iat": int(token.expires_at - args.token_ttl),
        }

    def check_permission(self, token: Token, client: Client, req: Any) -> bool:
        return client.client_secret is not None  # any confidential client (a resource server) may ask


class Revoke(RevocationEndpoint):  # type: ignore[misc]
    CLIENT_AUTH_METHODS = ["client_secret_basic", "client_secret_post", "none"]  # noqa: RUF012

    def query_token(self, token_string: str, token_type_hint: str | None) -> Token | None:
        return TOKENS.get(token_string)

    def revoke_token(self, token: Token, req: Any) -> None:
        token.revoked = True


class Register(ClientRegistrationEndpoint):  # type: ignore[misc]
    def authenticate_token(self, req: Any) -> bool:
        return True  # open registration

    def get_server_metadata(self) -> dict[str, Any]:
        return metadata()

    def generate_client_info(self, req: Any) -> dict[str, Any]:
        info: dict[str, Any] = super().generate_client_info(req)
        if req.payload.data.get("token_endpoint_auth_method") == "none":
            info.pop("client_secret", None)
            info.pop("client_secret_expires_at", None)
        return info

    def save_client(self, client_info: dict[str, Any], client_metadata: dict[str, Any], req: Any) -> Client:
        method = client_metadata.get("token_endpoint_auth_method", "client_secret_basic")
        grant_types = tuple(client_metadata.get("grant_types") or ("authorization_code", "refresh_token"))
        client = Client(
            client_info["client_id"],
            client_info.get("client_secret"),
            method,
            list(client_metadata.get("redirect_uris") or []),
            grant_types=grant_types,
        )
        CLIENTS[client.client_id] = client
        return client


def metadata() -> dict[str, Any]:
    return {
        "issuer": args.issuer,
        "authorization_endpoint": f"{args.issuer}/authorize",
        "token_endpoint": f"{args.issuer}/token",
        "jwks_uri": f"{args.issuer}/jwks.json",
        "registration_endpoint": f"{args.issuer}/register",
        "introspection_endpoint": f"{args.issuer}/introspect",
        "revocation_endpoint": f"{args.issuer}/revoke",
        "scopes_supported": args.scopes.split(),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"],
        "introspection_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
        "revocation_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"],
        "code_challenge_methods_supported": ["S256"],
        "authorization_response_iss_parameter_supported": True,
        "client_id_metadata_document_supported": True,
    }


class S256Only(CodeChallenge):  # type: ignore[misc]
    SUPPORTED_CODE_CHALLENGE_METHOD = ["S256"]  # noqa: RUF012 - Authlib's class attribute
    DEFAULT_CODE_CHALLENGE_METHOD = "S256"


class Issuer(IssuerParameter):  # type: ignore[misc]
    def get_issuer(self) -> str:
        return args.issuer


def jwk() -> dict[str, Any]:
    numbers = SIGNING["key"].public_key().public_numbers()

    def b64(n: int) -> str:
        return base64.urlsafe_b64encode(n.to_bytes((n.bit_length() + 7) // 8, "big")).rstrip(b"=").decode()

    return {"kty": "RSA", "kid": KID, "use": "sig", "alg": "RS256", "n": b64(numbers.n), "e": b64(numbers.e)}


LOGIN_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Test AS: sign in</title></head>
<body><h1>Sign in to the test authorization server</h1>
<p>{client} asks for: <code>{scope}</code></p>
<form method="post" action="{action}">{hidden}
<label>Username <input name="username" id="username" autofocus required></label>
<button type="submit" name="action" value="allow" id="allow">Allow</button>
<button type="submit" name="action" value="deny" id="deny">Deny</button>
</form></body></html>"""


def build_app() -> Flask:
    app = Flask(__name__)
    app.config["OAUTH2_SCOPES_SUPPORTED"] = args.scopes.split()
    server = AuthorizationServer(app, query_client=query_client, save_token=save_token)
    server.register_grant(CodeGrant, [S256Only(required=True)])
    server.register_grant(RefreshGrant)
    server.register_token_generator("default", Generator())
    server.register_endpoint(Introspect)
    server.register_endpoint(Revoke)
    server.register_endpoint(Register)
    server.register_extension(Issuer())
    path = urlsplit(args.issuer).path

    def cors(response: Any) -> Any:
        response.headers["Access-Control-Allow-Origin"] = "*"
        return response

    if args.discovery in ("both", "oauth"):
        app.add_url_rule(
            f"/.well-known/oauth-authorization-server{path}", "oauth-metadata", lambda: cors(jsonify(metadata()))
        )
    if args.discovery in ("both", "openid"):

        def oidc() -> Any:
            extra = {"subject_types_supported": ["public"], "id_token_signing_alg_values_supported": ["RS256"]}
            return cors(jsonify({**metadata(), **extra}))

        app.add_url_rule(f"/.well-known/openid-configuration{path}", "oidc-inserted", oidc)
        if path:
            app.add_url_rule(f"{path}/.well-known/openid-configuration", "oidc-appended", oidc)

    @app.route(f"{path}/jwks.json")
    def jwks() -> Any:
        return cors(jsonify({"keys": [jwk()]}))

    @app.route(f"{path}/authorize", methods=["GET", "POST"])
    def authorize() -> Any:
        hint = request.args.get("login_hint")
        if request.method == "GET" and not hint:
            try:
                grant = server.get_consent_grant(end_user=None)
            except OAuth2Error as error:
                return server.handle_error_response(request, error)
            hidden = "".join(
                f'<input type="hidden" name="{escape(k)}" value="{escape(v)}">' for k, v in request.args.items()
            )
            page = LOGIN_PAGE.format(
                action=escape(f"{path}/authorize"),
                client=escape(grant.client.get_client_id()),
                scope=escape(grant.request.scope or ""),
                hidden=hidden,
            )
            return page, 200, {"content-type": "text/html; charset=utf-8", "cache-control": "no-store"}
        if request.method == "POST":
            name = request.form.get("username", "").strip()
            if request.form.get("action") != "allow" or not name:
                return server.create_authorization_response(grant_user=None)
            return server.create_authorization_response(grant_user=User(name))
        return server.create_authorization_response(grant_user=User(hint or "anonymous"))

    @app.route(f"{path}/token", methods=["POST"])
    def token() -> Any:
        return server.create_token_response()

    @app.route(f"{path}/introspect", methods=["POST"])
    def introspect() -> Any:
        return server.create_endpoint_response(Introspect.ENDPOINT_NAME)

    @app.route(f"{path}/revoke", methods=["POST"])
    def revoke() -> Any:
        return server.create_endpoint_response(Revoke.ENDPOINT_NAME)

    @app.route(f"{path}/register", methods=["POST"])
    def register() -> Any:
        return cors(server.create_endpoint_response("client_registration"))

    @app.route(f"{path}/test/stats")
    def stats() -> Any:
        with LOCK:
            return jsonify(dict(STATS))

    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--issuer-path", default="")
    parser.add_argument("--token-ttl", type=int, default=300)
    parser.add_argument("--opaque", action="store_true")
    parser.add_argument("--scopes", default=DEFAULT_SCOPES)
    parser.add_argument("--discovery", choices=["both", "oauth", "openid"], default="both")
    parser.add_argument("--redirect-uri", action="append", default=[])
    parser.add_argument("--key-file", default=None)
    parser.parse_args(namespace=args)
    if args.key_file:
        with open(args.key_file, "rb") as pem:
            loaded = serialization.load_pem_private_key(pem.read(), password=None)
        assert isinstance(loaded, rsa.RSAPrivateKey)
        SIGNING["key"] = loaded
    args.issuer = f"http://127.0.0.1:{args.port}{args.issuer_path.rstrip('/')}"
    httpd = make_server("127.0.0.1", args.port, build_app(), threaded=True)
    print(f"oauth_as ready {args.issuer}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        httpd.serve_forever()
    sys.exit(0)


if __name__ == "__main__":
    main()
