"""The knowledge matrix K of Sclar et al. (Sec. 6) that belief-tracking SymmToM agents keep.

:class:`KnowledgeTracker` keeps, for the agent ``k`` it belongs to, K (c x n; K[p, j] = "k believes
j knows p") updated every step with Eq. 2 of the paper (the update rules: :mod:`cfrkit.agents.symmtom.belief`).
It sits below the agents: the belief planners and the torch-policy adapter (MADDPG-CE/GE inputs) both
read it.
"""
from __future__ import annotations

import numpy as np

from cfrkit.games.errors import GameError
from cfrkit.games.symmtom.core import hears
from cfrkit.games.symmtom.env import AgentView

#: Tracker modes: conservative encounter, greedy encounter, true knowledge.
MODES = ("ce", "ge", "oracle")


def popcount(x: int) -> int:
    """Number of pieces in a knowledge bit mask."""
    return bin(x).count("1")


class KnowledgeTracker:
    """K for one agent (bit masks: ``sure[j]`` exact part, ``guess[j]`` greedy guesses)."""

    def __init__(self, view: AgentView, mode: str = "ge"):
        if mode not in MODES:
            raise GameError(f"knowledge tracker mode must be one of {MODES}, got {mode!r}")
        if mode == "oracle" and view.knowledge is None:
            raise GameError("the oracle tracker needs an environment built with oracle=True")
        cfg = view.config
        self.mode = mode
        self.me = view.agent
        self.n, self.c, self.h = cfg.agents, cfg.pieces, cfg.hearing
        self.full = cfg.full_mask
        self.first = [m if m is not None else 0 for m in view.first_hand]
        self.sure = list(self.first)
        self.guess = [0] * self.n
        self.bases = list(view.bases)
        if mode == "oracle":
            self.sure = list(view.knowledge)

    def believed(self, j: int) -> int:
        """Pieces agent ``j`` is believed to know (bit mask)."""
        return self.sure[j] | self.guess[j]

    def own(self) -> int:
        return self.sure[self.me]

    def matrix(self) -> np.ndarray:
        """K as a bool (c, n) array."""
        return np.array([[(self.believed(j) >> p) & 1 for j in range(self.n)] for p in range(self.c)], dtype=bool)

    def update(self, view: AgentView) -> None:
        """Apply what the step just reported in ``view`` (positions after moving, speech heard)."""
        if self.mode == "oracle":
            self.sure = list(view.knowledge)
            return
        n, h, me = self.n, self.h, self.me
        pos = view.positions
        prev = [self.believed(j) for j in range(n)]
        prev_own = self.sure[me]
        in_range = [[j != l and hears(pos[j], pos[l], h) for l in range(n)] for j in range(n)]
        sure = list(self.sure)
        guess = list(self.guess)
        # my hearing reward and speaking reward (exact: my own knowledge is exact)
        hearing_reward = sum(1 for _, p in view.heard if not (prev_own >> p) & 1)
        recharged = pos[me] == self.bases[me] and prev_own == self.full
        speaking_reward = view.reward - hearing_reward - (self.c * (n - 1) if recharged else 0)
        # S[0]: what I said reached my listeners
        p = view.own_spoken
        if p >= 0:
            bit = 1 << p
            listeners = [j for j in range(n) if in_range[me][j]]
            if listeners and speaking_reward == 0:
                # every listener already knew p: anyone not believed to know it learned things I did
                # not witness, so my guesses about it are unreliable
                for j in listeners:
                    if not prev[j] & bit:
                        guess[j] = 0
            for j in listeners:
                sure[j] |= bit
        # S[1]: what I heard from l reached everyone in l's range
        heard_from = set()
        for l, p in view.heard:
            heard_from.add(l)
            bit = 1 << p
            sure[me] |= bit
            sure[l] |= bit
            for j in range(n):
                if in_range[l][j]:
                    sure[j] |= bit
        # S[2]: unheard speakers (greedy encounter)
        if self.mode == "ge":
            for l in range(n):
                if l == me or in_range[me][l]:
                    continue
                listeners = [j for j in range(n) if in_range[l][j]]
                if not listeners:
                    continue
                knows = prev[l]
                best, best_count = -1, len(listeners)
                for q in range(self.c):
                    if (knows >> q) & 1:
                        count = sum(1 for j in listeners if (prev[j] >> q) & 1)
                        if count < best_count:
                            best, best_count = q, count
                if best >= 0:
                    bit = 1 << best
                    for j in listeners:
                        if j != me and not sure[j] & bit:
                            guess[j] |= bit
        # forgetting: on own base while (believed) knowing everything
        for j in range(n):
            full_before = prev_own == self.full if j == me else prev[j] == self.full
            if pos[j] == self.bases[j] and full_before:
                sure[j] = self.first[j]
                guess[j] = 0
        for j in range(n):
            guess[j] &= ~sure[j]
        self.sure, self.guess = sure, guess
