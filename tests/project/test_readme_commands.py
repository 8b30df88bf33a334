"""README.md's `./dev` commands are the `dev` script's: each one README names exists, each one the script
has is named, and the set-up block stays the two commands it promises (`./dev demo`, `./dev test`)."""

from __future__ import annotations

import re

from support.paths import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def dev_commands() -> set[str]:
    """The subcommands of the `dev` script: the labels of its `case`."""
    return set(re.findall(r"^    ([a-z]+)\)$", (ROOT / "dev").read_text(encoding="utf-8"), re.M))


def test_readme_names_every_dev_command_and_no_other() -> None:
    named = set(re.findall(r"\./dev ([a-z]+)", README))
    assert dev_commands() >= {"setup", "demo", "test", "check"}
    assert named == dev_commands(), f"README names {sorted(named)}, ./dev has {sorted(dev_commands())}"


def test_the_set_up_block_is_the_two_commands() -> None:
    section = README.split("## Set up and run", 1)[1]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    assert [line.split()[0:2] for line in block.splitlines()] == [["./dev", "demo"], ["./dev", "test"]]
