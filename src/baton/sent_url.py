"""A URL read the way Baton's HTTP client (httpx) reads it when it sends a request there.

A check that admits a URL read by one parser (urllib's `urlsplit`) and a client that sends it after
reading it with another (httpx) disagree on some inputs: `https://as.:example` has the host `as.` for
the first and an invalid port for the second, `https://xn--a.example` a host for the first and an IDNA
error for the second. What the check passed then fails inside the sender with an exception that is not
an `httpx.HTTPError`. So every check of a URL that httpx will fetch parses it here, with httpx's own
parser, and judges what httpx will send (protocol.md P120).
"""

from __future__ import annotations

import httpx


def parse(url: str) -> httpx.URL:
    """`url` as httpx will send it, or `ValueError` saying why httpx could not."""
    try:
        # The request the client would build: it parses `url` and reads the host for the Host header,
        # which decodes an IDNA host (`xn--...`) and can refuse it, as the URL alone does not.
        return httpx.Request("GET", url).url
    except (httpx.InvalidURL, ValueError) as exc:  # the IDNA codec's refusals are UnicodeErrors (ValueError)
        raise ValueError(f"{url!r} is not a URL: {exc}") from None


def origin_and_path(url: str) -> tuple[str, str]:
    """`scheme://authority` and the path (no query, no trailing `/`) of `url` as httpx sends them, to build the
    well-known URLs beside it; `ValueError` as `parse`."""
    parsed = parse(url)
    origin = f"{parsed.scheme}://{parsed.netloc.decode('ascii')}"
    return origin, parsed.raw_path.decode("ascii").partition("?")[0].rstrip("/")
