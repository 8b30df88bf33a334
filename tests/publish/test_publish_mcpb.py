"""`baton publish mcpb`: the bundle is accepted by the official MCPB command line (`@anthropic-ai/mcpb validate`,
from npm), and, unpacked, starts as its manifest says with `uv` (from PyPI) and answers `tools/list` and
`tools/call` over stdio. Baton is not on PyPI, so the bundle carries a wheel of this checkout (`--wheel`); every
other dependency comes from PyPI through uv, as on a user's machine. Bad input is one line and exit 2."""

from __future__ import annotations

import json
import shutil
import subprocess
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import processes
from support.mcpb import ensure_mcpb
from support.paths import BATON, ROOT
from support.peer_venvs import ensure_uv, peer_env, run_step
from support.stdio import StdioPeer

pytestmark = pytest.mark.process  # every test runs baton, mcpb or uv

SERVER = '''
"""A bundled server."""
from baton import Server, ServerCard

server = Server(
    "notes",
    version="1.4.0",
    title="Notes",
    instructions="Keep and find short notes.",
    card=ServerCard(name="io.github.example/notes", repository_url="https://github.com/example/notes"),
)


@server.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b
'''


@pytest.fixture(scope="module")
def baton_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel of this checkout, built by uv from a copy of its sources (nothing written into the checkout)."""
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "src", source / "src", ignore=shutil.ignore_patterns("*.egg-info", "__pycache__"))
    run_step([str(ensure_uv()), "build", "--wheel", "--out-dir", str(work / "dist"), str(source)], "building Baton")
    (wheel,) = (work / "dist").glob("mcp_baton-*.whl")
    return wheel


@pytest.fixture
def bundle(tmp_path: Path, baton_wheel: Path) -> Iterator[Path]:
    (tmp_path / "notes.py").write_text(SERVER)
    done = baton(tmp_path, "notes.py:server", "--author", "Example", "--wheel", str(baton_wheel))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("wrote notes-1.4.0.mcpb (")
    assert "from PyPI" not in done.stderr  # Baton's wheel is in the bundle: nothing to warn about
    yield tmp_path / "notes-1.4.0.mcpb"


def baton(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return processes.run(
        [BATON, "publish", "mcpb", *args], cwd=cwd, capture_output=True, text=True, timeout=120, check=False
    )


def mcpb(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in peer_env().items() if k != "NODE_OPTIONS"}
    return processes.run([*ensure_mcpb(), *args], capture_output=True, text=True, timeout=120, env=env, check=False)


def test_the_official_cli_accepts_the_bundle_and_it_starts_with_uv(bundle: Path, tmp_path: Path) -> None:
    unpacked = tmp_path / "installed"
    done = mcpb("unpack", str(bundle), str(unpacked))
    assert done.returncode == 0, done.stdout + done.stderr
    validated = mcpb("validate", str(unpacked))
    print(f"mcpb validate: {validated.stdout.strip()}")
    assert validated.returncode == 0 and "Manifest schema validation passes!" in validated.stdout, validated.stdout
    info = mcpb("info", str(bundle))
    assert info.returncode == 0, info.stdout + info.stderr
    print(f"bundle size: {bundle.stat().st_size} bytes (with Baton's wheel)")

    manifest = json.loads((unpacked / "manifest.json").read_text())
    assert manifest["manifest_version"] == "0.4" and manifest["server"]["type"] == "uv"
    assert manifest["tools"] == [{"name": "add", "description": "Add two numbers."}]
    assert manifest["author"] == {"name": "Example"} and manifest["display_name"] == "Notes"
    config = manifest["server"]["mcp_config"]
    assert config["command"] == "uv"
    # Started as a host does: the manifest's command, ${__dirname} the bundle's folder, uv from PyPI.
    argv = [str(ensure_uv()), *(arg.replace("${__dirname}", str(unpacked)) for arg in config["args"])]
    peer = StdioPeer("", command=["env", "-u", "VIRTUAL_ENV", "-u", "PYTHONPATH", *argv])
    with peer.process:
        peer.request(1, "tools/list")
        listed = peer.read(timeout=240)  # the first start installs the dependencies
        assert [tool["name"] for tool in listed["result"]["tools"]] == ["add"], listed
        peer.request(2, "tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}})
        called = peer.read(timeout=30)
        assert called["result"]["content"] == [{"type": "text", "text": "5"}], called
        assert peer.close() == 0


def test_a_manifest_the_official_cli_refuses_is_refused(bundle: Path, tmp_path: Path) -> None:
    """The validator is not a rubber stamp: our manifest without its author fails it."""
    with zipfile.ZipFile(bundle) as archive:
        manifest = json.loads(archive.read("manifest.json"))
    del manifest["author"]
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "manifest.json").write_text(json.dumps(manifest))
    done = mcpb("validate", str(tmp_path / "broken"))
    assert done.returncode != 0 and "author" in done.stdout


def test_without_wheels_the_bundle_is_small_and_names_baton_from_pypi(tmp_path: Path) -> None:
    (tmp_path / "notes.py").write_text(SERVER)
    done = baton(tmp_path, "notes.py", "--author", "Example", "--requirement", "httpx>=0.27", "-o", "small.mcpb")
    assert done.returncode == 0, done.stderr
    with zipfile.ZipFile(tmp_path / "small.mcpb") as archive:
        assert sorted(archive.namelist()) == [
            "manifest.json",
            "pyproject.toml",
            "server/app/notes.py",
            "server/main.py",
        ]
        project = archive.read("pyproject.toml").decode()
    assert '"mcp-baton==0.1.0",' in project and '"httpx>=0.27",' in project
    assert "from PyPI" in done.stderr and "--wheel" in done.stderr  # where Baton comes from, and the way out
    print(f"bundle size: {(tmp_path / 'small.mcpb').stat().st_size} bytes (without wheels)")
    again = baton(tmp_path, "notes.py", "--author", "Example", "--requirement", "httpx>=0.27", "-o", "again.mcpb")
    assert again.returncode == 0
    assert (tmp_path / "again.mcpb").read_bytes() == (tmp_path / "small.mcpb").read_bytes()  # reproducible


@pytest.mark.parametrize(
    ("args", "status", "says"),
    [
        (["notes.py"], 2, "the following arguments are required: --author"),
        (["notes.py", "--author", " "], 2, "pass --author NAME"),
        (["notes.py", "--author", "A", "--wheel", "notes.py"], 2, "is not a wheel file"),
        (["notes.py", "--author", "A", "--wheel", "gone-1.0-py3-none-any.whl"], 1, "cannot read gone-1.0"),
        (["notes.py", "--author", "A", "--requirement", ">=1"], 2, "is not a requirement"),
        (["notes.py", "--author", "A", "-o", "no/such/dir/x.mcpb"], 1, "cannot write no/such/dir/x.mcpb"),
        (["os:path", "--author", "A"], 2, "not a baton.Server"),
    ],
)
def test_bad_input(tmp_path: Path, args: list[str], status: int, says: str) -> None:
    (tmp_path / "notes.py").write_text(SERVER)
    done = baton(tmp_path, *args)
    last = done.stderr.strip().splitlines()[-1]  # argparse's usage, then one line; ours is the line alone
    assert done.returncode == status and says in last and "Traceback" not in done.stderr, done.stderr
    assert not list(tmp_path.glob("*.mcpb*"))
