"""One-time connect tickets: bound to (principal, flow id, purpose), expiring, stored server-side.

A ticket id is 192 random bits, base64url (32 characters), and is the only thing a connect URL
carries. `complete` is atomic: a ticket is done at most once, only by its own principal, only
before it expires. Stores: `MemoryTickets` (tests, one process) and `SqliteTickets` (one host).
"""

from __future__ import annotations

import abc
import os
import re
import secrets
import sqlite3
from dataclasses import dataclass, replace

from ..state import clock
from ..state.sqlite_file import SqliteFile

TICKET_PATTERN = re.compile(r"[A-Za-z0-9_-]{32}\Z")
DEFAULT_TICKET_TTL_S = 600


@dataclass(frozen=True, slots=True, kw_only=True)
class Ticket:
    id: str
    principal: str
    flow_id: bytes
    purpose: str
    expires_at: float
    done: bool = False

    def binds(self, principal: str, flow_id: bytes, purpose: str) -> bool:
        return (self.principal, self.flow_id, self.purpose) == (principal, flow_id, purpose)


def mint(principal: str, flow_id: bytes, purpose: str, ttl_s: float = DEFAULT_TICKET_TTL_S) -> Ticket:
    """A fresh ticket (not yet stored)."""
    return Ticket(
        id=secrets.token_urlsafe(24),
        principal=principal,
        flow_id=flow_id,
        purpose=purpose,
        expires_at=clock.now() + ttl_s,
    )


def well_formed(ticket_id: str) -> bool:
    return bool(TICKET_PATTERN.match(ticket_id))


class TicketStore(abc.ABC):
    """Where tickets live between the MCP flow and the browser."""

    @abc.abstractmethod
    async def put(self, ticket: Ticket) -> None: ...

    @abc.abstractmethod
    async def get(self, ticket_id: str) -> Ticket | None:
        """The live ticket (done or not), or None if unknown or expired."""

    @abc.abstractmethod
    async def complete(self, ticket_id: str, principal: str) -> bool:
        """Mark the ticket done if it is live, not done, and `principal`'s; True only for that one call."""

    async def close(self) -> None:
        return None


class MemoryTickets(TicketStore):
    def __init__(self) -> None:
        self._tickets: dict[str, Ticket] = {}

    async def put(self, ticket: Ticket) -> None:
        now = clock.now()
        self._tickets = {k: t for k, t in self._tickets.items() if t.expires_at > now}
        self._tickets[ticket.id] = ticket

    async def get(self, ticket_id: str) -> Ticket | None:
        ticket = self._tickets.get(ticket_id)
        return ticket if ticket is not None and ticket.expires_at > clock.now() else None

    async def complete(self, ticket_id: str, principal: str) -> bool:
        ticket = await self.get(ticket_id)  # no await between the check and the update: atomic in one loop
        if ticket is None or ticket.done or ticket.principal != principal:
            return False
        self._tickets[ticket_id] = replace(ticket, done=True)
        return True


_SCHEMA = """
CREATE TABLE IF NOT EXISTS baton_tickets (
    id TEXT PRIMARY KEY,
    principal TEXT NOT NULL,
    flow_id BLOB NOT NULL,
    purpose TEXT NOT NULL,
    expires_at REAL NOT NULL,
    done INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
"""


class SqliteTickets(TicketStore):
    """Tickets in a SQLite file shared by the worker processes of one host; its errors raise `StoreUnavailable`."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._file = SqliteFile(path, _SCHEMA, what="ticket store")

    async def put(self, ticket: Ticket) -> None:
        def op(db: sqlite3.Connection) -> None:
            db.execute("DELETE FROM baton_tickets WHERE expires_at <= ?", (clock.now(),))
            db.execute(
                "INSERT INTO baton_tickets VALUES (?, ?, ?, ?, ?, ?)",
                (ticket.id, ticket.principal, ticket.flow_id, ticket.purpose, ticket.expires_at, int(ticket.done)),
            )

        await self._file.run(op)

    async def get(self, ticket_id: str) -> Ticket | None:
        def op(db: sqlite3.Connection) -> Ticket | None:
            row = db.execute(
                "SELECT principal, flow_id, purpose, expires_at, done FROM baton_tickets "
                "WHERE id = ? AND expires_at > ?",
                (ticket_id, clock.now()),
            ).fetchone()
            if row is None:
                return None
            return Ticket(
                id=ticket_id,
                principal=row[0],
                flow_id=bytes(row[1]),
                purpose=row[2],
                expires_at=row[3],
                done=bool(row[4]),
            )

        return await self._file.run(op)

    async def complete(self, ticket_id: str, principal: str) -> bool:
        def op(db: sqlite3.Connection) -> bool:
            cur = db.execute(
                "UPDATE baton_tickets SET done = 1 WHERE id = ? AND principal = ? AND done = 0 AND expires_at > ?",
                (ticket_id, principal, clock.now()),
            )
            return cur.rowcount == 1

        return await self._file.run(op)

    async def close(self) -> None:
        await self._file.close()
