"""examples/deploy/Dockerfile, checked without Docker (no engine runs on the test machine, so the image itself
is never built here): its COPY, ENV, WORKDIR and RUN steps are read from the file and run in a fresh venv on
this machine's Python (the FROM line's version), then its ENTRYPOINT and CMD start the server, as
`docker run -p` would, and it must answer behind a real nginx running examples/deploy/nginx.conf. An
instruction the test does not know fails it, so the file cannot grow a step that is not run here."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from scaleout import Nginx
from support.paths import ROOT
from support.peer_venvs import peer_env, run_step
from support.processes import PortOpen, free_port, start
from wire import post, request

from baton import Key

DOCKERFILE = ROOT / "examples" / "deploy" / "Dockerfile"
NOT_RUN = {"USER"}  # the image's user: this test runs as whoever runs the suite


@dataclass
class Image:
    """What the Dockerfile says, in order of what a build does."""

    base: str = ""
    steps: list[tuple[str, str]] = field(default_factory=list)  # (instruction, arguments) of COPY/ENV/WORKDIR/RUN
    exposed: list[str] = field(default_factory=list)
    entrypoint: list[str] = field(default_factory=list)
    cmd: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def read_dockerfile(text: str) -> Image:
    image = Image()
    logical = re.sub(r"\\\n", " ", "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#")))
    for line in filter(None, (raw.strip() for raw in logical.splitlines())):
        instruction, _, rest = line.partition(" ")
        instruction, rest = instruction.upper(), rest.strip()
        if instruction == "FROM":
            image.base = rest
        elif instruction in ("COPY", "ENV", "WORKDIR", "RUN"):
            image.steps.append((instruction, rest))
        elif instruction == "EXPOSE":
            image.exposed += rest.split()
        elif instruction in ("ENTRYPOINT", "CMD"):
            setattr(image, instruction.lower(), json.loads(rest))  # the exec form: no shell in between
        elif instruction in NOT_RUN:
            image.skipped.append(line)
        else:
            pytest.fail(f"{DOCKERFILE} has {instruction}, which this test does not know how to check")
    return image


def build(image: Image, root: Path, venv: Path) -> tuple[Path, dict[str, str]]:
    """Run the steps with `root` as the image's file system and `venv` as its Python; the workdir and ENV."""
    env = {**peer_env(), "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}", "VIRTUAL_ENV": str(venv)}
    workdir = root
    for instruction, rest in image.steps:
        if instruction == "WORKDIR":
            workdir = root / rest.lstrip("/")
            workdir.mkdir(parents=True, exist_ok=True)
        elif instruction == "ENV":
            env.update(pair.split("=", 1) for pair in shlex.split(rest))
        elif instruction == "COPY":
            *sources, destination = shlex.split(rest)
            for source in sources:
                target = workdir / destination
                if destination.endswith("/") or len(sources) > 1:
                    target = target / Path(source).name
                if (ROOT / source).is_dir():
                    shutil.copytree(ROOT / source, target, ignore=shutil.ignore_patterns("__pycache__"))
                else:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy(ROOT / source, target)
        else:
            print(f"RUN {rest}")
            run_step(["sh", "-c", rest], f"the Dockerfile's RUN {rest}", cwd=workdir, env=env)
    return workdir, env


@pytest.mark.nginx
def test_the_dockerfiles_steps_serve_behind_nginx(tmp_path: Path) -> None:
    image = read_dockerfile(DOCKERFILE.read_text())
    python = f"python:{sys.version_info.major}.{sys.version_info.minor}"
    assert image.base.startswith(python), f"the test runs the steps on {python}, the Dockerfile is {image.base}"
    assert image.skipped == ["USER 65534"]
    venv = tmp_path / "venv"
    run_step([sys.executable, "-m", "venv", str(venv)], "a fresh venv for the Dockerfile's steps")
    workdir, env = build(image, tmp_path / "image", venv)
    assert shutil.which("baton", path=env["PATH"]) == str(venv / "bin" / "baton")  # the RUN installed it

    argv = image.entrypoint + image.cmd
    assert argv[argv.index("--http") + 1] == f"0.0.0.0:{image.exposed[0].split('/')[0]}"
    port = free_port()
    argv[argv.index("--http") + 1] = f"127.0.0.1:{port}"  # what `docker run -p 127.0.0.1:PORT:8000` maps to
    env |= {"BATON_STATE_KEYS": Key.generate("k1").encode(), "BATON_DATA_DIR": str(tmp_path / "data")}  # docker run -e
    with start(argv, cwd=workdir, env=env, log=tmp_path / "server.log", ready=PortOpen(port), name="container"):
        nginx = Nginx(tmp_path / "nginx", [port])
        try:
            nginx.start()
            listed = post(nginx.url, request("tools/list"), Host="mcp.example.com")  # the name CMD admits
            assert listed.status_code == 200, listed.text
            assert [tool["name"] for tool in listed.json()["result"]["tools"]] == ["add"]
            called = post(nginx.url, request("tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}}))
            assert called.json()["result"]["content"] == [{"type": "text", "text": "5"}], called.text
            refused = post(nginx.url, request("tools/list"), Host="evil.example.net")
            assert refused.status_code == 403, refused.text  # only the names --allow-host gives (and loopback)
        finally:
            nginx.stop()


def test_an_unknown_instruction_fails_the_check() -> None:
    with pytest.raises(pytest.fail.Exception, match="HEALTHCHECK"):
        read_dockerfile("FROM python:3.11-slim\nHEALTHCHECK CMD true\n")
