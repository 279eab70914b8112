"""Batched knowledge matrices K for the MADDPG-CE / -GE / -Oracle learners.

:class:`BatchedKnowledge` runs :class:`cfrkit.agents.symmtom.belief.KnowledgeTracker`'s update for
every agent of every episode of a :class:`~cfrkit.games.symmtom.batched.BatchedSymmToM` at once
(bit masks in int64 arrays; loops only over agents and pieces), so training sees exactly the K that
the single-episode agent sees at evaluation time (``tests/test_learners_symmtom.py`` checks that
they agree step for step).  K[k] is agent k's belief: ``sure`` (exact part: first-hand pieces,
S[0], S[1], forgetting) and ``guess`` (GE's S[2], withdrawn on a contradicting speaking reward).
"""
from __future__ import annotations

import numpy as np

from cfrkit.games.base import GameError
from cfrkit.games.symmtom.batched import BatchedSymmToM

MODES = ("ce", "ge", "oracle")


def _bits(masks_bool: np.ndarray) -> np.ndarray:
    """(..., c) bool -> (...) int64 bit masks (piece p -> bit p)."""
    c = masks_bool.shape[-1]
    return (masks_bool.astype(np.int64) << np.arange(c, dtype=np.int64)).sum(-1)


class BatchedKnowledge:
    """K (c x n per agent) for all agents of all episodes of ``env``.

    Call :meth:`reset` after ``env.reset()`` and :meth:`update` after every ``env.step`` with that
    step's rewards; :meth:`features` gives (B, n, c n) float32, piece-major (entry p n + j: "the
    agent believes j knows p"), the layout of :meth:`KnowledgeTracker.matrix` flattened.
    """

    def __init__(self, env: BatchedSymmToM, mode: str):
        if mode not in MODES:
            raise GameError(f"knowledge mode must be one of {MODES}, got {mode!r}")
        self.env = env
        self.mode = mode
        cfg = env.config
        self.n, self.c, self.h = cfg.agents, cfg.pieces, cfg.hearing
        self.full = (1 << self.c) - 1
        self.recharge = cfg.recharge_reward

    def reset(self) -> None:
        env = self.env
        first = _bits(env.first_hand)                                   # (B, n)
        if env.config.hide_first_hand:
            raise GameError("the batched knowledge matrix assumes public first-hand pieces (the paper's setting)")
        self.first = first
        B, n = first.shape
        self.sure = np.repeat(first[:, None, :], n, axis=1).copy()       # (B, k, j)
        self.guess = np.zeros_like(self.sure)
        if self.mode == "oracle":
            self.sure = np.repeat(_bits(env.knowledge)[:, None, :], n, axis=1)

    def update(self, rewards: np.ndarray) -> None:
        env = self.env
        n, c, h = self.n, self.c, self.h
        if self.mode == "oracle":
            self.sure = np.repeat(_bits(env.knowledge)[:, None, :], n, axis=1)
            return
        rows, cols = env.rows, env.cols
        spoken = env.spoken                                               # (B, n) effective speech or -1
        in_range = ((np.abs(rows[:, :, None] - rows[:, None, :]) <= h)
                    & (np.abs(cols[:, :, None] - cols[:, None, :]) <= h)
                    & ~np.eye(n, dtype=bool)[None])                       # (B, j, l) symmetric
        on_base = (rows == env.base_rows) & (cols == env.base_cols)       # (B, n)
        bit_of = np.where(spoken >= 0, np.left_shift(1, np.maximum(spoken, 0)), 0).astype(np.int64)
        for k in range(n):
            prev = self.sure[:, k] | self.guess[:, k]                     # (B, j)
            prev_own = self.sure[:, k, k]
            sure = self.sure[:, k].copy()
            guess = self.guess[:, k].copy()
            # hearing reward (exact) -> speaking reward
            hearing = np.zeros(len(rows), dtype=np.int64)
            for l in range(n):
                if l == k:
                    continue
                heard = in_range[:, k, l] & (spoken[:, l] >= 0)
                hearing += heard & ((prev_own & bit_of[:, l]) == 0)
            recharged = on_base[:, k] & (prev_own == self.full)
            speaking = rewards[:, k] - hearing - recharged * self.recharge
            # S[0]
            bit = bit_of[:, k]
            said = spoken[:, k] >= 0
            listeners = in_range[:, k, :]                                  # (B, j)
            contradicted = said & listeners.any(1) & (speaking == 0)
            drop = contradicted[:, None] & listeners & ((prev & bit[:, None]) == 0)
            guess = np.where(drop, 0, guess)
            sure = sure | np.where(said[:, None] & listeners, bit[:, None], 0)
            # S[1]
            for l in range(n):
                if l == k:
                    continue
                heard = in_range[:, k, l] & (spoken[:, l] >= 0)
                b = np.where(heard, bit_of[:, l], 0)
                sure[:, k] |= b
                sure[:, l] |= b
                sure |= np.where(in_range[:, l, :], b[:, None], 0)
            # S[2] (greedy encounter)
            if self.mode == "ge":
                for l in range(n):
                    if l == k:
                        continue
                    lst = in_range[:, l, :]                                # listeners of l (B, j)
                    active = ~in_range[:, k, l] & lst.any(1)
                    best = np.full(len(rows), -1, dtype=np.int64)
                    best_count = lst.sum(1)
                    for q in range(c):
                        knows_q = ((prev[:, l] >> q) & 1).astype(bool)
                        count = (lst & (((prev >> q) & 1) == 1)).sum(1)
                        better = active & knows_q & (count < best_count)
                        best = np.where(better, q, best)
                        best_count = np.where(better, count, best_count)
                    has = best >= 0
                    b = np.where(has, np.left_shift(1, np.maximum(best, 0)), 0).astype(np.int64)
                    add = has[:, None] & lst & (np.arange(n)[None] != k) & ((sure & b[:, None]) == 0)
                    guess |= np.where(add, b[:, None], 0)
            # forgetting
            full_before = prev == self.full
            full_before[:, k] = prev_own == self.full
            forget = on_base & full_before
            sure = np.where(forget, self.first, sure)
            guess = np.where(forget, 0, guess)
            guess &= ~sure
            self.sure[:, k] = sure
            self.guess[:, k] = guess

    def believed(self) -> np.ndarray:
        """(B, k, j) bit masks: pieces agent k believes j knows."""
        return self.sure | self.guess

    def features(self) -> np.ndarray:
        """(B, n, c n) float32: K of each agent, piece-major."""
        bel = self.believed()                                             # (B, k, j)
        bits = (bel[:, :, None, :] >> np.arange(self.c)[None, None, :, None]) & 1   # (B, k, p, j)
        return bits.reshape(bel.shape[0], self.n, self.c * self.n).astype(np.float32)
