"""Bucketing of private hands for value networks.

A bucketer maps, for a board, every private hand to a bucket id in ``[0, num_buckets)`` (or -1 for
hands that share a card with the board).  Ranges are summed per bucket and bucket values are read
back per hand.  :class:`LeducBucketer` uses one bucket per (board card, private card) pair, so a
single network covers every Leduc board (with a given board only the buckets of that board are used).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np


class Bucketer:
    num_buckets: int
    num_hands: int

    def hand_buckets(self, board: Sequence[int]) -> np.ndarray:
        """``(num_hands,)`` bucket of every hand on ``board``; -1 where the hand is blocked by the board."""
        raise NotImplementedError

    def matrix(self, board: Sequence[int]) -> np.ndarray:
        """``(num_hands, num_buckets)`` 0/1 matrix: ``ranges @ M`` sums ranges per bucket."""
        b = self.hand_buckets(board)
        m = np.zeros((self.num_hands, self.num_buckets))
        ok = b >= 0
        m[np.nonzero(ok)[0], b[ok]] = 1.0
        return m

    def bucket_mask(self, board: Sequence[int]) -> np.ndarray:
        """``(num_buckets,)`` 1.0 for buckets some hand maps to on ``board``."""
        return (self.matrix(board).sum(0) > 0).astype(np.float64)


class LeducBucketer(Bucketer):
    """Leduc (any deck): bucket ``board_card * num_cards + private_card``; ``num_cards**2`` buckets."""

    def __init__(self, num_cards: int = 6):
        self.num_cards = int(num_cards)
        self.num_hands = self.num_cards
        self.num_buckets = self.num_cards * self.num_cards

    def hand_buckets(self, board: Sequence[int]) -> np.ndarray:
        if len(board) != 1:
            raise ValueError(f"Leduc buckets need a board of one card, got {list(board)}")
        c = int(board[0])
        out = c * self.num_cards + np.arange(self.num_cards)
        out[c] = -1
        return out

    def to_dict(self):
        return {"kind": "leduc", "num_cards": self.num_cards}


def bucketer_from_dict(d) -> Bucketer:
    if d.get("kind") == "leduc":
        return LeducBucketer(int(d["num_cards"]))
    raise ValueError(f"unknown bucketer {d!r}")
