"""Sealing and opening `requestState` with AES-256-GCM under the key ring (protocol.md P11).

A token is `b1.<kid>.<base64url(nonce | ciphertext | tag)>`. The plaintext holds the flow id
(128 random bits), the round, the expiry and the journal. The audience, the principal and the
request itself (method, target, canonical arguments) are bound as associated data: they
are never in the token, and a token presented for another audience, principal, tool or argument
set fails authentication. Every failure raises `InvalidState` with the reason for the log only.
"""

from __future__ import annotations

import binascii
import functools
import struct
from dataclasses import dataclass, field
from functools import partial

from cryptography.exceptions import InvalidTag

from .clock import now as _now
from .entropy import random_bytes
from .journal import Journal
from .keys import KID_PATTERN, KeyRing

VERSION = "b1"
_HEADER = struct.Struct(">16sHI")  # flow id, round, expiry (unix seconds)
_NONCE = 12
DEFAULT_TTL_S = 600
DEFAULT_MAX_BYTES = 16 * 1024
_HEADS_MAX = 4096  # AAD heads remembered per sealer, the least recently used dropped first


_TO_URL = bytes.maketrans(b"+/", b"-_")
_FROM_URL = bytes.maketrans(b"-_", b"+/")


def _b64encode(raw: bytes) -> str:
    return binascii.b2a_base64(raw, newline=False).translate(_TO_URL).rstrip(b"=").decode()


_PAD = (b"", b"", b"==", b"=")  # by len % 4 (1 is never valid)
# The last character of an unpadded base64 text carries 2 (after 3 chars) or 4 (after 2) unused bits.
_UNUSED_BITS = {2: 0x0F, 3: 0x03}
_INDEX = {c: i for i, c in enumerate("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")}


def _b64decode_canonical(text: str) -> bytes | None:
    """Decode unpadded base64url, or None unless `text` is the one canonical spelling of its bytes."""
    rest = len(text) % 4
    # Strict decoding refuses whitespace and foreign characters; padding, "+" and "/" (the other
    # alphabet) and non-zero unused bits in the last character are the remaining other spellings.
    if rest == 1 or "=" in text or "+" in text or "/" in text:
        return None
    if rest and _INDEX.get(text[-1], 0) & _UNUSED_BITS[rest]:
        return None
    try:
        return binascii.a2b_base64(text.encode().translate(_FROM_URL) + _PAD[rest], strict_mode=True)
    except (binascii.Error, UnicodeEncodeError):
        return None


def _aad_head(audience: bytes, kid: str, principal: str) -> bytes:
    """The associated data before the request, length-prefixed: no two bindings give the same bytes."""
    parts = (VERSION.encode(), kid.encode(), audience, principal.encode())
    return b"".join(len(p).to_bytes(4, "big") + p for p in parts)


class InvalidState(Exception):
    """A `requestState` that cannot be trusted; `reason` is for the server log, never for the client."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class StateTooLarge(RuntimeError):
    """The journal of a flow outgrew the size cap; keep `ctx.once` results and answers small.

    `size` is the token's length and `cap` the sealer's `max_bytes` (protocol.md P102 says whose fault it is)."""

    def __init__(self, size: int, cap: int) -> None:
        super().__init__(
            f"requestState would be {size} bytes, over the cap of {cap}: "
            "keep ctx.once results and answers small, or raise state_max_bytes"
        )
        self.size = size
        self.cap = cap


@dataclass(slots=True)
class FlowState:
    """What a round hands to the next through the client."""

    flow_id: bytes = field(default_factory=partial(random_bytes, 16))
    round: int = 0
    journal: Journal = field(default_factory=Journal)
    expires: int = 0


class Sealer:
    """Seals and opens flow state for one server (one audience) under its key ring."""

    def __init__(
        self, ring: KeyRing, audience: str, *, ttl_s: int = DEFAULT_TTL_S, max_bytes: int = DEFAULT_MAX_BYTES
    ) -> None:
        self.ring = ring
        self.audience = audience.encode()
        self.ttl_s = ttl_s
        self.max_bytes = max_bytes
        # The associated data up to the request, by (key id, principal); the request goes last (its
        # length is the rest), so `_aad_head(kid, principal) + request` is the whole of it.
        self._aad_head = functools.lru_cache(maxsize=_HEADS_MAX)(partial(_aad_head, self.audience))

    def seal(self, state: FlowState, principal: str, request: bytes) -> str:
        """A token for `state`, bound to the principal and the request's canonical bytes (see `request_binding`)."""
        kid, cipher = self.ring.sealing()
        expires = int(_now()) + self.ttl_s
        plaintext = _HEADER.pack(state.flow_id, min(state.round, 0xFFFF), expires) + state.journal.dumps()
        nonce = random_bytes(_NONCE)
        sealed = nonce + cipher.encrypt(nonce, plaintext, self._aad_head(kid, principal) + request)
        token = f"{VERSION}.{kid}.{_b64encode(sealed)}"
        if len(token) > self.max_bytes:
            raise StateTooLarge(len(token), self.max_bytes)
        return token

    def open(self, token: object, principal: str, request: bytes) -> FlowState:
        if not isinstance(token, str):
            raise InvalidState("requestState is not a string")
        if len(token) > self.max_bytes:
            raise InvalidState(f"requestState of {len(token)} bytes is over the cap of {self.max_bytes}")
        version, _, rest = token.partition(".")
        kid, _, body = rest.partition(".")
        if version != VERSION or not body:
            raise InvalidState("requestState is not a Baton token of this version")
        cipher = self.ring.cipher(kid)
        if cipher is None:
            if not KID_PATTERN.match(kid):
                raise InvalidState("requestState has a malformed key id")
            raise InvalidState(f"requestState names key id {kid!r}, which is not in the key ring")
        # Only the canonical spelling opens: one state, one token string (ledgers may key on it).
        sealed = _b64decode_canonical(body)
        if sealed is None:
            raise InvalidState("requestState is not canonical base64url")
        if len(sealed) < _NONCE + 16 + _HEADER.size:
            raise InvalidState("requestState is truncated")
        try:
            plaintext = cipher.decrypt(sealed[:_NONCE], sealed[_NONCE:], self._aad_head(kid, principal) + request)
        except InvalidTag:
            raise InvalidState(
                "requestState failed authentication: tampered, or bound to another request, principal or audience"
            ) from None
        flow_id, round_, expires = _HEADER.unpack_from(plaintext)
        if _now() > expires:
            raise InvalidState(f"requestState expired {int(_now()) - expires} s ago")
        return FlowState(flow_id, round_, Journal.loads(plaintext[_HEADER.size :]), expires)
