"""Batched knowledge matrices K for the MADDPG-CE / -GE / -Oracle learners.

:class:`BatchedKnowledge` runs :class:`cfrkit.agents.symmtom.belief.KnowledgeTracker`'s update for
every agent of every episode of a :class:`~cfrkit.games.symmtom.batched.BatchedSymmToM` at once
(bit masks in int64 arrays; all agents, speakers and listeners at once, no Python loop), so training sees exactly the K that
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
        bit_of = np.where(spoken >= 0, np.left_shift(1, np.maximum(spoken, 0)), 0).astype(np.int64)   # (B, l)
        # every observer k at once (axis 1), speakers l and listeners j on the next axes; no Python loop
        ar = np.arange(n)
        sure, guess = self.sure, self.guess
        prev = sure | guess                                               # (B, k, j)
        prev_own = sure[:, ar, ar]                                        # (B, k)
        # hearing reward (exact) -> speaking reward
        heard = in_range & (spoken >= 0)[:, None, :]                      # (B, k, l): k heard l speak
        hearing = (heard & ((prev_own[:, :, None] & bit_of[:, None, :]) == 0)).sum(2)
        recharged = on_base & (prev_own == self.full)
        speaking = rewards - hearing - recharged * self.recharge          # (B, k)
        # S[0]
        said = spoken >= 0                                                # (B, k)
        bit = bit_of[:, :, None]                                          # (B, k, 1)
        contradicted = said & in_range.any(2) & (speaking == 0)
        drop = contradicted[:, :, None] & in_range & ((prev & bit) == 0)
        guess = np.where(drop, 0, guess)
        sure = sure | np.where(said[:, :, None] & in_range, bit, 0)
        # S[1]: what k heard from l reached k, l and everyone in l's range
        b = np.where(heard, bit_of[:, None, :], 0)                        # (B, k, l)
        sure |= b
        sure[:, ar, ar] |= np.bitwise_or.reduce(b, axis=2)
        sure |= np.bitwise_or.reduce(np.where(in_range[:, None, :, :], b[:, :, :, None], 0), axis=2)
        # S[2] (greedy encounter): for every speaker l out of k's range, the piece l knows that the
        # fewest of l's listeners know (by k's belief; the lowest such piece on a tie), if fewer than all
        if self.mode == "ge":
            pieces = np.arange(c, dtype=np.int64)
            knows = (prev[:, :, :, None] >> pieces) & 1                   # (B, k, j, q)
            count = np.einsum("blj,bkjq->bklq", in_range.astype(np.int64), knows)
            listeners = in_range.sum(2)                                   # (B, l)
            active = ~in_range & in_range.any(2)[:, None, :] & (ar[:, None] != ar[None, :])[None]   # (B, k, l)
            eligible = active[..., None] & (knows == 1) & (count < listeners[:, None, :, None])      # (B, k, l, q)
            best = np.where(eligible, count, np.iinfo(np.int64).max).argmin(3)                       # first minimum
            has = eligible.any(3)
            bl = np.where(has, np.left_shift(1, best), 0)                 # (B, k, l)
            add = (has[..., None] & in_range[:, None, :, :] & (ar[None, :, None, None] != ar[None, None, None, :])
                   & ((sure[:, :, None, :] & bl[..., None]) == 0))        # (B, k, l, j)
            guess = guess | np.bitwise_or.reduce(np.where(add, bl[..., None], 0), axis=2)
        # forgetting: j on its base with every piece (k's own column: k's exact knowledge)
        full_before = prev == self.full
        full_before[:, ar, ar] = prev_own == self.full
        forget = on_base[:, None, :] & full_before
        sure = np.where(forget, self.first[:, None, :], sure)
        guess = np.where(forget, 0, guess)
        self.sure = sure
        self.guess = guess & ~sure

    def believed(self) -> np.ndarray:
        """(B, k, j) bit masks: pieces agent k believes j knows."""
        return self.sure | self.guess

    def features(self) -> np.ndarray:
        """(B, n, c n) float32: K of each agent, piece-major."""
        bel = self.believed()                                             # (B, k, j)
        bits = (bel[:, :, None, :] >> np.arange(self.c)[None, None, :, None]) & 1   # (B, k, p, j)
        return bits.reshape(bel.shape[0], self.n, self.c * self.n).astype(np.float32)
