"""The games layer's error classes (the lowest module of :mod:`cfrkit.games`: the protocol, the game
table and every game raise these)."""
from __future__ import annotations


class GameError(ValueError):
    """Bad input to a game: unknown game, bad parameter, malformed history string."""


class IllegalActionError(GameError):
    """An action that is not legal in the state it was applied to."""
