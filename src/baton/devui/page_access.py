"""Who may use a `baton dev` page: the one rule that keeps other web pages and other hosts out.

The page drives a server with the user's credentials, so a request is admitted only when it comes to
the exact address `baton dev` printed (Host `127.0.0.1:PORT`: a DNS-rebinding page names another host),
from that origin or none (a foreign `Origin` is another site's script: 403), and, for everything but
the static files, with the per-run token that only the printed address carries (in its fragment, which
the browser never sends; the page sends it back in the `X-Baton-Dev-Token` header, which no other site's
form or image can set). The token is compared in constant time.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass, field

TOKEN_HEADER = "x-baton-dev-token"
LOOPBACK = "127.0.0.1"


@dataclass(frozen=True, slots=True)
class Refusal:
    status: int
    reason: str


@dataclass(frozen=True, slots=True)
class DevGuard:
    """The admission rule for one run: its port and its random token."""

    port: int
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    name: str = "baton dev"
    """Who serves the page, as its refusals name it (`baton bridge` asks its questions on such a page too)."""

    @property
    def origin(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    @property
    def address(self) -> str:
        """The address to print and open: the page, with the token in the fragment."""
        return f"{self.origin}/#token={self.token}"

    def check(self, headers: dict[str, str], *, static: bool) -> Refusal | None:
        """Why a request with these (lower-cased) headers is refused, or None to admit it."""
        if headers.get("host") != f"{LOOPBACK}:{self.port}":
            return Refusal(421, f"{self.name} answers only at {self.origin}")
        origin = headers.get("origin")
        if origin is not None and origin != self.origin:
            return Refusal(403, f"a page of another origin may not use {self.name}")
        if static:
            return None
        given = headers.get(TOKEN_HEADER, "")
        if not hmac.compare_digest(given.encode(), self.token.encode()):
            return Refusal(401, f"open the address {self.name} printed: it carries this run's token")
        return None
