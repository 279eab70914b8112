"""Moved: the public view of a poker hand lives in :mod:`cfrkit.poker.view` (the play layer);
``PokerView``, ``HoldemView``, ``LeducView`` are re-exported here and ``poker_view`` is a deprecated
alias, for one release."""
from cfrkit._deprecated import deprecated_alias
from cfrkit.poker.view import HoldemView, LeducView, PokerView
from cfrkit.poker.view import poker_view as _poker_view

poker_view = deprecated_alias(_poker_view, "cfrkit.evaluation.poker_view.poker_view", "cfrkit.poker.poker_view")

__all__ = ["HoldemView", "LeducView", "PokerView", "poker_view"]
