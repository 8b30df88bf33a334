"""Testing tools that ask, in process: Baton's in-memory client, a scripted user, a fake clock, and checks.

- `memory_client(server, user)`: a `baton.client.Client` bound to a `Server` without sockets, in either era
  (`MemoryTransport` is its transport);
- `ScriptedUser`: answers questions by key or predicate (`Accepted`, `Declined`, `Cancelled`,
  `Invalid`, `Connected` for a connect page), records what was asked, fails on a question it has no
  script for; `store_credential` fills the vault beforehand instead;
- `FakeClock`: the wall clock every expiry reads, moved by hand;
- `check_refusals` and `check_tampering`: a flow never acts on a refusal, and never trusts a mutated
  `requestState`.

The pytest plugin (`baton.testing.plugin`, loaded by entry point) provides them as fixtures. See
docs/testing.md.
"""

from typing import TYPE_CHECKING

from ..lazy_exports import lazy_exports

if TYPE_CHECKING:
    from ..forms import Accepted, Cancelled, Declined
    from .checks import Outcome, check_refusals, check_tampering
    from .clock import FakeClock
    from .memory import MemorySession, MemoryTransport, memory_client, store_credential
    from .user import Asked, Connected, Invalid, ScriptedUser, UnexpectedQuestion

# Imported on first use (baton.lazy_exports): pytest loads `baton.testing.plugin`, in this package, in every
# test run of a project that installs Baton, used or not.
_WHERE = {
    "Accepted": "..forms",
    "Cancelled": "..forms",
    "Declined": "..forms",
    "Outcome": ".checks",
    "check_refusals": ".checks",
    "check_tampering": ".checks",
    "FakeClock": ".clock",
    "MemorySession": ".memory",
    "MemoryTransport": ".memory",
    "memory_client": ".memory",
    "store_credential": ".memory",
    "Asked": ".user",
    "Connected": ".user",
    "Invalid": ".user",
    "ScriptedUser": ".user",
    "UnexpectedQuestion": ".user",
}
__getattr__, __dir__ = lazy_exports(__name__, _WHERE)

__all__ = [
    "Accepted",
    "Asked",
    "Cancelled",
    "Connected",
    "Declined",
    "FakeClock",
    "Invalid",
    "MemorySession",
    "MemoryTransport",
    "Outcome",
    "ScriptedUser",
    "UnexpectedQuestion",
    "check_refusals",
    "check_tampering",
    "memory_client",
    "store_credential",
]
