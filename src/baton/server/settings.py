"""`ServerSettings`: how a `Server` was configured, beyond its name and handlers (one object, `server.settings`).

The keyword arguments of `Server(...)` land here as given, apart from the ones that are objects the runtime
holds (keys, the ledger, the principal hook, the connect kit). Transports and the replay engine read them;
`use_auth` and `baton serve --ask-timeout` change them before serving starts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .card import ServerCard
from .guard import ResourceAuth
from .ladder import HostQuirk, WhenUnasked


@dataclass(slots=True)
class ServerSettings:
    """What `Server(...)` was given, read by the runtime. `cache_scope` is "private" when callers are told
    apart (a principal hook or auth), since lists may then differ per caller (protocol.md P18)."""

    audience: str
    state_ttl_s: int
    state_max_bytes: int
    auth: ResourceAuth | None  # the OAuth protected resource (HTTP only), see guard.py
    list_ttl_ms: int
    cache_scope: Literal["public", "private"]
    page_size: int
    single_use: bool
    public_url: str | None  # where browsers reach this server (the connect kit's pages)
    session_ttl_s: int  # how long a 2025-11-25 session id opens (protocol.md P30)
    ask_timeout_s: float  # how long a 2025-11-25 request waits for an answer (P95)
    resume_window_s: float  # how long a question whose stream closed waits for a resume (P111)
    trace_arguments: bool  # tool arguments on spans, off by default (protocol.md P64)
    when_unasked: WhenUnasked = "error"  # tools' rung for a question the client cannot show (P139)
    host_quirks: tuple[HostQuirk, ...] = ()  # the quirk rows turned on (none by default, P140)
    card: ServerCard | None = None  # the server card published over HTTP (off by default, P194)
    task_ttl_ms: int = 3_600_000  # how long a task is kept after it was made (tasks extension, P165)
    task_poll_interval_ms: int = 1_000  # how often clients are told to poll a task
    task_lease_ms: int = 15_000  # how long a task's round is held by its instance without a heartbeat (P174)
    task_limit: int = 64  # tasks not yet ended one principal may hold (P208)
