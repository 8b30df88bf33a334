"""`baton dev`'s Skills section in real headless Chromium, by visible text and ARIA roles: the entries as
listed, a SKILL.md loaded verified, and a tampered one refused with the check that failed (protocol.md P183)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect
from support.dev import baton_dev


@pytest.fixture
def page(chromium: Any) -> Iterator[Page]:
    context = chromium.new_context()
    context.route(re.compile(r"^(?!http://127\.0\.0\.1[:/])"), lambda route: route.abort())
    page = context.new_page()
    page.set_default_timeout(20_000)
    yield page
    context.close()


def skill(page: Page, name: str) -> Any:
    region = page.get_by_role("region", name="Skills")
    item = region.locator("details.item").filter(has=page.get_by_text(name, exact=True))
    item.locator("summary").first.click()
    return item


def test_a_skill_is_listed_and_its_skill_md_loaded_verified(page: Page) -> None:
    manifest = Path("examples/skills/baton-tools/SKILL.md").read_bytes()
    with baton_dev("examples/everything.py") as dev:
        page.goto(dev.address)
        item = skill(page, "baton-tools")
        expect(item).to_contain_text("Write an MCP tool with Baton")
        files = item.get_by_role("list", name="Files of baton-tools")
        expect(files.get_by_role("listitem")).to_have_text(
            [
                f"skill://baton-tools/SKILL.md ({len(manifest)} bytes)",
                re.compile(r"^skill://baton-tools/references/asking\.md \(\d+ bytes\)$"),
            ]
        )
        item.get_by_role("button", name="Load SKILL.md").click()
        expect(item.get_by_role("status")).to_have_text("Verified: size, digest and frontmatter match the entry.")
        expect(item.get_by_label("SKILL.md of baton-tools")).to_contain_text("# Writing a Baton tool")


def test_a_tampered_skill_md_is_refused_in_the_page(page: Page, tmp_path: Path) -> None:
    (tmp_path / "skills/notes").mkdir(parents=True)
    (tmp_path / "skills/notes/SKILL.md").write_text("---\nname: notes\ndescription: Take notes.\n---\nBody.\n")
    (tmp_path / "app.py").write_text(
        "import dataclasses\n"
        "from baton import Server\n"
        "server = Server('tampered')\n"
        "server.add_skills('skills')\n"
        "uri = 'skill://notes/SKILL.md'\n"
        "# the size listed, not the bytes served\n"
        "server.resources[uri] = dataclasses.replace(server.resources[uri], fn=lambda: 'x' * 51)\n"
    )
    with baton_dev("app.py", cwd=tmp_path) as dev:
        page.goto(dev.address)
        item = skill(page, "notes")
        item.get_by_role("button", name="Load SKILL.md").click()
        expect(item.get_by_role("alert")).to_have_text(
            re.compile(r"refused: its digest is sha256:[0-9a-f]{64}, the entry lists sha256:[0-9a-f]{64}$")
        )
        expect(item.get_by_label("SKILL.md of notes")).to_have_count(0)


def test_a_server_without_skills_says_so(page: Page) -> None:
    with baton_dev("examples/projects.py") as dev:
        page.goto(dev.address)
        expect(page.get_by_role("region", name="Skills")).to_contain_text("This server offers no skills.")
