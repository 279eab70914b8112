"""Per-board inputs of the blueprint kernel: live hands in river-strength order, their buckets, runs of ties."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cfrkit.cards.equity import board_strengths
from cfrkit.cards.hands import BOARD_CARDS, HOLE_PAIRS, NUM_PAIRS


@dataclass
class BoardInputs:
    """The hands a 5-card board leaves live, sorted by river strength (ascending).

    ``hands``: int64[L] pair indices (:mod:`cfrkit.cards.hands` order); ``cards``: int32[L, 2];
    ``bucket``: int32[4, L] the abstraction's bucket of each hand in each round (on the board's first
    0 / 3 / 4 / 5 cards); ``groups``: int32[G + 1] first hand of each run of equal strength, then L;
    ``present``: int32[4, L] the distinct buckets of each round (first ``num_present[r]`` entries).
    """

    board: np.ndarray
    hands: np.ndarray
    cards: np.ndarray
    bucket: np.ndarray
    groups: np.ndarray
    present: np.ndarray
    num_present: np.ndarray


def sample_boards(seed: int, iteration: int, count: int) -> np.ndarray:
    """uint8[count, 5]: the boards of one iteration, a function of ``(seed, iteration)`` only (resume is exact)."""
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), int(iteration)]))
    keys = rng.random((int(count), 52))
    return np.argsort(keys, axis=1)[:, :5].astype(np.uint8)


def board_inputs(abstraction, board) -> BoardInputs:
    """Kernel inputs for one complete board under ``abstraction`` (see :class:`BoardInputs`)."""
    board = np.asarray(board, dtype=np.int64)
    strength = board_strengths(board.tolist())
    live = np.flatnonzero(strength > 0)
    order = live[np.argsort(strength[live], kind="stable")]
    s = strength[order]
    starts = np.flatnonzero(np.concatenate([[True], s[1:] != s[:-1]]))
    groups = np.concatenate([starts, [order.size]]).astype(np.int32)
    bucket = np.empty((4, order.size), dtype=np.int32)
    for r in range(4):
        b = np.asarray(abstraction.buckets_for_board(r, board[:BOARD_CARDS[r]].tolist()))
        if b.shape != (NUM_PAIRS,):
            raise ValueError(f"the card abstraction returned buckets of shape {b.shape} for round {r}, not (1326,)")
        row = b[order]
        if row.size and (row.min() < 0 or row.max() >= abstraction.num_buckets(r)):
            raise ValueError(f"the card abstraction returned a bucket outside 0..{abstraction.num_buckets(r) - 1} "
                             f"for a live hand in round {r}")
        bucket[r] = row
    cards = np.ascontiguousarray(HOLE_PAIRS[order].astype(np.int32))
    present = np.zeros((4, order.size), dtype=np.int32)
    num_present = np.zeros(4, dtype=np.int32)
    for r in range(4):
        distinct = np.unique(bucket[r])
        present[r, :distinct.size] = distinct
        num_present[r] = distinct.size
    return BoardInputs(board=board.astype(np.uint8), hands=order, cards=cards, bucket=bucket, groups=groups,
                       present=present, num_present=num_present)
