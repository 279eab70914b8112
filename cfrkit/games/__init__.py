"""Games behind one extensive-form protocol (:mod:`cfrkit.games.base`) and a registry by name."""
from cfrkit.games.base import (CHANCE, SIMULTANEOUS, TERMINAL, Game, GameError, IllegalActionError, State,
                               deserialize_state)
from cfrkit.games.registry import list_games, load, parse_game_string, register
from cfrkit.games.sequential import as_sequential

__all__ = ["CHANCE", "SIMULTANEOUS", "TERMINAL", "Game", "State", "GameError", "IllegalActionError",
           "deserialize_state", "list_games", "load", "parse_game_string", "register", "as_sequential"]
