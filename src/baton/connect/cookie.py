"""Browser identity for the connect pages: a session cookie signed with HMAC-SHA256.

The cookie is `v1.<kid>.<base64url(payload)>.<base64url(mac)>`; the payload names the principal, a
random session id and the expiry. The MAC key is derived from the server's key ring (the first key
signs, every key verifies). Attributes: HttpOnly, SameSite=Lax, Path=/connect, Max-Age, and Secure
unless the connect pages are served over plain http on loopback (development).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
from dataclasses import dataclass

import orjson

from ..state import clock
from ..state.keys import KeyRing
from .derived import DerivedKeys

COOKIE_NAME = "baton_connect"
LABEL = "baton connect session"
DEFAULT_SESSION_TTL_S = 8 * 3600


@dataclass(frozen=True, slots=True)
class Session:
    principal: str
    sid: str
    expires_at: int


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _unb64(text: str) -> bytes | None:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        return None


class Sessions:
    """Issues and verifies session cookies, and the CSRF tokens bound to a session."""

    def __init__(self, ring: KeyRing, *, ttl_s: int = DEFAULT_SESSION_TTL_S, secure: bool = True) -> None:
        self._keys = DerivedKeys(ring, LABEL)
        self.ttl_s = ttl_s
        self.secure = secure

    def _mac(self, key: bytes, data: bytes) -> bytes:
        return hmac.new(key, data, hashlib.sha256).digest()

    def issue(self, principal: str) -> tuple[Session, str]:
        """A new session for `principal` and its `Set-Cookie` header value."""
        session = Session(principal, secrets.token_urlsafe(16), int(clock.now()) + self.ttl_s)
        payload = _b64(orjson.dumps({"p": session.principal, "s": session.sid, "e": session.expires_at}))
        kid, key = self._keys.current
        signed = f"v1.{kid}.{payload}"
        value = f"{signed}.{_b64(self._mac(key, signed.encode()))}"
        return session, self._cookie(value, self.ttl_s)

    def clear(self) -> str:
        return self._cookie("", 0)

    def _cookie(self, value: str, max_age: int) -> str:
        attrs = f"{COOKIE_NAME}={value}; Path=/connect; Max-Age={max_age}; HttpOnly; SameSite=Lax"
        return attrs + "; Secure" if self.secure else attrs

    def read(self, cookie: str | None) -> Session | None:
        """The session a cookie value proves, or None (absent, malformed, forged, expired)."""
        if not cookie:
            return None
        parts = cookie.split(".")
        if len(parts) != 4 or parts[0] != "v1":
            return None
        key = self._keys.get(parts[1])
        mac = _unb64(parts[3])
        if key is None or mac is None:
            return None
        if not hmac.compare_digest(self._mac(key, ".".join(parts[:3]).encode()), mac):
            return None
        raw = _unb64(parts[2])
        try:
            data = orjson.loads(raw or b"")
            session = Session(str(data["p"]), str(data["s"]), int(data["e"]))
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            return None
        return session if session.expires_at > clock.now() and session.principal else None

    def csrf(self, session: Session, ticket_id: str) -> str:
        """A token for forms on `ticket_id`'s page, valid only with this session."""
        return _b64(self._mac(self._keys.current[1], _csrf_input(session, ticket_id)))

    def check_csrf(self, session: Session, ticket_id: str, token: str) -> bool:
        for key in self._keys.all():
            expected = _b64(self._mac(key, _csrf_input(session, ticket_id)))
            if hmac.compare_digest(expected, token):
                return True
        return False


def _csrf_input(session: Session, ticket_id: str) -> bytes:
    return f"csrf\0{session.sid}\0{session.principal}\0{ticket_id}".encode()
