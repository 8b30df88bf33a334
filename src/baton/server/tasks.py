"""Tasks (the `io.modelcontextprotocol/tasks` extension, SEP-2663) on the server: the task board that makes a
call a task, runs its rounds in the background, and answers `tasks/get`, `tasks/update` and `tasks/cancel`.

A task is a flow whose rounds are driven by `tasks/update` instead of retries (protocol.md P165-P170): each
round replays the handler from the top over the task's journal (`ReplayEngine.task_round`), so the author's
`await ctx.elicit(...)` is the same code in a task. A round that asks parks the task in `input_required`
with its `inputRequests`; `tasks/update` collects the answers, and once every pending ask is answered the
next round runs. Task ids are unguessable (192 random bits) and bound to the principal that made them:
another principal's id is "not found", as an unknown one is (-32602). Records are kept `ttlMs` from their
creation, then purged (a task still running then is cancelled).

Every change of a task is written to the task store (`baton.state.task_store`, beside the ledger: SQLite by
default, Redis for many instances) before the request that made it is answered; this instance keeps in
memory only the tasks whose round runs here. So any instance answers `tasks/get`, and `tasks/update` on any
instance runs the next round there, rebuilding the call from the record (protocol.md P172). Records are
sealed at rest (P207); a periodic sweep resumes the rounds whose instance died and purges expired records
(P206); a principal may hold `Server(task_limit=...)` tasks not yet ended (P208). The 2025-11-25 era reaches
the same tasks through `lookup`, `answer`, `stop` and `listed` (`baton.server.tasks_handshake`, P205).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import orjson

from ..protocol.capabilities import ClientCapabilities
from ..protocol.constants import HANDSHAKE_VERSION, META_CLIENT_CAPABILITIES, PROTOCOL_VERSION
from ..protocol.errors import INTERNAL_ERROR, INVALID_REQUEST, McpError, invalid_params, method_not_found
from ..protocol.extensions import Extensions, negotiated
from ..protocol.messages import Message
from ..protocol.tasks import TASKS, TERMINAL, required_error, task_id_of, timestamp
from ..state import clock
from ..state.journal import Journal
from ..state.ledger import principal_tag
from ..state.seal import FlowState
from ..state.store_url import StoreUnavailable
from ..state.task_seal import TaskSeal
from ..state.task_store import TaskStore, TooManyTasks
from .exchange import Exchange, RequestInfo
from .ladder import handler_arguments
from .registry import Flow, RegisteredTool
from .signature import ArgumentError

log = logging.getLogger("baton.server")

DEFAULT_TASK_TTL_MS = 3_600_000
DEFAULT_POLL_INTERVAL_MS = 1_000
DEFAULT_LEASE_MS = 15_000
DEFAULT_TASK_LIMIT = 64  # tasks not yet ended per principal (protocol.md P208)
SWEEP_BATCH = 32  # orphaned rounds one sweep resumes at most
MAX_CONFLICTS = 5  # writes retried over a newer record before a request gives up


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskJob:
    """What every round of one task needs, fixed when the task is made: the flow, its target and checked
    arguments, the request's params (its `_meta` and arguments), a detached exchange (no stream: the request
    that made the task has ended), the client's capabilities, and the flow state whose journal the rounds
    replay over."""

    flow: Flow
    target: str
    kwargs: dict[str, Any]
    params: dict[str, Any]
    exchange: Exchange
    caps: ClientCapabilities
    state: FlowState


Settled = tuple[str, dict[str, Any]]
"""What a round ends in: ("input_required", inputRequests), ("completed", result) or ("failed", error)."""


class RoundRunner(Protocol):
    """The replay engine's side of a task: runs one round over the task's journal."""

    async def task_round(
        self,
        job: TaskJob,
        responses: dict[str, Any],
        status: Callable[[str], None],
        checkpoint: Callable[[], Awaitable[None]],
    ) -> Settled: ...


@dataclass(slots=True, kw_only=True)
class Task:
    """One task's record: who made it, where it is, and what a round left for `tasks/get`. `job` is None for a
    task read from the store and not (yet) run here.

    The one record that changes after it is made: it is the task's live state on this instance (its status,
    lease and runner move as rounds run), written to the store with `version` checked on every write."""

    task_id: str
    tag: bytes  # the principal's tag (`principal_tag`), never the principal itself
    job: TaskJob | None
    created: float
    expires: float  # unix seconds after which the record is purged
    target: str = ""
    params: dict[str, Any] = field(default_factory=dict)  # the call's params, to rebuild its job elsewhere
    updated: float = 0.0
    status: str = "working"
    message: str | None = None
    input_requests: dict[str, Any] = field(default_factory=dict)
    responses: dict[str, Any] = field(default_factory=dict)  # answers gathered for the pending asks
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    runner: asyncio.Task[None] | None = None
    version: int = 0  # the record's version this copy was read as or last wrote (0: not yet written)
    owner: str = ""  # the instance whose lease runs the task's round (protocol.md P174)
    lease: float = 0.0  # unix seconds until which that instance holds it, renewed by its heartbeat
    saved_state: FlowState | None = None  # the flow state read from the record, while no job holds it
    who: dict[str, Any] = field(default_factory=dict)  # the call's exchange, for a round the sweep resumes

    @property
    def state(self) -> FlowState:
        """The flow state the task's rounds replay over."""
        if self.job is not None:
            return self.job.state
        assert self.saved_state is not None, "a task has a job or a saved state"
        return self.saved_state


def detached(ex: Exchange) -> Exchange:
    """The request's exchange without its stream: a task's rounds run after the request that made it."""
    return Exchange(
        info=RequestInfo(ex.info.transport),
        principal=ex.principal,
        scopes=ex.scopes,
        protocol_version=ex.protocol_version,
        client_info=ex.client_info,
    )


class TaskBoard:
    """One server's tasks, in this process (protocol.md P165)."""

    def __init__(
        self,
        engine: RoundRunner,
        offered: Callable[[], Extensions],
        store: Callable[[], TaskStore],
        tools: Callable[[str], RegisteredTool | None],
        seal: TaskSeal,
        server: str,
        *,
        ttl_ms: int = DEFAULT_TASK_TTL_MS,
        poll_interval_ms: int = DEFAULT_POLL_INTERVAL_MS,
        lease_ms: int = DEFAULT_LEASE_MS,
        limit: int = DEFAULT_TASK_LIMIT,
    ) -> None:
        self._engine = engine
        self._seal = seal
        self.server = server  # the server's name, kept in its records: the sweep resumes only its own
        self.limit = limit
        self._sweeping: asyncio.Task[None] | None = None
        self.lease_s = lease_ms / 1000
        self.instance = secrets.token_hex(8)  # this board's name in the leases it holds
        self._beating: asyncio.Task[None] | None = None
        self._offered = offered
        self._store = store
        self._tools = tools
        self.ttl_ms = ttl_ms
        self.poll_interval_ms = poll_interval_ms
        self._live: dict[str, Task] = {}  # the tasks whose round runs in this process

    def __len__(self) -> int:
        return len(self._live)

    # -- making a task ------------------------------------------------------------------------------

    async def create(self, job: TaskJob) -> dict[str, Any]:
        """Make `job` a task, start its first round, and answer the `CreateTaskResult`: the record exists
        before the answer leaves, so a `tasks/get` right after it finds the task."""
        tag = principal_tag(job.exchange.principal)
        now = clock.now()
        task_id = secrets.token_urlsafe(24)  # protocol.md P168: unguessable; bound to the principal below
        job.state.journal.pending = {}
        params = {k: v for k, v in job.params.items() if k not in ("inputResponses", "requestState", "task")}
        if job.exchange.protocol_version == HANDSHAKE_VERSION:  # a session's capabilities, for a round elsewhere
            params["_meta"] = {**params.get("_meta", {}), META_CLIENT_CAPABILITIES: job.caps.raw or {}}
        task = Task(
            task_id=task_id,
            tag=tag,
            job=job,
            created=now,
            expires=now + self.ttl_ms / 1000,
            target=job.target,
            params=params,
            updated=now,
            who={**_who(job.exchange), "server": self.server},
        )
        self._lease(task)
        try:  # durable before the answer leaves: a tasks/get right after it finds it
            saved = await self._save(task, limit=self.limit)
        except TooManyTasks as exc:
            raise self._too_many(exc.live) from None
        if not saved:
            raise McpError(INTERNAL_ERROR, "Internal error: a task id was taken; call the tool again")
        self._start(task)
        return self.envelope(task, "task")

    def _too_many(self, live: int) -> McpError:
        """protocol.md P208: a principal holds at most `limit` tasks not yet ended; one more is refused."""
        return McpError(
            INVALID_REQUEST,
            f"Too many tasks: you have {live} tasks not yet ended, the most this server keeps for one caller "
            f"(Server(task_limit={self.limit})); wait for one to end, or cancel one with tasks/cancel, then "
            "call again",
            {"liveTasks": live, "taskLimit": self.limit},
        )

    def _lease(self, task: Task) -> None:
        """This instance runs the task's next round: its lease, written with the task's next save."""
        task.status, task.updated = "working", clock.now()
        task.owner, task.lease = self.instance, task.updated + self.lease_s

    def _start(self, task: Task) -> None:
        """Run the task's next round here (its lease already written)."""
        self._live[task.task_id] = task
        task.runner = asyncio.get_running_loop().create_task(self._advance(task), name=f"baton task {task.task_id}")
        if self._beating is None or self._beating.done():
            self._beating = asyncio.get_running_loop().create_task(self._heartbeat(), name="baton task leases")
        self.sweep()

    def sweep(self) -> None:
        """Start this instance's sweep, if not running (protocol.md P206): every lease, the records of expired
        tasks are purged and the rounds whose instance died (a lease run out, not renewed) run again here,
        whether or not anyone polls them."""
        if self._sweeping is None or self._sweeping.done():
            self._sweeping = asyncio.get_running_loop().create_task(self._sweep(), name="baton task sweep")

    async def _sweep(self) -> None:
        while True:
            await asyncio.sleep(self.lease_s)
            try:
                await self.sweep_once()
            except StoreUnavailable as exc:
                log.error("tasks: the sweep cannot reach the task store: %s", exc)

    async def sweep_once(self) -> int:
        """One sweep: purge expired records, resume orphaned rounds here; how many it resumed. A store shared
        with other servers (the default data directory's) holds their tasks too: those are left to them."""
        store = self._store()
        await store.purge()
        resumed = left = 0
        while True:
            found = await store.orphans(SWEEP_BATCH, left)
            for task_id in found:
                task = None if task_id in self._live else await self._load(task_id)
                orphan = task is not None and task.who.get("server") == self.server and task.status == "working"
                if orphan and task is not None and task.lease < clock.now() and await self._take_over(task, None):
                    resumed += 1  # no longer an orphan
                else:
                    left += 1  # another server's, running here, or changed meanwhile: the next page skips it
            if len(found) < SWEEP_BATCH:
                return resumed

    async def _advance(self, task: Task) -> None:
        """Run one round of `task` and record where it ended."""
        responses, task.responses = task.responses, {}
        assert task.job is not None  # set before a round starts
        try:
            status, payload = await self._engine.task_round(
                task.job, responses, lambda m: self._said(task, m), lambda: self._checkpoint(task)
            )
        except asyncio.CancelledError:
            self._live.pop(task.task_id, None)
            return  # tasks/cancel (or the expiry) has set the status already
        except Exception as exc:  # a fault of Baton's own: the task fails, the server goes on
            log.error("task %s of tools/call %r raised", task.task_id, task.target, exc_info=exc)
            status, payload = "failed", McpError(INTERNAL_ERROR, "Internal error while running the task").to_dict()
        task.runner = None
        self._live.pop(task.task_id, None)
        if task.status == "cancelled":
            return
        task.status, task.updated, task.lease = status, clock.now(), 0.0
        if status == "input_required":
            task.input_requests = payload
        elif status == "completed":
            task.result = payload
        else:
            task.error = payload
        try:
            if not await self._save(task):
                log.warning("task %s: its round ended here, but it was cancelled or taken over", task.task_id)
        except StoreUnavailable as exc:
            log.error("task %s: its record cannot be written: %s", task.task_id, exc)

    async def _checkpoint(self, task: Task) -> None:
        """After a `ctx.once` step of a running round: its result is written at once, so an instance that
        takes the task over does not run the step again (protocol.md P174)."""
        try:
            await self._renew(task)
        except StoreUnavailable as exc:
            log.error("task %s: its record cannot be written: %s", task.task_id, exc)

    async def _heartbeat(self) -> None:
        """Renew the leases of the rounds running here (with their journal), every third of a lease; a task
        cancelled or taken over elsewhere stops here."""
        while self._live:
            await asyncio.sleep(self.lease_s / 3)
            for task in list(self._live.values()):
                try:
                    await self._renew(task)
                except StoreUnavailable as exc:
                    log.error("task %s: its lease cannot be renewed: %s", task.task_id, exc)

    async def _renew(self, task: Task) -> None:
        """Write a running task's lease and journal; if another instance changed the record meanwhile (a
        cancel, a takeover), the running round stops here."""
        task.lease = clock.now() + self.lease_s
        if await self._save(task) or task.task_id not in self._live:
            return
        fresh = await self._load(task.task_id)
        if fresh is not None and fresh.status == "working" and fresh.owner == self.instance:
            task.version = fresh.version  # our own earlier write raced this one: write again next beat
            return
        log.info("task %s: cancelled or taken over by another instance; its round stops here", task.task_id)
        task.status = fresh.status if fresh is not None else "cancelled"
        self._live.pop(task.task_id, None)
        if task.runner is not None:
            task.runner.cancel()

    def _said(self, task: Task, message: str) -> None:
        task.message, task.updated = message, clock.now()

    # -- the methods --------------------------------------------------------------------------------

    def _named(self, msg: Message, caps: ClientCapabilities) -> str:
        """The task id a tasks/* request names, after the gates: the server offers the extension (else -32601),
        the client declared it (else -32021), and the id is a string (else -32602)."""
        offered = self._offered()
        if TASKS not in offered:
            raise method_not_found(msg.method)
        if negotiated(offered, caps.extensions, TASKS) is None:
            raise required_error(msg.method)
        task_id = task_id_of(msg.params)
        if task_id is None:
            raise invalid_params(f'Invalid params: {msg.method} needs "taskId" (a string)')
        return task_id

    async def lookup(self, task_id: str, ex: Exchange) -> Task:
        """The task `task_id` of the request's principal, whatever the era (else -32602, P168); a working task
        whose lease ran out is taken over here first (P174)."""
        task = self._live.get(task_id)
        if task is None:
            try:
                task = await self._load(task_id)
            except StoreUnavailable as exc:
                log.error("tasks: %s", exc)
                raise McpError(INTERNAL_ERROR, "The task store cannot be reached now; try again later") from None
        elif task.expires <= clock.now():
            self._cancel(task)
            task = None
        if task is None or task.tag != principal_tag(ex.principal):  # P168: another's task is not found
            raise invalid_params(f"Task not found: {task_id!r} (unknown, expired, or not yours)")
        if task.status == "working" and task.task_id not in self._live and task.lease < clock.now():
            await self._take_over(task, ex)
        return task

    async def _load(self, task_id: str) -> Task | None:
        found = await self._store().get(task_id)
        if found is None:
            return None
        tag, version, sealed = found
        record = self._seal.open(task_id, tag, sealed)
        if record is None:  # sealed under a key no longer in the ring, or not a record of this task (P207)
            log.warning("task %s: its record does not open with this server's keys; read as gone", task_id)
            return None
        return _decoded(task_id, tag, version, record)

    async def _take_over(self, task: Task, ex: Exchange | None) -> int:
        """A working task whose lease ran out: the instance that ran it is gone. Its round runs again here,
        replaying over the journal last written (protocol.md P174); if another instance took it first, this
        one leaves it. Without a request (the sweep, P206), the call's own exchange is rebuilt from the record."""
        if not self._rebuilt(task, ex):
            await self._save(task)
            return 0
        self._lease(task)
        if await self._save(task):
            log.info("task %s: its instance stopped renewing its lease; its round runs again here", task.task_id)
            self._start(task)
            return 1
        return 0

    async def get(self, msg: Message, ex: Exchange, caps: ClientCapabilities) -> dict[str, Any]:
        return self.envelope(await self.lookup(self._named(msg, caps), ex), "complete")

    async def update(self, msg: Message, ex: Exchange, caps: ClientCapabilities) -> dict[str, Any]:
        """Answers for a task in `input_required`: kept for the asks still pending (others are ignored); once
        every pending ask is answered, the next round runs. The ack is empty: `tasks/get` shows the rest."""
        answers = msg.params.get("inputResponses")
        if not isinstance(answers, dict):
            raise invalid_params('Invalid params: tasks/update needs "inputResponses" (an object)')
        await self.answer(self._named(msg, caps), answers, ex)
        return {"resultType": "complete"}

    async def answer(self, task_id: str, answers: dict[str, Any], ex: Exchange) -> None:
        """Keep `answers` for the task's pending asks; the next round runs here once none is pending."""
        for _ in range(MAX_CONFLICTS):  # another instance may write the same task meanwhile: read it again
            task = await self.lookup(task_id, ex)
            if task.status != "input_required" or not any(key in task.input_requests for key in answers):
                break
            for key in [key for key in answers if key in task.input_requests]:
                task.responses[key] = answers[key]
                del task.input_requests[key]
            task.updated = clock.now()
            run_here = not task.input_requests and self._rebuilt(task, ex)  # all answered: the next round, here
            if run_here:
                self._lease(task)
            if await self._save(task):
                if run_here:
                    self._start(task)
                break

    def _rebuilt(self, task: Task, ex: Exchange | None) -> bool:
        """The job of a task read from the store, rebuilt from its record for this instance to run the next
        round (the updating request is the task's own principal's); False, with the task failed, when the
        tool is gone or refuses its arguments now."""
        if task.job is not None:
            return True
        tool = self._tools(task.target)
        arguments = task.params.get("arguments") or {}
        try:
            if tool is None or tool.flow is None or tool.flow.task is None:
                raise ArgumentError(f"the tool {task.target!r} no longer runs as a task here")
            kwargs = tool.signature.bind(handler_arguments(tool.flow.when_unasked, arguments))
        except ArgumentError as exc:
            task.status, task.error = "failed", McpError(INTERNAL_ERROR, f"Cannot resume the task: {exc}").to_dict()
            return False
        raw = task.params.get("_meta", {}).get(META_CLIENT_CAPABILITIES)
        caps = ClientCapabilities.parse(raw if isinstance(raw, dict) else {})
        params = {**task.params, "_meta": {**task.params.get("_meta", {})}}
        exchange = detached(ex) if ex is not None else _exchange_of(task.who)
        task.job = TaskJob(
            flow=tool.flow,
            target=task.target,
            kwargs=kwargs,
            params=params,
            exchange=exchange,
            caps=caps,
            state=task.state,
        )
        return True

    async def cancel(self, msg: Message, ex: Exchange, caps: ClientCapabilities) -> dict[str, Any]:
        """Cancel a task not yet ended (its running round is cancelled); a task already ended stays as it is.
        Either way the ack is empty (protocol.md P169)."""
        await self.stop(self._named(msg, caps), ex)
        return {"resultType": "complete"}

    async def stop(self, task_id: str, ex: Exchange) -> Task:
        """Cancel the task if it has not ended; the task as it is then."""
        for _ in range(MAX_CONFLICTS):  # another instance may write the same task meanwhile: read it again
            task = await self.lookup(task_id, ex)
            if task.status in TERMINAL:
                break
            self._cancel(task)
            if await self._save(task):  # the instance running it sees it at its next lease renewal
                break
        return task

    async def listed(self, ex: Exchange, after: str, limit: int) -> list[Task]:
        """The request's principal's tasks with ids after `after`, in id order (the 2025-11-25 tasks/list)."""
        tag = principal_tag(ex.principal)
        found = []
        for task_id, version, sealed in await self._store().of(tag, after, limit):
            live = self._live.get(task_id)
            record = None if live is not None else self._seal.open(task_id, tag, sealed)
            if live is not None:
                found.append(live)
            elif record is not None:
                found.append(_decoded(task_id, tag, version, record))
        return found

    def _cancel(self, task: Task) -> None:
        task.status, task.updated = "cancelled", clock.now()
        task.input_requests = {}
        self._live.pop(task.task_id, None)
        if task.runner is not None:
            task.runner.cancel()

    # -- keeping ------------------------------------------------------------------------------------

    async def _save(self, task: Task, limit: int | None = None) -> bool:
        """Write the task as its next version; False if the record changed since it was read (another
        instance wrote it), and nothing was written. `limit`: the principal's bound, for a first write."""
        sealed = self._seal.seal(task.task_id, task.tag, _encoded(task))  # protocol.md P207
        live = task.status not in TERMINAL
        lease = task.lease if task.status == "working" else 0.0
        written = await self._store().write(
            task.task_id, task.tag, sealed, task.expires, task.version + 1, live=live, lease=lease, limit=limit
        )
        if written:
            task.version += 1
        return written

    def cancel_all(self) -> None:
        """At shutdown: stop every running round, and the heartbeat (their leases then run out, and another
        instance takes them over)."""
        for loop_task in (self._beating, self._sweeping):
            if loop_task is not None:
                with contextlib.suppress(RuntimeError):  # its loop may be closed already
                    loop_task.cancel()
        for task in list(self._live.values()):
            if task.runner is not None:
                with contextlib.suppress(RuntimeError):  # its loop may be closed already
                    task.runner.cancel()

    def envelope(self, task: Task, result_type: str) -> dict[str, Any]:
        """The task on the wire: `CreateTaskResult` ("task") or `DetailedTask` ("complete", for tasks/get)."""
        wire: dict[str, Any] = {
            "resultType": result_type,
            "taskId": task.task_id,
            "status": task.status,
            "createdAt": timestamp(task.created),
            "lastUpdatedAt": timestamp(task.updated),
            "ttlMs": self.ttl_ms,
            "pollIntervalMs": self.poll_interval_ms,
        }
        if task.message is not None:
            wire["statusMessage"] = task.message
        if result_type == "task":
            return wire
        if task.status == "input_required":
            wire["inputRequests"] = task.input_requests
        elif task.status == "completed" and task.result is not None:
            wire["result"] = task.result
        elif task.status == "failed" and task.error is not None:
            wire["error"] = task.error
        return wire


# -- the record ---------------------------------------------------------------------------------------------


def _encoded(task: Task) -> bytes:
    """A task's record for the store: what `tasks/get` shows, and what its next round needs (the call's
    params and the flow state its rounds replay over). Never the principal: the store keeps its tag."""
    state = task.state
    record = {
        "v": 1,
        "target": task.target,
        "params": task.params,
        "created": task.created,
        "expires": task.expires,
        "updated": task.updated,
        "status": task.status,
        "message": task.message,
        "inputRequests": task.input_requests,
        "responses": task.responses,
        "result": task.result,
        "error": task.error,
        "owner": task.owner,
        "lease": task.lease,
        "who": task.who,
        "flow": base64.b64encode(state.flow_id).decode(),
        "round": state.round,
        "journal": state.journal.dumps().decode(),
    }
    return orjson.dumps(record)


def _decoded(task_id: str, tag: bytes, version: int, raw: bytes) -> Task:
    """A task read back from its record (no job: `TaskBoard._rebuilt` makes one when a round runs here)."""
    record = orjson.loads(raw)
    state = FlowState(base64.b64decode(record["flow"]), record["round"], Journal.loads(record["journal"].encode()))
    task = Task(
        task_id=task_id,
        tag=tag,
        job=None,
        created=record["created"],
        expires=record["expires"],
        target=record["target"],
        params=record["params"],
        updated=record["updated"],
        status=record["status"],
        message=record["message"],
        input_requests=record["inputRequests"],
        responses=record["responses"],
        result=record["result"],
        error=record["error"],
        version=version,
        owner=record["owner"],
        lease=record["lease"],
        saved_state=state,
        who=record.get("who", {}),
    )
    return task


def _who(ex: Exchange) -> dict[str, Any]:
    """What a task keeps of the request that made it, inside its sealed record (protocol.md P207): enough to
    run a round with no request at hand (the sweep, P206)."""
    return {
        "principal": ex.principal,
        "scopes": None if ex.scopes is None else sorted(ex.scopes),
        "version": ex.protocol_version,
        "clientInfo": ex.client_info,
        "transport": ex.info.transport,
    }


def _exchange_of(who: dict[str, Any]) -> Exchange:
    scopes = who.get("scopes")
    return Exchange(
        info=RequestInfo("stdio" if who.get("transport") == "stdio" else "http"),
        principal=str(who.get("principal", "")),
        scopes=None if scopes is None else frozenset(scopes),
        protocol_version=str(who.get("version") or PROTOCOL_VERSION),
        client_info=who.get("clientInfo"),
    )
