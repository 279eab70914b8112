"""The ``cfrkit`` command line.

Each subcommand lives in its own module under :mod:`cfrkit.cli` exposing ``add_parser(subparsers)``,
which registers the parser and sets ``func`` (called with the parsed namespace, returning an exit
code).  A new subcommand appends its module to ``_COMMAND_MODULES``.  Errors a user can fix are
raised as :class:`CliError` (or ``GameError``/``ValueError``) and printed as one line, exit code 2.
"""
from __future__ import annotations

import argparse
import importlib
import sys
from typing import List, Optional

_COMMAND_MODULES = [
    "cfrkit.cli.games_cmd",
    "cfrkit.cli.deepstack_cmd",
    "cfrkit.cli.solve_cmd",
    "cfrkit.cli.symmtom_cmd",
    "cfrkit.cli.acpc_cmd",
    "cfrkit.cli.hanabi_cmd",
    "cfrkit.cli.blueprint_cmd",
]


class CliError(Exception):
    """An error in the user's arguments or inputs, reported as one line."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cfrkit", description="Imperfect-information game research toolkit.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for module in _COMMAND_MODULES:
        importlib.import_module(module).add_parser(sub)
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    from cfrkit.games.base import GameError

    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code = args.func(args)
    except (CliError, GameError, ValueError, FileNotFoundError) as exc:
        print(f"cfrkit {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"cfrkit {args.command}: interrupted", file=sys.stderr)
        return 130
    return int(code or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
