"""Batched SymmToM: many episodes stepped at once with numpy (same rules as :mod:`core`).

All episodes of a batch advance in lock-step (same ``t``); ``step`` takes ``moves`` and ``pieces``
arrays of shape ``(num_envs, n)`` and returns rewards of the same shape.  With ``auto_reset`` a
finished batch starts new episodes on the next ``step``.

>>> env = BatchedSymmToM(SymmToMConfig(agents=3, width=6, pieces=3), num_envs=1024, seed=0)
>>> env.reset()
>>> rewards = env.step(np.zeros((1024, 3), int), np.zeros((1024, 3), int))
"""
from __future__ import annotations

from typing import Optional, Sequence, Tuple

import numpy as np

from cfrkit.games.base import GameError
from cfrkit.games.symmtom.core import MOVE_DELTAS, NUM_MOVES, WALL_ORDER, Start, SymmToMConfig

_DR = np.array([d[0] for d in MOVE_DELTAS], dtype=np.int64)
_DC = np.array([d[1] for d in MOVE_DELTAS], dtype=np.int64)


class BatchedSymmToM:
    """``num_envs`` SymmToM episodes as numpy arrays.

    State arrays (public, read-only for callers): ``rows``, ``cols`` (B, n) agent cells;
    ``base_rows``, ``base_cols`` (B, n); ``first_hand``, ``knowledge`` (B, n, c) bool;
    ``last_moves`` (B, n) realized moves; ``spoken`` (B, n) piece said or -1; ``t`` steps done.
    """

    def __init__(self, config: SymmToMConfig, num_envs: int, seed: Optional[int] = None, auto_reset: bool = False):
        if not isinstance(config, SymmToMConfig):
            raise GameError("BatchedSymmToM needs a SymmToMConfig")
        if int(num_envs) < 1:
            raise GameError(f"num_envs must be >= 1, got {num_envs}")
        self.config = config
        self.num_envs = int(num_envs)
        self.rng = np.random.default_rng(seed)
        self.auto_reset = auto_reset
        self.t = 0
        self._started = False
        B, n = self.num_envs, config.agents
        self._b = np.arange(B)[:, None]
        self._i = np.arange(n)[None, :]
        self._eye = np.eye(n, dtype=bool)[None]
        self._order = np.array([[k] + [j for j in range(n) if j != k] for k in range(n)])   # self, then others

    # ----------------------------------------------------------------- episodes
    def reset(self, starts: Optional[Sequence[Start]] = None) -> None:
        """Start new episodes (random layouts, or the given :class:`Start` per episode)."""
        cfg, B = self.config, self.num_envs
        n, w, c = cfg.agents, cfg.width, cfg.pieces
        if starts is not None:
            if len(starts) != B:
                raise GameError(f"need {B} starts, got {len(starts)}")
            for s in starts:
                s.validate(cfg)
            self.rows = np.array([[p[0] for p in s.positions] for s in starts], dtype=np.int64)
            self.cols = np.array([[p[1] for p in s.positions] for s in starts], dtype=np.int64)
            self.base_rows = np.array([[p[0] for p in s.bases] for s in starts], dtype=np.int64)
            self.base_cols = np.array([[p[1] for p in s.bases] for s in starts], dtype=np.int64)
            fh = np.array([[[(m >> p) & 1 for p in range(c)] for m in s.first_hand] for s in starts], dtype=bool)
        else:
            cells = np.argsort(self.rng.random((B, w * w)), axis=1)[:, :n]
            base_cells = np.argsort(self.rng.random((B, w * w)), axis=1)[:, :n]
            self.rows, self.cols = np.divmod(cells, w)
            self.base_rows, self.base_cols = np.divmod(base_cells, w)
            owners = np.tile(np.arange(n), (B, c // n))
            if c % n:
                extra = np.argsort(self.rng.random((B, n)), axis=1)[:, : c % n]
                owners = np.concatenate([owners, extra], axis=1)
            perm = np.argsort(self.rng.random((B, c)), axis=1)
            owners = np.take_along_axis(owners, perm, axis=1)            # owner of piece p
            fh = owners[:, None, :] == np.arange(n)[None, :, None]         # (B, n, c)
        self.first_hand = fh
        self.knowledge = fh.copy()
        self.last_moves = np.zeros((B, n), dtype=np.int64)
        self.spoken = np.full((B, n), -1, dtype=np.int64)
        self.returns = np.zeros((B, n), dtype=np.int64)
        self.recharges = np.zeros((B, n), dtype=np.int64)
        self.failed_base = np.zeros((B, n), dtype=np.int64)
        self.t = 0
        self._started = True

    def start(self, b: int) -> Start:
        """Episode ``b``'s layout as a :class:`Start` (cells, bases, first hands as bit masks), so a
        single-episode :class:`~cfrkit.games.symmtom.core.SymmToMEnv` can replay the same episode."""
        if not self._started:
            raise GameError("BatchedSymmToM.start: call reset() first")
        if not 0 <= int(b) < self.num_envs:
            raise GameError(f"episode {b} out of range 0..{self.num_envs - 1}")
        n, c = self.config.agents, self.config.pieces
        return Start([(int(self.rows[b, i]), int(self.cols[b, i])) for i in range(n)],
                     [(int(self.base_rows[b, i]), int(self.base_cols[b, i])) for i in range(n)],
                     [int(sum(1 << p for p in range(c) if self.first_hand[b, i, p])) for i in range(n)])

    @property
    def done(self) -> bool:
        return self.t >= self.config.episode_length

    # ----------------------------------------------------------------- dynamics
    def step(self, moves: np.ndarray, pieces: np.ndarray) -> np.ndarray:
        """Advance every episode one step; returns rewards (B, n) int64."""
        if not self._started or (self.done and self.auto_reset):
            self.reset()
        elif self.done:
            raise GameError("the episodes are over; call reset() (or use auto_reset=True)")
        cfg, B = self.config, self.num_envs
        n, w, c, h = cfg.agents, cfg.width, cfg.pieces, cfg.hearing
        moves = np.asarray(moves, dtype=np.int64)
        pieces = np.asarray(pieces, dtype=np.int64)
        if moves.shape != (B, n) or pieces.shape != (B, n):
            raise GameError(f"moves and pieces must have shape {(B, n)}, got {moves.shape} and {pieces.shape}")
        if moves.min() < 0 or moves.max() >= NUM_MOVES or pieces.min() < -1 or pieces.max() >= c:
            raise GameError(f"moves must be in [0, {NUM_MOVES}) and pieces in [-1, {c})")
        know = self.knowledge
        b, i = self._b, self._i
        safe = np.maximum(pieces, 0)
        spoken = np.where((pieces >= 0) & know[b, i, safe], pieces, -1)

        # movement: walls, then pairwise conflicts until none is left
        r0, c0 = self.rows, self.cols
        tr, tc = r0 + _DR[moves], c0 + _DC[moves]
        moving = (moves != 0) & (tr >= 0) & (tr < w) & (tc >= 0) & (tc < w)
        tr = np.where(moving, tr, r0)
        tc = np.where(moving, tc, c0)
        first = cfg.tiebreak == "first"
        changed = True
        while changed:
            changed = False
            for a in range(n):
                for bb in range(a + 1, n):
                    conflict = (tr[:, a] == tr[:, bb]) & (tc[:, a] == tc[:, bb])
                    if not conflict.any():
                        continue
                    changed = True
                    coin = True if first else (self.rng.random(B) < 0.5)
                    cancel_a = conflict & moving[:, a] & (~moving[:, bb] | coin)
                    cancel_b = conflict & ~cancel_a
                    tr[:, a] = np.where(cancel_a, r0[:, a], tr[:, a])
                    tc[:, a] = np.where(cancel_a, c0[:, a], tc[:, a])
                    moving[:, a] &= ~cancel_a
                    tr[:, bb] = np.where(cancel_b, r0[:, bb], tr[:, bb])
                    tc[:, bb] = np.where(cancel_b, c0[:, bb], tc[:, bb])
                    moving[:, bb] &= ~cancel_b
        self.rows, self.cols = tr, tc
        self.last_moves = np.where(moving, moves, 0)

        # hearing and rewards (knowledge as of the start of the step)
        in_range = ((np.abs(tr[:, :, None] - tr[:, None, :]) <= h)
                    & (np.abs(tc[:, :, None] - tc[:, None, :]) <= h) & ~self._eye)   # (B, listener, speaker)
        sp_safe = np.maximum(spoken, 0)
        listener_knows = know[b[:, :, None], i[:, :, None], sp_safe[:, None, :]]      # (B, i, j)
        new = in_range & (spoken >= 0)[:, None, :] & ~listener_knows
        rewards = new.sum(axis=2) + new.sum(axis=1)
        new_know = know.copy()
        for j in range(n):
            new_know[b, i, sp_safe[:, j:j + 1]] |= new[:, :, j]
        on_base = (tr == self.base_rows) & (tc == self.base_cols)
        full = know.all(axis=2)
        recharge = on_base & full
        rewards = rewards + recharge * cfg.recharge_reward
        new_know = np.where(recharge[:, :, None], self.first_hand, new_know)
        self.knowledge = new_know
        self.spoken = spoken
        self.returns += rewards
        self.recharges += recharge
        self.failed_base += on_base & ~full
        self.t += 1
        return rewards

    # ----------------------------------------------------------------- observations
    def observations(self) -> np.ndarray:
        """The authors' observation vectors, float32 (B, n, obs_size); layout as in
        :func:`cfrkit.games.symmtom.core.observation_vector` (a new array each call)."""
        cfg, B = self.config, self.num_envs
        n, w, c, h = cfg.agents, cfg.width, cfg.pieces, cfg.hearing
        scale = np.float32(1.0 / (w - 1))
        order = self._order
        others = order[:, 1:]                                                          # (n, n-1)
        out = np.zeros((B, n, cfg.observation_size), dtype=np.float32)
        k = 0
        if cfg.oracle:
            out[:, :, :c] = self.knowledge
            k = c
        out[:, :, k:k + c] = self.first_hand
        k += c
        out[:, :, k:k + 2 * n:2] = _DR[self.last_moves][:, order]
        out[:, :, k + 1:k + 2 * n:2] = _DC[self.last_moves][:, order]
        k += 2 * n
        rows, cols = self.rows, self.cols
        out[:, :, k:k + 2 * (n - 1):2] = (rows[:, others] - rows[:, :, None]) * scale
        out[:, :, k + 1:k + 2 * (n - 1):2] = (cols[:, others] - cols[:, :, None]) * scale
        k += 2 * (n - 1)
        if cfg.oracle:
            for m in range(n - 1):
                out[:, :, k + m * c:k + (m + 1) * c] = self.knowledge[:, others[:, m]]
            k += (n - 1) * c
        if not cfg.hide_first_hand:
            for m in range(n - 1):
                out[:, :, k + m * c:k + (m + 1) * c] = self.first_hand[:, others[:, m]]
        k += (n - 1) * c
        out[:, :, k:k + 2 * n:2] = ((self.base_rows - rows) * scale)[:, order]
        out[:, :, k + 1:k + 2 * n:2] = ((self.base_cols - cols) * scale)[:, order]
        k += 2 * n
        near = (np.abs(rows[:, :, None] - rows[:, None, :]) <= h) & (np.abs(cols[:, :, None] - cols[:, None, :]) <= h)
        agent_idx = np.arange(n)
        for m in range(n - 1):
            speaker = others[:, m]                                                     # (n,)
            said = self.spoken[:, speaker]                                             # (B, n)
            ok = (said >= 0) & near[:, agent_idx, speaker]
            bb, kk = np.nonzero(ok)
            out[bb, kk, k + m * c + said[bb, kk]] = 1.0
        k += (n - 1) * c
        for d, (dr, dc) in enumerate(WALL_ORDER):
            r, cc = rows + dr, cols + dc
            out[:, :, k + d] = ~((r >= 0) & (r < w) & (cc >= 0) & (cc < w))
        assert k + 4 == cfg.observation_size
        return out

    def knowledge_counts(self) -> np.ndarray:
        """Pieces known per agent, (B, n)."""
        return self.knowledge.sum(axis=2)


def random_actions(rng: np.random.Generator, num_envs: int, config: SymmToMConfig) -> Tuple[np.ndarray, np.ndarray]:
    """Uniform random (moves, pieces) arrays for a batch."""
    return (rng.integers(0, NUM_MOVES, size=(num_envs, config.agents)),
            rng.integers(0, config.pieces, size=(num_envs, config.agents)))
