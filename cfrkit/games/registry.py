"""Registry of games by name: ``load("leduc")``, ``load("leduc_nolimit(stack=1200)")``.

A game string is ``name`` or ``name(key=value,key=value)`` (syntax and the table of registered
games: :mod:`cfrkit.games.specs`, re-exported here).  Each game module calls :func:`register` with
the parameters it accepts and their defaults, so an unknown name or parameter gives an error listing
what is known.
"""
from __future__ import annotations

from typing import Any

from cfrkit.games.base import Game, GameError, deserialize_state
# the table sits below the protocol (Game.game_string reads it); this module is its public front
from cfrkit.games.specs import (GameSpec, build_game, format_game_string, format_value, game_specs, list_games,
                                parse_game_string, register, unregister)

__all__ = ["GameSpec", "build_game", "deserialize_state", "format_game_string", "format_value", "game_specs",
           "list_games", "load", "parse_game_string", "register", "unregister"]


def load(game: "str | Game", **overrides: Any) -> Game:
    """A game from its string (``"kuhn(players=3)"``), or the game itself when given one.

    Raises :class:`GameError` naming the known games or parameters for an unknown one.
    """
    if isinstance(game, Game):
        if overrides:
            raise GameError("parameter overrides need a game string, not a Game object")
        return game
    if not isinstance(game, str):
        raise GameError(f"expected a game string, got {type(game).__name__}")
    return build_game(game, **overrides)
