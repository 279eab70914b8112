"""Deprecated: in-process matches are played by :func:`cfrkit.poker.match.play_match`, which uses the
server's seat schedule and seeded deals (:mod:`cfrkit.poker.schedule`).

``run_local_match`` and ``play_hand`` remain for one release as aliases that warn;
``LocalMatchResult`` is :class:`cfrkit.poker.match.MatchResult` (``returns[hand, player]``,
``groups``, ``mbb_per_hand(player)``).
"""
from __future__ import annotations

from typing import Sequence

from cfrkit._deprecated import deprecated_alias
from cfrkit.poker.match import MatchResult, play_hand as _play_hand, play_match

LocalMatchResult = MatchResult


def _run_local_match(game, agents: Sequence, hands: int, seed: int = 0, duplicate: bool = True,
                     progress: bool = False) -> MatchResult:
    """``hands`` hands (rounded up to whole rotations in duplicate mode) between ``agents``; no time limits."""
    n = len(agents)
    deals = -(-int(hands) // n) if duplicate else int(hands)
    return play_match(game, agents, deals, seed=seed, duplicate=duplicate, progress=progress,
                      time_limit=float("inf"))


run_local_match = deprecated_alias(_run_local_match, "cfrkit.platform.local.run_local_match",
                                   "cfrkit.poker.play_match(game, agents, deals, duplicate=...)")
play_hand = deprecated_alias(_play_hand, "cfrkit.platform.local.play_hand", "cfrkit.poker.play_hand")

__all__ = ["LocalMatchResult", "play_hand", "run_local_match"]
