"""Leaf values from a trained value network (depth-limited re-solving, DeepStack style).

At a leaf (the first public state of the next round, board known) both players' reach vectors are
summed per bucket and normalised; the network gets them with the pot fraction and returns bucket
values as fractions of the pot for normalised ranges.  Hand values in chips are
``value[bucket(h)] * pot * (opponent's reach mass)`` (cfvs are linear in the opponent's reach).
All leaves of a tree and all batch elements go through the network in one forward pass.
"""
from __future__ import annotations

from typing import Dict, List, Tuple

import numpy as np
import torch

from cfrkit.value_nets.bucketing import Bucketer
from cfrkit.value_nets.model import ValueNet


def net_for_leaves(model: ValueNet, bucketer, device: str, empty_range: str) -> Tuple[ValueNet, torch.dtype]:
    """``(model on device in eval mode, its parameter dtype)`` for a leaf function, after checking that
    ``empty_range`` is "uniform" or "zeros" and that the net has the bucketer's number of buckets."""
    if empty_range not in ("uniform", "zeros"):
        raise ValueError(f"empty_range must be 'uniform' or 'zeros', got {empty_range!r}")
    if model.num_buckets != bucketer.num_buckets:
        raise ValueError(f"network has {model.num_buckets} buckets, bucketer {bucketer.num_buckets}")
    tensors = list(model.parameters()) + list(model.buffers())
    return model.to(device).eval(), (tensors[0].dtype if tensors else torch.float32)


class NetLeafValues:
    """Leaf value function backed by a value net (see module docstring): a
    :class:`~cfrkit.solvers.public.leaf_values.LeafValues` (``fn(leaves, reach0, reach1, backend) -> (v0, v1)``,
    ``(L, B, H)`` chips).

    ``empty_range``: what the net gets for a player whose reach at a leaf is zero for every hand (CFR
    meets this whenever a player's current strategy never takes the actions leading to the leaf; that
    player's leaf values still set its regrets for those actions).  ``"uniform"`` (default) feeds the
    uniform range over the board's buckets, a situation of the training distribution; ``"zeros"`` feeds
    the all-zero vector, which the recursive range generator never produces, so the net extrapolates.
    """

    def __init__(self, model: ValueNet, bucketer: Bucketer, stack: float, device: str = "cpu",
                 empty_range: str = "uniform"):
        self.model, self.dtype = net_for_leaves(model, bucketer, device, empty_range)
        self.empty_range = empty_range
        self.bucketer = bucketer
        self.stack = float(stack)
        self.device = device
        self._mats: Dict[Tuple[int, ...], torch.Tensor] = {}
        self.calls = 0

    def _matrix(self, board) -> torch.Tensor:
        m = self._mats.get(board)
        if m is None:
            m = torch.as_tensor(self.bucketer.matrix(board), dtype=self.dtype, device=self.device)
            self._mats[board] = m
        return m

    @torch.no_grad()
    def __call__(self, leaves: List, reach0, reach1, backend):
        self.calls += 1
        to_t = (lambda x: torch.as_tensor(np.asarray(x), dtype=self.dtype, device=self.device)) \
            if backend.name == "numpy" else (lambda x: x.to(device=self.device, dtype=self.dtype))
        r0, r1 = to_t(reach0), to_t(reach1)  # (L, B, H)
        L, B, H = r0.shape
        mats = torch.stack([self._matrix(leaf.board) for leaf in leaves])  # (L, H, M)
        pots = torch.tensor([leaf.contrib[0] + leaf.contrib[1] for leaf in leaves], dtype=self.dtype,
                            device=self.device)
        b0, b1 = torch.bmm(r0, mats), torch.bmm(r1, mats)  # (L, B, M)
        s0, s1 = b0.sum(-1, keepdim=True), b1.sum(-1, keepdim=True)
        n0 = b0 / torch.where(s0 > 0, s0, torch.ones_like(s0))
        n1 = b1 / torch.where(s1 > 0, s1, torch.ones_like(s1))
        if self.empty_range == "uniform":
            present = (mats.sum(1) > 0).to(self.dtype)  # (L, M)
            uniform = (present / present.sum(-1, keepdim=True))[:, None, :]
            n0 = torch.where(s0 > 0, n0, uniform)
            n1 = torch.where(s1 > 0, n1, uniform)
        frac = (pots / 2 / self.stack)[:, None, None].expand(L, B, 1)
        x = torch.cat([n0, n1, frac], -1).reshape(L * B, -1)
        out = self.model(x).reshape(L, B, 2, -1)
        v0 = torch.bmm(out[:, :, 0], mats.transpose(1, 2)) * pots[:, None, None] * s1
        v1 = torch.bmm(out[:, :, 1], mats.transpose(1, 2)) * pots[:, None, None] * s0
        if backend.name == "numpy":
            return v0.double().cpu().numpy(), v1.double().cpu().numpy()
        return backend.asarray(v0), backend.asarray(v1)
