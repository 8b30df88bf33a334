"""The hints that say how to install one of Baton's extras: Baton is on no package index, so every hint is
one command for the Python running now, from the checkout (`baton.extras`), and no other module words one."""

from __future__ import annotations

import asyncio
import re
import sys

import pytest
from support.paths import ROOT

from baton import extras
from baton.state.store_url import NEEDS_REDIS
from baton.telemetry.switch import EXTRA_HINT


@pytest.mark.process
def test_an_editable_install_names_its_checkout_and_this_python() -> None:
    assert extras.checkout() == ROOT  # ./dev setup installs this checkout editable
    assert extras.install_extra("otel") == f"{sys.executable} -m pip install -e '{ROOT}[otel]'"


@pytest.mark.process
def test_an_install_elsewhere_says_to_run_it_in_the_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(extras, "checkout", lambda: None)
    said = extras.install_extra("redis")
    assert said == f"{sys.executable} -m pip install '.[redis]' in the root of the Baton checkout it was installed from"


def test_every_hint_follows_the_one_rule() -> None:
    assert EXTRA_HINT.endswith(extras.install_extra("otel")) and "[otel] extra" in EXTRA_HINT
    assert NEEDS_REDIS.endswith(extras.install_extra("redis"))
    for path in [*(ROOT / "src" / "baton").rglob("*.py"), *(ROOT / "docs").rglob("*.md"), ROOT / "README.md"]:
        text = path.read_text(encoding="utf-8")
        assert "mcp-baton[" not in text, f"{path}: no index has mcp-baton; install from the checkout"
        if path.suffix == ".py" and path.name != "extras.py":
            assert not re.search(r"pip install", text), f"{path}: word the install hint with baton.extras"


def _without_authlib(monkeypatch: pytest.MonkeyPatch) -> None:
    """As if the `[oauth]` extra were not installed: every import of authlib fails as a missing module does."""
    for name in [m for m in sys.modules if m == "authlib" or m.startswith("authlib.")] + ["authlib"]:
        monkeypatch.setitem(sys.modules, name, None)


def test_a_login_without_the_oauth_extra_is_an_auth_error_naming_the_install(monkeypatch: pytest.MonkeyPatch) -> None:
    from baton.client.oauth import AuthError
    from baton.client.oauth.discovery import ServerMetadata
    from baton.client.oauth.flow import TokenGrant, refresh
    from baton.client.oauth.limits import oauth_client
    from baton.client.oauth.registration import ClientInfo

    _without_authlib(monkeypatch)
    with pytest.raises(AuthError) as made:
        oauth_client(client_id="c")
    assert str(made.value).endswith(extras.install_extra("oauth")) and "[oauth] extra" in str(made.value)
    meta = ServerMetadata.__new__(ServerMetadata)
    grant = TokenGrant.__new__(TokenGrant)
    with pytest.raises(AuthError, match=r"\[oauth\] extra"):  # the refresh learns it before it sends anything
        asyncio.run(refresh(meta, grant, ClientInfo.__new__(ClientInfo)))


def test_a_connect_provider_without_the_oauth_extra_stops_the_start(monkeypatch: pytest.MonkeyPatch) -> None:
    from baton.connect import ConnectKit, OAuthProvider
    from baton.server.startup import ConfigurationError

    kit = ConnectKit(
        store="memory:",
        public_url="http://127.0.0.1:9",
        providers=[OAuthProvider("git", "id", "https://git.example/authorize", "https://git.example/token")],
    )
    kit.check(authenticated=True)  # installed here: nothing to say
    _without_authlib(monkeypatch)
    with pytest.raises(ConfigurationError) as said:
        kit.check(authenticated=True)
    assert str(said.value).endswith(extras.install_extra("oauth"))
