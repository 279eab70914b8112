"""Per-board features of every hand of a round, batched over the 1326 hole pairs.

All functions take a :class:`DeckContext` (the deck of the game, its final round) and one board
(card ids, the round's board cards) and return arrays over the 1326 pairs of
:mod:`cfrkit.cards.hands`, NaN / -1 for pairs that are blocked by the board or not in the deck.

- :func:`final_strength`: HS = P(win) + P(tie)/2 against a uniform opponent on final boards.
- :func:`expected_strength`: E[HS] over every completion of the board to the final round.
- :func:`next_round_histogram`: histogram of the next round's E[HS] over the next round's cards
  (turn: over river cards; flop: over turn cards).
- :func:`next_round_buckets`: the next round's bucket of every hand for every next card
  (potential-aware features are distributions over these buckets).
- :func:`ochs`: equity on the final board against each of k opponent hand clusters.

Strengths come from the range kernels of :mod:`cfrkit.cards.equity` (one sort and sweep per board).
"""
from __future__ import annotations

from itertools import combinations

import numpy as np

from cfrkit.abstraction.enumerate import deck_cards, deck_pair_mask, live_pairs
from cfrkit.abstraction.params import BOARD_CARDS, AbstractionParams
from cfrkit.cards.equity import board_strengths_batch, showdown_masses
from cfrkit.cards.hands import NUM_PAIRS
from cfrkit._kernels import equity as _equity_kernel


class DeckContext:
    """The deck and the last round of an abstraction (features depend on both)."""

    def __init__(self, params: AbstractionParams):
        self.params = params
        self.deck = deck_cards(params.num_ranks, params.num_suits)
        self.deck_mask = deck_pair_mask(self.deck)
        self.uniform = self.deck_mask.astype(np.float64)
        self.final_round = params.num_rounds - 1
        self.final_cards = BOARD_CARDS[self.final_round]
        self.ochs_ranges = None  # float64[k, 1326] once built

    def live(self, board) -> np.ndarray:
        return live_pairs(board, self.deck_mask)

    def completions(self, board, n: int) -> np.ndarray:
        """uint8[m, len(board) + n]: the board followed by every n-card set of the remaining deck."""
        board = np.asarray(board, dtype=np.uint8)
        rest = np.setdiff1d(self.deck, board)
        if n == 0:
            return board[None, :].copy()
        extra = np.array(list(combinations(rest.tolist(), n)), dtype=np.uint8)
        return np.ascontiguousarray(np.concatenate([np.broadcast_to(board, (len(extra), board.size)), extra], axis=1))


def _equities(strengths: np.ndarray, ranges: np.ndarray) -> np.ndarray:
    """Equity of each pair against each range: [B, 1326] strengths x [k, 1326] -> [B, k, 1326]."""
    b, k = strengths.shape[0], ranges.shape[0]
    s = np.repeat(strengths, k, axis=0)
    r = np.tile(ranges, (b, 1))
    win, lose, compat = showdown_masses(s, r)
    tie = np.maximum(compat - win - lose, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        eq = np.where(compat > 0, (win + 0.5 * tie) / np.where(compat > 0, compat, 1.0), 0.5)
    return eq.reshape(b, k, NUM_PAIRS)


def final_strength(ctx: DeckContext, boards: np.ndarray) -> np.ndarray:
    """HS of every pair on each final board (uniform opponent over the deck): float64[B, 1326], NaN
    where the pair is blocked or outside the deck."""
    boards = np.atleast_2d(np.asarray(boards, dtype=np.uint8))
    hs = _equities(board_strengths_batch(boards), ctx.uniform[None, :])[:, 0, :]
    dead = np.zeros((boards.shape[0], 52), dtype=bool)
    np.put_along_axis(dead, boards.astype(np.int64), True, axis=1)
    from cfrkit.cards.hands import HOLE_PAIRS

    blocked = dead[:, HOLE_PAIRS[:, 0]] | dead[:, HOLE_PAIRS[:, 1]] | ~ctx.deck_mask[None, :]
    hs[blocked] = np.nan
    return hs


def expected_strength(ctx: DeckContext, board) -> np.ndarray:
    """E[HS] of every pair over all completions of ``board`` to the final round: float64[1326]."""
    board = np.asarray(board, dtype=np.uint8)
    finals = ctx.completions(board, ctx.final_cards - board.size)
    if ctx.final_cards == 5:  # river showdowns: the runout kernel (one sort and sweep per board)
        hs, _, cnt, _, _, _, _ = _equity_kernel.accumulate_runouts(np.ascontiguousarray(finals), ctx.uniform, 0)
        with np.errstate(invalid="ignore", divide="ignore"):
            res = hs / cnt
        res[~ctx.live(board)] = np.nan
        return res
    out = np.zeros(NUM_PAIRS)
    cnt = np.zeros(NUM_PAIRS)
    for start in range(0, len(finals), 4096):
        hs = final_strength(ctx, finals[start:start + 4096])
        ok = ~np.isnan(hs)
        out += np.where(ok, hs, 0.0).sum(axis=0)
        cnt += ok.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        res = out / cnt
    res[~ctx.live(board)] = np.nan
    return res


def next_round_values(ctx: DeckContext, round_: int, board) -> np.ndarray:
    """E[HS] of every pair after each possible next-round deal: float64[m, 1326] (NaN = blocked)."""
    board = np.asarray(board, dtype=np.uint8)
    step = BOARD_CARDS[round_ + 1] - BOARD_CARDS[round_]
    nexts = ctx.completions(board, step)
    if round_ + 1 == ctx.final_round:
        return final_strength(ctx, nexts)
    return np.stack([expected_strength(ctx, nb) for nb in nexts])


def histogram_from_values(values: np.ndarray, bins: int) -> np.ndarray:
    """Normalised histograms over axis 0 of values in [0, 1] (NaN ignored): [m, n] -> float32[n, bins]."""
    ok = ~np.isnan(values)
    idx = np.clip((np.where(ok, values, 0.0) * bins).astype(np.int64), 0, bins - 1)
    n = values.shape[1]
    hist = np.zeros((n, bins), dtype=np.float64)
    cols = np.broadcast_to(np.arange(n), values.shape)
    np.add.at(hist, (cols[ok], idx[ok]), 1.0)
    tot = hist.sum(axis=1, keepdims=True)
    return (hist / np.maximum(tot, 1.0)).astype(np.float32)


def next_round_histogram(ctx: DeckContext, round_: int, board) -> np.ndarray:
    """Histogram (``hist_bins`` equal bins on [0, 1]) of next-round E[HS] over next-round cards:
    float32[1326, bins]; rows of dead pairs are 0."""
    return histogram_from_values(next_round_values(ctx, round_, board), ctx.params.hist_bins)


def next_round_buckets(ctx: DeckContext, round_: int, board, abstraction) -> np.ndarray:
    """Next-round bucket of every pair for each next-round deal: int32[m, 1326] (-1 = blocked)."""
    board = np.asarray(board, dtype=np.uint8)
    step = BOARD_CARDS[round_ + 1] - BOARD_CARDS[round_]
    nexts = ctx.completions(board, step)
    return np.stack([abstraction.buckets_for_board(round_ + 1, nb) for nb in nexts])


def ochs(ctx: DeckContext, board) -> np.ndarray:
    """Opponent-cluster hand strength on a final board: equity of each pair against each opponent
    cluster range, float32[1326, k] (rows of dead pairs are NaN)."""
    board = np.atleast_2d(np.asarray(board, dtype=np.uint8))
    eq = _equities(board_strengths_batch(board), ctx.ochs_ranges)[0].T.astype(np.float32)
    eq[~ctx.live(board[0])] = np.nan
    return eq


def preflop_opponent_clusters(ctx: DeckContext, k: int, seed: int, samples: int = 3000) -> np.ndarray:
    """OCHS opponent clusters: the deck's pairs grouped into ``k`` clusters by preflop E[HS]
    (1-D k-means over sampled final boards, Johanson et al. 2013); returns float64[k, 1326] 0/1 ranges."""
    from cfrkit.abstraction.clustering import kmeans_l2

    rng = np.random.default_rng(seed)
    keys = rng.random((samples, ctx.deck.size))
    boards = ctx.deck[np.argsort(keys, axis=1)[:, :ctx.final_cards]]
    acc, cnt = np.zeros(NUM_PAIRS), np.zeros(NUM_PAIRS)
    for start in range(0, samples, 1024):
        hs = final_strength(ctx, boards[start:start + 1024])
        ok = ~np.isnan(hs)
        acc += np.where(ok, hs, 0).sum(0)
        cnt += ok.sum(0)
    pairs = np.flatnonzero(ctx.deck_mask)
    from cfrkit.cards.hands import HOLE_PAIRS
    from cfrkit.cards.isomorphism import holdem_indexer

    # average within each preflop class so that the clusters are suit-symmetric (sampling noise)
    cls = holdem_indexer().index_batch(HOLE_PAIRS[pairs])
    e_cls = np.bincount(cls, acc[pairs], minlength=169) / np.maximum(np.bincount(cls, cnt[pairs], minlength=169), 1)
    e = e_cls[cls][:, None]
    k = min(k, len(np.unique(np.round(e, 6))))
    labels, centres, _ = kmeans_l2(e, k, seed=seed)
    order = np.argsort(centres[:, 0])  # cluster 0 = weakest
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    ranges = np.zeros((k, NUM_PAIRS))
    ranges[rank[labels], pairs] = 1.0
    return ranges
