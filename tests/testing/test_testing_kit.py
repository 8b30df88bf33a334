"""The testing kit itself: the in-memory client in both eras, the scripted user, the fake clock, the checks,
and the pytest plugin, loaded by its entry point in a pytest of its own (protocol.md P71-P77)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from support import processes
from support.paths import ROOT

from baton import ConfigurationError, Context, McpError, Server
from baton.client import Client, Question
from baton.state import clock
from baton.state.ledger_memory import MemoryLedger
from baton.testing import (
    Accepted,
    Cancelled,
    Declined,
    FakeClock,
    Invalid,
    ScriptedUser,
    UnexpectedQuestion,
    check_refusals,
    check_tampering,
    memory_client,
)
from baton.testing import plugin as kit_plugin

ERAS = ["2026-07-28", "2025-11-25"]
LEDGER: list[str] = []


def make_server(*, careless: bool = False) -> Server:
    server = Server("kit-test", ledger=MemoryLedger())

    @server.tool()
    async def ship(ctx: Context, what: str) -> str:
        await ctx.progress(1, 2)
        if careless:
            LEDGER.append(f"prepared {what}")  # a side effect before the question: what the check must catch
        if not await ctx.confirm(f"Ship {what}?", key="go"):
            return "not shipped"
        LEDGER.append(what)
        return f"shipped {what}"

    @server.tool(single_use=True)
    async def pay(ctx: Context, amount: int) -> str:
        if not await ctx.confirm(f"Pay {amount}?"):
            return "not paid"
        LEDGER.append(f"paid {amount}")
        return f"paid {amount}"

    @server.tool()
    async def survey(ctx: Context) -> str:
        first = await ctx.confirm("First?", key="a")
        second = await ctx.confirm("Second?", key="b")
        return f"{first} {second}"

    return server


@pytest.fixture(autouse=True)
def empty_ledger() -> None:
    LEDGER.clear()


def run(coro: Any) -> Any:
    return asyncio.run(coro)


@pytest.mark.parametrize("era", ERAS)
def test_the_in_memory_client_is_a_baton_client_in_both_eras(era: str) -> None:
    user = ScriptedUser({"go": Accepted({"confirm": True})})
    notes: list[dict[str, Any]] = []

    async def progress(note: dict[str, Any]) -> None:
        notes.append(note)

    async def main() -> None:
        async with memory_client(make_server(), user, protocol=era) as client:
            assert isinstance(client, Client)
            assert [t.name for t in await client.list_tools()] == ["ship", "pay", "survey"]
            result = await client.call_tool("ship", {"what": "crate"}, progress=progress)
            assert result.text == "shipped crate"
            assert client.era == era

    run(main())
    assert LEDGER == ["crate"]
    assert [a.key for a in user.asked] == ["go"]  # the ask key, in a session too (P72)
    assert notes and notes[0]["method"] == "notifications/progress"


def test_step_mode_and_the_probe_work_unchanged() -> None:
    async def main() -> None:
        async with memory_client(make_server(), protocol="auto", declare=("form",)) as client:
            step = await client.start("tools/call", {"name": "ship", "arguments": {"what": "box"}})
            assert client.era == "2026-07-28"
            assert [q.key for q in step.questions()] == ["go"]  # type: ignore[union-attr]
            done = await client.advance(step, {"go": Accepted({"confirm": True})})  # type: ignore[arg-type]
            assert done["content"][0]["text"] == "shipped box"  # type: ignore[index]

    run(main())


@pytest.mark.parametrize("era", ERAS)
def test_replies_go_in_order_the_last_repeats_and_rules_and_functions_answer(era: str) -> None:
    def second(question: Question) -> Any:
        assert question.message == "Second?"
        return Declined()

    user = ScriptedUser().on("a", Accepted({"confirm": True}), Cancelled()).when(lambda q: q.key == "b", second)

    async def main() -> list[str]:
        async with memory_client(make_server(), user, protocol=era) as client:
            return [(await client.call_tool("survey")).text for _ in range(3)]

    assert run(main()) == ["True False", "False False", "False False"]
    assert [(a.key, type(a.reply).__name__) for a in user.asked] == [
        ("a", "Accepted"), ("b", "Declined"), ("a", "Cancelled"), ("b", "Declined"), ("a", "Cancelled"),
        ("b", "Declined"),
    ]  # fmt: skip


@pytest.mark.parametrize("era", ERAS)
def test_an_invalid_answer_is_sent_and_re_asked(era: str) -> None:
    user = ScriptedUser({"go": [Invalid({"confirm": "yes please"}), {"confirm": True}]})

    async def main() -> str:
        async with memory_client(make_server(), user, protocol=era) as client:
            return (await client.call_tool("ship", {"what": "x"})).text

    assert run(main()) == "shipped x"
    assert user.keys == ["go", "go"]
    assert "Please answer again" in user.asked[1].message


@pytest.mark.parametrize("era", ERAS)
def test_an_invalid_answer_of_a_call_that_failed_does_not_reach_a_later_call(era: str) -> None:
    """The first call is answered `Invalid` at `go`, then fails at an unscripted question of the same round; the
    forged answer it never sent must not replace the accepted answer of the next call."""
    server = make_server()

    @server.tool()
    async def both(ctx: Context) -> str:
        await ctx.gather(ctx.confirm("Go?", key="go"), ctx.confirm("Sure?", key="sure"))
        return "done"

    user = ScriptedUser({"go": Invalid({"confirm": "maybe"})})

    async def main() -> str:
        async with memory_client(server, user, protocol=era) as client:
            with pytest.raises(UnexpectedQuestion):
                await client.call_tool("both", {})
        user.on("go", {"confirm": True}).forget()
        async with memory_client(server, user, protocol=era) as client:
            return (await client.call_tool("ship", {"what": "x"})).text

    assert run(main()) == "shipped x"
    assert user.keys == ["go"], "asked again: a stale forged answer replaced the accepted one"


def test_invalid_needs_the_in_memory_client_and_a_question_needs_a_script() -> None:
    user = ScriptedUser({"go": Invalid({})})
    question = Question("go", "form", "Ship?")
    with pytest.raises(UnexpectedQuestion, match="in-memory client"):
        run(user(question))
    with pytest.raises(UnexpectedQuestion, match=r"unexpected question 'other' \(form mode\): 'Hm\?'"):
        run(ScriptedUser()(Question("other", "form", "Hm?")))


@pytest.mark.parametrize("era", ERAS)
def test_an_unexpected_question_fails_the_call_in_both_eras(era: str) -> None:
    async def main() -> None:
        async with memory_client(make_server(), ScriptedUser(), protocol=era) as client:
            await client.call_tool("ship", {"what": "x"})

    with pytest.raises(UnexpectedQuestion, match="unexpected question 'go'"):
        run(main())
    assert LEDGER == []


def test_the_fake_clock_moves_expiry_and_puts_the_real_clock_back() -> None:
    real = clock.now()
    with FakeClock(start=1_000_000) as fake:
        assert clock.now() == 1_000_000
        fake.advance(5)
        assert clock.now() == 1_000_005
    assert abs(clock.now() - real) < 60


def test_every_time_of_day_is_read_through_the_clock() -> None:
    """The seam holds only if nothing reads the wall clock around it (P73): only the seam itself names
    `time.time` (called, or handed on as the function), and telemetry's own clock (`telemetry/wallclock.py`,
    `now_ns`): a trace or a metric says when things really happened."""
    readers = sorted(
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "src" / "baton").rglob("*.py")
        if re.search(r"\btime\.time(_ns)?\b|datetime\.now\(|utcnow\(", path.read_text())
    )
    assert readers == ["src/baton/state/clock.py", "src/baton/telemetry/wallclock.py"]


def test_refusals_pass_for_a_careful_tool_and_fail_for_a_careless_one() -> None:
    async def call(client: Client) -> Any:
        return await client.call_tool("ship", {"what": "crate"})

    def probe() -> list[str]:
        return list(LEDGER)

    outcomes = run(check_refusals(make_server(), call, answers={"go": {"confirm": True}}, probe=probe))
    assert [(o.what, o.key, o.result.text) for o in outcomes] == [
        ("decline", "go", "not shipped"),
        ("cancel", "go", "not shipped"),
    ]
    with pytest.raises(AssertionError, match=r"acted although the user chose decline at 'go'"):
        run(check_refusals(make_server(careless=True), call, answers={"go": {"confirm": True}}, probe=probe))
    with pytest.raises(AssertionError, match="probe saw no change on the accepting path"):
        run(check_refusals(make_server(), call, answers={"go": {"confirm": True}}, probe=lambda: 0))


def test_refusals_need_a_reset_when_the_accepting_path_changes_the_start() -> None:
    server = Server("kit-once", ledger=MemoryLedger())
    done: set[str] = set()

    @server.tool()
    async def once(ctx: Context) -> str:
        if "x" in done:
            return "already"
        if await ctx.confirm("Do it?"):
            done.add("x")
        return "ok"

    async def call(client: Client) -> Any:
        return await client.call_tool("once")

    with pytest.raises(AssertionError, match="never asked it"):
        run(check_refusals(server, call, answers={"q1": {"confirm": True}}, probe=lambda: set(done)))
    run(check_refusals(server, call, answers={"q1": {"confirm": True}}, probe=lambda: set(done), reset=done.clear))


def test_tampering_is_refused_and_a_single_use_replay_does_not_run_again() -> None:
    server = make_server()
    outcomes = run(
        check_tampering(
            server,
            "tools/call",
            {"name": "pay", "arguments": {"amount": 5}},
            answers={"q1": {"confirm": True}},
            swap={"name": "pay", "arguments": {"amount": 6}},
            probe=lambda: list(LEDGER),
        )
    )
    refused = [o for o in outcomes if isinstance(o.result, McpError)]
    assert [o.what for o in refused] == ["flipped", "truncated", "not a token", "empty", "swapped", "expired"]
    assert {(o.result.code, o.result.message) for o in refused} == {(-32602, "Invalid or expired requestState")}
    assert [o.what for o in outcomes[-2:]] == ["completed", "replayed"]
    assert outcomes[-1].result == outcomes[-2].result
    assert LEDGER == ["paid 5"]  # the replay answered the recorded result: paid once


def test_tampering_needs_a_flow_that_asks() -> None:
    server = Server("kit-plain")

    @server.tool()
    def plain() -> str:
        return "hi"

    with pytest.raises(AssertionError, match="completed without asking"):
        run(check_tampering(server, "tools/call", {"name": "plain", "arguments": {}}, answers={}))


# -- the pytest plugin ----------------------------------------------------------------------------------

PLUGIN_TEST = """
import asyncio
import json

import pytest

from baton import Context, Server


@pytest.fixture
def baton_server():
    server = Server("plugin-probe")

    @server.tool()
    async def go(ctx: Context) -> str:
        return "yes" if await ctx.confirm("Go?", key="go") else "no"

    return server


@pytest.mark.parametrize("baton_era", ["2026-07-28", "2025-11-25"])
def test_fixtures(baton_client, scripted_user, fake_clock, baton_era):
    scripted_user.on("go", {"confirm": True})
    assert asyncio.run(baton_client.call_tool("go")).text == "yes"
    assert scripted_user.keys == ["go"] and fake_clock() > 0
"""


def test_the_entry_point_names_the_plugin_module() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["project"]["entry-points"]["pytest11"] == {"baton.testing.plugin": "baton.testing.plugin"}
    assert {"baton_client", "scripted_user", "fake_clock", "baton_era", "baton_server"} <= set(vars(kit_plugin))


def _pytest(tmp_path: Path, *extra_path: Path, autoload: bool = True) -> subprocess.CompletedProcess[str]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "test_probe.py").write_text(PLUGIN_TEST)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")  # not the project's addopts (which pass -p)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_DISABLE_PLUGIN_AUTOLOAD")}
    if not autoload:
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    env["PYTHONPATH"] = os.pathsep.join([*map(str, extra_path), str(ROOT / "src")])
    return processes.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path / "test_probe.py")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.process
def test_pytest_loads_the_plugin_by_its_entry_point(tmp_path: Path) -> None:
    """An installed distribution that declares the entry point (here a bare dist-info) makes pytest load the
    fixtures with no -p and no conftest; with entry points off, the fixtures are unknown (so nothing else
    brought them)."""
    site = tmp_path / "site"
    info = site / "baton_kit_probe-0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: baton-kit-probe\nVersion: 0\n")
    entry = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]["pytest11"]
    lines = "".join(f"{name} = {target}\n" for name, target in entry.items())
    (info / "entry_points.txt").write_text(f"[pytest11]\n{lines}")
    loaded = _pytest(tmp_path / "with", site)
    assert loaded.returncode == 0, loaded.stdout + loaded.stderr
    assert "2 passed" in loaded.stdout
    bare = _pytest(tmp_path / "without", site, autoload=False)
    assert bare.returncode != 0 and "fixture 'baton_client' not found" in bare.stdout


def test_the_plugin_module_imports_nothing_of_baton_at_load() -> None:
    source = Path(kit_plugin.__file__).read_text()
    top = [line for line in source.splitlines() if line.startswith(("import ", "from "))]
    assert top == [
        "from __future__ import annotations",
        "import asyncio",
        "from collections.abc import Iterator",
        "from typing import TYPE_CHECKING, Any",
        "import pytest",
    ]


def test_the_in_memory_client_runs_the_stdio_start_up_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    """A configuration `baton serve --stdio` would refuse is refused when the in-memory client is made, not on a
    later request (protocol.md P71)."""
    monkeypatch.setenv("BATON_STATE_KEYS", "not-a-key")
    with pytest.raises(ConfigurationError, match="BATON_STATE_KEYS"):
        memory_client(Server("refused"))


def test_tampering_of_a_single_use_flow_needs_a_probe() -> None:
    """Without a probe the replay of a single-use flow could not be seen running again: refused up front."""
    with pytest.raises(ValueError, match="single use: pass probe="):
        run(
            check_tampering(
                make_server(),
                "tools/call",
                {"name": "pay", "arguments": {"amount": 5}},
                answers={"q1": {"confirm": True}},
            )
        )
    assert LEDGER == []


# -- URL mode and the connect kit, in memory (protocol.md P99) ------------------------------------------


def connect_server() -> Server:
    from baton.connect import ConnectKit, OAuthProvider

    github = OAuthProvider("github", "client-1", "https://github.example/authorize", "https://github.example/token")
    server = Server("kit-connect", connect=ConnectKit(store="memory:", providers=[github]))

    @server.tool()
    async def deploy(ctx: Context, app: str) -> str:
        key = await ctx.secret("deploy_key", "Connect your deploy key")
        return f"deployed {app} with a key ending {(await key.reveal())[-4:]}"

    @server.tool()
    async def repos(ctx: Context) -> str:
        token = await ctx.connect("github")
        return f"token {json.loads(await token.reveal())['access_token']}"

    return server


@pytest.mark.parametrize("era", ERAS)
def test_the_scripted_user_finishes_a_connect_page(era: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from baton.testing import Connected

    monkeypatch.delenv("BATON_PUBLIC_URL", raising=False)  # the kit supplies a loopback one
    server = connect_server()
    user = ScriptedUser({"connect-deploy_key": Connected("key-0123-abcd")})
    user.on("connect-oauth-github", Connected({"access_token": "gho_1", "token_type": "bearer"}))

    async def flow() -> tuple[str, str, str]:
        async with memory_client(server, user, protocol=era) as client:
            first = await client.call_tool("deploy", {"app": "shop"})
            again = await client.call_tool("deploy", {"app": "cart"})  # the vault holds it now: no question
            token = await client.call_tool("repos", {})
            return first.text, again.text, token.text

    first, again, token = asyncio.run(flow())
    assert first == "deployed shop with a key ending abcd"
    assert again == "deployed cart with a key ending abcd"
    assert token == "token gho_1"
    assert user.keys == ["connect-deploy_key", "connect-oauth-github"]
    [secret_ask, _] = user.asked
    assert secret_ask.mode == "url" and secret_ask.url is not None
    assert secret_ask.url.startswith("http://127.0.0.1:8000/connect/")


@pytest.mark.parametrize("era", ERAS)
def test_a_vault_filled_beforehand_asks_nothing(era: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from baton.testing import store_credential

    monkeypatch.delenv("BATON_PUBLIC_URL", raising=False)
    server = connect_server()
    asyncio.run(store_credential(server, "deploy_key", "key-9999"))
    asyncio.run(store_credential(server, "oauth:github", {"access_token": "gho_2"}))
    user = ScriptedUser()  # no script: any question would fail the call

    async def flow() -> tuple[str, str]:
        async with memory_client(server, user, protocol=era) as client:
            deployed = await client.call_tool("deploy", {"app": "shop"})
            return deployed.text, (await client.call_tool("repos", {})).text

    assert asyncio.run(flow()) == ("deployed shop with a key ending 9999", "token gho_2")
    assert user.asked == []


def test_a_server_without_a_kit_gets_an_in_memory_one() -> None:
    from baton.testing import Connected

    server = Server("kit-default")

    @server.tool()
    async def deploy(ctx: Context) -> str:
        key = await ctx.secret("token", "Connect")
        return await key.reveal()

    async def flow() -> str:
        async with memory_client(server, ScriptedUser({"connect-token": Connected("t0k")})) as client:
            return (await client.call_tool("deploy", {})).text

    assert asyncio.run(flow()) == "t0k"
    data = Path(os.environ["BATON_DATA_DIR"])
    assert not (data / "connect-tickets.sqlite3").exists() and not (data / "vault.sqlite3").exists()  # in memory
