"""The command-line options bench/compare and bench/client_compare share: names, levels, runs and set-up."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import NoReturn

from processes import ROOT


class OneLineParser(argparse.ArgumentParser):
    """A parser whose bad-argument message is one line on stderr (exit 2), not the usage block before it."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (--help lists the options)\n")


def int_list(text: str) -> list[int]:
    values = [int(part) for part in text.split(",") if part.strip()]
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError("expected positive integers separated by commas")
    return values


def level_parser(
    prog: str,
    doc: str,
    order: tuple[str, ...],
    n_at_1: int,
    only: str,
    repeat: str,
    warmup: str,
    time_limit: str,
    concurrency: tuple[int, ...] = (1, 16),
) -> argparse.ArgumentParser:
    """A parser with ``--only`` (names from ``order``) up to ``--time-limit``, the arguments' help texts given."""
    parser = argparse.ArgumentParser(prog=prog, description=doc.partition("\n\n")[0])
    parser.add_argument("--only", default=",".join(order), help=only)
    levels = ",".join(map(str, concurrency))
    parser.add_argument(
        "-c", "--concurrency", type=int_list, default=list(concurrency), help=f"concurrency levels (default {levels})"
    )
    parser.add_argument(
        "-n",
        "--n",
        type=int_list,
        default=None,
        help="measured flows per run, one value for all levels or one per level "
        f"(default {n_at_1} at c=1, {2 * n_at_1} otherwise)",
    )
    parser.add_argument("--repeat", type=int, default=3, help=repeat)
    parser.add_argument("--warmup", type=int, default=200, help=warmup)
    parser.add_argument("--time-limit", type=float, default=300.0, help=time_limit)
    return parser


STDOUT = Path("-")
"""``--json`` given no PATH, where ``setup_options`` allows it: print the JSON on stdout, and nothing else there."""


def setup_options(
    parser: argparse.ArgumentParser, python: str, cache: str, start_timeout: str, json_stdout: bool = False
) -> None:
    """Add ``--python``, ``--cache``, ``--start-timeout`` (with these help texts) and ``--json`` (with
    ``json_stdout``, its PATH optional: ``STDOUT`` without one)."""
    parser.add_argument("--python", type=Path, default=ROOT / ".venv" / "bin" / "python", help=python)
    parser.add_argument("--cache", type=Path, default=ROOT / ".cache" / "bench", help=cache)
    parser.add_argument("--start-timeout", type=float, default=60.0, help=start_timeout)
    if json_stdout:
        parser.add_argument(
            "--json",
            type=Path,
            nargs="?",
            const=STDOUT,
            metavar="PATH",
            help="print every figure as one JSON object on stdout instead of the report; with PATH, write it there",
        )
    else:
        parser.add_argument("--json", type=Path, metavar="PATH", help="also write every figure to this JSON file")


def per_level(values: list[int] | None, levels: list[int], n_at_1: int) -> list[int] | None:
    """One n per level: ``values`` spread (one value for all), the default when None; None when they do not fit."""
    if values is None:
        return [n_at_1 if c == 1 else 2 * n_at_1 for c in levels]
    if len(values) == 1:
        return values * len(levels)
    return values if len(values) == len(levels) else None


def level_args(
    parser: argparse.ArgumentParser, argv: list[str] | None, order: tuple[str, ...], n_at_1: int
) -> argparse.Namespace:
    """Parse; ``names`` is ``--only`` in ``order``, ``n`` one value per concurrency level."""
    opts = parser.parse_args(argv)
    names = [name.strip() for name in opts.only.split(",") if name.strip()]
    if not names or set(names) - set(order):
        parser.error(f"--only takes names from {','.join(order)}; got {opts.only!r}")
    opts.names = [name for name in order if name in names]
    opts.n = per_level(opts.n, opts.concurrency, n_at_1)
    if opts.n is None:
        parser.error("--n takes one value, or one per concurrency level")
    return opts
