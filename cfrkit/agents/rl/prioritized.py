"""Proportional prioritised replay (Schaul et al. 2016) over named numpy arrays, checkpointable.

Sampling is O(capacity) per batch with numpy (no sum tree): at the buffer sizes that fit a CPU run
(<= 10^5) that costs well under a millisecond and keeps the state a pair of arrays.
"""
from __future__ import annotations

from typing import Dict, Tuple

import numpy as np

from cfrkit.agents.rl.replay import ReplayBuffer


class PrioritizedReplay(ReplayBuffer):
    """New transitions get the largest priority seen; :meth:`sample` returns indices and IS weights."""

    def __init__(self, capacity: int, fields: Dict[str, Tuple[tuple, type]], alpha: float = 0.6):
        super().__init__(capacity, fields)
        self.alpha = float(alpha)
        self.priority = np.zeros(self.capacity, dtype=np.float64)
        self.max_priority = 1.0

    def add(self, **batch: np.ndarray) -> None:
        m = len(next(iter(batch.values())))
        idx = (self.pos + np.arange(m)) % self.capacity
        super().add(**batch)
        self.priority[idx] = self.max_priority

    def sample_prioritized(self, rng: np.random.Generator, batch: int, beta: float):
        """``(batch dict, indices, importance weights normalised to max 1)``."""
        p = self.priority[:self.size] ** self.alpha
        p /= p.sum()
        idx = rng.choice(self.size, size=batch, p=p)
        w = (self.size * p[idx]) ** (-beta)
        return {k: v[idx] for k, v in self.data.items()}, idx, (w / w.max()).astype(np.float32)

    def update_priorities(self, idx: np.ndarray, priorities: np.ndarray) -> None:
        priorities = np.asarray(priorities, dtype=np.float64) + 1e-6
        self.priority[idx] = priorities
        self.max_priority = max(self.max_priority, float(priorities.max()))

    def state_dict(self) -> Dict:
        state = super().state_dict()
        state.update(priority=self.priority[:self.size].copy(), max_priority=self.max_priority)
        return state

    def load_state_dict(self, state: Dict) -> None:
        super().load_state_dict(state)
        self.priority[:self.size] = state["priority"]
        self.max_priority = float(state["max_priority"])
