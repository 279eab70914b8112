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
    "cfrkit.cli.deepstack_nets_cmd",
    "cfrkit.cli.solve_cmd",
    "cfrkit.cli.symmtom_cmd",
    "cfrkit.cli.acpc_cmd",
    "cfrkit.cli.hanabi_cmd",
    "cfrkit.cli.show_cmd",
    "cfrkit.cli.spot_cmd",
    "cfrkit.cli.evaluation_cmd",
    "cfrkit.cli.ladder_cmd",
    "cfrkit.cli.platform_cmd",
    "cfrkit.cli.abstraction_cmd",
    "cfrkit.cli.blueprint_cmd",
    "cfrkit.cli.train_cmd",
]


class CliError(Exception):
    """An error in the user's arguments or inputs, reported as one line."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cfrkit", description="Imperfect-information game research toolkit.")
    parser.add_argument("--import", dest="imports", action="append", default=[], metavar="MODULE",
                        help="import MODULE first (e.g. one that registers games of your own); repeatable, "
                             "accepted anywhere on the command line")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for module in _COMMAND_MODULES:
        importlib.import_module(module).add_parser(sub)
    return parser


def import_user_modules(argv: List[str]) -> List[str]:
    """Import every ``--import MODULE`` (or ``--import=MODULE``) of ``argv``, wherever it stands, and
    return the other arguments.  The current directory is searched first, as ``python -m`` does."""
    rest: List[str] = []
    modules: List[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--import":
            if i + 1 >= len(argv):
                raise CliError("--import needs a module name")
            modules.append(argv[i + 1])
            i += 2
            continue
        if arg.startswith("--import="):
            modules.append(arg.split("=", 1)[1])
        else:
            rest.append(arg)
        i += 1
    if modules and "" not in sys.path:
        sys.path.insert(0, "")
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception as exc:  # the user's module: report whatever it raised in one line
            raise CliError(f"--import {name}: {type(exc).__name__}: {exc}") from None
    return rest


def main(argv: Optional[List[str]] = None) -> int:
    """Run the command line (``argv`` default: ``sys.argv[1:]``); returns the exit code.

    Run as the program (no ``argv``), SIGINT and SIGTERM are ignored once the command has returned:
    its work is saved by then, and a signal landing in the interpreter's shutdown would otherwise
    print a traceback from library finalizers or kill the process with the default action.
    """
    try:
        return _main(argv)
    finally:
        if argv is None:
            _ignore_exit_signals()


def _ignore_exit_signals() -> None:
    import signal

    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            signal.signal(sig, signal.SIG_IGN)
        except (ValueError, OSError):  # pragma: no cover - not the main thread
            pass


def _main(argv: Optional[List[str]] = None) -> int:
    from cfrkit.games.base import GameError

    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        argv = import_user_modules(argv)
    except CliError as exc:
        print(f"cfrkit: error: {exc}", file=sys.stderr)
        return 2
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except BrokenPipeError:  # `cfrkit --help | head -1`
        _silence_stdout()
        return 141
    try:
        code = args.func(args)
    except BrokenPipeError:
        # the reader went away (`cfrkit games | head -1`): stop quietly, as Unix tools do; stdout goes to
        # /dev/null so that the interpreter's final flush does not raise again
        _silence_stdout()
        return 141  # 128 + SIGPIPE
    except (CliError, GameError, ValueError, OSError) as exc:
        print(f"cfrkit {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"cfrkit {args.command}: interrupted", file=sys.stderr)
        return 130
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
        return 141
    return int(code or 0)


def _silence_stdout() -> None:
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # pragma: no cover - stdout without a descriptor
        pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
