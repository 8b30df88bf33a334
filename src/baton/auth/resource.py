"""`OAuthResource`: the one object that makes a Baton server an OAuth 2.1 protected resource.

    Server("files", auth=OAuthResource(
        resource="https://mcp.example.com/mcp",          # this MCP endpoint's canonical URI (the audience)
        issuer="https://auth.example.com",               # who mints its tokens
        jwks_url="https://auth.example.com/jwks.json",   # JWTs; or key=..., or introspection=Introspection(...)
        scopes=["files:read"],                           # every request needs these
        implies={"files:admin": ["files:read", "files:write"]},
    ))

It publishes the Protected Resource Metadata (RFC 9728) the HTTP app serves, verifies each request's
bearer token (a JWT, or an opaque token by introspection), and names the caller `<issuer>|<sub>`
with the token's scopes (a `Grant`). A token is accepted only if minted for this resource (RFC
8707 audience): Baton never passes a token on to another service. `OAuthResource.from_issuer(...)`
discovers the issuer's `jwks_uri` (or introspection endpoint) first.

DPoP-bound tokens (RFC 9449) are accepted beside Bearer ones by default, required with `dpop="require"`,
and a proof's `jti` is accepted once with `dpop_replay=` (a ledger or its URL): `baton.auth.dpop`, P198.

It implements `baton.server.guard.ResourceAuth`; `Server(auth=...)` uses it over HTTP only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..server.exchange import Grant, RequestInfo, Unauthenticated
from ..server.scopes import OFFLINE_ACCESS, Implications, scope_list
from ..state.ledger import Ledger
from ..state.ledger_url import ledger_from_url
from .bearer import presented_token
from .claims import check_audience, identity, scopes_of
from .discovery import discover_issuer
from .dpop import ALGORITHMS, DPOP_MODES, DpopMode, DpopReplay, bound_key, check_proof
from .introspection import Introspection, Introspector
from .jwt_verify import DEFAULT_ALGORITHMS, JwtVerifier
from .resource_uri import canonical_resource, metadata_path, metadata_url, require_https


class OAuthResource:
    """An OAuth protected resource: give `resource`, `issuer`, and one of `jwks_url`, `key` (a public key)
    or `introspection`. `scopes` are required of every request; `scopes_supported` (published in the
    metadata) defaults to every scope the server declares; `implies` is the scope hierarchy."""

    def __init__(
        self,
        *,
        resource: str,
        issuer: str,
        jwks_url: str | None = None,
        key: Any = None,
        introspection: Introspection | None = None,
        authorization_servers: Sequence[str] | None = None,
        scopes: Iterable[str] | str | None = None,
        scopes_supported: Iterable[str] | None = None,
        implies: Mapping[str, Iterable[str]] | None = None,
        algorithms: Sequence[str] = DEFAULT_ALGORITHMS,
        leeway_s: float = 30.0,
        resource_name: str | None = None,
        dpop: DpopMode = "accept",
        dpop_window_s: float = 60.0,
        dpop_replay: Ledger | str | None = None,
    ) -> None:
        if sum(x is not None for x in (jwks_url, key, introspection)) != 1:
            raise ValueError("give exactly one of jwks_url=, key= (a public key) or introspection=Introspection(...)")
        self._resource = canonical_resource(resource)
        require_https(self._resource, "the resource")
        require_https(issuer, "the issuer")
        self.issuer = issuer
        self.authorization_servers = list(authorization_servers or [issuer])
        for server in self.authorization_servers:
            require_https(server, "an authorization server")
        self._scopes = scope_list(scopes, "OAuthResource(scopes=...)")
        self._supported = None if scopes_supported is None else scope_list(scopes_supported, "scopes_supported")
        self._implications = Implications(implies)
        self.resource_name = resource_name
        self._verifier = (
            JwtVerifier(
                issuer=issuer,
                audiences=[self._resource],
                key=key,
                jwks_url=jwks_url,
                algorithms=algorithms,
                leeway_s=leeway_s,
            )
            if introspection is None
            else None
        )
        self._introspector = Introspector(introspection) if introspection is not None else None
        self._metadata_path = metadata_path(self._resource)
        self._metadata_url = metadata_url(self._resource)
        if dpop not in DPOP_MODES:
            raise ValueError(f"dpop is one of {', '.join(DPOP_MODES)}, not {dpop!r}")
        if dpop == "off" and dpop_replay is not None:
            raise ValueError("dpop_replay= protects DPoP proofs: it needs dpop='accept' or 'require'")
        self.dpop = dpop
        self._schemes = ("bearer",) if dpop == "off" else ("dpop",) if dpop == "require" else ("bearer", "dpop")
        self.dpop_window_s = dpop_window_s
        replay = ledger_from_url(dpop_replay) if isinstance(dpop_replay, str) else dpop_replay
        self._replay = DpopReplay(replay) if replay is not None else None

    @classmethod
    def from_issuer(
        cls,
        issuer: str,
        *,
        resource: str,
        scopes: Iterable[str] | str | None = None,
        introspection_client: tuple[str, str] | None = None,
        timeout_s: float = 10.0,
        **options: Any,
    ) -> OAuthResource:
        """Discover `issuer`'s metadata (`DiscoveryError` if that fails) and verify its JWTs by its
        `jwks_uri`; with `introspection_client=(client_id, client_secret)`, introspect tokens instead."""
        document = discover_issuer(issuer, timeout_s=timeout_s)
        if introspection_client is not None:
            endpoint = document.get("introspection_endpoint")
            if not isinstance(endpoint, str):
                raise ValueError(f"the issuer {issuer} publishes no introspection_endpoint")
            client_id, secret = introspection_client
            return cls(
                resource=resource,
                issuer=issuer,
                introspection=Introspection(endpoint, client_id, secret),
                scopes=scopes,
                **options,
            )
        jwks_uri = document.get("jwks_uri")
        if not isinstance(jwks_uri, str):
            raise ValueError(
                f"the issuer {issuer} publishes no jwks_uri: its tokens may be opaque; "
                "give introspection client credentials ($BATON_AUTH_CLIENT_ID, $BATON_AUTH_CLIENT_SECRET)"
            )
        return cls(resource=resource, issuer=issuer, jwks_url=jwks_uri, scopes=scopes, **options)

    # -- baton.server.guard.ResourceAuth -------------------------------------------------------------

    @property
    def resource(self) -> str:
        return self._resource

    @property
    def metadata_url(self) -> str:
        return self._metadata_url

    @property
    def metadata_path(self) -> str:
        return self._metadata_path

    @property
    def scopes(self) -> tuple[str, ...]:
        return self._scopes

    @property
    def implications(self) -> Implications:
        return self._implications

    @property
    def introspector(self) -> Introspector | None:
        return self._introspector

    @property
    def challenge_scheme(self) -> str:
        """The scheme of this resource's 401 challenges: DPoP when it takes DPoP-bound tokens only."""
        return "DPoP" if self.dpop == "require" else "Bearer"

    async def authenticate(self, info: RequestInfo) -> Grant:
        scheme, token = presented_token(info, schemes=self._schemes)
        claims = await self._claims(token)
        jkt = bound_key(claims)
        grant = Grant(identity(self.issuer, claims), scopes_of(claims))
        if scheme == "dpop":  # protocol.md P198
            if jkt is None:
                raise Unauthenticated("the DPoP scheme was used with a token that is not bound to a key")
            proof = check_proof(
                info.headers.get("dpop") if info.headers is not None else None,
                method=info.method,
                uri=self._resource,
                token=token,
                jkt=jkt,
                window_s=self.dpop_window_s,
            )
            if self._replay is not None:
                await self._replay.first_use(proof, grant.principal, self.dpop_window_s)
        elif jkt is not None:
            raise Unauthenticated("this token is bound to a key: present it as Authorization: DPoP with a DPoP proof")
        return grant

    async def _claims(self, token: str) -> dict[str, Any]:
        if self._introspector is not None:
            claims = await self._introspector.claims(token)
            issuer = claims.get("iss")
            if issuer is not None and issuer != self.issuer:
                raise Unauthenticated("the token was issued by another authorization server")
            check_audience(claims, [self._resource])  # protocol.md P44: required of introspection too
            return claims
        assert self._verifier is not None
        return await self._verifier.claims(token)

    async def aclose(self) -> None:
        """Close the introspection client, if any (`Server.aclose` calls this at shutdown)."""
        if self._introspector is not None:
            await self._introspector.aclose()

    def metadata(self, declared: Iterable[str]) -> dict[str, Any]:
        """The Protected Resource Metadata document (RFC 9728 section 2)."""
        supported = list(self._supported if self._supported is not None else declared)
        document: dict[str, Any] = {
            "resource": self._resource,
            "authorization_servers": self.authorization_servers,
            "bearer_methods_supported": ["header"],
        }
        supported = [s for s in supported if s != OFFLINE_ACCESS]
        if supported:
            document["scopes_supported"] = supported
        if self.resource_name:
            document["resource_name"] = self.resource_name
        if self.dpop != "off":  # RFC 9449 section 10.2
            document["dpop_signing_alg_values_supported"] = list(ALGORITHMS)
        if self.dpop == "require":
            document["dpop_bound_access_tokens_required"] = True
        return document
