"""`Runtime`: what the transports need of a `Server`, kept apart from the author's API (`server.runtime`).

A transport hands the runtime one parsed `Message` and an `Exchange` and gets back a `Reply` (or a
`Subscription` for `subscriptions/listen`); `initialize` and `handle_handshake` do the same for a 2025-11-25
session. Validation runs in the order of protocol.md P1: `_meta` (-32602) → headers (-32020) → version
(-32022) → method (-32601) → params. The runtime never touches sockets. It also holds what serving needs
and the author never calls: the key ring, the sealers of `requestState` and of session ids, the ledger,
the mounted connect kit, the principal hook, the listen hub, and the capabilities derived from the
registries. The method handlers live in `methods.py`, the replay engine in `replay.py`.
"""

from __future__ import annotations

import contextlib
import getpass
import logging
import os
from typing import TYPE_CHECKING, Any

from ..protocol import headers as hdr
from ..protocol.capabilities import ClientCapabilities
from ..protocol.constants import META_CLIENT_INFO, META_SERVER_INFO, SUPPORTED_VERSIONS
from ..protocol.errors import INTERNAL_ERROR, McpError, method_not_found
from ..protocol.extensions import Extensions, capabilities_with
from ..protocol.messages import Message, check_meta, check_version, error_response, result_response
from ..protocol.tasks import TASKS
from ..state.keys import KeyRing, shared_by_instances
from ..state.ledger import Ledger, LedgerError
from ..state.ledger_url import ledger_from_url, task_store_from_url
from ..state.seal import Sealer
from ..state.task_seal import TaskSeal
from ..state.task_store import TaskStore
from .deprecations import warn_deprecated
from .exchange import Exchange, PrincipalHook, Reply, RequestInfo
from .guard import Guard, ResourceAuth
from .handshake import REMOVED_METHODS, HandshakeEra, handshake_error, removed_method
from .lifespan import Lifespan
from .methods import Methods
from .outbound import Stream
from .parts import ConnectPart
from .registry import Handler, RegisteredResource, RegisteredTemplate
from .replay import ReplayEngine
from .scopes import declared_scopes, required_for
from .sessions import ServerSession, SessionSeal
from .single_use import SingleUse
from .startup import ConfigurationError, load_key_ring
from .subscriptions import ListenHub, Subscription
from .tasks import TaskBoard

if TYPE_CHECKING:
    from .core import Server

log = logging.getLogger("baton.server")


class Runtime:
    """One `Server`'s serving side: dispatch, the handshake era, and what serving holds open."""

    def __init__(
        self,
        server: Server,
        *,
        state_keys: KeyRing | None,
        principal: PrincipalHook | None,
        ledger: Ledger | str | None,
        connect: ConnectPart | None,
    ) -> None:
        self.server = server
        self.settings = server.settings
        self.extensions: Extensions = server.extensions  # declared (identifier -> settings): the server's own dict
        info: dict[str, Any] = {"name": server.name, "version": server.version}
        if server.title:
            info["title"] = server.title
        self._result_meta = {META_SERVER_INFO: info}
        self._keys = state_keys
        auth = self.settings.auth
        self.guard = Guard(server, auth.authenticate if auth is not None else principal)
        self._ledger = ledger
        self._connect = connect
        self.connect_declared = connect is not None  # the author gave a kit: it is in use (startup.py)
        self._sealer: Sealer | None = None
        self._sessions: SessionSeal | None = None
        self.completion_handler: Handler | None = None
        self.hub = ListenHub()
        self._capabilities: dict[str, Any] | None = None
        self.checked: set[str] = set()  # transports check_startup passed for, until a handler changes
        self._scoped: bool | None = None  # whether any scope is declared (`declared_scopes`), until a handler changes
        self._os_user: str | None = None
        self.single_use = SingleUse(lambda: self.ledger)
        self.lifespan: Lifespan | None = None  # Server(lifespan=...): the transports enter it (protocol.md P132)
        self.engine = ReplayEngine(self)  # telemetry gives it an observer (observe.py)
        s = self.settings
        self._task_store: TaskStore | None = None
        self._task_url = ledger if isinstance(ledger, str) else ("memory:" if isinstance(ledger, Ledger) else None)
        self.tasks: TaskBoard = TaskBoard(
            self.engine,
            lambda: server.extensions,
            lambda: self.task_store,
            server.tools.get,
            TaskSeal(lambda: self.key_ring),
            server.name,
            ttl_ms=s.task_ttl_ms,
            poll_interval_ms=s.task_poll_interval_ms,
            lease_ms=s.task_lease_ms,
            limit=s.task_limit,
        )
        self.methods = Methods(server, self.engine).table()
        # The Tasks extension's methods (protocol.md P165); tasks/list and tasks/result stay unknown (-32601).
        board = self.tasks
        self.methods |= {"tasks/get": board.get, "tasks/update": board.update, "tasks/cancel": board.cancel}
        self.handshake = HandshakeEra(server, self.methods)

    # -- what serving holds ---------------------------------------------------------------------------

    @property
    def keys_shared(self) -> bool:
        """Whether every instance of this server seals with the same keys: given to `Server(state_keys=...)`
        (unless generated for this process), or named by `$BATON_STATE_KEYS` or `$BATON_KEY_FILE`; not a key
        file each instance makes for itself."""
        return shared_by_instances(self._keys)

    @property
    def key_ring(self) -> KeyRing:
        """The state key ring: as configured, else `BATON_STATE_KEYS`, else the data-directory key file
        (`ConfigurationError`, naming which, when it cannot be loaded)."""
        if self._keys is None:
            self._keys = load_key_ring()  # or a ConfigurationError naming the key file or $BATON_STATE_KEYS
            log.info("requestState keys: %s", self._keys.source)
        return self._keys

    @property
    def ledger(self) -> Ledger:
        """The single-use ledger: as configured (a Ledger or a URL), else `$BATON_LEDGER`, else the
        SQLite file in the data directory (one host; use `redis://…` for many)."""
        if not isinstance(self._ledger, Ledger):
            self._ledger = ledger_from_url(self.ledger_url or "sqlite:")
        return self._ledger

    @property
    def task_store(self) -> TaskStore:
        """Where task records live: beside the ledger (its URL, else `$BATON_LEDGER`, else the SQLite file in
        the data directory); in the process when the ledger was given as an object (protocol.md P172)."""
        if self._task_store is None:
            url = self._task_url or os.environ.get("BATON_LEDGER") or "sqlite:"
            self._task_store = task_store_from_url(url)
        return self._task_store

    @property
    def ledger_url(self) -> str | None:
        """The URL the single-use ledger is made from (None when it was given as a `Ledger`)."""
        if isinstance(self._ledger, Ledger):
            return None
        return self._ledger or os.environ.get("BATON_LEDGER") or "sqlite:"

    @property
    def has_principal_hook(self) -> bool:
        return self.guard.active

    def use_auth(self, auth: ResourceAuth) -> None:
        self.guard = Guard(self.server, auth.authenticate)
        self.checked.clear()

    @property
    def sealer(self) -> Sealer:
        if self._sealer is None:
            s = self.settings
            self._sealer = Sealer(self.key_ring, s.audience, ttl_s=s.state_ttl_s, max_bytes=s.state_max_bytes)
        return self._sealer

    @property
    def sessions(self) -> SessionSeal:
        """Mints and opens the sealed `Mcp-Session-Id` of 2025-11-25 sessions (under the state key ring)."""
        if self._sessions is None:
            self._sessions = SessionSeal(self.key_ring, self.settings.audience, self.settings.session_ttl_s)
        return self._sessions

    @property
    def has_connect_kit(self) -> bool:
        return self._connect is not None

    def mount_connect(self, kit: ConnectPart) -> None:
        """Mount the connect kit behind `ctx.secret` / `ctx.connect` (the serving layer mounts a default
        `baton.connect.ConnectKit` when the server was given none)."""
        if self._connect is not None and self._connect is not kit:
            raise ValueError("this server already has a connect kit")
        self._connect = kit

    @property
    def connect_kit(self) -> ConnectPart:
        """The mounted connect kit, attached to this server's key ring and public URL on first use."""
        if self._connect is None:
            raise ConfigurationError(
                "no connect kit is mounted: pass Server(connect=baton.connect.ConnectKit(...)), or serve the server"
                " (baton serve, server.asgi(), serve_stdio), which mounts the default one",
                setting="Server(connect=...)",
            )
        if not self._connect.attached:
            self._connect.attach(self.key_ring, self.settings.public_url, lambda: self.ledger)
        return self._connect

    async def start(self) -> None:
        """Enter `Server(lifespan=...)`, if any (`LifespanFailed`, one line, when it raises): each transport
        calls it once before serving, and `aclose` exits it (protocol.md P132)."""
        if self.lifespan is not None:
            await self.lifespan.enter()
        if TASKS in self.server.extensions:  # protocol.md P206: orphaned rounds resume without a poll
            self.tasks.sweep()

    async def aclose(self) -> None:
        """Release what the server holds open (the ledger, the connect kit, the auth's HTTP client);
        transports call it at shutdown."""
        self.hub.shutdown()
        self.tasks.cancel_all()
        if self._task_store is not None:
            with contextlib.suppress(Exception):  # a store already gone: nothing left to release
                await self._task_store.close()
        closer = getattr(self.settings.auth, "aclose", None)  # optional on a ResourceAuth (OAuthResource has one)
        if closer is not None:
            await closer()
        self.single_use.cancel()
        if self._connect is not None:
            await self._connect.aclose()
        if isinstance(self._ledger, Ledger):
            with contextlib.suppress(LedgerError):
                await self._ledger.close()
        if self.lifespan is not None:
            await self.lifespan.exit(every=True)

    def changed(self, kind: str | None) -> None:
        """A registry changed: capabilities are derived again, start-up checks run again, and listeners of
        its list (`kind`: tools, resources or prompts; None for the completion handler) are told."""
        self._capabilities = None
        self.checked.clear()
        self._scoped = None
        if kind is not None:
            self.hub.publish(kind)

    def find_resource(self, uri: str) -> tuple[RegisteredResource | RegisteredTemplate, dict[str, Any]] | None:
        """The resource `uri` names, or the first template it matches with its variables; None if neither."""
        resource = self.server.resources.get(uri) or self.server.skills.files.get(uri)
        if resource is not None:
            return resource, {}
        for template in self.server.templates.values():
            variables = template.match(uri)
            if variables is not None:
                return template, dict(variables)
        return None

    # -- capabilities -------------------------------------------------------------------------------

    def capabilities(self) -> dict[str, Any]:
        """The server capabilities, derived from what is registered (cached until that changes)."""
        if self._capabilities is None:
            caps: dict[str, Any] = {}
            if self.server.tools:
                caps["tools"] = {"listChanged": True}
            if self.server.resources or self.server.templates:
                caps["resources"] = {"listChanged": True, "subscribe": True}  # on a listen stream (P199)
            if self.server.prompts:
                caps["prompts"] = {"listChanged": True}
            if self.completion_handler is not None:
                caps["completions"] = {}
            self._capabilities = capabilities_with(caps, self.server.extensions)  # P141
        return self._capabilities

    def offered_lists(self) -> frozenset[str]:
        caps = self.capabilities()
        return frozenset(k for k in ("tools", "resources", "prompts") if k in caps)

    # -- dispatch -----------------------------------------------------------------------------------

    async def handle(self, msg: Message, exchange: Exchange) -> Reply | Subscription:
        """Answer one request. Notifications are the transport's business and never reach here."""
        rid = msg.id
        # Unauthenticated HTTP is "anonymous", the default, unless the request needs scopes: a handler
        # given scopes at run time is then refused (403) as in a session, never silently open (protocol.md P41).
        scoped = self._scoped if self._scoped is not None else self._find_scoped()
        if (
            self.guard.active
            or exchange.info.transport != "http"
            or (scoped and required_for(self.server, msg.method, msg.params))
        ):
            refusal = await self.guard.admit(msg, exchange)  # 401 / 403 (guard.py)
            if refusal is not None:
                return refusal
        try:
            params = msg.params
            version, raw_caps = check_meta(params)
            headers = exchange.info.headers
            if headers is not None:
                hdr.check_standard(headers, msg.method, params, version)
            if version not in SUPPORTED_VERSIONS:
                check_version(version)
            method = self.methods.get(msg.method)
            if method is None:
                if msg.method == "subscriptions/listen" and self.offered_lists():
                    return self.hub.open(rid, params, self.offered_lists())
                raise removed_method(msg.method) if msg.method in REMOVED_METHODS else method_not_found(msg.method)
            caps = ClientCapabilities.parse(raw_caps)
            if caps.sampling or caps.roots:
                warn_deprecated(params["_meta"].get(META_CLIENT_INFO), caps.deprecated)  # once per client (P124)
            result = await method(msg, exchange, caps)
        except McpError as exc:
            return Reply(error_response(rid, exc), exc.code)
        except Exception as exc:
            error = _internal(msg.method, exc)
            return Reply(error_response(rid, error), INTERNAL_ERROR)
        meta = result.get("_meta")
        result["_meta"] = {**self._result_meta, **meta} if meta else self._result_meta
        return Reply(result_response(rid, result))

    def _find_scoped(self) -> bool:
        self._scoped = bool(declared_scopes(self.server))  # server-wide ones only with auth=, which admits anyway
        return self._scoped

    # -- the 2025-11-25 era (protocol.md P28) --------------------------------------------------------

    def initialize(self, msg: Message, exchange: Exchange) -> tuple[Reply, ServerSession | None]:
        """Answer a handshake-era `initialize` (the transport has set `exchange.principal`): the reply, and
        the session it opened (None when the request was refused). HTTP gives the session a sealed id."""
        try:
            result, session = self.handshake.initialize(msg, exchange.principal)
            if exchange.info.transport == "http":
                session.id = self.sessions.mint(session)
        except McpError as exc:
            return Reply(error_response(msg.id, exc), exc.code), None
        # No deprecation warning here: sampling and roots are current features of 2025-11-25.
        return Reply(result_response(msg.id, result)), session

    async def handle_handshake(self, msg: Message, exchange: Exchange, session: ServerSession, stream: Stream) -> Reply:
        """Answer one request of an initialized 2025-11-25 session; asks go out on `stream` (protocol.md P29).

        Errors keep the 2025-11-25 codes (`handshake_error`); the transport sends every one with HTTP 200.
        """
        try:
            result = await self.handshake.handle(msg, exchange, session, stream)
        except McpError as exc:
            error = handshake_error(exc)
            return Reply(error_response(msg.id, error), error.code)
        except Exception as exc:
            error = _internal(msg.method, exc)
            return Reply(error_response(msg.id, error), INTERNAL_ERROR)
        return Reply(result_response(msg.id, result))

    async def principal_of(self, info: RequestInfo) -> str:
        """Who is calling, from the transport only (never from what the client says about itself).

        The hook may raise `Unauthenticated` to refuse the request (HTTP 401).
        """
        return (await self.guard.grant(info)).principal

    async def admit(self, msg: Message | None, exchange: Exchange) -> Reply | None:
        """Authenticate the request and check its scopes: None to go on, else the 401/403 reply (guard.py)."""
        return await self.guard.admit(msg, exchange)

    def os_principal(self) -> str:
        """`os:<user>`, the principal of a stdio caller."""
        if self._os_user is None:
            self._os_user = "os:" + getpass.getuser()
        return self._os_user


def _internal(method: str, exc: Exception) -> McpError:
    """The -32603 of a request that failed outside any handler. A `ConfigurationError` (keys that cannot be
    loaded, no connect kit) names the setting to fix; anything else is logged and hidden."""
    if isinstance(exc, ConfigurationError):
        log.error("cannot answer %s: %s", method, exc)
        return McpError(INTERNAL_ERROR, f"Internal error while answering {method}: the server needs {exc.setting}")
    log.exception("internal error answering %s", method, exc_info=exc)
    return McpError(INTERNAL_ERROR, f"Internal error while answering {method}")
