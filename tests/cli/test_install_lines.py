"""Every `pip install` line in README.md and docs/*.md works as written from a checkout (issue 24, item 10):
each is run with `--dry-run` in the project root, by this venv's pip, so a package name that is not
published, or an extra pyproject.toml does not define, fails here."""

from __future__ import annotations

import re
import shlex
import sys
import tomllib

import pytest
from support import processes
from support.paths import ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# A command at the start of a code line, or in backticks in prose: `pip install ...`.
LINE = re.compile(r"(?:^|`)(pip install [^`#\n]+?)\s*(?:`|#|$)", re.M)


def install_lines() -> list[tuple[str, str]]:
    found = []
    for doc in DOCS:
        for match in LINE.finditer(doc.read_text()):
            found.append((doc.name, match.group(1).strip()))
    return found


def test_the_docs_have_install_lines() -> None:
    assert len(install_lines()) >= 3  # the tutorial's, observability's and security's at least


def test_the_pydantic_extra_brings_email_validator() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(req.startswith("pydantic[email]") for req in extras["pydantic"])


@pytest.mark.process
@pytest.mark.parametrize(("doc", "line"), install_lines())
def test_an_install_line_works_from_a_checkout(doc: str, line: str) -> None:
    words = shlex.split(line)
    targets = [w for w in words[2:] if not w.startswith("-")]
    assert targets and all(t == "." or t.startswith(".[") for t in targets), (
        f"{doc}: {line!r} installs something other than this checkout"
    )
    done = processes.run(
        [sys.executable, "-m", "pip", *words[1:], "--dry-run", "--quiet"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, f"{doc}: {line!r}\n{done.stdout}\n{done.stderr}"
    assert "does not provide the extra" not in done.stderr, f"{doc}: {line!r}\n{done.stderr}"
