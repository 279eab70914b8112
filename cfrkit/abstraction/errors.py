"""The abstraction layer's error type."""
from cfrkit.games.base import GameError


class AbstractionError(GameError):
    """Bad input to card abstraction: unknown bucket counts or features, a missing, truncated,
    foreign or mismatched bucket table (the message says what was given and what is allowed)."""
