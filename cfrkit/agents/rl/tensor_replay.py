"""A uniform replay ring buffer of named, preallocated torch tensors (checkpointable).

Unlike :class:`cfrkit.agents.rl.replay.ReplayBuffer` (numpy), batches go in and come out as
tensors on the buffer's device, so a learner that acts and learns in torch never converts
between numpy and torch per step or per update.
"""
from __future__ import annotations

from typing import Dict, Tuple

import numpy as np
import torch


class TensorReplay:
    """``capacity`` transitions; each field has a fixed per-transition shape and a torch dtype.

    >>> buf = TensorReplay(4, {"x": ((2,), torch.float32), "r": ((), torch.float32)})
    >>> buf.add(x=torch.ones(3, 2), r=torch.arange(3.0))
    >>> len(buf), tuple(buf.sample(np.random.default_rng(0), 5)["x"].shape)
    (3, (5, 2))
    """

    def __init__(self, capacity: int, fields: Dict[str, Tuple[tuple, torch.dtype]], device: str = "cpu"):
        if int(capacity) < 1:
            raise ValueError(f"capacity must be >= 1, got {capacity}")
        self.capacity = int(capacity)
        self.data = {k: torch.zeros((self.capacity,) + tuple(shape), dtype=dtype, device=device)
                     for k, (shape, dtype) in fields.items()}
        self.size = 0
        self.pos = 0

    def __len__(self) -> int:
        return self.size

    def add(self, **batch: torch.Tensor) -> None:
        """Append a batch (every field with the same leading length m); the oldest are overwritten.

        When m exceeds the capacity only the last ``capacity`` rows are kept."""
        if set(batch) != set(self.data):
            raise KeyError(f"fields {sorted(batch)} != {sorted(self.data)}")
        m = len(next(iter(batch.values())))
        if any(len(v) != m for v in batch.values()):
            raise ValueError("every field of a batch needs the same leading length")
        skip = max(0, m - self.capacity)                         # rows that would be overwritten at once
        rows = m - skip
        start = (self.pos + skip) % self.capacity                  # where row ``skip`` lands (ring order)
        first = min(rows, self.capacity - start)                   # rows up to the end of the ring, then wrap
        for k, v in batch.items():
            v = torch.as_tensor(v)[skip:]
            dst = self.data[k]
            dst[start:start + first] = v[:first]
            if rows > first:
                dst[:rows - first] = v[first:]
        self.pos = (self.pos + m) % self.capacity
        self.size = min(self.size + m, self.capacity)

    def sample(self, rng: np.random.Generator, batch: int) -> Dict[str, torch.Tensor]:
        """``batch`` transitions drawn uniformly with replacement (indices from ``rng``, so a
        checkpointed numpy generator makes sampling resumable)."""
        if self.size == 0:
            raise ValueError("cannot sample from an empty replay buffer")
        idx = torch.from_numpy(rng.integers(0, self.size, size=batch))
        return {k: v.index_select(0, idx.to(v.device)) for k, v in self.data.items()}

    def state_dict(self) -> Dict:
        return {"size": self.size, "pos": self.pos, "data": {k: v[:self.size].clone() for k, v in self.data.items()}}

    def load_state_dict(self, state: Dict) -> None:
        self.size, self.pos = int(state["size"]), int(state["pos"])
        for k, v in state["data"].items():
            self.data[k][:self.size] = torch.as_tensor(v)
