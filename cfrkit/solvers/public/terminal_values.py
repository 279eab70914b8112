"""Fold and showdown values over range vectors, with card removal.

For a board and an opponent reach vector ``pi`` (batch ``B`` x hands ``H``), a terminal evaluator
returns, per own hand ``h``:

* ``compatible_mass(pi)[h] = sum of pi[h']`` over hands ``h'`` sharing no card with ``h`` (fold values are
  this times the chips won or lost);
* ``showdown(pi)[h] = sum of pi[h'] * sign(strength[h] - strength[h'])`` over those hands (showdown values
  are this times the chips each player has in).

Hands that share a card with the board get 0.  :class:`DenseTerminal` uses ``H x H`` matrices (small
games such as Leduc); :class:`SortedTerminal` uses sorting and per-card prefix sums, ``O(B * H)`` per
call, the kernel for hold'em's 1326 hands.  Both work on the numpy and torch backends.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np


class DenseTerminal:
    def __init__(self, hand_cards: np.ndarray, board: Sequence[int], strengths: np.ndarray, backend):
        hand_cards = np.asarray(hand_cards)
        H = len(hand_cards)
        valid = np.ones(H, dtype=bool)
        for c in board:
            valid &= ~(hand_cards == c).any(axis=1)
        share = np.zeros((H, H), dtype=bool)
        for j in range(hand_cards.shape[1]):
            for k in range(hand_cards.shape[1]):
                share |= hand_cards[:, j][:, None] == hand_cards[:, k][None, :]
        compat = (~share) & valid[:, None] & valid[None, :]
        s = np.asarray(strengths, dtype=np.int64)
        sign = np.sign(s[:, None] - s[None, :]) * compat
        self.backend = backend
        self.valid = valid
        self._compat_t = backend.asarray(compat.T.astype(np.float64))
        self._sign_t = backend.asarray(sign.T.astype(np.float64))

    def compatible_mass(self, pi):
        return self.backend.matmul(pi, self._compat_t)

    def showdown(self, pi):
        return self.backend.matmul(pi, self._sign_t)


class SortedTerminal:
    def __init__(self, hand_cards: np.ndarray, board: Sequence[int], strengths: np.ndarray, backend):
        hand_cards = np.asarray(hand_cards, dtype=np.int64)
        H, k = hand_cards.shape
        if k > 2:
            raise ValueError("SortedTerminal supports hands of one or two cards")
        self.backend = backend
        self.k = k
        valid = np.ones(H, dtype=bool)
        for c in board:
            valid &= ~(hand_cards == c).any(axis=1)
        self.valid = valid
        s = np.asarray(strengths, dtype=np.int64)
        vidx = np.nonzero(valid)[0]
        order = vidx[np.argsort(s[vidx], kind="stable")]
        sorted_s = s[order]
        V = len(order)
        # positions of every hand in the global sorted list (strictly weaker count, weaker-or-equal count)
        lt = np.searchsorted(sorted_s, s, side="left")
        le = np.searchsorted(sorted_s, s, side="right")
        cards = np.unique(hand_cards)
        X = int(cards.max()) + 1
        per_card = [order[(hand_cards[order] == x).any(axis=1)] for x in range(X)]
        M = max(1, max(len(p) for p in per_card))
        pad = H  # index of an always-zero column appended to the reach
        card_lists = np.full((X, M), pad, dtype=np.int64)
        card_strengths = []
        for x, lst in enumerate(per_card):
            card_lists[x, :len(lst)] = lst
            card_strengths.append(s[lst])
        lt_card = np.zeros((H, k), dtype=np.int64)
        le_card = np.zeros((H, k), dtype=np.int64)
        tot_card = np.zeros((H, k), dtype=np.int64)
        for j in range(k):
            for h in range(H):
                x = hand_cards[h, j]
                cs = card_strengths[x]
                base = x * (M + 1)
                lt_card[h, j] = base + np.searchsorted(cs, s[h], side="left")
                le_card[h, j] = base + np.searchsorted(cs, s[h], side="right")
                tot_card[h, j] = base + len(cs)
        self.V, self.M, self.X, self.H = V, M, X, H
        ix = backend.index
        self._order = ix(order)
        self._lt, self._le = ix(np.minimum(lt, V)), ix(np.minimum(le, V))
        self._card_lists = ix(card_lists.reshape(-1))
        self._lt_card, self._le_card, self._tot_card = ix(lt_card), ix(le_card), ix(tot_card)
        self._valid = backend.asarray(valid.astype(np.float64))

    def _prefix(self, pi):
        be = self.backend
        B = pi.shape[0]
        zero = be.zeros((B, 1))
        sorted_pi = be.take(pi, self._order)
        glob = be.concat([zero, be.cumsum(sorted_pi, 1)], 1)  # (B, V+1)
        padded = be.concat([pi, zero], 1)
        per = be.take(padded, self._card_lists).reshape(B, self.X, self.M)
        per = be.concat([be.zeros((B, self.X, 1)), be.cumsum(per, 2)], 2).reshape(B, self.X * (self.M + 1))
        return glob, per

    def _compat_total(self, pi, glob, per):
        total = glob[:, -1:]
        out = total - self.backend.take(per, self._tot_card).sum(-1) + (self.k - 1) * pi
        return out

    def compatible_mass(self, pi):
        glob, per = self._prefix(pi)
        return self._compat_total(pi, glob, per) * self._valid

    def showdown(self, pi):
        glob, per = self._prefix(pi)
        be = self.backend
        weaker = be.take(glob, self._lt) - be.take(per, self._lt_card).sum(-1)
        weaker_eq = be.take(glob, self._le) - be.take(per, self._le_card).sum(-1) + (self.k - 1) * pi
        total = self._compat_total(pi, glob, per)
        stronger = total - weaker_eq
        return (weaker - stronger) * self._valid


class CardsKernelTerminal:
    """Hold'em (1326 pairs in :mod:`cfrkit.cards` order, numpy backend): the cards package's Cython
    O(n) showdown and fold kernels."""

    def __init__(self, board: Sequence[int], strengths: np.ndarray, backend):
        from cfrkit.cards import equity

        self._equity = equity
        self.board = [int(c) for c in board]
        s = np.asarray(strengths, dtype=np.int32).copy()
        valid = np.ones(1326, dtype=bool)
        from cfrkit.cards.hands import HOLE_PAIRS

        for c in self.board:
            valid &= ~(HOLE_PAIRS == c).any(axis=1)
        # the kernel wants hand classes 1..7462 with 0 = blocked: rank-compress arbitrary strengths
        ranks = np.zeros(1326, dtype=np.int32)
        ranks[valid] = np.unique(s[valid], return_inverse=True)[1] + 1
        self._strengths = np.ascontiguousarray(ranks)
        self.backend = backend

    def compatible_mass(self, pi):
        return self._equity.fold_values(self.board, np.ascontiguousarray(pi))

    def showdown(self, pi):
        return self._equity.showdown_values(self._strengths, np.ascontiguousarray(pi))


def make_terminal(hand_cards, board, strengths, backend, dense_limit: int = 64, kernel: str = "auto"):
    """Dense matrices for up to ``dense_limit`` hands; beyond, the cards package's Cython kernels for
    hold'em pairs on numpy, else the sorted prefix-sum kernel (numpy or torch).

    ``kernel="cards"`` uses :class:`CardsKernelTerminal` (hold'em pairs, numpy backend only).
    """
    if kernel == "cards":
        if backend.name != "numpy" or len(hand_cards) != 1326:
            raise ValueError("the cards kernel needs the numpy backend and the 1326 hold'em pairs")
        return CardsKernelTerminal(board, strengths, backend)
    if len(hand_cards) <= dense_limit:
        return DenseTerminal(hand_cards, board, strengths, backend)
    if kernel == "auto" and backend.name == "numpy" and len(hand_cards) == 1326:
        from cfrkit.cards.hands import HOLE_PAIRS

        if np.array_equal(np.asarray(hand_cards), HOLE_PAIRS):
            return CardsKernelTerminal(board, strengths, backend)
    return SortedTerminal(hand_cards, board, strengths, backend)
