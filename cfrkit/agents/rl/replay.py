"""A uniform replay buffer of named numpy arrays (ring buffer), checkpointable."""
from __future__ import annotations

from typing import Dict, Tuple

import numpy as np


class ReplayBuffer:
    """``capacity`` transitions; each field has a fixed per-transition shape and dtype.

    >>> buf = ReplayBuffer(4, {"x": ((2,), np.float32), "r": ((), np.float32)})
    >>> buf.add(x=np.ones((3, 2)), r=np.arange(3))
    >>> len(buf), buf.sample(np.random.default_rng(0), 2)["x"].shape
    (3, (2, 2))
    """

    def __init__(self, capacity: int, fields: Dict[str, Tuple[tuple, type]]):
        if capacity < 1:
            raise ValueError(f"capacity must be >= 1, got {capacity}")
        self.capacity = int(capacity)
        self.data = {k: np.zeros((self.capacity,) + tuple(shape), dtype=dtype) for k, (shape, dtype) in fields.items()}
        self.size = 0
        self.pos = 0

    def __len__(self) -> int:
        return self.size

    def add(self, **batch: np.ndarray) -> None:
        """Append a batch (every field with the same leading length)."""
        if set(batch) != set(self.data):
            raise KeyError(f"fields {sorted(batch)} != {sorted(self.data)}")
        m = len(next(iter(batch.values())))
        idx = (self.pos + np.arange(m)) % self.capacity
        for k, v in batch.items():
            self.data[k][idx] = v
        self.pos = int((self.pos + m) % self.capacity)
        self.size = int(min(self.size + m, self.capacity))

    def sample(self, rng: np.random.Generator, batch: int) -> Dict[str, np.ndarray]:
        """``batch`` transitions drawn uniformly with replacement."""
        idx = rng.integers(0, self.size, size=batch)
        return {k: v[idx] for k, v in self.data.items()}

    def state_dict(self) -> Dict:
        return {"size": self.size, "pos": self.pos, "data": {k: v[:self.size].copy() for k, v in self.data.items()}}

    def load_state_dict(self, state: Dict) -> None:
        self.size, self.pos = int(state["size"]), int(state["pos"])
        for k, v in state["data"].items():
            self.data[k][:self.size] = v
