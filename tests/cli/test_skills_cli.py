"""`baton skills` against real servers over stdio, and `baton serve` refusing a bad skills folder in one
message, each problem at its file, with no traceback (protocol.md P181, P183)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from support import processes
from support.paths import BATON, ROOT

pytestmark = pytest.mark.process  # every test here starts processes (support.markers)

EVERYTHING = [BATON, "serve", "examples/everything.py", "--stdio"]


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return processes.run([BATON, *args], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)


def test_skills_lists_and_shows_a_skill_verified() -> None:
    listed = run_cli("skills", "--", *EVERYTHING)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.startswith("baton-tools  skill://baton-tools/SKILL.md (2 files)\n    Write an MCP tool")
    shown = run_cli("skills", "baton-tools", "--", *EVERYTHING)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == (ROOT / "examples/skills/baton-tools/SKILL.md").read_text() + (
        "\nIts other files (listed, not fetched):\n    skill://baton-tools/references/asking.md  "
        f"{(ROOT / 'examples/skills/baton-tools/references/asking.md').stat().st_size} bytes\n"
    )
    unknown = run_cli("skills", "nope", "--", *EVERYTHING)
    assert unknown.returncode == 2 and "the server has no skill 'nope'; it has: baton-tools" in unknown.stderr


def test_skills_of_a_server_without_any() -> None:
    done = run_cli("skills", "--", BATON, "serve", "examples/projects.py", "--stdio")
    assert done.returncode == 0, done.stderr
    assert "offers no skills" in done.stdout


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


SERVER = """
from baton import Server
server = Server("s")
server.add_skills({folder!r})
{extra}
"""


def test_a_tampered_skill_is_refused_by_the_cli(tmp_path: Path) -> None:
    write(tmp_path / "skills/notes/SKILL.md", "---\nname: notes\ndescription: Take notes.\n---\nBody.\n")
    extra = 'server.skills.skills["skill://notes/SKILL.md"].frontmatter["description"] = "Harmless."'
    app = write(tmp_path / "app.py", SERVER.format(folder=str(tmp_path / "skills"), extra=extra))
    done = run_cli("skills", "notes", "--", BATON, "serve", str(app), "--stdio")
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines()[-1] == (
        "baton skills: skill file skill://notes/SKILL.md refused: its frontmatter differs from the entry's in "
        "description: the skill is not loaded"
    )
    assert "Body." not in done.stdout


def test_serve_refuses_a_bad_skills_folder_each_problem_at_its_file(tmp_path: Path) -> None:
    folder = tmp_path / "skills"
    write(folder / "good/SKILL.md", "---\nname: good\ndescription: Fine.\n---\n")
    write(folder / "renamed/SKILL.md", "---\nname: other\ndescription: x\n---\n")
    write(folder / "plain/SKILL.md", "no frontmatter\n")
    (folder / "empty").mkdir()
    write(tmp_path / "outside.txt", "secret")
    os.symlink(tmp_path / "outside.txt", folder / "good" / "leak.txt")
    app = write(tmp_path / "app.py", SERVER.format(folder=str(folder), extra=""))
    done = processes.run(
        [BATON, "serve", str(app), "--stdio"], cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr
    for line in (
        "skills/empty: has no SKILL.md",
        "skills/good/leak.txt: is a symbolic link",
        "skills/plain/SKILL.md: SKILL.md must begin with YAML frontmatter",
        "skills/renamed/SKILL.md: its name is 'other' but its folder is 'renamed'",
        "see docs/skills.md",
    ):
        assert line in done.stderr, done.stderr
