"""Boards and hands of each abstraction round, batched per board.

Features depend on the set of board cards and the hole pair only; bucket tables are indexed by the
suit-isomorphism index of (hole, flop, turn, river), which tells the rounds apart.  So a build
iterates board *sets* (up to suit symmetry on the full deck), computes the features of all 1326
hands of the set at once, and writes them under every ordering of the set into rounds.
"""
from __future__ import annotations

from functools import lru_cache
from itertools import combinations, permutations
from typing import Tuple

import numpy as np

from cfrkit.cards.hands import BOARD_CARDS, HOLE_PAIRS
from cfrkit.cards.isomorphism import HandIndexer, canonical_boards, holdem_indexer


def deck_cards(num_ranks: int = 13, num_suits: int = 4) -> np.ndarray:
    return np.array(sorted(4 * r + s for r in range(num_ranks) for s in range(num_suits)), dtype=np.uint8)


def deck_pair_mask(deck: np.ndarray) -> np.ndarray:
    """bool[1326]: pairs whose two cards are in the deck."""
    indeck = np.zeros(52, dtype=bool)
    indeck[deck] = True
    return indeck[HOLE_PAIRS[:, 0]] & indeck[HOLE_PAIRS[:, 1]]


def live_pairs(board: np.ndarray, deck_mask: np.ndarray) -> np.ndarray:
    """bool[1326]: deck pairs disjoint from the board."""
    dead = np.zeros(52, dtype=bool)
    dead[np.asarray(board, dtype=np.int64)] = True
    return deck_mask & ~dead[HOLE_PAIRS[:, 0]] & ~dead[HOLE_PAIRS[:, 1]]


@lru_cache(maxsize=16)
def board_sets(num_board: int, num_ranks: int = 13, num_suits: int = 4) -> Tuple[np.ndarray, np.ndarray]:
    """Board card sets to iterate for a round with ``num_board`` board cards, and their weights.

    One representative per suit-isomorphism class (full deck: 1,755 flops, 16,432 turns, 134,459
    rivers) weighted by the raw boards of the deck it stands for.
    """
    if num_board == 0:
        return np.zeros((1, 0), dtype=np.uint8), np.ones(1, dtype=np.int64)
    if num_ranks == 13 and num_suits == 4:
        reps, counts = canonical_boards(num_board)
        return reps, counts

    deck = deck_cards(num_ranks, num_suits)
    sets = np.array(list(combinations(deck.tolist(), num_board)), dtype=np.uint8)
    # one in-deck board per suit-isomorphism class (the first in lexicographic order), so that every
    # class of hands is written from one board only (deterministic under any number of workers)
    _, first, counts = np.unique(HandIndexer((num_board,)).index_batch(sets), return_index=True, return_counts=True)
    keep = np.argsort(first)
    return sets[first[keep]], counts[keep].astype(np.int64)


@lru_cache(maxsize=8)
def orderings(num_board: int) -> np.ndarray:
    """Ways to split a sorted board set into flop / turn / river, as column orders: int[m, n]."""
    if num_board <= 3:
        return np.arange(num_board)[None, :]
    out = []
    for flop in combinations(range(num_board), 3):
        rest = [i for i in range(num_board) if i not in flop]
        for tail in permutations(rest):
            out.append(list(flop) + list(tail))
    return np.array(out, dtype=np.int64)


def hand_indices(round_: int, board: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """Isomorphism indices (hold'em indexer) of each live pair under every ordering of the board:
    int64[num_orderings, len(pairs)]."""
    ix = holdem_indexer()
    board = np.asarray(board, dtype=np.uint8)
    orders = orderings(board.size)
    n = pairs.size
    cards = np.empty((orders.shape[0] * n, 2 + board.size), dtype=np.uint8)
    cards[:, :2] = np.tile(HOLE_PAIRS[pairs], (orders.shape[0], 1))
    for o, order in enumerate(orders):
        cards[o * n:(o + 1) * n, 2:] = board[order]
    return ix.index_batch(cards).reshape(orders.shape[0], n)


def round_hands(round_: int, num_ranks: int = 13, num_suits: int = 4):
    """All (board set number, pair, index) triples of a round on a deck -- small decks only.

    Returns (board set ids int64[n], isomorphism indices int64[n], pairs int64[n])."""
    nb = BOARD_CARDS[round_]
    sets, _ = board_sets(nb, num_ranks, num_suits)
    dmask = deck_pair_mask(deck_cards(num_ranks, num_suits))
    b_ids, idx, prs = [], [], []
    for b, board in enumerate(sets):
        pairs = np.flatnonzero(live_pairs(board, dmask))
        ind = hand_indices(round_, board, pairs)
        b_ids.append(np.full(ind.size, b, dtype=np.int64))
        idx.append(ind.reshape(-1))
        prs.append(np.tile(pairs, ind.shape[0]))
    return np.concatenate(b_ids), np.concatenate(idx), np.concatenate(prs)
