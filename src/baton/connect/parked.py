"""The page rung's parked flows (protocol.md P145-P147): what waits in the server's ledger between a call
that stopped on a question the client cannot show and the next identical call.

A flow is named by its principal, its request binding (method, tool, canonical arguments: the bytes a
`requestState` is bound to) and a generation. Its records, each written once (a ledger claim, then its
record), are:

- `link` at step n: the n-th question it stopped on, the journal up to it (answers, `ctx.once` results)
  and the page ticket (a form) or the URL itself (URL mode). It lives as long as the ticket;
- `answer` at step n: that journal with the person's answer (written by the page, `ask_page.py`). It
  lives `flow_ttl_s`;
- `end`: the flow completed after going on from its records; the next identical call starts the next
  generation, so a finished flow is never replayed.

A client that can show a waiting question itself (it declared its mode) is asked it there, from the
same journal, rather than given the link again; a client that renders Baton's ask app gets the question
in it (P213): a form question parked for the app also has a ticket of its own (`APP_PURPOSE`), which only
the app-only answer tool takes, never the page, and which is never in the text the model reads.

Record ids are SHA-256 of a label, the length-prefixed principal, the binding, the generation and the
step: one principal's call never finds another's records (the ledger also binds each record to its
principal's digest). Values are sealed with AES-GCM under a key derived from the server's key ring, with
the id as associated data, so the store holds no answer in clear and no record moves to another id.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import orjson
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from ..forms.parse import parse_schema
from ..protocol.capabilities import required_capability
from ..protocol.errors import CapabilityMissing
from ..render.html import form_html
from ..server.parts import Link
from ..server.results import ToolError
from ..state import clock
from ..state.journal import Journal
from ..state.keys import KeyRing
from ..state.ledger import ClaimStatus, Ledger
from .derived import DerivedKeys
from .tickets import mint

if TYPE_CHECKING:
    from .kit import ConnectKit

LABEL = "baton ask page"
PURPOSE = "ask"  # the page ticket's purpose: the connect pages show the question (ask_page.py)
APP_PURPOSE = "ask-app"  # the ask app's ticket: only the answer tool takes it (P215), never the pages
DEFAULT_PAGE_TTL_S = 3600
"""How long a page link stays valid by default: an hour, for a person (`ConnectKit(page_ttl_s=...)`)."""
DEFAULT_FLOW_TTL_S = 24 * 3600
"""How long answers given on a page wait for the next identical call (`ConnectKit(flow_ttl_s=...)`)."""
MAX_TTL_S = 7 * 24 * 3600  # the bound on both
MAX_STEPS = 32  # questions on pages per flow
MAX_GENERATIONS = 64  # completed flows with the same arguments within `flow_ttl_s`
_PEEK_S = 60.0  # how long a read's transient claim could live if its release were lost


class PageRecords:
    """The sealed, write-once records of parked flows in a ledger."""

    def __init__(self, ring: KeyRing, ledger: Callable[[], Ledger]) -> None:
        self._keys = DerivedKeys(ring, LABEL)
        self._ledger = ledger

    @staticmethod
    def rid(kind: str, principal: str, binding: bytes, generation: int, step: int) -> bytes:
        """The ledger id of one record."""
        p = principal.encode()
        head = f"{LABEL}\0{kind}\0{generation}\0{step}\0".encode()
        return hashlib.sha256(head + len(p).to_bytes(4, "big") + p + binding).digest()

    def _seal(self, rid: bytes, data: dict[str, Any]) -> bytes:
        kid, key = self._keys.current
        nonce = os.urandom(12)
        return bytes([len(kid)]) + kid.encode() + nonce + AESGCM(key).encrypt(nonce, orjson.dumps(data), rid)

    def _open(self, rid: bytes, blob: bytes) -> dict[str, Any] | None:
        if not blob:
            return None
        kid = blob[1 : 1 + blob[0]].decode("ascii", "replace")
        body = blob[1 + blob[0] :]
        key = self._keys.get(kid)
        if key is None:
            return None
        try:
            data = orjson.loads(AESGCM(key).decrypt(body[:12], body[12:], rid))
        except (InvalidTag, orjson.JSONDecodeError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    async def read(self, rid: bytes, principal: str) -> dict[str, Any] | None:
        """The record at `rid` written for `principal`, or None. A ledger answers only by claiming: a miss is
        claimed and released at once."""
        ledger = self._ledger()
        claim = await ledger.claim(rid, principal, clock.now() + _PEEK_S)
        if claim.status is ClaimStatus.FRESH:
            await ledger.release(rid, principal)
            return None
        if claim.status is ClaimStatus.DONE and claim.result is not None:
            return self._open(rid, claim.result)
        return None  # being written right now, or (never, by its id) another principal's

    async def write(self, rid: bytes, principal: str, data: dict[str, Any], ttl_s: float) -> dict[str, Any] | None:
        """Write the record once; returns what is there now: `data`, the record written first by a concurrent
        call, or None while that one is still being written."""
        ledger = self._ledger()
        expires_at = clock.now() + ttl_s
        claim = await ledger.claim(rid, principal, expires_at)
        if claim.status is ClaimStatus.FRESH:
            await ledger.record(rid, principal, self._seal(rid, data), expires_at)
            return data
        if claim.status is ClaimStatus.DONE and claim.result is not None:
            return self._open(rid, claim.result)
        return None


class ParkedFlow:
    """One call's flow on the page rung (`baton.server.parts.PageFlow`), for its principal and binding."""

    def __init__(
        self,
        kit: ConnectKit,
        records: PageRecords,
        principal: str,
        binding: bytes,
        deliver: Callable[[dict[str, Any]], str],
        *,
        pages: bool = True,
    ) -> None:
        self.pages = pages  # the server has a public URL to give pages under (else only the ask app, P216)
        self._kit = kit
        self._records = records
        self._principal = principal
        self._binding = binding
        self._deliver = deliver  # the ladder's rung for a question, for this call's client
        self._generation = 0
        self._step = 0
        self._touched = False  # this call went on from records of its generation

    def _rid(self, kind: str, step: int | None = None) -> bytes:
        return self._records.rid(
            kind, self._principal, self._binding, self._generation, self._step if step is None else step
        )

    async def resume(self) -> Journal | Link:
        records, principal = self._records, self._principal
        self._generation = 0
        while await records.read(self._rid("end", 0), principal) is not None:
            self._generation += 1
            if self._generation >= MAX_GENERATIONS:
                raise ToolError(
                    "This tool was completed with the same arguments too many times today through the server's "
                    "page; try again later."
                )
        journal = Journal()
        for step in range(MAX_STEPS):
            self._step = step
            answer = await records.read(self._rid("answer"), principal)
            if answer is not None:
                journal = Journal.loads(answer["j"].encode())
                self._touched = True
                continue
            link = await records.read(self._rid("link"), principal)
            if link is None:
                return journal
            self._touched = True
            journal = Journal.loads(link["j"].encode())
            if link["t"] or link.get("x"):  # a form
                delivery = self._deliver(link["r"])
                if delivery == "native":  # this client shows it itself: ask it there, from the same journal
                    return journal
                if delivery == "app" and link.get("x"):  # P213: the ask app again, with its ticket
                    return Link(link["u"], link["m"], ask_for_app(link["x"], link["r"], link["m"], link["u"]))
                if not link["t"]:  # P216: parked for the app alone (no public URL), and this client shows no app
                    raise CapabilityMissing(required_capability(link["r"]))
                return Link(link["u"], link["m"])  # a form on the page, not answered yet: the same link again
            # URL mode: the link was the page itself (the connect page); opening it is the answer.
            journal.answers[link["k"]] = (link["d"], {"action": "accept"})
        self._step = MAX_STEPS
        return journal

    async def park(self, key: str, digest: str, request: dict[str, Any], journal: Journal, app: bool = False) -> Link:
        if self._step >= MAX_STEPS:
            raise ToolError(f"This tool asked more than {MAX_STEPS} questions on the server's page in one call.")
        kit = self._kit
        params = request.get("params") or {}
        message = str(params.get("message", ""))
        rid = self._rid("link")
        ticket_id = app_ticket = url = ""
        if params.get("mode") == "url":
            url = str(params["url"])
        else:
            if self.pages:
                ticket = mint(self._principal, rid, PURPOSE, kit.page_ttl_s)
                await kit.tickets.put(ticket)
                ticket_id = ticket.id
                url = f"{kit.base_url}/connect/{ticket.id}"
            if app:  # P215: the app's own ticket, so that the page's link never answers through a tool
                shown = mint(self._principal, rid, APP_PURPOSE, kit.page_ttl_s)
                await kit.tickets.put(shown)
                app_ticket = shown.id
        data = {
            "k": key,
            "d": digest,
            "r": request,
            "m": message,
            "j": journal.dumps().decode(),
            "t": ticket_id,
            "x": app_ticket,
            "u": url,
            "a": self._rid("answer").hex(),
            "ttl": kit.flow_ttl_s,
        }
        held = await self._records.write(rid, self._principal, data, kit.page_ttl_s)
        if held is None:  # an identical call is parking this very question now
            raise ToolError("This tool is already waiting for the same question; call it again in a moment.")
        if app and held.get("x"):
            return Link(
                str(held["u"]), str(held["m"]), ask_for_app(str(held["x"]), held["r"], str(held["m"]), str(held["u"]))
            )
        return Link(str(held["u"]), str(held["m"]))

    async def finish(self) -> None:
        if self._touched:  # it went on from records of this generation: close it
            await self._records.write(self._rid("end", 0), self._principal, {}, self._kit.flow_ttl_s)


def ask_for_app(ticket: str, request: dict[str, Any], message: str, url: str) -> dict[str, Any]:
    """What the ask app is given for a parked form question (P213): the message, the form as the server's
    page renders it (`baton.render.html`, the same fields and rules), the app's ticket, and the page's link
    for a host that lets the app open links but not call tools (it asks the person to sign in, P216)."""
    spec = parse_schema(request["params"]["requestedSchema"])
    return {"ticket": ticket, "message": message, "form": form_html(spec, prefix="ask", label=message), "page": url}


async def give_answer(records: PageRecords, principal: str, link: dict[str, Any], answer: dict[str, Any]) -> bool:
    """Record the person's answer to a parked question (the page calls it once its ticket is spent): the link's
    journal with the answer added, for the next identical call. False if an answer is already there."""
    journal = Journal.loads(str(link["j"]).encode())
    journal.answers[str(link["k"])] = (str(link["d"]), answer)
    rid = bytes.fromhex(str(link["a"]))
    data = {"j": journal.dumps().decode()}
    held = await records.write(rid, principal, data, float(link["ttl"]))
    return held is data
