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


class NetLeafValues:
    def __init__(self, model: ValueNet, bucketer: Bucketer, stack: float, device: str = "cpu"):
        if model.num_buckets != bucketer.num_buckets:
            raise ValueError(f"network has {model.num_buckets} buckets, bucketer {bucketer.num_buckets}")
        self.model = model.to(device).eval()
        self.bucketer = bucketer
        self.stack = float(stack)
        self.device = device
        self._mats: Dict[Tuple[int, ...], torch.Tensor] = {}
        self.calls = 0

    def _matrix(self, board) -> torch.Tensor:
        m = self._mats.get(board)
        if m is None:
            m = torch.as_tensor(self.bucketer.matrix(board), dtype=torch.float32, device=self.device)
            self._mats[board] = m
        return m

    @torch.no_grad()
    def __call__(self, leaves: List, reach0, reach1, backend):
        self.calls += 1
        to_t = (lambda x: torch.as_tensor(np.asarray(x), dtype=torch.float32, device=self.device)) \
            if backend.name == "numpy" else (lambda x: x.to(device=self.device, dtype=torch.float32))
        r0, r1 = to_t(reach0), to_t(reach1)  # (L, B, H)
        L, B, H = r0.shape
        mats = torch.stack([self._matrix(leaf.board) for leaf in leaves])  # (L, H, M)
        pots = torch.tensor([leaf.contrib[0] + leaf.contrib[1] for leaf in leaves], dtype=torch.float32,
                            device=self.device)
        b0, b1 = torch.bmm(r0, mats), torch.bmm(r1, mats)  # (L, B, M)
        s0, s1 = b0.sum(-1, keepdim=True), b1.sum(-1, keepdim=True)
        n0 = b0 / torch.where(s0 > 0, s0, torch.ones_like(s0))
        n1 = b1 / torch.where(s1 > 0, s1, torch.ones_like(s1))
        frac = (pots / 2 / self.stack)[:, None, None].expand(L, B, 1)
        x = torch.cat([n0, n1, frac], -1).reshape(L * B, -1)
        out = self.model(x).reshape(L, B, 2, -1)
        v0 = torch.bmm(out[:, :, 0], mats.transpose(1, 2)) * pots[:, None, None] * s1
        v1 = torch.bmm(out[:, :, 1], mats.transpose(1, 2)) * pots[:, None, None] * s0
        if backend.name == "numpy":
            return v0.double().cpu().numpy(), v1.double().cpu().numpy()
        return backend.asarray(v0), backend.asarray(v1)
