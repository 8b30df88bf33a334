"""An attack suite for `requestState`: every mutated, foreign or malformed token is refused before user code.

Most of the volume goes in-process through `server.runtime.handle` (a handler bumps a counter whenever its body
runs); a sample of every category also goes over real HTTP to `baton serve tests/servers/guarded.py`,
whose handlers write a run log. Every attack must answer JSON-RPC -32602 with the one fixed message
"Invalid or expired requestState", and no handler body may run. Controls with the untampered tokens
run the handlers, so the suite can fail. The counts are printed to the terminal.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.paths import SERVERS
from support.serve import RunningServer
from wire import accept, headers_for, meta, request

from baton import Context, Key, KeyRing, RequestInfo, Server
from baton.protocol.headers import Headers, encode_value
from baton.protocol.messages import Message
from baton.server import Exchange, Reply
from baton.server.replay import request_binding
from baton.state.seal import DEFAULT_MAX_BYTES, FlowState, Sealer

REJECTED = {"code": -32602, "message": "Invalid or expired requestState"}
ABSENT = object()  # a first round: no requestState member at all
ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
PROTOCOL = "2026-07-28"
MIN_ATTACKS = 10_000
HTTP_SAMPLE = 300
GUARDED = str(SERVERS / "guarded.py")
ATTACK_TARGET = str(SERVERS / "attack_target.py")

CATEGORIES = (
    "bit flip: sealed bytes",
    "bit flip: header",
    "bit flip: body text",
    "byte substitution",
    "char substitution",
    "truncation",
    "extension",
    "base64 tricks",
    "splice",
    "key id swap",
    "version prefix",
    "other tool",
    "other arguments",
    "other principal",
    "other audience",
    "expired",
    "different key",
    "empty/huge/non-string",
    "other method",
)


# -- requests -----------------------------------------------------------------------------------------


@dataclass
class Target:
    """Where a token is presented: method, tool/prompt name or resource URI, arguments, caller, answers."""

    method: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    auth: str | None = "Bearer alice"
    answers: dict[str, Any] = field(default_factory=lambda: {"q1": accept(confirm=True)})

    def params(self, state: object) -> dict[str, Any]:
        params: dict[str, Any] = (
            {"uri": self.name} if self.method == "resources/read" else {"name": self.name, "arguments": self.arguments}
        )
        params["inputResponses"] = self.answers
        if state is not ABSENT:
            params["requestState"] = state
        return params

    def auth_headers(self) -> dict[str, str]:
        return {} if self.auth is None else {"Authorization": self.auth}

    def but(self, **changes: Any) -> Target:
        return Target(**{**self.__dict__, **changes})


@dataclass
class Attack:
    category: str
    how: str
    state: object
    target: Target
    to: str = "main"  # which in-process server receives it


def describe(attack: Attack, problem: str) -> str:
    shown = repr(attack.state)
    if len(shown) > 240:
        shown = shown[:240] + f"... ({len(shown)} chars)"
    return f"[{attack.category}] {attack.how} -> {attack.target.method} {attack.target.name}: {problem}; state={shown}"


def problem_with(body: dict[str, Any], code: int | None) -> str | None:
    """Why a reply is not the one fixed rejection, or None when it is."""
    if body.get("error") != REJECTED or code != REJECTED["code"]:
        return f"ACCEPTED or answered otherwise: {str(body)[:300]}"
    return None


# -- token surgery -------------------------------------------------------------------------------------


def b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def tamperings(token: str, target: Target, rng: random.Random, kid_swaps: dict[str, str]) -> list[Attack]:
    """Every mutation of one sealed token that needs no key: bits, bytes, lengths, encodings, key ids, versions."""
    version, kid, body = token.split(".", 2)
    head = f"{version}.{kid}."
    raw = unb64(body)
    assert b64(raw) == body
    out: list[Attack] = []

    def add(category: str, how: str, state: object) -> None:
        if state != token:
            out.append(Attack(category, how, state, target))

    def sealed(new: bytes) -> str:
        return head + b64(new)

    for i in range(len(raw) * 8):
        flipped = bytearray(raw)
        flipped[i // 8] ^= 1 << (i % 8)
        add("bit flip: sealed bytes", f"flip bit {i % 8} of sealed byte {i // 8}", sealed(bytes(flipped)))
    for i, ch in enumerate(head):
        for bit in range(8):
            new = head[:i] + chr(ord(ch) ^ (1 << bit)) + head[i + 1 :]
            add("bit flip: header", f"flip bit {bit} of header char {i} ({ch!r})", new + body)
    for i, ch in enumerate(body):
        for bit in range(8):
            new = body[:i] + chr(ord(ch) ^ (1 << bit)) + body[i + 1 :]
            add("bit flip: body text", f"flip bit {bit} of body char {i} ({ch!r})", head + new)
    for i, byte in enumerate(raw):
        for value in sorted({0x00, 0xFF, byte ^ 0x80, (byte + 1) % 256, rng.randrange(256)} - {byte}):
            changed = raw[:i] + bytes([value]) + raw[i + 1 :]
            add("byte substitution", f"sealed byte {i}: {byte:#04x} -> {value:#04x}", sealed(changed))
    for i, ch in enumerate(body):
        for other in rng.sample(ALPHABET.replace(ch, ""), 6):
            add("char substitution", f"body char {i}: {ch!r} -> {other!r}", head + body[:i] + other + body[i + 1 :])

    for n in range(len(token)):
        add("truncation", f"token[:{n}]", token[:n])
    for n in range(len(raw)):
        add("truncation", f"sealed[:{n}] re-encoded", sealed(raw[:n]))
    for n in range(1, len(raw)):
        add("truncation", f"sealed[{n}:] re-encoded (front cut)", sealed(raw[n:]))

    for ch in ALPHABET:
        add("extension", f"append {ch!r}", token + ch)
    for tail in (
        "=",
        "==",
        ".",
        "..",
        " ",
        "\n",
        "\r\n",
        "\t",
        "\x00",
        "é",
        "\ufeff",
        "\u200b",
        "." + body,
        ".b1." + kid,
    ):
        add("extension", f"append {tail!r}", token + tail)
    for n in (1, 2, 3, 4, 8, 12, 16, 32, 64):
        add("extension", f"append {n} zero bytes to the sealed bytes", sealed(raw + bytes(n)))
    for n in range(1, 17):
        add("extension", f"append {n} random bytes to the sealed bytes", sealed(raw + rng.randbytes(n)))
    add("extension", "sealed bytes doubled", sealed(raw + raw))
    add("extension", "tag repeated", sealed(raw + raw[-16:]))
    for n in (1, 12, 16):
        add("extension", f"prepend {n} zero bytes to the sealed bytes", sealed(bytes(n) + raw))

    rest = len(body) % 4
    if rest in (2, 3):
        free = {2: 0x0F, 3: 0x03}[rest]
        index = ALPHABET.index(body[-1])
        for value in range(64):
            if value != index and value & ~free == index & ~free:
                other = ALPHABET[value]
                add(
                    "base64 tricks",
                    f"non-canonical last char {other!r} for {body[-1]!r} (same bytes)",
                    head + body[:-1] + other,
                )
    add("base64 tricks", "standard alphabet (+ and / for - and _)", head + body.translate(str.maketrans("-_", "+/")))
    for i, ch in enumerate(body):
        if ch in "-_":
            add(
                "base64 tricks",
                f"body char {i}: {ch!r} -> {'+' if ch == '-' else '/'!r}",
                head + body[:i] + ("+" if ch == "-" else "/") + body[i + 1 :],
            )
    for pad in ("=", "==", "==="):
        add("base64 tricks", f"padding {pad!r} added", head + body + pad)
    add("base64 tricks", "padded to a multiple of 4", head + body + "=" * (-len(body) % 4))
    add("base64 tricks", "standard base64 with padding", head + base64.b64encode(raw).decode())
    add("base64 tricks", "url-safe base64 with padding", head + base64.urlsafe_b64encode(raw).decode())
    add("base64 tricks", "space inside the body", head + body[:10] + " " + body[10:])
    add("base64 tricks", "newline inside the body", head + body[:10] + "\n" + body[10:])
    add("base64 tricks", "leading space", head + " " + body)
    add("base64 tricks", "case swapped", head + body.swapcase())
    add("base64 tricks", "percent-encoded - and _", head + body.replace("-", "%2D").replace("_", "%5F"))
    fullwidth = next(i for i, ch in enumerate(body) if ch.isalnum())
    add(
        "base64 tricks",
        f"fullwidth twin of body char {fullwidth}",
        head + body[:fullwidth] + chr(ord(body[fullwidth]) + 0xFEE0) + body[fullwidth + 1 :],
    )
    digits = [i for i, ch in enumerate(body) if ch.isdigit()]
    if digits:
        i = digits[0]
        add(
            "base64 tricks",
            f"Arabic-Indic twin of digit {i}",
            head + body[:i] + chr(0x0660 + int(body[i])) + body[i + 1 :],
        )
    add("base64 tricks", "base32 of the sealed bytes", head + base64.b32encode(raw).decode().rstrip("="))
    add("base64 tricks", "hex of the sealed bytes", head + raw.hex())

    for new_kid, why in kid_swaps.items():
        add("key id swap", f"kid {kid!r} -> {new_kid!r} ({why})", f"{version}.{new_kid}.{body}")
    for _ in range(40):
        unknown = "".join(rng.choices(ALPHABET, k=rng.randint(1, 16)))
        if unknown not in kid_swaps and unknown != kid:
            add("key id swap", f"kid {kid!r} -> {unknown!r} (unknown)", f"{version}.{unknown}.{body}")
    for bad in (
        "",
        "x" * 17,
        kid.upper(),
        kid + " ",
        " " + kid,
        kid + "\n",
        kid + "\x00",
        kid + "\u200b",
        "../" + kid,
        kid + "/",
        "*",
        "%",
    ):
        add("key id swap", f"kid {kid!r} -> {bad!r} (malformed)", f"{version}.{bad}.{body}")
    add("key id swap", "kid repeated (kid.kid.body)", f"{version}.{kid}.{kid}.{body}")
    add("key id swap", "kid dropped (version.body)", f"{version}.{body}")

    for other in (
        "b0",
        "b2",
        "B1",
        "b1 ",
        " b1",
        "b",
        "b10",
        "bb1",
        "c1",
        "",
        "v1",
        "1b",
        "b1b1",
        "\uff421",
        "b\uff11",
        "b\u200b1",
        "b1\x00",
    ):
        add("version prefix", f"version {version!r} -> {other!r}", f"{other}.{kid}.{body}")
    add("version prefix", "version dropped", f"{kid}.{body}")
    add("version prefix", "version doubled", f"{version}.{version}.{kid}.{body}")
    for sep in (":", "_", "-", ",", "。"):
        add("version prefix", f"separators '.' -> {sep!r}", f"{version}{sep}{kid}{sep}{body}")
    return out


def splices(tokens: list[tuple[str, Target]]) -> list[Attack]:
    """Pieces of one sealed token joined to pieces of another: nonce, ciphertext and tag swapped."""
    out: list[Attack] = []
    for i, (a, target) in enumerate(tokens):
        head, body_a = a.rsplit(".", 1)
        raw_a = unb64(body_a)
        for j, (b, _) in enumerate(tokens):
            if i == j:
                continue
            raw_b = unb64(b.rsplit(".", 1)[1])
            pieces = {
                f"nonce of #{j} + rest of #{i}": raw_b[:12] + raw_a[12:],
                f"tag of #{j} on #{i}": raw_a[:-16] + raw_b[-16:],
                f"ciphertext of #{j} in #{i}": raw_a[:12] + raw_b[12:-16] + raw_a[-16:],
                f"first half of #{i} + second half of #{j}": raw_a[: len(raw_a) // 2] + raw_b[len(raw_b) // 2 :],
                f"#{i} xor #{j}": bytes(x ^ y for x, y in zip(raw_a, raw_b, strict=False)),
            }
            for how, raw in pieces.items():
                if raw != raw_a:
                    out.append(Attack("splice", how, f"{head}.{b64(raw)}", target))
    return out


def junk(token: str, target: Target, *, http: bool = False) -> list[Attack]:
    """requestState values that are not tokens at all: empty, huge, or not strings."""
    head = token.rsplit(".", 1)[0] + "."
    values: list[tuple[str, object]] = [
        ("empty string", ""),
        ("a space", " "),
        ("NUL", "\x00"),
        ("dots only", ".."),
        ("version and empty kid", "b1.."),
        ("header without body", head),
        ("over the cap by one byte", "A" * (DEFAULT_MAX_BYTES + 1)),
        ("header + As up to the cap", head + "A" * (DEFAULT_MAX_BYTES - len(head))),
        ("token + 20,000 As", token + "A" * 20_000),
        ("1 MB", "x" * 1_000_000),
        ("the token 200 times", ".".join([token] * 200)),
        ("integer 0", 0),
        ("integer 1", 1),
        ("integer -1", -1),
        ("largest 64-bit integer", 2**63 - 1),
        ("float", 1.5),
        ("true", True),
        ("false", False),
        ("empty object", {}),
        ("object wrapping the token", {"requestState": token}),
        ("empty array", []),
        ("array holding the token", [token]),
        ("the token's bytes as numbers", list(token.encode())),
    ]
    if not http:
        values += [("integer 2**64", 2**64), ("bytes", token.encode()), ("tuple", (token,))]
    return [Attack("empty/huge/non-string", how, value, target) for how, value in values]


def argument_variants(rng: random.Random) -> list[str]:
    fixed = [
        "p2",
        "P1",
        "p1 ",
        " p1",
        "p1\x00",
        "p1\u200b",
        "",
        "p1p1",
        "p",
        "p10",
        "p1\n",
        "\uff501",
        "p\u0661",
        "p1\u0301",
        "p\\1",
    ]
    return fixed + ["".join(rng.choices(ALPHABET, k=rng.randint(1, 12))) for _ in range(25)]


# -- the in-process server -----------------------------------------------------------------------------


def principal_hook(info: RequestInfo) -> str | None:
    auth = info.headers.get("authorization", "") if info.headers is not None else ""
    return (auth or "").removeprefix("Bearer ").strip() or None


def make_server(runs: list[int], ring: KeyRing, name: str = "attack", **options: Any) -> Server:
    """Tools, a prompt and a resource that bump `runs[0]` whenever their body runs, then ask."""
    server = Server(name, state_keys=ring, principal=principal_hook, **options)

    @server.tool()
    async def delete_project(ctx: Context, project: str, force: bool = False) -> str:
        runs[0] += 1
        return f"deleted {project}" if await ctx.confirm(f"Delete {project}?") else "kept"

    @server.tool()
    async def archive_project(ctx: Context, project: str) -> str:
        runs[0] += 1  # the very same question as delete_project: only the binding tells them apart
        return f"archived {project}" if await ctx.confirm(f"Delete {project}?") else "kept"

    def asking(key: str) -> Callable[[Context], Any]:
        async def ask(ctx: Context) -> str:
            runs[0] += 1
            return str(await ctx.confirm("Go?", key=key))

        return ask

    # Question keys of 1, 2 and 3 characters give sealed bodies of every length modulo 3.
    for key in ("k", "kk", "kkk"):
        server.add_tool(asking(key), name=f"ask_{key}")
    server.add_tool(asking("q1"), name="noargs")
    server.add_prompt(asking("q1"), name="noargs")
    server.resource("noargs")(asking("q1"))

    @server.prompt("delete_project")
    async def delete_project_prompt(ctx: Context, project: str) -> str:
        runs[0] += 1
        return f"Delete {project}." if await ctx.confirm(f"Delete {project}?") else "kept"

    return server


def exchange(target: Target) -> Exchange:
    headers = {"mcp-protocol-version": PROTOCOL, "mcp-method": target.method, "mcp-name": encode_value(target.name)}
    if target.auth is not None:
        headers["authorization"] = target.auth
    return Exchange(RequestInfo("http", Headers.of(headers)))


async def present(server: Server, target: Target, state: object) -> Reply:
    body = {**target.params(state), "_meta": meta()}
    reply = await server.runtime.handle(Message(target.method, body, 1, True), exchange(target))
    assert isinstance(reply, Reply)
    return reply


async def first_round(server: Server, target: Target) -> str:
    reply = await present(server, target.but(answers={}), ABSENT)
    result = reply.body["result"]
    assert result["resultType"] == "input_required", reply.body
    return str(result["requestState"])


TOOL_TARGETS = {
    "delete_project": Target("tools/call", "delete_project", {"project": "p1"}),
    "archive_project": Target("tools/call", "archive_project", {"project": "p1"}),
    "ask_k": Target("tools/call", "ask_k", answers={"k": accept(confirm=True)}),
    "ask_kk": Target("tools/call", "ask_kk", answers={"kk": accept(confirm=True)}),
    "ask_kkk": Target("tools/call", "ask_kkk", answers={"kkk": accept(confirm=True)}),
    "noargs": Target("tools/call", "noargs"),
}
METHOD_TARGETS = {
    "tools/call noargs": TOOL_TARGETS["noargs"],
    "prompts/get noargs": Target("prompts/get", "noargs"),
    "resources/read noargs": Target("resources/read", "noargs"),
    "tools/call delete_project": TOOL_TARGETS["delete_project"],
    "prompts/get delete_project": Target("prompts/get", "delete_project", {"project": "p1"}),
}


@dataclass
class Arena:
    """The servers under attack, their shared run counter, and the genuine tokens to mutate."""

    runs: list[int]
    servers: dict[str, Server]
    bases: list[tuple[str, Target]]  # genuine main-server tokens and where they belong
    controls: list[tuple[str, str, Target]]  # (server, token, target) that must be accepted


async def build_arena() -> tuple[Arena, list[Attack], tuple[int, list[tuple[str, Target]]]]:
    runs = [0]
    ring = KeyRing([Key.generate("main"), Key.generate("old")])
    servers = {
        "main": make_server(runs, ring),
        "twin": make_server(runs, ring),  # another instance of main: its tokens must work on main
        "elsewhere": make_server(runs, ring, audience="elsewhere"),
        "renamed": make_server(runs, ring, name="attack-2"),  # default audience is the name
        "stale": make_server(runs, ring, state_ttl_s=-1),
        "stale_hour": make_server(runs, ring, state_ttl_s=-3600),
        "brief": make_server(runs, ring, state_ttl_s=1),
        "impostor": make_server(runs, KeyRing([Key.generate("main")])),  # same kid, another secret
        "foreign": make_server(runs, KeyRing([Key.generate("other")])),  # a real key of a second ring
    }
    main = servers["main"]
    attacks: list[Attack] = []
    controls: list[tuple[str, str, Target]] = []

    bases = [(await first_round(main, t), t) for t in TOOL_TARGETS.values() if t.name != "archive_project"]
    anonymous = TOOL_TARGETS["delete_project"].but(auth=None)
    bases.append((await first_round(main, anonymous), anonymous))
    controls += [("main", token, target) for token, target in bases]

    # Tokens sealed elsewhere, each presented to main with exactly the target it was sealed for.
    foreign_sources = {
        "elsewhere": ("other audience", "sealed by a server with audience 'elsewhere'"),
        "renamed": ("other audience", "sealed by server 'attack-2' (its default audience)"),
        "stale": ("expired", "sealed with state_ttl_s=-1"),
        "stale_hour": ("expired", "sealed with state_ttl_s=-3600"),
        "impostor": ("different key", "sealed under another key with the same kid 'main'"),
        "foreign": ("key id swap", "sealed under kid 'other' of a second ring"),
    }
    for source, (category, how) in foreign_sources.items():
        for target in TOOL_TARGETS.values():
            for n in range(5):
                token = await first_round(servers[source], target)
                attacks.append(Attack(category, f"{how} ({target.name} #{n})", token, target))
                if n == 0 and source not in {"stale", "stale_hour"}:
                    controls.append((source, token, target))
    # The reverse: main's tokens presented to the servers with another audience or key.
    for token, target in bases:
        for to, category in (
            ("elsewhere", "other audience"),
            ("renamed", "other audience"),
            ("impostor", "different key"),
        ):
            attacks.append(Attack(category, f"main's token presented to {to!r}", token, target, to=to))
    # An expired token is refused by the very server that sealed it.
    for target in TOOL_TARGETS.values():
        token = await first_round(servers["stale"], target)
        attacks.append(
            Attack("expired", f"ttl -1 token back to its own server ({target.name})", token, target, to="stale")
        )
    # Another instance with the same ring and audience: its tokens must be accepted (the control for the above).
    for target in TOOL_TARGETS.values():
        controls.append(("main", await first_round(servers["twin"], target), target))

    # Tokens bound to one tool, presented to every other (with that tool's own valid arguments).
    for token, target in bases:
        for other in TOOL_TARGETS.values():
            if other.name != target.name:
                attacks.append(Attack("other tool", f"{target.name} token -> {other.name}", token, other))
        for n in range(4):
            fresh = await first_round(main, target)
            for other in TOOL_TARGETS.values():
                if other.name != target.name:
                    attacks.append(Attack("other tool", f"{target.name} token #{n} -> {other.name}", fresh, other))

    # Other arguments for the same tool.
    rng = random.Random(2026)
    dp_token, dp_target = bases[0]
    assert dp_target.name == "delete_project"
    for value in argument_variants(rng):
        attacks.append(
            Attack(
                "other arguments", f"project 'p1' -> {value!r}", dp_token, dp_target.but(arguments={"project": value})
            )
        )
    for extra in ({"force": False}, {"force": True}):
        arguments = {"project": "p1", **extra}
        attacks.append(
            Attack("other arguments", f"arguments -> {arguments}", dp_token, dp_target.but(arguments=arguments))
        )
    for value in ("p2", "P1", "p1 ", "", "p1p1"):
        attacks.append(
            Attack(
                "other arguments",
                f"archive_project token, project -> {value!r}",
                await first_round(main, TOOL_TARGETS["archive_project"]),
                TOOL_TARGETS["archive_project"].but(arguments={"project": value}),
            )
        )

    # Other principals.
    auths: list[str | None] = [
        "Bearer mallory",
        "Bearer Alice",
        "Bearer alice2",
        "Bearer alic",
        "Bearer al ice",
        "bearer alice",
        "Basic alice",
        "Bearer anonymous-not",
        None,
    ]
    for token, target in bases:
        for auth in auths:
            if auth != target.auth:
                attacks.append(Attack("other principal", f"{target.auth!r} -> {auth!r}", token, target.but(auth=auth)))
    token = bases[-1][0]  # sealed for the anonymous caller
    for who in ("Bearer alice", "Bearer mallory"):
        attacks.append(
            Attack("other principal", f"anonymous token presented by {who!r}", token, anonymous.but(auth=who))
        )

    # The same name and arguments under another method.
    for origin_name, origin in METHOD_TARGETS.items():
        for n in range(6):
            token = await first_round(main, origin)
            if n == 0:
                controls.append(("main", token, origin))
            for dest_name, dest in METHOD_TARGETS.items():
                if dest_name != origin_name and dest.name == origin.name:
                    attacks.append(Attack("other method", f"{origin_name} token #{n} -> {dest_name}", token, dest))

    for token, target in bases:
        swaps = {"old": "another real key of the same ring", "other": "a real key of a second ring"}
        attacks += tamperings(token, target, rng, swaps)
        attacks += junk(token, target)
    attacks += splices(bases[:5])
    pair = [(await first_round(main, dp_target), dp_target) for _ in range(2)]
    attacks += splices(pair)  # two flows of the same request: only the nonces and tags differ

    brief = [(await first_round(servers["brief"], t), t) for t in TOOL_TARGETS.values()]
    brief_sealed = int(time.time())  # none of them expires after brief_sealed + 1
    return Arena(runs, servers, bases, controls), attacks, (brief_sealed, brief)


async def run_in_process() -> tuple[Counter[str], list[str], int, int, int]:
    arena, attacks, (brief_sealed, brief) = await build_arena()
    runs = arena.runs

    async def control(round_name: str) -> None:
        for to, token, target in arena.controls:
            before = runs[0]
            reply = await present(arena.servers[to], target, token)
            assert "result" in reply.body, f"control ({round_name}) on {to}: {reply.body}"
            assert runs[0] == before + 1, f"control ({round_name}) on {to} did not run the handler"

    await control("before")
    counts: Counter[str] = Counter()
    problems: list[str] = []
    unique: set[str] = set()

    async def fire(attack: Attack) -> None:
        before = runs[0]
        reply = await present(arena.servers[attack.to], attack.target, attack.state)
        ran = runs[0] - before
        problem = problem_with(reply.body, reply.code)
        if ran:
            problem = f"USER CODE RAN ({ran}x); {problem or 'reply was the rejection'}"
        counts[attack.category] += 1
        where = attack.target
        unique.add(repr((attack.state, where.method, where.name, where.arguments, where.auth, attack.to)))
        if problem:
            problems.append(describe(attack, problem))

    for attack in attacks:
        await fire(attack)
    # Tokens sealed with a one-second ttl, presented once that second is over.
    wait = brief_sealed + 1.05 - time.time()
    if wait > 0:
        await asyncio.sleep(wait)
    for token, target in brief:
        await fire(Attack("expired", f"ttl 1 token presented after it expired ({target.name})", token, target))
    await control("after")
    return counts, problems, len(unique), runs[0], len(arena.controls)


class Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def summary(title: str, counts: Counter[str], elapsed: float, extra: list[str]) -> str:
    lines = ["", f"== {title} =="]
    lines += [f"  {category:<26} {counts.get(category, 0):>6}" for category in CATEGORIES]
    lines.append(f"  {'total':<26} {sum(counts.values()):>6}")
    lines += [f"  {line}" for line in extra]
    lines.append(f"  runtime {elapsed:.2f} s")
    return "\n".join(lines)


def test_mutated_request_state_never_runs_user_code(capsys: pytest.CaptureFixture[str]) -> None:
    logger = logging.getLogger("baton.server")
    collect = Collect()
    logger.addHandler(collect)
    propagate, logger.propagate = logger.propagate, False  # 10,000 warnings are not for pytest's report
    started = time.perf_counter()
    try:
        counts, problems, unique, runs, controls = asyncio.run(run_in_process())
    finally:
        logger.removeHandler(collect)
        logger.propagate = propagate
    elapsed = time.perf_counter() - started
    total = sum(counts.values())
    rejected_logs = sum("rejected requestState" in m for m in collect.messages)
    with capsys.disabled():
        print(
            summary(
                "requestState attacks, in-process through server.runtime.handle",
                counts,
                elapsed,
                [
                    f"distinct (token, request) pairs {unique}",
                    f"accepted or answered otherwise {len(problems)}",
                    f"controls accepted {controls} x2 (handler bodies ran {runs} times in all, setup included)",
                    f"rejections logged {rejected_logs}",
                ],
            )
        )
    assert not problems, f"{len(problems)} attacks were not rejected:\n" + "\n".join(problems[:40])
    assert set(counts) == set(CATEGORIES), f"categories without attacks: {set(CATEGORIES) - set(counts)}"
    assert total >= MIN_ATTACKS and unique >= MIN_ATTACKS, (total, unique)
    assert rejected_logs >= 1, "rejections must be logged with their reason"
    leaked = [m for m in collect.messages if "b1.main." in m or len(m) > 400]
    assert not leaked, f"a token reached the log: {leaked[0][:200]}"


def test_null_request_state_is_refused() -> None:
    async def go() -> tuple[Reply, int]:
        runs = [0]
        server = make_server(runs, KeyRing.ephemeral_key())
        reply = await present(server, TOOL_TARGETS["delete_project"], None)
        return reply, runs[0]

    reply, runs = asyncio.run(go())
    assert reply.body.get("error") == REJECTED and runs == 0, reply.body


# -- over real HTTP ------------------------------------------------------------------------------------


def sample(attacks: list[Attack], budget: int, rng: random.Random) -> list[Attack]:
    """About `budget` attacks, in proportion to each category's size but at least 8 of every category."""
    by_category: dict[str, list[Attack]] = {}
    for attack in attacks:
        by_category.setdefault(attack.category, []).append(attack)
    chosen: list[Attack] = []
    for items in by_category.values():
        k = min(len(items), max(8, round(len(items) * budget / len(attacks))))
        chosen += rng.sample(items, k)
    return chosen


def test_http_sample_never_runs_user_code(
    serve: Callable[..., RunningServer], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    started = time.perf_counter()
    ring = KeyRing([Key.generate("main"), Key.generate("old")])
    runlog = tmp_path / "runs.log"
    env = {"BATON_TEST_RUNLOG": str(runlog), "BATON_STATE_KEYS": ",".join(k.encode() for k in ring.keys)}
    guarded = serve(GUARDED, env=env)
    twin = serve(ATTACK_TARGET, env=env)  # the same server and keys, plus a prompt named delete_project

    def runs() -> int:
        return len(runlog.read_text().splitlines()) if runlog.exists() else 0

    with httpx.Client(timeout=15) as client:

        def post(url: str, target: Target, state: object) -> httpx.Response:
            message = request(target.method, target.params(state))
            return client.post(url, json=message, headers=headers_for(message, **target.auth_headers()))

        def first(url: str, target: Target) -> str:
            resp = post(url, target.but(answers={}), ABSENT)
            result = resp.json()["result"]
            assert result["resultType"] == "input_required", resp.text
            return str(result["requestState"])

        dp = Target("tools/call", "delete_project", {"project": "p1"})
        token = first(guarded.url, dp)
        rng = random.Random(7)
        attacks = tamperings(token, dp, rng, {"old": "another real key of the same ring", "zz": "unknown"})
        attacks += junk(token, dp, http=True)
        attacks += splices([(token, dp), (first(guarded.url, dp), dp)])
        for other in (
            Target("tools/call", "archive_project", {"project": "p1"}),
            Target("tools/call", "slow", {"seconds": 0}),
        ):
            attacks += [
                Attack("other tool", f"delete_project token -> {other.name}", first(guarded.url, dp), other)
                for _ in range(4)
            ]
        attacks += [
            Attack("other arguments", f"project -> {v!r}", token, dp.but(arguments={"project": v}))
            for v in argument_variants(rng)
        ]
        for auth in ("Bearer mallory", "Bearer Alice", "bearer alice", None):
            attacks.append(Attack("other principal", f"'Bearer alice' -> {auth!r}", token, dp.but(auth=auth)))
        for auth in ("Bearer eve", "Bearer alice2", "Bearer root", "Bearer admin"):
            attacks.append(
                Attack("other principal", f"'Bearer alice' -> {auth!r}", first(guarded.url, dp), dp.but(auth=auth))
            )

        # Tokens minted in-process for exactly this request, each with one binding changed.
        digest = request_binding("tools/call", "delete_project", {"project": "p1"})
        minters = {
            "other audience": Sealer(ring, "elsewhere"),
            "expired": Sealer(ring, "guarded", ttl_s=-1),
            "different key": Sealer(KeyRing([Key.generate("main")]), "guarded"),
        }
        for category, sealer in minters.items():
            attacks += [
                Attack(category, f"minted: {category}", sealer.seal(FlowState(), "alice", digest), dp) for _ in range(8)
            ]
        prompt = Target("prompts/get", "delete_project", {"project": "p1"})
        attacks += [
            Attack("other method", "tools/call token -> prompts/get", first(guarded.url, dp), prompt, to="twin")
            for _ in range(8)
        ]

        chosen = sample(attacks, HTTP_SAMPLE, rng)
        urls = {"main": guarded.url, "twin": twin.url}
        before = runs()
        counts: Counter[str] = Counter()
        problems: list[str] = []
        for attack in chosen:
            resp = post(urls[attack.to], attack.target, attack.state)
            counts[attack.category] += 1
            body = resp.json()
            if resp.status_code != 400 or body.get("error") != REJECTED:
                problems.append(describe(attack, f"HTTP {resp.status_code}: {resp.text[:300]}"))
        after = runs()

        # Controls: the untampered token, a minted token with every binding right, and the twin's tool.
        good_mint = Sealer(ring, "guarded").seal(FlowState(), "alice", digest)
        for url, state in ((guarded.url, token), (guarded.url, good_mint), (twin.url, token)):
            resp = post(url, dp, state)
            assert resp.status_code == 200 and "result" in resp.json(), resp.text
        controls_ran = runs() - after

    server_log = guarded.log.read_text() + twin.log.read_text()
    elapsed = time.perf_counter() - started
    with capsys.disabled():
        print(
            summary(
                "requestState attacks over HTTP (baton serve guarded.py)",
                counts,
                elapsed,
                [
                    f"run-log lines during the attacks {after - before} (controls added {controls_ran})",
                    f"accepted or answered otherwise {len(problems)}",
                ],
            )
        )
    assert not problems, f"{len(problems)} attacks were not rejected:\n" + "\n".join(problems[:40])
    assert after == before, "user code ran for a rejected requestState:\n" + runlog.read_text()
    assert controls_ran >= 3, "the controls did not run the handler, so the run log proves nothing"
    assert set(counts) == set(CATEGORIES), f"categories without attacks: {set(CATEGORIES) - set(counts)}"
    assert sum(counts.values()) >= HTTP_SAMPLE
    assert "rejected requestState" in server_log
    assert token.rsplit(".", 1)[1] not in server_log, "a token reached the server log"
