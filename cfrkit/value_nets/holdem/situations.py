"""Random hold'em situations for value-net data, as DeepStack generates them.

A situation is the first public state of a street (flop, turn or river): a board, both players'
contributions (equal; "pot per player") and both players' ranges over the 1326 pairs.  A **preflop**
situation (the auxiliary net's) is the chance state before the flop cards: empty board, both players in
for the same chips.

* Board: uniformly random cards.
* Pot per player: one of DeepStack's intervals chosen uniformly, then a uniform chip count in it:
  {100}, [200, 400], [400, 2000], [2000, 6000], [6000, 18000] (stack 20000, big blind 100; for other
  games the intervals scale with the stack and are clipped below it).
* Ranges: DeepStack's recursive range generator over the pairs that miss the board, sorted by
  strength on the board (river: showdown strength; flop/turn: E[HS] over the run-outs; preflop: equity
  against a uniform hand, :func:`preflop_strengths`): the mass of a segment is split at its middle by a
  uniform random fraction, recursively; each range sums to 1.

Situations come in groups that share the board and the pot (one public tree, solved as one batch,
as DeepHoldem does); ``group`` situations per group.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence, Tuple

import numpy as np

from cfrkit.games.base import GameError
from cfrkit.value_nets.data import recursive_ranges
from cfrkit.value_nets.holdem.bucketing import BOARD_SIZE

DEEPSTACK_POT_INTERVALS = ((100, 100), (200, 400), (400, 2000), (2000, 6000), (6000, 18000))
DEEPSTACK_STACK = 20000


@dataclass
class Situations:
    """``boards (N, k)`` card ids, ``contribs (N,)`` chips per player, ``ranges (N, 2, 1326)`` (each sums to 1),
    ``groups (N,)`` group id (situations of a group share board and contribution)."""

    street: str
    boards: np.ndarray
    contribs: np.ndarray
    ranges: np.ndarray
    groups: np.ndarray

    def __len__(self) -> int:
        return len(self.contribs)


def sample_pot(rng: np.random.Generator, stack: float = DEEPSTACK_STACK, big_blind: float = 100) -> int:
    """Chips per player at the start of a street, DeepStack's distribution (see module docstring)."""
    scale = stack / DEEPSTACK_STACK
    lo, hi = DEEPSTACK_POT_INTERVALS[int(rng.integers(len(DEEPSTACK_POT_INTERVALS)))]
    lo, hi = lo * scale, min(hi * scale, stack - big_blind)
    lo = max(min(lo, hi), big_blind)
    return int(rng.integers(int(round(lo)), int(round(hi)) + 1))


_PREFLOP_STRENGTHS: Optional[np.ndarray] = None


def preflop_strengths() -> np.ndarray:
    """``float64[1326]``: preflop equity of every pair against a uniform random hand (E[HS] over 4000 sampled
    boards with a fixed seed, averaged over the pairs of each of the 169 classes; cached per process)."""
    global _PREFLOP_STRENGTHS
    if _PREFLOP_STRENGTHS is None:
        from cfrkit.abstraction.ehs_abstraction import preflop_classes
        from cfrkit.cards.equity import hand_strength_stats

        raw = np.asarray(hand_strength_stats([], num_samples=4000, seed=12345).ehs, dtype=np.float64)
        cls = np.asarray(preflop_classes())
        means = np.bincount(cls, weights=raw, minlength=169) / np.maximum(np.bincount(cls, minlength=169), 1)
        _PREFLOP_STRENGTHS = means[cls]
    return _PREFLOP_STRENGTHS


def strength_order(board: Sequence[int]) -> np.ndarray:
    """Pairs that miss ``board`` sorted by strength (weakest first; ties by pair index); an empty board
    (preflop) sorts all 1326 pairs by :func:`preflop_strengths`."""
    from cfrkit.cards.equity import board_strengths, ehs
    from cfrkit.cards.hands import blocked_pairs

    board = [int(c) for c in board]
    if not board:
        live = np.arange(1326)
        return live[np.lexsort((live, preflop_strengths()))]
    live = np.flatnonzero(~blocked_pairs(board))
    if len(board) == 5:
        s = board_strengths(board).astype(np.float64)
    elif len(board) in (3, 4):
        s = np.nan_to_num(ehs(board), nan=-1.0)
    else:
        raise GameError(f"situations need a flop, turn or river board, got {len(board)} cards")
    return live[np.lexsort((live, s[live]))]


def sample_situations(street: str, count: int, rng: np.random.Generator, group: int = 10,
                      stack: float = DEEPSTACK_STACK, big_blind: float = 100,
                      boards: Optional[np.ndarray] = None) -> Situations:
    """``count`` random situations of ``street`` in groups of ``group`` (see module docstring); preflop
    situations have ``boards`` of shape ``(count, 0)`` and a group shares the pot."""
    if street not in ("preflop", "flop", "turn", "river"):
        raise GameError(f"value-net situations are preflop, on the flop, turn or river, not {street!r}")
    if count < 1 or group < 1:
        raise ValueError("count and group must be positive")
    k = BOARD_SIZE[street]
    n_groups = -(-count // group)
    out_boards = np.zeros((count, k), dtype=np.int64)
    contribs = np.zeros(count)
    ranges = np.zeros((count, 2, 1326))
    groups = np.zeros(count, dtype=np.int64)
    for g in range(n_groups):
        idx = np.arange(g * group, min((g + 1) * group, count))
        board = rng.choice(52, size=k, replace=False) if boards is None else np.asarray(boards[g])
        board = np.sort(board)
        out_boards[idx] = board
        contribs[idx] = sample_pot(rng, stack, big_blind)
        groups[idx] = g
        order = strength_order(board)
        for p in (0, 1):
            ranges[idx, p] = recursive_ranges(rng, len(idx), order, 1326)
    return Situations(street, out_boards, contribs, ranges, groups)


def street_start_state(game, board: Sequence[int], contrib: float):
    """Protocol state at the first decision of the street of ``board`` (3, 4 or 5 cards), both players in
    for ``contrib`` chips (the big blind, or a preflop raise to ``contrib`` and a call)."""
    from cfrkit.cards.encoding import cards_to_string
    from cfrkit.games.holdem.matchstate import state_from_matchstate

    board = [int(c) for c in board]
    if len(board) not in (3, 4, 5):
        raise GameError(f"a street start needs a board of 3, 4 or 5 cards, got {board}")
    bb = max(game.definition.blind)
    contrib = int(round(contrib))
    if contrib == bb:
        pre = "cc"
    elif 2 * bb <= contrib < min(game.definition.stack):
        pre = f"r{contrib}c"
    else:
        raise GameError(f"pot per player must be the big blind {bb} or in [{2 * bb}, stack), got {contrib}")
    streets = len(board) - 2  # 1 flop, 2 turn, 3 river
    betting = pre + "/" + "cc/" * (streets - 1)
    hole = [c for c in range(52) if c not in board][:2]
    cards = cards_to_string(hole) + "|/" + cards_to_string(board[:3])
    for c in board[3:]:
        cards += "/" + cards_to_string([c])
    return state_from_matchstate(game, f"MATCHSTATE:0:0:{betting}:{cards}")


def group_slices(groups: np.ndarray) -> Tuple[np.ndarray, ...]:
    """Index arrays of each group, in order of first appearance."""
    _, first = np.unique(groups, return_index=True)
    return tuple(np.flatnonzero(groups == groups[i]) for i in sorted(first))
