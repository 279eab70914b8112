"""Hole-card pairs: the canonical index 0..1325 used by every range array in cfrkit.

Pair {a, b} of card ids with a < b has index ``b * (b - 1) // 2 + a`` (colex order): 2d2c = 0,
2h2c = 1, 2h2d = 2, ..., AsAh = 1325. ``HOLE_PAIRS[i]`` gives the two card ids (low, high) of index
i. A range is a float array of shape ``[..., 1326]`` in this order.
"""
from __future__ import annotations

from typing import Iterable, List, Tuple

import numpy as np

from cfrkit.cards.encoding import CardError, as_card_ids, card_to_string

NUM_PAIRS = 1326
#: Board cards dealt by the end of each hold'em round (preflop, flop, turn, river).
BOARD_CARDS = (0, 3, 4, 5)


def _build_pairs():
    pairs = np.zeros((NUM_PAIRS, 2), dtype=np.uint8)
    table = np.full((52, 52), -1, dtype=np.int16)
    for b in range(1, 52):
        for a in range(b):
            i = b * (b - 1) // 2 + a
            pairs[i] = (a, b)
            table[a, b] = table[b, a] = i
    pairs.setflags(write=False)
    table.setflags(write=False)
    return pairs, table


HOLE_PAIRS, PAIR_INDEX_TABLE = _build_pairs()
"""HOLE_PAIRS: uint8[1326, 2] (low card, high card); PAIR_INDEX_TABLE: int16[52, 52] (-1 on the diagonal)."""
_PAIR_BITS = (np.uint64(1) << HOLE_PAIRS[:, 0].astype(np.uint64)) | (np.uint64(1) << HOLE_PAIRS[:, 1].astype(np.uint64))


def pair_index(card1: int, card2: int) -> int:
    """Index 0..1325 of the hole pair of two distinct card ids (either order)."""
    a, b = as_card_ids([card1, card2])
    if a > b:
        a, b = b, a
    return b * (b - 1) // 2 + a


def pair_cards(index: int) -> Tuple[int, int]:
    """Card ids (low, high) of pair index 0..1325."""
    if not 0 <= int(index) < NUM_PAIRS or int(index) != index:
        raise CardError(f"pair index must be an integer 0..1325, got {index!r}")
    a, b = HOLE_PAIRS[int(index)]
    return int(a), int(b)


def pair_index_of(hand) -> int:
    """Index of a hole pair given as a string ("AhKs") or two card ids."""
    ids = as_card_ids(hand)
    if len(ids) != 2:
        raise CardError(f"a hole pair has 2 cards, got {len(ids)}")
    return pair_index(ids[0], ids[1])


def pair_indices(cards: np.ndarray) -> np.ndarray:
    """Vectorised pair index: int array [..., 2] of distinct card ids -> int16 array [...]."""
    arr = np.asarray(cards)
    if arr.shape[-1:] != (2,) or (arr.size and (arr.min() < 0 or arr.max() > 51)):
        raise CardError("pair_indices needs card ids 0..51 in an array of shape [..., 2]")
    out = PAIR_INDEX_TABLE[arr[..., 0], arr[..., 1]]
    if (out < 0).any():
        raise CardError("a hole pair holds the same card twice")
    return out


def pair_string(index: int) -> str:
    """Text of a pair, high card first ("AsAh")."""
    a, b = pair_cards(index)
    return card_to_string(b) + card_to_string(a)


PAIR_STRINGS: Tuple[str, ...] = tuple(
    card_to_string(int(b)) + card_to_string(int(a)) for a, b in HOLE_PAIRS
)


def blocked_pairs(cards: Iterable[int]) -> np.ndarray:
    """bool[1326]: True for pairs sharing a card with ``cards`` (ids or a card string)."""
    mask = 0
    for c in as_card_ids(cards):
        mask |= 1 << c
    # one AND over the pairs' card bits (LBR and the agents call this at every public card)
    return (_PAIR_BITS & np.uint64(mask)) != 0


def uniform_range(board=()) -> np.ndarray:
    """float64[1326]: weight 1 for every pair disjoint from ``board``, 0 for blocked pairs."""
    return (~blocked_pairs(board)).astype(np.float64)


def pairs_of(hands: Iterable[str]) -> List[int]:
    """Pair indices of several hand strings (["AhKs", "2c2d"])."""
    return [pair_index_of(h) for h in hands]
