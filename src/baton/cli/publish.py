"""`baton publish server-json FILE.py[:ATTR] ...` and `baton publish mcpb FILE.py[:ATTR] ...`: the options, what
is printed, and the exit status (0; 2 for bad input; 1 when a file cannot be written; 130 on Ctrl-C)."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..publish.described import PublishError, load, read_file
from ..publish.mcpb import BATON_DISTRIBUTION, Bundle, build, carries_baton, default_output
from ..publish.server_json import Where, document, marker
from ..version import __version__

if TYPE_CHECKING:
    from .main import Commands


def register(commands: Commands) -> None:
    """`baton publish` and its formats, each an argparse subparser of its own."""
    p = commands.add_parser(
        "publish",
        help="describe a server for the MCP Registry or desktop hosts: baton publish server-json|mcpb FILE",
        description="Write what registries and hosts read about a server, from the server itself. "
        'See docs/deploy.md, "Being published".',
    )
    p.set_defaults(run=run, command_parser=p)
    formats = p.add_subparsers(dest="format", required=True, metavar="{server-json,mcpb}")
    sj = formats.add_parser(
        "server-json",
        help="a server.json for the MCP Registry (schema 2025-12-11), and the README line that proves a PyPI "
        "package is yours",
    )
    sj.add_argument("target", help="FILE.py[:ATTR] or module:attr")
    sj.add_argument("--name", help="registry name, io.github.YOU/NAME or com.example/NAME (default: its card's)")
    sj.add_argument("--pypi", metavar="PACKAGE", help="the PyPI package that runs the server over stdio")
    sj.add_argument(
        "--mcpb",
        nargs=2,
        metavar=("URL", "FILE"),
        help="an MCPB bundle (baton publish mcpb): where clients download it, and the file, for its SHA-256",
    )
    sj.add_argument("--package-version", metavar="VERSION", help="that package's version (default: the server's)")
    sj.add_argument(
        "--remote", action="append", default=[], metavar="URL", help="a Streamable HTTP endpoint (repeatable)"
    )
    sj.add_argument("--title", help="display title, at most 100 characters (default: the server's title)")
    sj.add_argument("--website", metavar="URL", help="the server's web page (default: its card's)")
    sj.add_argument("--repository", metavar="URL", help="its source repository (default: its card's)")
    sj.add_argument("-o", "--output", default="server.json", metavar="FILE", help="where to write (- for stdout)")
    bundle = formats.add_parser("mcpb", help="an MCPB bundle (.mcpb) that desktop hosts install and start with uv")
    bundle.add_argument("target", help="FILE.py[:ATTR]: the server's file, bundled")
    bundle.add_argument("--author", required=True, metavar="NAME", help="the author named in the manifest")
    bundle.add_argument("--name", help="the bundle's name (default: the server's)")
    bundle.add_argument(
        "--requirement",
        action="append",
        default=[],
        metavar="SPEC",
        help="a dependency the server imports, such as 'httpx>=0.27' (repeatable; one naming mcp-baton replaces "
        "the default mcp-baton==VERSION)",
    )
    bundle.add_argument(
        "--wheel",
        action="append",
        default=[],
        type=Path,
        metavar="FILE.whl",
        help="a wheel carried in the bundle and installed from there (repeatable), e.g. Baton's own",
    )
    bundle.add_argument("-o", "--output", type=Path, metavar="FILE", help="default: NAME-VERSION.mcpb")
    for each in (sj, bundle):
        each.add_argument("--description", help="what the server does (default: its card's, else its instructions)")


def run(args: argparse.Namespace) -> int:
    """`baton publish FORMAT`: the exit status."""
    try:
        return _server_json(args) if args.format == "server-json" else _mcpb(args)
    except PublishError as exc:
        print(f"baton publish {args.format}: {exc}", file=sys.stderr)
        return exc.status
    except KeyboardInterrupt:
        return 130


def _server_json(args: argparse.Namespace) -> int:
    described = load(args.target, args.description)
    where = Where(
        name=args.name,
        pypi=args.pypi,
        package_version=args.package_version,
        remotes=tuple(args.remote),
        mcpb=(args.mcpb[0], hashlib.sha256(read_file(Path(args.mcpb[1]))).hexdigest()) if args.mcpb else None,
        title=args.title,
        website_url=args.website,
        repository_url=args.repository,
    )
    text = json.dumps(document(described, where), indent=2, ensure_ascii=False) + "\n"
    name = json.loads(text)["name"]
    if args.output == "-":
        sys.stdout.write(text)
    else:
        _write(Path(args.output), text)
        print(f"wrote {args.output}", file=sys.stderr)
    if args.pypi:
        print(
            f"add this line to the README of the PyPI package {args.pypi} (the registry looks for it):", file=sys.stderr
        )
    print(marker(name), file=sys.stderr if args.output == "-" else sys.stdout)
    return 0


def _mcpb(args: argparse.Namespace) -> int:
    described = load(args.target, args.description)
    bundle = Bundle(author=args.author, name=args.name, requirements=tuple(args.requirement), wheels=tuple(args.wheel))
    output = args.output or default_output(bundle.name or described.server.name, described.server.version)
    names = build(args.target, described, bundle, output)
    size = output.stat().st_size
    print(f"wrote {output} ({size / 1024:.1f} KiB): {', '.join(names)}")
    if not carries_baton(bundle):
        note = (
            f"note: the host's uv installs {BATON_DISTRIBUTION}=={__version__} from PyPI when it starts the bundle; "
            f"if that release is not on PyPI, add Baton's wheel: --wheel mcp_baton-{__version__}-py3-none-any.whl "
            "(`pip wheel --no-deps PATH-TO-BATON` builds it)"
        )
        print(note, file=sys.stderr)
    return 0


def _write(path: Path, text: str) -> None:
    partial = path.with_name(path.name + ".partial")
    try:
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, path)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise PublishError(f"cannot write {path}: {exc.strerror or exc}", status=1) from None
