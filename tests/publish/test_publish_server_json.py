"""`baton publish server-json`: the `server.json` it writes is valid against the MCP Registry's own schema
(2025-12-11, vendored under tests/schemas/registry-2025-12-11/), carries the server's metadata and the options,
and the README marker is printed; bad input is one line and exit 2, an unwritable file exit 1."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import jsonschema
import pytest
from support import processes
from support.paths import BATON, ROOT

from baton.cli import main
from baton.publish.server_json import SCHEMA

SCHEMA_FILE = ROOT / "tests" / "schemas" / "registry-2025-12-11" / "server.schema.json"
SCHEMA_SHA256 = "3fba09590c99f61735d234822279f4223fab9e300c0a81e81c91ab62a4114de0"  # its README says where from

CARDED = """
from baton import Server, ServerCard

server = Server(
    "notes",
    version="1.4.0",
    title="Notes",
    instructions="Keep and find   short notes.",
    card=ServerCard(
        name="io.github.example/notes",
        website_url="https://notes.example.com",
        repository_url="https://github.com/example/notes",
        icons=({"src": "https://notes.example.com/icon.png", "mimeType": "image/png", "sizes": ["48x48"]},),
    ),
)

@server.tool()
def add(a: int, b: int) -> int:
    return a + b
"""

PLAIN = """
from baton import Server

app = Server("plain", version="2.0.1")
"""


def validator() -> jsonschema.Draft7Validator:
    schema = json.loads(SCHEMA_FILE.read_text())
    return jsonschema.Draft7Validator(schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)


def publish(tmp_path: Path, source: str, *args: str) -> tuple[int, dict[str, object] | None]:
    (tmp_path / "app.py").write_text(source)
    out = tmp_path / "server.json"
    status = main(["publish", "server-json", str(tmp_path / "app.py"), "-o", str(out), *args])
    return status, json.loads(out.read_text()) if out.exists() else None


def test_the_vendored_schema_is_the_registrys() -> None:
    assert hashlib.sha256(SCHEMA_FILE.read_bytes()).hexdigest() == SCHEMA_SHA256
    assert json.loads(SCHEMA_FILE.read_text())["$id"] == SCHEMA


def test_from_the_servers_card_with_a_pypi_package_and_a_remote(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, doc = publish(tmp_path, CARDED, "--pypi", "notes-mcp", "--remote", "https://notes.example.com/mcp")
    assert status == 0 and doc is not None
    validator().validate(doc)
    assert doc == {
        "$schema": SCHEMA,
        "name": "io.github.example/notes",
        "description": "Keep and find short notes.",
        "version": "1.4.0",
        "title": "Notes",
        "websiteUrl": "https://notes.example.com",
        "repository": {"url": "https://github.com/example/notes", "source": "github"},
        "icons": [{"src": "https://notes.example.com/icon.png", "mimeType": "image/png", "sizes": ["48x48"]}],
        "packages": [
            {"registryType": "pypi", "identifier": "notes-mcp", "version": "1.4.0", "transport": {"type": "stdio"}}
        ],
        "remotes": [{"type": "streamable-http", "url": "https://notes.example.com/mcp"}],
    }
    out = capsys.readouterr()
    assert out.out == "<!-- mcp-name: io.github.example/notes -->\n"
    assert "README of the PyPI package notes-mcp" in out.err


def test_from_options_for_a_server_without_a_card(tmp_path: Path) -> None:
    status, doc = publish(
        tmp_path,
        PLAIN + "\n",
        "--name",
        "com.example/plain",
        "--description",
        "Plain tools.",
        "--title",
        "Plain",
        "--website",
        "https://example.com/plain",
        "--repository",
        "https://gitlab.com/example/plain",
        "--pypi",
        "plain_mcp",
        "--package-version",
        "2.0.1.post1",
    )
    assert status == 0 and doc is not None
    validator().validate(doc)
    assert doc["name"] == "com.example/plain" and doc["version"] == "2.0.1" and doc["title"] == "Plain"
    assert doc["repository"] == {"url": "https://gitlab.com/example/plain", "source": "gitlab"}
    assert doc["packages"] == [
        {"registryType": "pypi", "identifier": "plain_mcp", "version": "2.0.1.post1", "transport": {"type": "stdio"}}
    ]
    assert "remotes" not in doc


def test_remotes_only_and_to_stdout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "app.py").write_text(CARDED)
    urls = ["https://a.example.com/mcp", "https://b.example.com/mcp"]
    assert (
        main(
            [
                "publish",
                "server-json",
                f"{tmp_path / 'app.py'}:server",
                "-o",
                "-",
                "--remote",
                urls[0],
                "--remote",
                urls[1],
            ]
        )
        == 0
    )
    out = capsys.readouterr()
    doc = json.loads(out.out)
    validator().validate(doc)
    assert [r["url"] for r in doc["remotes"]] == urls and "packages" not in doc
    assert out.err.strip() == "<!-- mcp-name: io.github.example/notes -->"


def test_an_mcpb_bundle_with_its_digest(tmp_path: Path) -> None:
    bundle = tmp_path / "notes-1.4.0.mcpb"
    bundle.write_bytes(b"a bundle's bytes")
    url = "https://github.com/example/notes/releases/download/v1.4.0/notes-1.4.0.mcpb"
    status, doc = publish(tmp_path, CARDED, "--mcpb", url, str(bundle))
    assert status == 0 and doc is not None
    validator().validate(doc)
    assert doc["packages"] == [
        {
            "registryType": "mcpb",
            "identifier": url,
            "version": "1.4.0",
            "fileSha256": hashlib.sha256(b"a bundle's bytes").hexdigest(),
            "transport": {"type": "stdio"},
        }
    ]


def test_the_schema_refuses_what_the_registry_refuses() -> None:
    """The vendored schema is not a rubber stamp: the document it would refuse is refused."""
    with pytest.raises(jsonschema.ValidationError):
        validator().validate({"$schema": SCHEMA, "name": "no-slash", "description": "x", "version": "1"})
    with pytest.raises(jsonschema.ValidationError):
        validator().validate({"$schema": SCHEMA, "name": "a.b/c", "description": "x" * 101, "version": "1"})


@pytest.mark.parametrize(
    ("source", "args", "says"),
    [
        (PLAIN, ["--pypi", "p", "--description", "d"], "pass --name io.github.YOU/NAME"),
        (PLAIN, ["--name", "plain", "--pypi", "p", "--description", "d"], "'plain' is not a registry name"),
        (PLAIN, ["--name", "a.b/c", "--pypi", "p"], "has no description: pass --description"),
        (CARDED, [], "--pypi PACKAGE"),
        (CARDED, ["--pypi", "p", "--description", "x" * 101], "101 characters; the registry takes at most 100"),
        (CARDED, ["--remote", "ftp://notes.example.com"], "--remote 'ftp://notes.example.com' is not an http(s) URL"),
        (CARDED, ["--pypi", "not a name"], "--pypi 'not a name' is not a PyPI package name"),
        (CARDED, ["--pypi", "p", "--package-version", "^1.4"], "one specific version"),
        (CARDED.replace('"1.4.0"', '"latest"'), ["--pypi", "p"], "the server's version"),
        (CARDED, ["--mcpb", "http://example.com/n.mcpb", str(SCHEMA_FILE)], "is not an https URL"),
        ("raise RuntimeError('broken')\n", ["--pypi", "p"], "broken"),
    ],
)
def test_bad_input_is_one_clear_error_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], source: str, args: list[str], says: str
) -> None:
    status, doc = publish(tmp_path, source, *args)
    err = capsys.readouterr().err
    assert status == 2 and doc is None
    assert err.startswith("baton publish server-json: ") and says in err
    if "broken" not in says:
        assert err.count("\n") == 1


def test_a_missing_file_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["publish", "server-json", str(tmp_path / "nope.py"), "--pypi", "p"]) == 2
    assert "nope.py" in capsys.readouterr().err


def test_an_unreadable_bundle_is_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "app.py").write_text(CARDED)
    gone = tmp_path / "gone.mcpb"
    assert (
        main(["publish", "server-json", str(tmp_path / "app.py"), "--mcpb", "https://example.com/x.mcpb", str(gone)])
        == 1
    )
    assert capsys.readouterr().err == f"baton publish server-json: cannot read {gone}: No such file or directory\n"


def test_an_unwritable_output_is_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "app.py").write_text(CARDED)
    out = tmp_path / "missing-folder" / "server.json"
    assert main(["publish", "server-json", str(tmp_path / "app.py"), "--pypi", "p", "-o", str(out)]) == 1
    assert capsys.readouterr().err == f"baton publish server-json: cannot write {out}: No such file or directory\n"


@pytest.mark.process
def test_the_baton_command_runs_it(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(CARDED)
    done = processes.run(
        [BATON, "publish", "server-json", "app.py", "--remote", "https://notes.example.com/mcp"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "<!-- mcp-name: io.github.example/notes -->\n"
    validator().validate(json.loads((tmp_path / "server.json").read_text()))
