"""Start-up checks: configuration that could only fail on some later request is refused before serving.

`Server.check_startup(transport)` runs them; `baton serve` and `server.asgi()` call it, after the
serving layer has mounted the connect kit. Each refusal is a `ConfigurationError` that says what to set:

- the key ring cannot be loaded (a key file that cannot be read, created or parsed; a malformed
  `$BATON_STATE_KEYS`);
- single use is configured (`Server(single_use=True)` or a tool's `single_use=True`) and the ledger
  does not answer now (a ledger given as a URL, `Server(ledger=...)` or `$BATON_LEDGER`, is probed
  with a connection of its own; a `Ledger` object is the author's to check);
- the connect kit is in use and has no public URL, or, over HTTP, it needs an authenticated caller
  (its public URL is not plain http on loopback) and the server has no principal hook;
- over HTTP, a tool, resource or prompt requires OAuth scopes and nothing authenticates callers
  (no `Server(auth=...)`, no principal hook): every call would be refused, or, worse, meant to be
  protected and not (protocol.md P41).

When is the connect kit in use? When the server was given one (`Server(connect=ConnectKit(...))`: that
is the explicit declaration), or when a handler's own source code calls `ctx.secret` or `ctx.connect`
on its Context parameter (read with `ast`, so comments and strings do not count). A handler that
reaches the kit only through a helper it passes `ctx` to is not seen; such a call still fails at call
time, as a tool error (an error for a resource or prompt) that names the same setting, never an
opaque internal error (`ConfigurationError` is judged in `replay._failure`).
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Literal

from ..state.keys import ENV_KEYS, KeyRing, KeyRingError, default_key_file
from ..state.ledger import LedgerError
from ..state.ledger_url import ledger_from_url
from ..state.store_url import parse_store_url
from .source import handler_source

if TYPE_CHECKING:
    from .core import Server

CONNECT_METHODS = ("secret", "connect")
PUBLIC_URL_SETTING = "Server(public_url=...) or $BATON_PUBLIC_URL"
PRINCIPAL_SETTING = "Server(principal=...)"
LEDGER_SETTING = "Server(ledger=...) or $BATON_LEDGER"
AUTH_SETTING = "Server(auth=baton.auth.OAuthResource(...)) or baton serve --auth-issuer"
LEDGER_PROBE_S = 10.0  # a bound on the probe as a whole; the Redis client gives up after 1 s to connect


class ConfigurationError(Exception):
    """The server's configuration cannot work; the message says what to set.

    `setting` names it in a few words (`Server(public_url=...) or $BATON_PUBLIC_URL`). At start-up
    Baton refuses to serve with it; raised while a request runs (the connect kit raises it from
    `ctx.secret`), a tool answers a tool error with the message, a resource or prompt an error
    (-32603) with it: write messages that a client may read (no secrets).
    """

    def __init__(self, message: str, *, setting: str) -> None:
        super().__init__(message)
        self.message = message
        self.setting = setting


def load_key_ring() -> KeyRing:
    """`KeyRing.default()`, or a `ConfigurationError` saying which setting to fix."""
    try:
        return KeyRing.default()
    except (OSError, KeyRingError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        if os.environ.get(ENV_KEYS):
            raise ConfigurationError(
                f"${ENV_KEYS} cannot be used: {reason}; fix it (`baton keys generate` prints a valid entry) "
                "or unset it to use the key file",
                setting=f"${ENV_KEYS}",
            ) from None
        path = default_key_file()
        reason = reason.removeprefix(f"key file {path}").removeprefix(":").strip()
        raise ConfigurationError(
            f"cannot use the key file {path}: {reason}; make it readable (and its directory writable, to create "
            f"it) by this user, point $BATON_KEY_FILE at another file, or set ${ENV_KEYS}",
            setting="$BATON_KEY_FILE",
        ) from None


def connect_calls(fn: Callable[..., Any], context_param: str | None) -> list[str]:
    """The connect-kit calls (`ctx.secret`, `ctx.connect`) in `fn`'s own source, on its Context parameter.

    Nested functions of `fn` count (they see the same `ctx`); helpers it calls do not. A function
    without readable source (a builtin, a lambda inside an expression, a `functools.partial`) gives none.
    """
    source = handler_source(fn) if context_param is not None else None
    if source is None or context_param is None:
        return []
    found: list[str] = []
    for method, _ in source.context_calls(context_param, CONNECT_METHODS):
        call = f"{context_param}.{method}"
        if call not in found:
            found.append(call)
    return found


def probe_ledger(url: str) -> str | None:
    """Why the ledger at `url` cannot be used now (None if it answers), with a throwaway connection.

    It runs on a thread with its own event loop, so it works whether or not the caller's loop runs, and
    leaves nothing bound to a loop that the server's own ledger (made later, on the serving loop) would use.
    """
    problem: list[str] = []

    async def probe() -> None:
        ledger = ledger_from_url(url)
        try:
            await asyncio.wait_for(ledger.ping(), LEDGER_PROBE_S)
        finally:
            await ledger.close()

    def run() -> None:
        try:
            asyncio.run(probe())
        except (LedgerError, OSError, ValueError, TimeoutError) as exc:
            problem.append(str(exc) or type(exc).__name__)

    thread = threading.Thread(target=run, name="baton-ledger-probe", daemon=True)
    thread.start()
    thread.join(LEDGER_PROBE_S + 5)
    if thread.is_alive():
        return f"no answer within {LEDGER_PROBE_S:g} s"
    return problem[0] if problem else None


def check_startup(server: Server, transport: Literal["http", "stdio"]) -> None:
    """Raise `ConfigurationError` for the first configuration of `server` that could only fail later
    (see the module's docstring); `transport` is how it is about to be served."""
    _ = server.runtime.key_ring  # raises ConfigurationError naming the key file or $BATON_STATE_KEYS
    if server.settings.single_use or any(tool.single_use for tool in server.tools.values()):
        url = server.runtime.ledger_url
        if url is not None:
            problem = probe_ledger(url)
            if problem is not None:
                parsed = parse_store_url(url, "ledger")
                shown = parsed.shown if parsed.kind == "redis" else url  # a Redis URL may hold a password
                raise ConfigurationError(
                    f"single use is on, but the ledger at {shown} cannot be used: "
                    f"{problem}; start it, or point {LEDGER_SETTING} at one that answers",
                    setting=LEDGER_SETTING,
                )
    if transport == "http" and not server.runtime.has_principal_hook:
        scoped = next(scoped_handlers(server), None)
        if scoped is not None:
            raise ConfigurationError(
                f"{scoped} requires OAuth scopes, but nothing authenticates HTTP callers: protect the server "
                "with Server(auth=baton.auth.OAuthResource(...)) (or baton serve --auth-issuer URL --auth-audience "
                "URL), or drop the scopes",
                setting=AUTH_SETTING,
            )
    users = list(connect_users(server))
    if server.runtime.connect_declared:
        users.append("the connect kit given to Server(connect=...)")
    if users and server.runtime.has_connect_kit:
        authenticated = server.runtime.has_principal_hook or transport == "stdio"  # stdio callers are the OS user
        server.runtime.connect_kit.check(authenticated=authenticated, needed_by=users[0])


def connect_users(server: Server) -> Iterator[str]:
    """Each handler whose own source calls the connect kit, as "tool deploy (ctx.secret)"."""
    handlers: list[tuple[str, Callable[..., Any], str | None]] = []
    for tool in server.tools.values():
        handlers.append((f"tool {tool.name}", tool.fn, tool.signature.context_param))
    for resource in server.resources.values():
        handlers.append((f"resource {resource.uri}", resource.fn, resource.signature.context_param))
    for template in server.templates.values():
        handlers.append((f"resource {template.uri_template}", template.fn, template.signature.context_param))
    for prompt in server.prompts.values():
        handlers.append((f"prompt {prompt.name}", prompt.fn, prompt.signature.context_param))
    for what, fn, context_param in handlers:
        calls = connect_calls(fn, context_param)
        if calls:
            yield f"{what} ({', '.join(calls)})"


def scoped_handlers(server: Server) -> Iterator[str]:
    """Each handler that requires OAuth scopes, as "tool deploy (scopes admin)"."""
    items: list[tuple[str, tuple[str, ...]]] = [(f"tool {t.name}", t.scopes) for t in server.tools.values()]
    items += [(f"resource {r.uri}", r.scopes) for r in server.resources.values()]
    items += [(f"resource {t.uri_template}", t.scopes) for t in server.templates.values()]
    items += [(f"prompt {p.name}", p.scopes) for p in server.prompts.values()]
    for what, scopes in items:
        if scopes:
            yield f"{what} (scopes {' '.join(scopes)})"
