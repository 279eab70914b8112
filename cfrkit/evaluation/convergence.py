"""Which number measures a solver's progress on a game: exploitability where it is defined, else NashConv."""
from __future__ import annotations

from typing import Callable, Tuple

from cfrkit.evaluation.exploitability import check_constant_sum, exploitability, nash_conv
from cfrkit.games.base import GameError


def convergence_measure(tree) -> Tuple[Callable, str]:
    """``(measure, name)`` for a compiled game ``tree``: :func:`exploitability` (``"exploitability"``, game units
    per game, the mean of the players' best-response gains) on constant-sum games, else :func:`nash_conv`
    (``"nash_conv"``: the sum of the players' best-response gains, what CFR drives down on general-sum
    games, where exploitability is undefined).  Both are called as ``measure(tree, policy, min_coverage=...)``."""
    try:
        check_constant_sum(tree)
    except GameError:
        return nash_conv, "nash_conv"
    return exploitability, "exploitability"
