"""Opening `requestState`: any text, under a key ring the input chooses (one to three keys, rotated), for any
principal and request binding; and a state sealed from the input's journal opens back to it."""

from __future__ import annotations

import atheris

from baton.state.journal import Journal
from baton.state.keys import Key, KeyRing, KeyRingError
from baton.state.seal import FlowState, InvalidState, Sealer, StateTooLarge

from ..harness import Finding, Target


def ring_of(fdp: atheris.FuzzedDataProvider) -> KeyRing:
    count = fdp.ConsumeIntInRange(1, 3)
    return KeyRing([Key(f"k{i}", fdp.ConsumeBytes(32).ljust(32, b"\0")) for i in range(count)])


def one(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    mode = fdp.ConsumeIntInRange(0, 2)
    sealer = Sealer(ring_of(fdp), fdp.ConsumeUnicodeNoSurrogates(24), max_bytes=fdp.ConsumeIntInRange(64, 16384))
    principal = fdp.ConsumeUnicodeNoSurrogates(16)
    request = fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 64))
    if mode == 0:  # any token at all
        sealer.open(fdp.ConsumeUnicodeNoSurrogates(fdp.remaining_bytes()), principal, request)
    elif mode == 1:  # a key file's text
        KeyRing.from_text(fdp.ConsumeUnicodeNoSurrogates(fdp.remaining_bytes()), "fuzz")
    else:  # a real token, then the same one opened after the ring rotated a new key in front
        journal = Journal(once={"k": fdp.ConsumeUnicodeNoSurrogates(64)})
        token = sealer.seal(FlowState(journal=journal), principal, request)
        rotated = Sealer(KeyRing([Key("new", bytes(32)), *sealer.ring.keys]), sealer.audience.decode())
        opened = rotated.open(token, principal, request)
        if opened.journal.once != journal.once:
            raise Finding("a sealed state opened to another journal")
        try:
            rotated.open(token, principal + "x", request)
        except InvalidState:
            return
        raise Finding("a state opened for another principal")


TARGET = Target(
    "request_state", "requestState opening: any text, any key ring", one, (InvalidState, KeyRingError, StateTooLarge)
)
