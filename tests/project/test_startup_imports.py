"""What `baton` loads to start: a host starts `baton serve FILE --stdio` at every launch, and the tests start
`baton` hundreds of times, so the command loads what its command needs and no more. The client, OAuth's JWT
code and httpx load with the commands that use them (`baton.client`, `baton.client.oauth` and `baton.render`
load their public names on first use). Nor does pytest, in a project that installs Baton: it loads the
`baton.testing.plugin` entry point in every run, and `baton` and `baton.testing` load their names on first use."""

from __future__ import annotations

import sys

import pytest
from support import processes

pytestmark = pytest.mark.process

NOT_FOR_SERVE = ("httpx", "jwt", "authlib", "baton.client.core", "baton.client.oauth.machine", "baton.render.terminal")


def loaded(code: str) -> set[str]:
    done = processes.run(
        [sys.executable, "-c", f"import sys\n{code}\nprint('\\n'.join(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
    )
    return set(done.stdout.split())


def test_the_command_line_and_a_stdio_server_load_no_client_jwt_or_httpx() -> None:
    modules = loaded("import baton.cli.main, baton.cli.serve, baton.serve.stdio, baton.serve.target")
    assert "baton.server.core" in modules
    assert not modules & set(NOT_FOR_SERVE), sorted(modules & set(NOT_FOR_SERVE))


def test_the_command_line_loads_the_server_only_for_the_commands_that_serve() -> None:
    """`baton keys`, `baton install`, `baton publish --help` and the client commands start without the server
    (0.15 s of CPU to import the command line instead of 0.25 s)."""
    modules = loaded("import baton.cli.main, baton.cli.keys, baton.cli.install, baton.cli.publish")
    assert not modules & {"baton.server.core", "baton.serve.run", "baton.connect.kit", "uvicorn"}


def test_the_parser_loads_no_event_loop_forms_cipher_or_orjson() -> None:
    """What every command pays before it runs: the parser's modules load asyncio, the forms, the AES cipher and
    orjson only when a command needs them (`baton install` 0.14 -> 0.08 s of CPU, `baton keys` 0.15 -> 0.09 s)."""
    modules = loaded("import baton.cli.main")
    heavy = {"asyncio", "baton.forms", "cryptography.hazmat.primitives.ciphers.aead", "orjson", "baton.state.seal"}
    assert not modules & heavy, sorted(modules & heavy)


def test_the_pytest_plugin_loads_none_of_baton_until_a_fixture_asks() -> None:
    modules = loaded("import baton.testing.plugin")
    assert {m for m in modules if m.startswith("baton")} == {
        "baton",
        "baton.content",
        "baton.lazy_exports",
        "baton.version",
        "baton.testing",
        "baton.testing.plugin",
    }


def test_the_public_names_still_import_where_the_docs_say() -> None:
    modules = loaded(
        "from baton import Server, Context, Accepted, KeyRing, McpError, content, __version__\n"
        "from baton.testing import memory_client, ScriptedUser, FakeClock, check_tampering\n"
        "import baton, baton.testing\n"
        "assert 'Server' in dir(baton) and 'memory_client' in dir(baton.testing)\n"
        "from baton.client import Client, Question, Round\n"
        "from baton.client.oauth import OAuth, ClientCredentials\n"
        "from baton.render import TerminalRenderer, form_html\n"
        "import baton.client, baton.client.oauth\n"
        "assert 'Client' in dir(baton.client) and 'OAuth' in dir(baton.client.oauth)"
    )
    assert {"baton.client.core", "baton.client.oauth.machine", "baton.render.terminal"} <= modules
    assert {"baton.server.core", "baton.testing.memory"} <= modules


def test_a_name_that_is_not_there_is_an_attribute_error() -> None:
    import baton
    import baton.client

    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        baton.client.Nope  # noqa: B018
    with pytest.raises(AttributeError, match="module 'baton' has no attribute 'Nope'"):
        baton.Nope  # noqa: B018
