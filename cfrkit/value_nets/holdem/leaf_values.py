"""Hold'em value nets as leaf value functions of depth-limited ``HoldemPublicGame`` trees.

A depth-limited tree from a flop (turn) state ends in *leaves*: the first decision of the turn (river),
board known, both players in for the same chips.  At a leaf both players' reach vectors are summed per
bucket of the leaf's board and normalised; the net gets them with the pot per player over the stack
and returns bucket values as fractions of the pot for normalised ranges; a hand's value in chips is
``value[bucket(h)] * pot * (opponent's reach mass)`` (cfvs are linear in the opponent's reach), exactly
the conventions of :class:`cfrkit.value_nets.leaf_values.NetLeafValues` (Leduc).  Every leaf and batch
element goes through the net in one forward pass; bucketing is a scatter/gather over bucket ids (no
dense ``1326 x M`` matrices), bucket ids are cached per board.
"""
from __future__ import annotations

from typing import Dict, List, Tuple

import numpy as np
import torch

from cfrkit.games.base import GameError
from cfrkit.value_nets.model import ValueNet


class HoldemNetLeafValues:
    """``fn(leaf_nodes, reach0, reach1, backend) -> (values0, values1)`` (``(L, B, 1326)`` chips) for ``RangeSolver``.

    Args:
        model: the street's :class:`ValueNet` (``num_buckets`` = the bucketer's).
        bucketer: hold'em bucketer of the leaves' street (``hand_buckets(board)``).
        stack: chips per player at the start of the hand (the net's pot input is contribution / stack).
        street: the leaves' street ("flop", "turn" or "river"); leaves with another board size are refused.
        empty_range: what the net gets for a player with no reach at a leaf: ``"uniform"`` (the uniform
            range over the board's buckets; default, as the Leduc leaf function) or ``"zeros"``.
    """

    def __init__(self, model: ValueNet, bucketer, stack: float, street: str, device: str = "cpu",
                 empty_range: str = "uniform"):
        if empty_range not in ("uniform", "zeros"):
            raise ValueError(f"empty_range must be 'uniform' or 'zeros', got {empty_range!r}")
        if model.num_buckets != bucketer.num_buckets:
            raise ValueError(f"network has {model.num_buckets} buckets, bucketer {bucketer.num_buckets}")
        self.model = model.to(device).eval()
        self.bucketer = bucketer
        self.stack = float(stack)
        self.street = street
        self.board_size = {"flop": 3, "turn": 4, "river": 5}[street]
        self.device = device
        self.empty_range = empty_range
        tensors = list(model.parameters()) + list(model.buffers())
        self.dtype = tensors[0].dtype if tensors else torch.float32
        self._ids: Dict[Tuple[int, ...], torch.Tensor] = {}
        self.calls = 0

    def bucket_ids(self, board) -> torch.Tensor:
        """``(1326,)`` bucket id per pair, blocked pairs in the extra bucket ``M`` (dropped)."""
        key = tuple(int(c) for c in board)
        t = self._ids.get(key)
        if t is None:
            if len(key) != self.board_size:
                raise GameError(f"the {self.street} net was given a leaf with a board of {len(key)} cards")
            b = np.asarray(self.bucketer.hand_buckets(key), dtype=np.int64).copy()
            b[b < 0] = self.model.num_buckets
            t = self._ids[key] = torch.as_tensor(b, device=self.device)
        return t

    @torch.no_grad()
    def evaluate(self, boards: List, contribs, r0: torch.Tensor, r1: torch.Tensor):
        """Core: ``boards`` (L), ``contribs (L,)`` chips per player, reach ``(L, B, H)`` -> values ``(L, B, H)`` chips."""
        L, B, H = r0.shape
        M = self.model.num_buckets
        ids = torch.stack([self.bucket_ids(b) for b in boards])[:, None, :].expand(L, B, H)
        contribs = torch.as_tensor(np.asarray(contribs, dtype=np.float64), dtype=self.dtype, device=self.device)
        pots = 2.0 * contribs

        def bucketed(r):
            out = torch.zeros((L, B, M + 1), dtype=self.dtype, device=self.device)
            out.scatter_add_(2, ids, r)
            return out[:, :, :M]

        b0, b1 = bucketed(r0), bucketed(r1)
        s0, s1 = b0.sum(-1, keepdim=True), b1.sum(-1, keepdim=True)
        n0 = b0 / torch.where(s0 > 0, s0, torch.ones_like(s0))
        n1 = b1 / torch.where(s1 > 0, s1, torch.ones_like(s1))
        if self.empty_range == "uniform":
            present = torch.zeros((L, M + 1), dtype=self.dtype, device=self.device)
            present.scatter_(1, ids[:, 0, :], 1.0)
            present = present[:, :M]
            uniform = (present / present.sum(-1, keepdim=True).clamp(min=1.0))[:, None, :]
            n0 = torch.where(s0 > 0, n0, uniform)
            n1 = torch.where(s1 > 0, n1, uniform)
        frac = (contribs / self.stack)[:, None, None].expand(L, B, 1)
        x = torch.cat([n0, n1, frac], -1).reshape(L * B, -1)
        out = self.model(x).reshape(L, B, 2, M)
        zero = torch.zeros((L, B, 1), dtype=self.dtype, device=self.device)
        v0 = torch.gather(torch.cat([out[:, :, 0], zero], -1), 2, ids) * pots[:, None, None] * s1
        v1 = torch.gather(torch.cat([out[:, :, 1], zero], -1), 2, ids) * pots[:, None, None] * s0
        return v0, v1

    def __call__(self, leaves: List, reach0, reach1, backend):
        self.calls += 1
        if backend.name == "numpy":
            r0 = torch.as_tensor(np.asarray(reach0), dtype=self.dtype, device=self.device)
            r1 = torch.as_tensor(np.asarray(reach1), dtype=self.dtype, device=self.device)
        else:
            r0 = reach0.to(device=self.device, dtype=self.dtype)
            r1 = reach1.to(device=self.device, dtype=self.dtype)
        for leaf in leaves:
            if abs(leaf.contrib[0] - leaf.contrib[1]) > 1e-9:
                raise GameError(f"leaf {leaf.index} has unequal contributions {leaf.contrib}")
        v0, v1 = self.evaluate([leaf.board for leaf in leaves], [leaf.contrib[0] for leaf in leaves], r0, r1)
        if backend.name == "numpy":
            return v0.double().cpu().numpy(), v1.double().cpu().numpy()
        return backend.asarray(v0), backend.asarray(v1)
