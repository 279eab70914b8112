"""``cfrkit games``: list the registered games and their parameters."""
from __future__ import annotations


def add_parser(sub) -> None:
    p = sub.add_parser("games", help="list the registered games and their parameters")
    p.set_defaults(func=run)


def run(args) -> int:
    from cfrkit.games.registry import format_value, game_specs

    for name, spec in sorted(game_specs().items()):
        params = ", ".join(f"{k}={format_value(v)}" for k, v in spec.defaults.items())
        print(f"{name:16s} {spec.description}")
        if params:
            print(f"{'':16s}   parameters: {params}")
    return 0
