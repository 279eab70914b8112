"""Bucketing of private hands for value networks.

A bucketer maps, for a board, every private hand to a bucket id in ``[0, num_buckets)`` (or -1 for
hands that share a card with the board).  Ranges are summed per bucket and bucket values are read
back per hand.  :class:`LeducBucketer` uses one bucket per (board card, private card) pair up to suit
isomorphism, so a single network covers every Leduc board (with a given board only the buckets of
that board's rank are used).
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
    """Leduc (any deck): one bucket per (board card, private card) up to suit isomorphism.

    Suits do not affect Leduc showdowns, so boards of the same rank are equivalent once suits are
    relabelled so that the board's suit becomes suit 0: the bucket of hand ``h`` on board ``b`` is
    ``rank(b) * num_cards + canonical(h)``, ``ranks * num_cards`` buckets in all (with ``suits=1``
    this is exactly one bucket per private card and board card).
    """

    def __init__(self, num_cards: int = 6, suits: int = 2):
        self.num_cards = int(num_cards)
        self.suits = int(suits)
        if self.num_cards % self.suits:
            raise ValueError(f"num_cards {num_cards} is not a multiple of suits {suits}")
        self.num_hands = self.num_cards
        self.num_buckets = (self.num_cards // self.suits) * self.num_cards

    def hand_buckets(self, board: Sequence[int]) -> np.ndarray:
        if len(board) != 1:
            raise ValueError(f"Leduc buckets need a board of one card, got {list(board)}")
        c = int(board[0])
        if not 0 <= c < self.num_cards:
            raise ValueError(f"board card {c} is not in [0, {self.num_cards})")
        hands = np.arange(self.num_cards)
        rank, suit = hands // self.suits, hands % self.suits
        canonical = rank * self.suits + (suit - c % self.suits) % self.suits
        out = (c // self.suits) * self.num_cards + canonical
        out[c] = -1
        return out

    def to_dict(self):
        return {"kind": "leduc", "num_cards": self.num_cards, "suits": self.suits}


def bucketer_from_dict(d) -> Bucketer:
    if d.get("kind") == "leduc":
        return LeducBucketer(int(d["num_cards"]), int(d.get("suits", 1)))
    raise ValueError(f"unknown bucketer {d!r}")
