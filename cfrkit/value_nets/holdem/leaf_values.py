"""Hold'em value nets as leaf value functions of depth-limited ``HoldemPublicGame`` trees.

A depth-limited tree from a flop (turn) state ends in *leaves*: the first decision of the turn (river),
board known, both players in for the same chips.  At a leaf both players' reach vectors are summed per
bucket of the leaf's board and normalised; the net gets them with the pot per player over the stack
and returns bucket values as fractions of the pot for normalised ranges; a hand's value in chips is
``value[bucket(h)] * pot * (opponent's reach mass)`` (cfvs are linear in the opponent's reach), exactly
the conventions of :class:`cfrkit.value_nets.leaf_values.NetLeafValues` (Leduc).  Every leaf and batch
element goes through the net in one forward pass; bucketing is a scatter/gather over bucket ids (no
dense ``1326 x M`` matrices), bucket ids are cached per board.

Preflop lookahead leaves (the chance state before the flop cards) take either the flop net averaged over
sampled flops (:class:`FlopNetPreflopValues`, the auxiliary net's training target) or the auxiliary
("preflop") net itself (:class:`HoldemNetLeafValues` with ``street="preflop"``, 169 classes, empty board);
:class:`AllinSplitValues` sends the leaves where a player is all in to an exact run-out function instead.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Dict, List, Tuple

import numpy as np
import torch

from cfrkit.games.base import GameError
from cfrkit.value_nets.leaf_values import net_for_leaves
from cfrkit.value_nets.model import ValueNet


class HoldemNetLeafValues:
    """A hold'em value net as :class:`~cfrkit.solvers.public.leaf_values.LeafValues`: ``fn(leaf_nodes, reach0,
    reach1, backend) -> (values0, values1)`` (``(L, B, 1326)`` chips), and as
    :class:`~cfrkit.solvers.public.leaf_values.BucketedLeafValues` (``num_buckets``, ``empty_range``,
    :meth:`leaf_bucket_ids`, :meth:`bucket_values`) for the compiled solver's direct path.

    Args:
        model: the street's :class:`ValueNet` (``num_buckets`` = the bucketer's).
        bucketer: hold'em bucketer of the leaves' street (``hand_buckets(board)``).
        stack: chips per player at the start of the hand (the net's pot input is contribution / stack).
        street: the leaves' street ("flop", "turn" or "river"; "preflop" for the auxiliary net, whose leaves are
            the chance state before the flop, empty board); leaves with another board size are refused.
        empty_range: what the net gets for a player with no reach at a leaf: ``"uniform"`` (the uniform
            range over the board's buckets; default, as the Leduc leaf function) or ``"zeros"``.
    """

    def __init__(self, model: ValueNet, bucketer, stack: float, street: str, device: str = "cpu",
                 empty_range: str = "uniform"):
        self.model, self.dtype = net_for_leaves(model, bucketer, device, empty_range)
        self.bucketer = bucketer
        self.stack = float(stack)
        self.street = street
        if street not in ("preflop", "flop", "turn", "river"):
            raise ValueError(f"street must be preflop, flop, turn or river, got {street!r}")
        self.board_size = {"preflop": 0, "flop": 3, "turn": 4, "river": 5}[street]
        self.device = device
        self.empty_range = empty_range
        self._ids: Dict[Tuple[int, ...], torch.Tensor] = {}
        self._leaf_cache: "OrderedDict[Tuple[int, ...], tuple]" = OrderedDict()
        self.calls = 0

    @property
    def num_buckets(self) -> int:
        """Buckets per board (``M``; the net's input has ``2 M + 1`` entries)."""
        return int(self.model.num_buckets)

    def leaf_bucket_ids(self, board) -> np.ndarray:
        """``(1326,)`` int64 bucket id per pair on ``board``, pairs touching it in bucket ``num_buckets``
        (:class:`~cfrkit.solvers.public.leaf_values.BucketedLeafValues`)."""
        return self.bucket_ids(board).cpu().numpy()

    @torch.no_grad()
    def bucket_values(self, ranges0: np.ndarray, ranges1: np.ndarray, contribs) -> np.ndarray:
        """``(N, 2, M)`` float64 bucket values as fractions of the pot per unit of opponent reach mass (the net's
        output) for ``N`` leaves with normalised bucket ranges ``ranges0, ranges1`` ``(N, M)`` and ``contribs``
        ``(N,)`` chips per player; the direct path of the compiled depth-limited solver
        (:class:`~cfrkit.solvers.public.leaf_values.BucketedLeafValues`)."""
        r0, r1 = np.asarray(ranges0, dtype=np.float64), np.asarray(ranges1, dtype=np.float64)
        M = self.num_buckets
        if r0.ndim != 2 or r0.shape != r1.shape or r0.shape[1] != M:
            raise ValueError(f"bucket ranges must be (N, {M}) each, got {r0.shape} and {r1.shape}")
        frac = np.asarray(contribs, dtype=np.float64).reshape(-1, 1) / self.stack
        if len(frac) != len(r0):
            raise ValueError(f"{len(frac)} contributions for {len(r0)} leaves")
        x = np.concatenate([r0, r1, frac], 1)
        out = self.model(torch.as_tensor(x, dtype=self.dtype, device=self.device)).reshape(len(r0), 2, M)
        self.calls += 1
        return out.double().cpu().numpy()

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

    def _present(self, ids: torch.Tensor) -> torch.Tensor:
        """``(L, M)`` uniform range over the buckets on each leaf's board (the input for a player without reach)."""
        M = self.model.num_buckets
        present = torch.zeros((ids.shape[0], M + 1), dtype=self.dtype, device=self.device)
        present.scatter_(1, ids, 1.0)
        present = present[:, :M]
        return present / present.sum(-1, keepdim=True).clamp(min=1.0)

    @torch.no_grad()
    def evaluate(self, boards: List, contribs, r0: torch.Tensor, r1: torch.Tensor):
        """Core: ``boards`` (L), ``contribs (L,)`` chips per player, reach ``(L, B, H)`` -> values ``(L, B, H)`` chips."""
        ids = torch.stack([self.bucket_ids(b) for b in boards])
        contribs = torch.as_tensor(np.asarray(contribs, dtype=np.float64), dtype=self.dtype, device=self.device)
        return self._evaluate(ids, contribs, self._present(ids) if self.empty_range == "uniform" else None, r0, r1)

    @torch.no_grad()
    def _evaluate(self, ids: torch.Tensor, contribs: torch.Tensor, uniform, r0: torch.Tensor, r1: torch.Tensor):
        """:meth:`evaluate` on the leaves' bucket ids ``(L, H)``, contributions ``(L,)`` and uniform ranges ``(L, M)``
        as tensors on the device (no Python loop over leaves)."""
        L, B, H = r0.shape
        M = self.model.num_buckets
        if ids.dim() == 2:          # one board per leaf; (L, B, H) per-row boards from row_evaluator
            ids = ids[:, None, :].expand(L, B, H)
        if contribs.dim() == 1:
            contribs = contribs[:, None]
        if uniform is not None and uniform.dim() == 2:
            uniform = uniform[:, None, :]
        pots = 2.0 * contribs                                       # (L, 1) or (L, B)

        def bucketed(r):
            out = torch.zeros((L, B, M + 1), dtype=self.dtype, device=self.device)
            out.scatter_add_(2, ids, r)
            return out[:, :, :M]

        b0, b1 = bucketed(r0), bucketed(r1)
        s0, s1 = b0.sum(-1, keepdim=True), b1.sum(-1, keepdim=True)
        n0 = b0 / torch.where(s0 > 0, s0, torch.ones_like(s0))
        n1 = b1 / torch.where(s1 > 0, s1, torch.ones_like(s1))
        if uniform is not None:
            n0 = torch.where(s0 > 0, n0, uniform)
            n1 = torch.where(s1 > 0, n1, uniform)
        frac = (contribs / self.stack)[:, :, None].expand(L, B, 1)
        x = torch.cat([n0, n1, frac], -1).reshape(L * B, -1)
        out = self.model(x).reshape(L, B, 2, M)
        zero = torch.zeros((L, B, 1), dtype=self.dtype, device=self.device)
        v0 = torch.gather(torch.cat([out[:, :, 0], zero], -1), 2, ids) * pots[:, :, None] * s1
        v1 = torch.gather(torch.cat([out[:, :, 1], zero], -1), 2, ids) * pots[:, :, None] * s0
        return v0, v1

    def row_evaluator(self, leaves: List[List], row_tree):
        """Leaf values of many trees batched by rows (the batched datagen solver,
        :class:`~cfrkit.solvers.public.torch_batch.MultiBoardLeafSolver`): ``leaves`` per tree its ``L`` leaf nodes
        (same positions in every tree, boards and pots differ), ``row_tree (B,)`` the tree of each row.  Returns
        ``fn(r0, r1) -> (v0, v1)``: reaches ``(L, B, 1326)`` (any device/dtype) to values ``(L, B, 1326)`` chips on
        this net's device and dtype, one forward pass over all ``L x B`` leaf rows.  Bucket ids, pots and uniform
        ranges per (leaf, row) are built once here (``8 L B 1326`` bytes of ids)."""
        if not leaves or any(len(lv) != len(leaves[0]) for lv in leaves):
            raise ValueError("row_evaluator needs the same number of leaves for every tree")
        for lv in leaves:
            for leaf in lv:
                if abs(leaf.contrib[0] - leaf.contrib[1]) > 1e-9:
                    raise GameError(f"leaf {leaf.index} has unequal contributions {leaf.contrib}")
        T, L = len(leaves), len(leaves[0])
        ids = torch.stack([torch.stack([self.bucket_ids(leaf.board) for leaf in lv]) for lv in leaves], 1)  # (L, T, H)
        contribs = torch.as_tensor(np.asarray([[leaf.contrib[0] for leaf in lv] for lv in leaves], dtype=np.float64).T,
                                   dtype=self.dtype, device=self.device)                                  # (L, T)
        rt = torch.as_tensor(np.asarray(row_tree, dtype=np.int64), device=self.device)
        if rt.numel() and (int(rt.min()) < 0 or int(rt.max()) >= T):
            raise ValueError(f"row_tree must index the {T} trees")
        uniform = None
        if self.empty_range == "uniform":
            uniform = self._present(ids.reshape(L * T, -1)).reshape(L, T, -1)[:, rt]                      # (L, B, M)
        ids, contribs = ids[:, rt], contribs[:, rt]

        def fn(r0, r1):
            self.calls += 1
            return self._evaluate(ids, contribs, uniform, r0.to(device=self.device, dtype=self.dtype),
                                  r1.to(device=self.device, dtype=self.dtype))

        return fn

    def _leaf_inputs(self, leaves: List):
        """``(ids (L, H), contribs (L,), uniform (L, M) or None)`` of ``leaves`` on the device, built once per set of
        leaf nodes: a solver passes the same nodes every pass, so the per-leaf Python work (board keys, bucket-id
        lookups, the contribution check) runs once per tree instead of twice per iteration.  The cache keeps the
        nodes it was built from (so their ``id`` s stay unique) and the last few sets."""
        key = tuple(map(id, leaves))
        hit = self._leaf_cache.get(key)
        if hit is not None:
            self._leaf_cache.move_to_end(key)
            return hit[1:]
        for leaf in leaves:
            if abs(leaf.contrib[0] - leaf.contrib[1]) > 1e-9:
                raise GameError(f"leaf {leaf.index} has unequal contributions {leaf.contrib}")
        ids = torch.stack([self.bucket_ids(leaf.board) for leaf in leaves])
        contribs = torch.as_tensor(np.asarray([leaf.contrib[0] for leaf in leaves], dtype=np.float64),
                                   dtype=self.dtype, device=self.device)
        uniform = self._present(ids) if self.empty_range == "uniform" else None
        self._leaf_cache[key] = (list(leaves), ids, contribs, uniform)
        while len(self._leaf_cache) > 8:
            self._leaf_cache.popitem(last=False)
        return ids, contribs, uniform

    def __call__(self, leaves: List, reach0, reach1, backend):
        self.calls += 1
        if backend.name == "numpy":
            r0 = torch.as_tensor(np.asarray(reach0), dtype=self.dtype, device=self.device)
            r1 = torch.as_tensor(np.asarray(reach1), dtype=self.dtype, device=self.device)
        else:
            r0 = reach0.to(device=self.device, dtype=self.dtype)
            r1 = reach1.to(device=self.device, dtype=self.dtype)
        ids, contribs, uniform = self._leaf_inputs(leaves)
        v0, v1 = self._evaluate(ids, contribs, uniform, r0, r1)
        if backend.name == "numpy":
            return v0.double().cpu().numpy(), v1.double().cpu().numpy()
        return backend.asarray(v0), backend.asarray(v1)


class FlopNetPreflopValues:
    """Preflop lookahead leaves (the chance state before the flop) valued by the **flop net averaged over
    sampled flops** -- what DeepStack's auxiliary net approximates (it is trained on exactly that average).

    For a leaf with both players in for ``c`` chips and reaches ``r0, r1``, each of ``num_flops`` flops drawn
    once (without replacement, ``seed``) is a flop-net leaf (``flop_fn``, a
    :class:`~cfrkit.value_nets.holdem.leaf_values.HoldemNetLeafValues`) with the reaches restricted to the
    pairs that miss it: ``v_f(h)`` chips.  A hand's value is the mean of ``v_f(h)`` over the sampled flops
    that miss it, times ``C(50,3) / C(48,3)`` (the tree's chance probabilities are given both hands: a flop
    has probability ``1 / C(48,3)`` given both pairs, and ``v_f`` already drops the opponent pairs it blocks),
    a ratio estimator of ``sum_f v_f(h) / C(48,3)``; exact apart from the net's error and the flop sample.
    Leaves where a player is all in (no more betting) take ``allin_fn`` (the exact check-down values; None:
    such leaves are refused).  Cost: one flop-net forward pass over ``leaves x num_flops`` rows per call
    (in chunks of at most ``max_rows`` rows of 1326 hands); the flops' bucket ids once.
    :meth:`evaluate` is the core (chips for given pots and reaches), used by the preflop data generation.
    """

    def __init__(self, flop_fn, allin_fn=None, num_flops: int = 50, seed=0, max_rows: int = 4096):
        if int(num_flops) < 1:
            raise GameError(f"num_flops must be >= 1, got {num_flops}")
        self.flop_fn, self.allin_fn = flop_fn, allin_fn
        seed = [int(x) for x in np.atleast_1d(seed)]
        rng = np.random.default_rng([*seed, 31337])
        self.max_rows = max(1, int(max_rows))
        flops = set()
        while len(flops) < min(int(num_flops), 22100):
            flops.add(tuple(sorted(int(c) for c in rng.choice(52, 3, replace=False))))
        self.flops = sorted(flops)
        from cfrkit.cards.hands import HOLE_PAIRS

        hp = np.asarray(HOLE_PAIRS)
        fl = np.asarray(self.flops)                                              # (N, 3)
        hits = (hp[None, :, :, None] == fl[:, None, None, :]).any(axis=(2, 3))    # (N, 1326): pair touches flop
        self.miss = (~hits).astype(np.float64)
        count = self.miss.sum(0)
        self.weight = np.where(count > 0, (19600.0 / 17296.0) / np.maximum(count, 1.0), 0.0)   # (1326,)

    def evaluate(self, contribs, r0: np.ndarray, r1: np.ndarray):
        """Values ``(v0, v1)``, float64 ``(L, B, 1326)`` chips, at ``L`` pre-flop chance states with both players
        in for ``contribs[l]`` chips (not all in) and reaches ``r0, r1 (L, B, 1326)``: the ratio estimator of
        the class docstring (the sampled flops' flop-net values per hand, averaged over the flops that miss it,
        times C(50,3) / C(48,3))."""
        import torch

        fn, N = self.flop_fn, len(self.flops)
        r0, r1 = np.asarray(r0, dtype=np.float64), np.asarray(r1, dtype=np.float64)
        if r0.ndim != 3 or r0.shape != r1.shape or r0.shape[-1] != 1326:
            raise ValueError(f"reaches must be (L, B, 1326) and equal shapes, got {r0.shape} and {r1.shape}")
        contribs = np.asarray(contribs, dtype=np.float64).reshape(-1)
        L, B, H = r0.shape
        if len(contribs) != L:
            raise ValueError(f"{len(contribs)} contributions for {L} leaves")
        v0, v1 = np.zeros_like(r0), np.zeros_like(r1)
        step = max(1, self.max_rows // (N * B))
        for lo in range(0, L, step):
            sl = slice(lo, min(L, lo + step))
            n = sl.stop - sl.start
            boards = [f for _ in range(n) for f in self.flops]
            cs = [float(c) for c in contribs[sl] for _ in self.flops]

            def rows(r):   # (n, B, H) -> (n N, B, H): every leaf once per flop (the net drops blocked pairs)
                t = torch.as_tensor(r[sl], dtype=fn.dtype, device=fn.device)
                return t[:, None].expand(n, N, B, H).reshape(n * N, B, H)

            a, b = fn.evaluate(boards, cs, rows(r0), rows(r1))
            v0[sl] = a.double().cpu().numpy().reshape(n, N, B, H).sum(1) * self.weight
            v1[sl] = b.double().cpu().numpy().reshape(n, N, B, H).sum(1) * self.weight
        return v0, v1

    def __call__(self, leaves, reach0, reach1, backend):
        if self.allin_fn is not None:   # all-in leaves: exact run-outs, the rest through the sampled flops
            return AllinSplitValues(self._betting_leaves, self.allin_fn)(leaves, reach0, reach1, backend)
        return self._betting_leaves(leaves, reach0, reach1, backend)

    def _betting_leaves(self, leaves, reach0, reach1, backend):
        for n in leaves:
            if no_more_betting(n.state):
                raise GameError("FlopNetPreflopValues got all-in leaves but no allin_fn to value them")
            if abs(n.contrib[0] - n.contrib[1]) > 1e-9:
                raise GameError(f"preflop leaf {n.index} has unequal contributions {n.contrib}")
        r0 = np.asarray(backend.to_numpy(reach0), dtype=np.float64)
        r1 = np.asarray(backend.to_numpy(reach1), dtype=np.float64)
        v0, v1 = self.evaluate([n.contrib[0] for n in leaves], r0, r1)
        return backend.asarray(v0), backend.asarray(v1)


class AllinSplitValues:
    """Leaf function that sends the leaves where a player is all in (a run-out, no more betting) to
    ``allin_fn`` and the others to ``fn`` (both ``fn(leaves, reach0, reach1, backend) -> (v0, v1)``, chips).
    The agent wraps the auxiliary (preflop) net this way: all-in preflop leaves keep exact check-down values."""

    def __init__(self, fn, allin_fn):
        self.fn, self.allin_fn = fn, allin_fn

    def __call__(self, leaves, reach0, reach1, backend):
        be = backend
        allin = [k for k, n in enumerate(leaves) if no_more_betting(n.state)]
        if not allin:
            return self.fn(leaves, reach0, reach1, be)
        bet = [k for k, n in enumerate(leaves) if not no_more_betting(n.state)]
        r0, r1 = be.to_numpy(reach0), be.to_numpy(reach1)
        v0, v1 = np.zeros(np.shape(r0)), np.zeros(np.shape(r1))
        for idx, fn in ((allin, self.allin_fn), (bet, self.fn)):
            if idx:
                a, b = fn([leaves[k] for k in idx], be.asarray(r0[idx]), be.asarray(r1[idx]), be)
                v0[idx], v1[idx] = be.to_numpy(a), be.to_numpy(b)
        return be.asarray(v0), be.asarray(v1)


def no_more_betting(ps) -> bool:
    """True when a non-folded player of the public state ``ps`` has no chips behind (the rest is a run-out)."""
    return any(not ps.folded[p] and ps.remaining(p) <= 0 for p in range(2))
