"""The hints that say how to install one of Baton's extras: Baton is on no package index, so every hint is
one command for the Python running now, from the checkout (`baton.extras`), and no other module words one."""

from __future__ import annotations

import re
import sys

import pytest
from support.paths import ROOT

from baton import extras
from baton.state.store_url import NEEDS_REDIS
from baton.telemetry.switch import EXTRA_HINT


def test_an_editable_install_names_its_checkout_and_this_python() -> None:
    assert extras.checkout() == ROOT  # ./dev setup installs this checkout editable
    assert extras.install_extra("otel") == f"{sys.executable} -m pip install -e '{ROOT}[otel]'"


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
