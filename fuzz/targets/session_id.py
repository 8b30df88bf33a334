"""Opening an `Mcp-Session-Id`: any text, for any principal, and ids minted from the input's client info."""

from __future__ import annotations

import atheris

from baton.protocol.capabilities import ClientCapabilities
from baton.server.sessions import ServerSession, SessionSeal
from baton.state.keys import Key, KeyRing

from ..harness import Finding, Target

SEAL = SessionSeal(KeyRing([Key("s1", bytes(32)), Key("s0", bytes(range(32)))]), "http://127.0.0.1/mcp")


def one(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    principal = fdp.ConsumeUnicodeNoSurrogates(8)
    if fdp.ConsumeBool():
        SEAL.open(fdp.ConsumeUnicodeNoSurrogates(fdp.remaining_bytes()), principal)
        return
    caps = ClientCapabilities.parse({"elicitation": {}} if fdp.ConsumeBool() else {})
    info = {"name": fdp.ConsumeUnicodeNoSurrogates(128), "version": fdp.ConsumeUnicodeNoSurrogates(16)}
    token = SEAL.mint(ServerSession(principal, "2025-11-25", caps, info))
    session = SEAL.open(token, principal)
    if session is None or session.client_info != info:
        raise Finding("a minted session id did not open to its session")
    if SEAL.open(token, principal + "?") is not None:
        raise Finding("a session id opened for another principal")


TARGET = Target("session_id", "Mcp-Session-Id opening", one)
