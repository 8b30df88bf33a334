"""One server's login: the token sent now, and what a 401 or a 403 `insufficient_scope` leads to.

A 401 (whatever the request: either era's POST, a session's GET or DELETE) leads to discovery from
the challenge (`discovery`): the server's PRM, then its authorization server's metadata, fresh each
time, so a server that names a new authorization server is followed there: the old grant is dropped
and a client registered with the old server is never shown to the new one (protocol.md P57). With
the same server, a refresh token is tried first; then a login through the browser, once per request.
A 403 whose challenge says `insufficient_scope` leads to a new login for the union of the scopes
asked before and those challenged, at most `MAX_STEP_UPS` times per request, and only while the
union grows (`scopes`); otherwise `AuthError`. Any other 403 is the server's answer.

Requests waiting on one login share it: a request whose 401 came for a token already replaced
retries with the new one. A DELETE (closing a session) may refresh but never opens a browser.
Tokens live in the host's store under `token <server URL>`; nothing here logs a token or a secret.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

import httpx

from ..errors import AuthError
from ..http11 import Url, encode_headers
from . import flow
from .challenge import Challenge, auth_challenge
from .config import OAuth
from .discovery import ResourceMetadata, ServerMetadata, authorization_server, protected_resource
from .dpop import ALG as DPOP_ALG
from .dpop import NONCE_ERROR, DpopKey
from .flow import TokenGrant
from .limits import MAX_AUTHORIZATION_SERVERS, capped_client, paused
from .machine import ProgramLogin
from .registration import (
    ClientInfo,
    first_use_issuer,
    grant_client,
    metadata_document,
    pre_registered,
    register,
    stored_registration,
)
from .response import authorization_code
from .scopes import first_scopes, step_up, with_offline_access

log = logging.getLogger("baton.client.oauth")
MAX_STEP_UPS = 2  # re-authorizations for insufficient_scope in one request (3 logins at most, with the first)


@dataclass(slots=True)
class Attempts:
    """What one request has tried so far."""

    logins: int = 0
    refreshed: bool = False
    step_ups: int = 0


def wants_login(status: int, www_authenticate: str | None) -> Challenge | None:
    """The challenge of a response the login handles (a 401, or a 403 `insufficient_scope`), else None."""
    challenge = auth_challenge(www_authenticate)
    if challenge is not None and challenge.error == NONCE_ERROR:
        return None  # a DPoP nonce asked for: the pool sends the request again with it (P197), not a login
    if status == 401:
        return challenge or Challenge()
    if status == 403 and challenge is not None and challenge.error == "insufficient_scope":
        return challenge
    return None


class LoginState:
    """The login state of one client to one server."""

    def __init__(self, config: OAuth | ProgramLogin, server_url: str) -> None:
        self.config = config
        self.server_url = server_url
        self.header = b""  # the Authorization line sent with every request, once there is a token
        self._grant: TokenGrant | None = None
        self._dpop: DpopKey | None = None  # the key the current token is bound to, if it is a DPoP token
        self._loaded = False
        self._store_error: AuthError | None = None  # the store could not be read (current)
        self._lock = asyncio.Lock()

    @property
    def _key(self) -> str:
        return f"token {self.server_url}"

    async def current(self) -> bytes:
        """The Authorization line to send (b"" before any login); the store is read once.

        A store that cannot be read (a bad mode, not JSON) is not this request's business: the server
        may need no login at all. It is then a warning, the request goes without a token, and the
        error is raised only if the server asks for a login (`recover`).
        """
        if not self._loaded:
            async with self._lock:
                if not self._loaded:
                    self._loaded = True
                    try:
                        data = await self.config.store.get(self._key)
                    except AuthError as exc:
                        self._store_error = exc
                        log.warning("%s (no stored token is sent)", exc)
                        data = None
                    grant = TokenGrant.from_json(data) if data else None
                    if grant is not None:
                        self._use(grant)
        return self.header

    def _use(self, grant: TokenGrant, key: DpopKey | None = None) -> None:
        """Send `grant`'s token from now on; `key`, the live key a DPoP token was just bound to (read back from
        the grant only when the grant comes from the store), so the nonces servers gave it are kept."""
        bound = grant.token_type.lower() == "dpop"
        dpop = (key or DpopKey.from_json(grant.dpop_key)) if bound else None
        if bound and dpop is None:
            raise AuthError("a stored DPoP token has no usable key: log in again (delete it from the token store)")
        try:
            header = encode_headers([("Authorization", f"{'DPoP' if dpop else 'Bearer'} {grant.access_token}")])
        except ValueError:
            raise AuthError("the authorization server issued an access token that cannot be sent in a header") from None
        self._grant = grant
        self._dpop = dpop
        self.header = header

    def proof(self, method: str, url: Url) -> bytes:
        """The `DPoP` line of one request (a fresh proof, bound to the token), or b"" for a Bearer token."""
        if self._dpop is None or self._grant is None:
            return b""
        return encode_headers([("DPoP", self._dpop.proof(method, _address(url), self._grant.access_token))])

    def nonce_asked(self, www_authenticate: str | None, nonce: str | None, url: Url) -> bool:
        """Whether the server asked for a DPoP nonce it had not given before (so the request goes again)."""
        if self._dpop is None:
            return False
        challenge = auth_challenge(www_authenticate)
        if challenge is None or challenge.error != NONCE_ERROR:
            return False
        return self._dpop.remember_nonce(_address(url), nonce)

    def _dpop_for(self, meta: ServerMetadata, prm: ResourceMetadata, challenge: Challenge) -> DpopKey | None:
        """The key to bind a new token to, or None for a Bearer token (protocol.md P197)."""
        choice = self.config.dpop
        if choice is False:
            return None
        wanted = choice is True or prm.dpop_required or challenge.scheme == "dpop"
        if not wanted:
            return None
        if DPOP_ALG not in (meta.strings("dpop_signing_alg_values_supported") or ()):
            if choice is True or prm.dpop_required:
                raise AuthError(
                    f"{'the server requires' if prm.dpop_required else 'dpop=True asks for'} DPoP-bound tokens, but "
                    f"the authorization server {meta.issuer} does not offer DPoP with {DPOP_ALG}"
                )
            return None
        return DpopKey()

    async def _save(self, grant: TokenGrant, key: DpopKey | None = None) -> None:
        self._use(grant, key)
        await self.config.store.set(self._key, grant.to_json())

    async def _forget(self) -> None:
        self._grant = None
        self.header = b""
        await self.config.store.delete(self._key)

    # -- after a 401 or a 403 ----------------------------------------------------------------------------

    async def recover(
        self, status: int, challenge: Challenge, sent: bytes, attempts: Attempts, *, interactive: bool = True
    ) -> bytes | None:
        """A new Authorization line to send the request again with; None: give the response back as it is.

        Raises AuthError when the login cannot succeed (the message says why).
        """
        async with self._lock:
            if self.header != sent and self.header:
                return self.header  # another request renewed the token meanwhile
            if self._store_error is not None:  # a login would be lost, or the file is not safe: say so first
                raise self._store_error
            bound = asyncio.timeout(self.config.http_timeout_s)
            try:
                async with bound, capped_client() as http:
                    return await self._recover(http, bound, status, challenge, attempts, interactive)
            except TimeoutError:
                if bound.expired():
                    raise AuthError(
                        f"logging in to {self.server_url} did not finish: its authorization exchanges took longer "
                        f"than {self.config.http_timeout_s:g} s (OAuth(http_timeout_s=...))"
                    ) from None
                raise

    async def _recover(
        self,
        http: httpx.AsyncClient,
        bound: asyncio.Timeout,
        status: int,
        challenge: Challenge,
        attempts: Attempts,
        interactive: bool,
    ) -> bytes | None:
        prm = await protected_resource(http, self.server_url, challenge.resource_metadata)
        meta = await self._authorization_server(http, prm)
        grant = self._grant
        if grant is not None and grant.issuer != meta.issuer:
            log.info(
                "the server %s now names the authorization server %s: logging in there",
                self.server_url,
                meta.issuer,
            )
            await self._forget()
            grant = None
        if isinstance(self.config, ProgramLogin):
            return await self._as_program(self.config, prm, meta, status, challenge, attempts)
        config = self.config
        if status == 401:
            if grant is not None and grant.refresh_token and not attempts.refreshed:
                attempts.refreshed = True
                try:
                    client = grant_client(grant.client, config.client_id, config.client_secret, meta)
                    await self._save(await flow.refresh(meta, grant, client, self._dpop), self._dpop)
                    return self.header
                except AuthError as exc:
                    log.info("refreshing the token failed (%s): logging in again", exc)
            if not interactive:
                return None
        scopes = self._next_scopes(status, challenge, prm, meta, attempts, config.scopes, may_step_up=interactive)
        await self._login(config, http, bound, prm, meta, scopes, self._dpop_for(meta, prm, challenge))
        return self.header

    async def _as_program(
        self,
        creds: ProgramLogin,
        prm: ResourceMetadata,
        meta: ServerMetadata,
        status: int,
        challenge: Challenge,
        attempts: Attempts,
    ) -> bytes:
        """A new token by a grant with no person (`machine`): no browser and no refresh (P195, P196)."""
        if creds.bound_issuer is not None and creds.bound_issuer != meta.issuer:
            raise AuthError(
                f"the client {creds.client_id or '(unnamed)'!r} belongs to the authorization server "
                f"{creds.bound_issuer}, but the server now names {meta.issuer}: its credentials are not sent there"
            )
        creds.bound_issuer = meta.issuer
        scopes = self._next_scopes(status, challenge, prm, meta, attempts, creds.scopes, may_step_up=True)
        log.info("logging in to %s at %s as the client %s", self.server_url, meta.issuer, creds.client_id)
        dpop = self._dpop_for(meta, prm, challenge)
        await self._save(await flow.program_grant(meta, creds, scopes, prm.resource, dpop), dpop)
        return self.header

    def _next_scopes(
        self,
        status: int,
        challenge: Challenge,
        prm: ResourceMetadata,
        meta: ServerMetadata,
        attempts: Attempts,
        wanted: tuple[str, ...],
        *,
        may_step_up: bool,
    ) -> tuple[str, ...] | None:
        """The scopes of the next login of this request (counted in `attempts`), or AuthError when another login
        cannot help: a 401 for a token just issued, or a 403 whose scopes asking again cannot get (P54)."""
        grant = self._grant
        if status == 401:
            if attempts.logins:
                raise AuthError(
                    f"the server refused the token {meta.issuer} just issued for it (HTTP 401): "
                    "the login cannot succeed"
                )
            scopes = first_scopes(challenge.scopes, prm.scopes_supported, wanted)
            if grant is not None and grant.scopes and scopes is not None:
                scopes = tuple(dict.fromkeys([*grant.scopes, *scopes]))  # keep what was granted before
        else:
            scopes = step_up(grant.scopes if grant is not None else None, challenge.scopes)
            if scopes is None or attempts.step_ups >= MAX_STEP_UPS or not may_step_up:
                named = " ".join(challenge.scopes or ()) or "(none named)"
                raise AuthError(
                    f"the server needs scope {named}, which the token from {meta.issuer} does not carry, "
                    f"and asking again cannot get it (after {attempts.logins} login(s) for this request)"
                )
            attempts.step_ups += 1
        attempts.logins += 1
        return scopes

    async def _authorization_server(self, http: httpx.AsyncClient, prm: ResourceMetadata) -> ServerMetadata:
        """The first authorization server of the PRM whose metadata checks out."""
        failure: AuthError | None = None
        for issuer in prm.authorization_servers[:MAX_AUTHORIZATION_SERVERS]:
            try:
                return await authorization_server(http, issuer, self.server_url)
            except AuthError as exc:
                failure = failure or exc
        assert failure is not None
        raise failure

    async def _client(self, config: OAuth, http: httpx.AsyncClient, meta: ServerMetadata) -> ClientInfo:
        """The OAuth client to log in with at this authorization server (protocol.md P53)."""
        if config.client_id is not None:
            if config.bound_issuer is None:  # a public client without issuer= (protocol.md P53)
                bound = await first_use_issuer(config.store, config.client_id, meta)
                config.bound_issuer = config.bound_issuer or bound  # shared by every server of this OAuth
            return pre_registered(
                config.client_id, config.client_secret, config.bound_issuer, meta, config.client_auth_method
            )
        if config.client_metadata_url is not None and meta.flag("client_id_metadata_document_supported"):
            return metadata_document(config.client_metadata_url)
        stored = await stored_registration(config.store, meta, config.redirect_uri)
        if stored is not None:
            return stored
        if meta.registration_endpoint is not None:
            return await register(http, config.store, meta, config.redirect_uri, config.client_name)
        cimd = "" if config.client_metadata_url else " (and no client_metadata_url was given)"
        raise AuthError(
            f"the authorization server {meta.issuer} supports neither Client ID Metadata Documents{cimd} nor dynamic "
            "client registration: register a client there and give its client_id"
        )

    async def _login(
        self,
        config: OAuth,
        http: httpx.AsyncClient,
        bound: asyncio.Timeout,
        prm: ResourceMetadata,
        meta: ServerMetadata,
        scopes: tuple[str, ...] | None,
        dpop: DpopKey | None,
    ) -> None:
        scopes = with_offline_access(scopes, meta.strings("scopes_supported"))
        client = await self._client(config, http, meta)
        attempt = flow.start(meta, client, config.redirect_uri, scopes, prm.resource)
        log.info("logging in to %s at %s", self.server_url, meta.issuer)
        try:
            with paused(bound):  # the person's time is not the exchanges' (limits)
                async with asyncio.timeout(config.login_timeout_s):
                    redirected = await config.open_browser(attempt.url)
        except TimeoutError:
            raise AuthError(f"the login at {meta.issuer} did not finish within {config.login_timeout_s:g} s") from None
        except AuthError:
            raise
        except Exception as exc:
            raise AuthError(f"the login at {meta.issuer} was not completed: {exc}") from exc
        if not isinstance(redirected, str):
            raise AuthError("open_browser must return the URL the browser was redirected to")
        code = authorization_code(
            redirected,
            redirect_uri=attempt.redirect_uri,
            state=attempt.state,
            issuer=meta.issuer,
            iss_supported=meta.flag("authorization_response_iss_parameter_supported"),
        )
        await self._save(await flow.exchange(meta, client, attempt, code, prm.resource, dpop), dpop)


def _address(url: Url) -> str:
    """The URL a DPoP proof names (its query is dropped by the proof)."""
    return f"{url.scheme}://{url.authority.decode('ascii')}{url.target.decode('ascii')}"
