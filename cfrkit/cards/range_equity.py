"""Equity of one hole pair against a range, fast enough to call at every decision of a played hand.

:class:`RangeEquity` answers "P(win) + P(tie) / 2 of pair ``h`` against range ``w`` on this board,
with the cards to come dealt uniformly":

* preflop from the exact 1326 x 1326 table (:mod:`cfrkit.cards.preflop`);
* on the flop over all 1,176 turn-river runouts (exact) or ``flop_samples`` sampled ones, on the turn
  over the 48 rivers, on the river directly: the hand classes of all 1326 pairs on those runouts are
  computed once per board (the ``river_strengths`` kernel, 0.7 ms for a flop's 1,176 runouts on one
  core; the same classes as ``board_strengths_batch``) and kept in a small cache, so the two seats of
  a duplicate deal and every decision on a street share them.  On the turn and river a query is one
  pass of the ``range_equity`` kernel over the runouts.  On an exact flop the first query of a hand
  counts, per opponent pair, its wins and ties over the runouts (``flop_hand_rows``: the runouts'
  classes row by row, never stored, exact integers; the pairs declared with :meth:`expect_hands`,
  e.g. the other hand of a duplicate deal, are counted in the same pass) and keeps them; that query
  and every later one of the same hand on that flop is then one O(1326) product (the same equity up
  to float rounding: tested).

Ranges are float64[1326] weights in the pair order of :mod:`cfrkit.cards.hands` (any scale).
"""
from __future__ import annotations

import math
from collections import OrderedDict
from typing import Optional, Sequence, Tuple

import numpy as np

from cfrkit.cards.equity import board_strengths_batch, runout_boards
from cfrkit.cards.hands import HOLE_PAIRS, NUM_PAIRS
from cfrkit.cards.preflop import preflop_equity_table

try:
    from cfrkit._kernels import range_equity as _kernel
except ImportError as exc:  # pragma: no cover - only without a build
    raise ImportError("cfrkit's range_equity kernel is not built; run `python setup.py build_ext --inplace`") from exc


# _HOLDS[c, j]: pair j holds card c (a per-query blocked mask is a few rows' "or", no id parsing)
_HOLDS = np.zeros((52, NUM_PAIRS), dtype=bool)
_HOLDS[HOLE_PAIRS[:, 0], np.arange(NUM_PAIRS)] = True
_HOLDS[HOLE_PAIRS[:, 1], np.arange(NUM_PAIRS)] = True


class RangeEquity:
    """Equity of a pair against a range on boards of 0, 3, 4 or 5 cards (see module doc).

    ``flop_samples``: None for the exact 1,176 flop runouts, else that many runouts sampled per query
    (seeded; the ratio estimator's standard error is returned).  ``cache``: boards whose runout
    strengths are kept.
    """

    def __init__(self, flop_samples: Optional[int] = None, cache: int = 8):
        if flop_samples is not None and int(flop_samples) <= 0:
            raise ValueError(f"flop_samples must be positive or None, got {flop_samples!r}")
        self.flop_samples = None if flop_samples is None else int(flop_samples)
        self._cache: "OrderedDict[Tuple[int, ...], np.ndarray]" = OrderedDict()
        self._size = int(cache)
        # (flop, hand) -> float64 (twice its wins + ties, runouts) per opponent pair
        self._rows: "OrderedDict[Tuple[Tuple[int, ...], int], Tuple[np.ndarray, np.ndarray]]" = OrderedDict()
        self._table: Optional[np.ndarray] = None
        self._expected: list = []  # pairs whose flop rows are counted along with the asked one

    def _strengths(self, board: Tuple[int, ...]) -> np.ndarray:
        hit = self._cache.get(board)
        if hit is not None:
            self._cache.move_to_end(board)
            return hit
        s = _kernel.river_strengths(runout_boards(list(board)))
        self._cache[board] = s
        if len(self._cache) > self._size:
            self._cache.popitem(last=False)
        return s

    def expect_hands(self, hands: Sequence[int]) -> None:
        """Declare the pairs whose flop equities will be asked next (e.g. both hands of a duplicate
        deal, which share the board): the first flop query of any of them then counts the flop's
        runouts for all of them in one kernel pass.  Only speed depends on it, never a result."""
        hs = [int(h) for h in hands]
        if any(not 0 <= h < NUM_PAIRS for h in hs):
            raise ValueError(f"hands must be pair indices 0..1325, got {hands!r}")
        self._expected = hs

    def _hand_rows(self, board: Tuple[int, ...], hand: int) -> Tuple[np.ndarray, np.ndarray]:
        key = (board, hand)
        hit = self._rows.get(key)
        if hit is not None:
            self._rows.move_to_end(key)
            return hit
        # this hand and the expected ones not blocked by the flop and not counted yet, in one pass
        todo = [hand] + [h for h in dict.fromkeys(self._expected) if h != hand and (board, h) not in self._rows
                         and not set(int(c) for c in HOLE_PAIRS[h]) & set(board)]
        score, count = _kernel.flop_hand_rows(np.array(board, dtype=np.uint8), np.array(todo, dtype=np.int32))
        for i, h in enumerate(todo):
            self._rows[(board, h)] = (score[i].astype(np.float64), count[i].astype(np.float64))
            if len(self._rows) > 4 * self._size:
                self._rows.popitem(last=False)
        return self._rows[key]

    def equity(self, hand: int, opp_range: np.ndarray, board: Sequence[int] = (),
               seed: int = 0) -> Tuple[float, float]:
        """(equity of pair ``hand`` against ``opp_range`` on ``board``, its standard error).

        The range's pairs that share a card with ``hand`` or the board are ignored.  The error is 0
        except with sampled flop runouts.  NaN equity when no compatible weight is left.
        """
        board = tuple(int(c) for c in board)
        if len(board) not in (0, 3, 4, 5):
            raise ValueError(f"a board of 0, 3, 4 or 5 cards is expected, got {len(board)}")
        h = int(hand)
        if not 0 <= h < NUM_PAIRS:
            raise ValueError(f"hand must be a pair index 0..1325, got {hand!r}")
        w = np.array(opp_range, dtype=np.float64)
        if w.shape != (NUM_PAIRS,):
            raise ValueError(f"opp_range must have shape (1326,), got {w.shape}")
        mine = [int(c) for c in HOLE_PAIRS[h]]
        if set(mine) & set(board):
            raise ValueError("the hand shares a card with the board")
        if min(board, default=0) < 0 or max(board, default=0) > 51 or len(set(board)) < len(board):
            raise ValueError(f"board cards must be distinct ids 0..51, got {board}")
        w[_HOLDS[mine + list(board)].any(axis=0)] = 0.0
        total = w.sum()
        if not total > 0:
            return float("nan"), 0.0
        if not board:
            if self._table is None:
                self._table = preflop_equity_table()
            return float(self._table[h].astype(np.float64) @ w / total), 0.0
        if len(board) == 3 and self.flop_samples is not None:
            boards = runout_boards(list(board), 2 * self.flop_samples, seed)
            keep = ~np.isin(boards[:, 3:], mine).any(axis=1)
            strengths = board_strengths_batch(np.ascontiguousarray(boards[keep][:self.flop_samples]))
        elif len(board) == 3:
            score, count = self._hand_rows(board, h)
            c = float(w @ count)
            if not c > 0:
                return float("nan"), 0.0
            return float(0.5 * (w @ score) / c), 0.0
        else:
            strengths = self._strengths(board)
        win, tie, compat = _kernel.hand_vs_range_rows(strengths, h, w)
        score = win + 0.5 * tie
        c = compat.sum()
        if not c > 0:
            return float("nan"), 0.0
        eq = float(score.sum() / c)
        if len(board) == 3 and self.flop_samples is not None:
            k = int((compat > 0).sum())
            resid = (score - eq * compat)[compat > 0]
            se = float(math.sqrt(np.sum(resid ** 2) / max(1, k - 1) / max(1, k)) / max(c / max(1, k), 1e-300))
            return eq, se
        return eq, 0.0
