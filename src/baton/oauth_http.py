"""The one way Baton builds an HTTP client to an OAuth party: an authorization server's metadata, its JWKS
and introspection endpoints, a provider's token endpoint, the client's own login.

Every such client refuses a response body larger than `MAX_BODY_BYTES` (256 KiB), by its
`Content-Length` before any of it is read and by counting while it streams, so a hostile host cannot
make Baton download more than that; bounds each connect, read and write (`TIMEOUT_S` unless told);
follows no redirect; and reads no proxy settings or `.netrc` from the environment (`trust_env=False`),
so where a token goes is decided by configuration, not by whatever `HTTPS_PROXY` the process inherits.
A body over the cap raises what `too_large` makes of the message (`ResponseTooLarge` unless told).
tests/test_oauth_http.py fails if a client is built anywhere else.
"""

from __future__ import annotations

import warnings
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import httpx

from .extras import MissingExtra

MAX_BODY_BYTES = 256 * 1024
TIMEOUT_S = 10.0

TooLarge = Callable[[str], Exception]
"""What a body over the cap raises, made from the message."""


class ResponseTooLarge(httpx.TransportError):
    """A response body was larger than `MAX_BODY_BYTES`; it was not read further."""


def _message(url: object, limit: int) -> str:
    return f"the answer of {url} is larger than {limit // 1024} KiB: refused"


def _declared_too_large(resp: httpx.Response, limit: int) -> bool:
    length = resp.headers.get("content-length", "")
    return length.strip().isdigit() and int(length) > limit


class _CappedAsync(httpx.AsyncByteStream):
    def __init__(self, stream: httpx.AsyncByteStream, url: object, limit: int, too_large: TooLarge) -> None:
        self._stream, self._url, self._limit, self._too_large = stream, url, limit, too_large

    async def __aiter__(self) -> AsyncIterator[bytes]:
        total = 0
        async for chunk in self._stream:
            total += len(chunk)
            if total > self._limit:
                raise self._too_large(_message(self._url, self._limit))
            yield chunk

    async def aclose(self) -> None:
        await self._stream.aclose()


class _CappedSync(httpx.SyncByteStream):
    def __init__(self, stream: httpx.SyncByteStream, url: object, limit: int, too_large: TooLarge) -> None:
        self._stream, self._url, self._limit, self._too_large = stream, url, limit, too_large

    def __iter__(self) -> Iterator[bytes]:
        total = 0
        for chunk in self._stream:
            total += len(chunk)
            if total > self._limit:
                raise self._too_large(_message(self._url, self._limit))
            yield chunk

    def close(self) -> None:
        self._stream.close()


class _AsyncTransport(httpx.AsyncHTTPTransport):
    def __init__(self, limit: int, too_large: TooLarge) -> None:
        super().__init__(trust_env=False)
        self.limit, self._too_large = limit, too_large

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        resp = await super().handle_async_request(request)
        if _declared_too_large(resp, self.limit):
            await resp.aclose()
            raise self._too_large(_message(request.url, self.limit))
        assert isinstance(resp.stream, httpx.AsyncByteStream)
        stream = _CappedAsync(resp.stream, request.url, self.limit, self._too_large)
        return httpx.Response(
            resp.status_code, headers=resp.headers, stream=stream, extensions=resp.extensions, request=request
        )


class _SyncTransport(httpx.HTTPTransport):
    def __init__(self, limit: int, too_large: TooLarge) -> None:
        super().__init__(trust_env=False)
        self.limit, self._too_large = limit, too_large

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        resp = super().handle_request(request)
        if _declared_too_large(resp, self.limit):
            resp.close()
            raise self._too_large(_message(request.url, self.limit))
        assert isinstance(resp.stream, httpx.SyncByteStream)
        stream = _CappedSync(resp.stream, request.url, self.limit, self._too_large)
        return httpx.Response(
            resp.status_code, headers=resp.headers, stream=stream, extensions=resp.extensions, request=request
        )


def _options(timeout_s: float) -> dict[str, Any]:
    return {"timeout": httpx.Timeout(timeout_s), "follow_redirects": False, "trust_env": False}


def async_client(
    *, timeout_s: float = TIMEOUT_S, too_large: TooLarge = ResponseTooLarge, **extra: Any
) -> httpx.AsyncClient:
    """An httpx client with a capped body, bounded exchanges, no redirects and no proxy from the environment;
    `extra` adds what is particular to one use (`auth=`), never one of those."""
    transport = _AsyncTransport(MAX_BODY_BYTES, too_large)
    return httpx.AsyncClient(transport=transport, **_options(timeout_s), **extra)


def sync_client(*, timeout_s: float = TIMEOUT_S, too_large: TooLarge = ResponseTooLarge, **extra: Any) -> httpx.Client:
    """`async_client`, blocking (for what runs once before serving)."""
    return httpx.Client(transport=_SyncTransport(MAX_BODY_BYTES, too_large), **_options(timeout_s), **extra)


def oauth2_client_class() -> Any:
    """Authlib's `AsyncOAuth2Client`, imported without the warning Authlib 1.9 prints on import (that its
    httpx integration will become httpx2)."""
    # authlib.deprecate sets its own "always" filter when imported: import it first, so ours below wins.
    # Authlib is the optional `[oauth]` extra: imported when an OAuth flow first runs.
    with warnings.catch_warnings():
        try:
            import authlib.deprecate  # type: ignore[import-untyped,import-not-found,unused-ignore]  # noqa: F401, PLC0415

            warnings.simplefilter("ignore", DeprecationWarning)
            from authlib.integrations.httpx_client import AsyncOAuth2Client  # type: ignore[import-untyped,import-not-found,unused-ignore]  # noqa: PLC0415 (the optional oauth extra)
        except ModuleNotFoundError:
            raise MissingExtra("oauth", "an OAuth login") from None
    return AsyncOAuth2Client


def oauth_error_class() -> type[Exception]:
    """Authlib's base error, which its OAuth client raises for a refused exchange or refresh."""
    try:
        from authlib.common.errors import AuthlibBaseError  # type: ignore[import-untyped,import-not-found,unused-ignore]  # noqa: PLC0415 (the optional oauth extra)
    except ModuleNotFoundError:
        raise MissingExtra("oauth", "an OAuth login") from None
    return AuthlibBaseError  # type: ignore[no-any-return]


def oauth2_client(*, timeout_s: float = TIMEOUT_S, too_large: TooLarge = ResponseTooLarge, **params: Any) -> Any:
    """Authlib's OAuth 2 client (`params`: client id, secret, redirect URI...) over the same bounds as
    `async_client`."""
    transport = _AsyncTransport(MAX_BODY_BYTES, too_large)
    return oauth2_client_class()(transport=transport, **_options(timeout_s), **params)
