"""What bounds the HTTP of a login: the size of every answer, the time of the exchanges, how much is tried.

Every request the login makes itself (metadata, registration, the code exchange, the refresh) goes
through `capped_client()`: an httpx client whose transport refuses a response body larger than
`MAX_BODY_BYTES` (256 KiB), by its `Content-Length` before any of it is read and by counting while
it streams, so a hostile host cannot make the client download more than that. httpx's own timeouts
bound each connect and each read; `bounded(seconds)` bounds them all together: one `asyncio.timeout`
over one recovery's discovery, registration, refresh and code exchange (`OAuth(http_timeout_s=60)`),
paused (`paused`) while the person is at the browser, which `OAuth(login_timeout_s=300)` bounds
instead. A PRM names at most `MAX_AUTHORIZATION_SERVERS` that are tried (protocol.md P49).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING

from ..errors import AuthError

if TYPE_CHECKING:
    import httpx  # imported when first used: a client that never logs in does not load it

MAX_BODY_BYTES = 256 * 1024
MAX_AUTHORIZATION_SERVERS = 3
READ_TIMEOUT_S = 10.0  # httpx's bound on each connect, read and write
HTTP_TIMEOUT_S = 60.0  # the default of OAuth(http_timeout_s=...)


def _too_large(url: object, limit: int) -> AuthError:
    return AuthError(f"the answer of {url} is larger than {limit // 1024} KiB: refused")


def capped_transport(limit: int = MAX_BODY_BYTES) -> httpx.AsyncBaseTransport:
    """An httpx transport whose responses carry at most `limit` bytes of body (AuthError beyond)."""
    import httpx

    class _Capped(httpx.AsyncByteStream):
        def __init__(self, stream: httpx.AsyncByteStream, url: object) -> None:
            self._stream, self._url = stream, url

        async def __aiter__(self) -> AsyncIterator[bytes]:
            total = 0
            async for chunk in self._stream:
                total += len(chunk)
                if total > limit:
                    raise _too_large(self._url, limit)
                yield chunk

        async def aclose(self) -> None:
            await self._stream.aclose()

    class _Transport(httpx.AsyncHTTPTransport):
        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            resp = await super().handle_async_request(request)
            length = resp.headers.get("content-length", "")
            if length.strip().isdigit() and int(length) > limit:
                await resp.aclose()
                raise _too_large(request.url, limit)
            assert isinstance(resp.stream, httpx.AsyncByteStream)
            return httpx.Response(
                resp.status_code,
                headers=resp.headers,
                stream=_Capped(resp.stream, request.url),
                extensions=resp.extensions,
                request=request,
            )

    return _Transport()


def client_options() -> dict[str, object]:
    """The httpx client options of every request of a login: capped bodies, per-read timeouts, no redirects."""
    import httpx

    return {
        "transport": capped_transport(),
        "timeout": httpx.Timeout(READ_TIMEOUT_S),
        "follow_redirects": False,
        "trust_env": False,
    }


def capped_client() -> httpx.AsyncClient:
    """An httpx client for discovery and registration (`client_options`)."""
    import httpx

    return httpx.AsyncClient(**client_options())  # type: ignore[arg-type]


@contextlib.contextmanager
def paused(timeout: asyncio.Timeout | None) -> Iterator[None]:
    """Stops `timeout` while the block runs (the person at the browser); restores the time that was left."""
    loop = asyncio.get_running_loop()
    when = timeout.when() if timeout is not None else None
    if timeout is None or when is None:
        yield
        return
    left = max(0.0, when - loop.time())
    try:
        timeout.reschedule(None)
    except RuntimeError:  # not an active limit any more: nothing to pause
        yield
        return
    try:
        yield
    finally:
        with contextlib.suppress(RuntimeError):
            timeout.reschedule(loop.time() + left)
