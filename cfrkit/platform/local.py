"""In-process matches (no server): the platform's schedule and seeded deals, agents called directly.

Used by benchmarks and tests to measure agents with the same deals, seat rotation and duplicate
pairing as the server (:mod:`cfrkit.platform.schedule`).  In-process agents get the full engine
state; the built-in agents read only their own hole cards and the public state.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import List, Optional, Sequence

import numpy as np

from cfrkit.games.holdem.deals import deal_for_hand
from cfrkit.platform.schedule import hand_plan, player_of_seat, round_up_hands


def play_hand(game, agents_by_seat: Sequence, cards: Sequence[int]):
    """Play one hand with ``agents_by_seat[s].act`` and the deal ``cards``; returns the final state."""
    state = game.new_initial_state()
    k = 0
    for agent in agents_by_seat:
        agent.new_hand()
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(cards[k])
            k += 1
        else:
            state.apply_action(agents_by_seat[state.current_player()].act(state))
    return state


@dataclass
class LocalMatchResult:
    """Chips won per player per hand (``returns[hand, player]``) and the rotation group of each hand."""

    returns: np.ndarray
    groups: np.ndarray
    big_blind: float

    def mbb_per_hand(self, player: int = 0, confidence: float = 0.95):
        """(mean, half-width of the interval) of ``player``'s winnings in mbb/hand.

        Samples are rotation groups (duplicate: the hands of one deal), so duplicate pairing is used
        in the variance; normal interval (z = 1.96 for 95%)."""
        per_group = np.bincount(self.groups, weights=self.returns[:, player])
        hands_per_group = np.bincount(self.groups)
        x = per_group / hands_per_group * 1000.0 / self.big_blind
        z = {0.95: 1.959964, 0.99: 2.575829}.get(confidence, 1.959964)
        half = z * x.std(ddof=1) / math.sqrt(len(x)) if len(x) > 1 else float("inf")
        return float(x.mean()), float(half)


def run_local_match(game, agents: Sequence, hands: int, seed: int = 0, duplicate: bool = True,
                    progress: bool = False) -> LocalMatchResult:
    """Play ``hands`` hands (rounded up to whole rotations in duplicate mode) between ``agents``
    (one per player) with the server's schedule and deals; no time limits."""
    n = game.num_players
    if len(agents) != n:
        raise ValueError(f"{game.game_string()} needs {n} agents, got {len(agents)}")
    total = round_up_hands(n, hands, duplicate)
    returns = np.zeros((total, n))
    groups = np.zeros(total, dtype=np.int64)
    it = range(total)
    if progress:
        from tqdm import tqdm

        it = tqdm(it, desc="hands", unit="hand")
    for i in it:
        deal_index, seat_of = hand_plan(n, i, duplicate)
        by_seat = [agents[j] for j in player_of_seat(seat_of)]
        state = play_hand(game, by_seat, deal_for_hand(game, seed, deal_index))
        r = state.returns()
        for j in range(n):
            returns[i, j] = r[seat_of[j]]
        groups[i] = deal_index if duplicate else i // n
    return LocalMatchResult(returns, groups, float(game.definition.big_blind or 1))
