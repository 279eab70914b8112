"""Compiled range CFR on depth-limited hold'em trees: DeepStack's lookahead with value-net leaves.

:class:`BoardLeafSolver` runs CFR+ / DCFR (the iterates of :class:`~cfrkit.solvers.public.tree.RangeSolver`,
up to rounding) on a depth-limited turn or flop tree (``build_public_tree(..., depth_limit=True)``) with the
per-board layout of :class:`~cfrkit.solvers.public.board_range_cfr.BoardRangeSolver`, and two node types
that take their values from outside the walk:

* **leaves** (the first decision of the next street, one per dealt card): values per leaf and hand from a
  leaf value function, the same ``fn(leaf_nodes, reach0, reach1, backend) -> (values0, values1)`` as
  ``RangeSolver(leaf_values=...)`` (e.g. ``HoldemValueNets.leaf_values("river")``), asked once per player
  pass and iteration for all leaves at once (:class:`LeafSession`);
* **all-in terminals** before the river (an all-in call and its run-outs): ``contribution x M @
  opponent_reach`` with ``M`` the all-in equity matrix of the root board (:func:`allin_equity_matrix`:
  expected sign of the showdown over the remaining cards, exact enumeration, computed once per board and
  cached), for every all-in node of a pass in one matrix product.

Per iteration and player: a compiled forward pass writes both players' reach at those nodes (current
strategies), the session fills the values, a compiled walk updates the player's regrets and strategy sums
and returns its root cfvs.  The root cfvs averaged over the iterations after ``skip`` are DeepStack's
training targets (:meth:`BoardLeafSolver.average_root_values`).  Batched ranges ``(B, 2, 1326)`` solve B
spots of the tree side by side (one kernel each, one leaf-function call and one all-in product per pass
for all): the hold'em datagen's groups.  Units: chips.
"""
from __future__ import annotations

from typing import Callable, Dict, Optional

import numpy as np

from cfrkit.games.base import GameError
from cfrkit.solvers.public.allin import allin_equity_matrix, allin_runouts  # noqa: F401  (re-exported)
from cfrkit.solvers.public.board_range_cfr import BoardLayout, BoardRangeSolver, kernel_module
from cfrkit.solvers.public.leaf_values import BucketedLeafValues, SplitLeafValues, check_leaf_values
from cfrkit.solvers.public.public_tree import PublicTree, root_ranges

LEAF_ALGORITHMS = {"cfr+": 0, "dcfr": 1}

def one_blas_thread():
    """Context manager limiting BLAS to one thread (the all-in products are small: a threaded BLAS on a loaded
    machine spends more CPU spinning than multiplying); a no-op without threadpoolctl."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover
        from contextlib import nullcontext

        return nullcontext()
    return threadpool_limits(1, user_api="blas")


class _one_torch_thread:
    """Context running torch on one thread (restored after) when ``active``: the value nets' forward passes
    here are small (one batch of leaves per player pass), and more threads on a shared machine spin more
    than they compute (the hold'em datagen runs on one thread too)."""

    def __init__(self, active: bool):
        import sys

        # without torch imported no leaf function uses it (the check-down values are numpy)
        self.active, self.previous = bool(active) and "torch" in sys.modules, None

    def __enter__(self):
        if self.active:
            import torch

            self.previous = torch.get_num_threads()
            torch.set_num_threads(1)
        return self

    def __exit__(self, *exc):
        if self.previous is not None:
            import torch

            torch.set_num_threads(self.previous)
            self.previous = None
        return False


class _NumpyBackend:
    """The ``backend`` argument leaf value functions get (as ``RangeSolver``'s numpy backend)."""

    name = "numpy"

    @staticmethod
    def asarray(x):
        return np.asarray(x)

    @staticmethod
    def to_numpy(x):
        return np.asarray(x)


class LeafSession:
    """Values of a depth-limited layout's external nodes for one player pass, for ``B`` spots of one tree.

    ``reach`` ``(B, 2 E)`` (both players' reach at the external nodes, written by the kernels) and
    ``values`` ``(B, E)`` (the passing player's values there) are allocated once; row ``b`` is spot ``b``'s.
    ``leaf_values``: ``fn(leaf_nodes, reach0, reach1, backend) -> (values0, values1)``, arrays ``(L, B, 1326)``
    in chips (numpy in, numpy or torch out), called once per :meth:`fill` for all leaves and spots at once.
    A hold'em value net's leaf function (``HoldemValueNets.leaf_values``) goes, with ``fast_nets``, through a
    direct path in the ext layout (the same computation as its ``evaluate``: bucket sums in the kernel, one
    net call for all leaves and spots, float rounding aside).  The all-in nodes use the root board's equity
    matrix (in the storage dtype), all spots and all-in nodes in one matrix product.
    """

    def __init__(self, layout: BoardLayout, leaf_values: Optional[Callable], dtype=np.float64,
                 fast_nets: bool = True, batch: int = 1):
        self.layout = layout
        self.dtype = np.dtype(dtype)
        tree = layout.tree
        nodes = tree.nodes
        kinds = layout.node_type
        self.allin = [k for k in layout.ext_nodes if kinds[k] == 5]
        self.leaves = [k for k in layout.ext_nodes if kinds[k] == 4]
        if self.leaves and leaf_values is None:
            raise ValueError("the tree is depth-limited (has leaves): pass leaf_values")
        check_leaf_values(leaf_values)
        if int(batch) < 1:
            raise ValueError(f"batch must be >= 1, got {batch}")
        self.leaf_values = leaf_values
        self.B = B = int(batch)
        self.E = layout.num_ext
        self.H0 = len(layout.root_pairs)
        self.K = len(self.allin)
        self.reach = np.zeros((B, 2 * self.E), dtype=self.dtype)
        self.values = np.zeros((B, self.E), dtype=self.dtype)
        self.calls = 0
        if self.K:
            if any(layout.node_space[k] != 0 for k in self.allin):
                raise GameError("all-in nodes outside the root's board are not supported")
            self.matrix_t = np.ascontiguousarray(
                allin_equity_matrix(tree, layout.order[self.allin[0]], layout.root_pairs).T, dtype=self.dtype)
            amount = np.array([layout.amount[k] for k in self.allin])  # (K, 2) chips
            self._allin_amount = [np.ascontiguousarray(np.tile(amount[:, p], B)[:, None], dtype=self.dtype)
                                  for p in (0, 1)]  # (B K, 1) per player
            self._allin_opp = np.zeros((B * self.K, self.H0), dtype=self.dtype)
            self._allin_out = np.zeros((B * self.K, self.H0), dtype=self.dtype)
        # leaves: (L, B, 1326) scatter / gather of their hand spaces
        self.leaf_nodes = [nodes[layout.order[k]] for k in self.leaves]
        self.L = len(self.leaves)
        rows, cols = [], []
        for i, k in enumerate(self.leaves):
            pairs = layout.space_pairs[layout.node_space[k]]
            rows.append(np.full(len(pairs), i))
            cols.append(pairs)
        self._rows = np.concatenate(rows).astype(np.int64) if rows else np.zeros(0, dtype=np.int64)
        self._cols = np.concatenate(cols) if cols else np.zeros(0, dtype=np.int64)
        self.leaf_start = self.K * self.H0
        self._net = None
        net_fn, net_idx = _net_group(leaf_values, self.leaf_nodes) if self.L and fast_nets else (None, [])
        if net_fn is not None:
            self._net_setup(net_fn, net_idx)
        # the other leaves (all of them without a net): the generic call, on 1326-wide arrays of those leaves
        other = sorted(set(range(self.L)) - set(net_idx))
        self.generic_leaves = other
        if other:
            remap = np.full(self.L, -1, dtype=np.int64)
            remap[other] = np.arange(len(other))
            self._gen_pos = np.flatnonzero(remap[self._rows] >= 0)        # their positions in the leaf slice
            self._gen_rows = remap[self._rows[self._gen_pos]]
            self._gen_cols = self._cols[self._gen_pos]
            self._gen_nodes = [self.leaf_nodes[i] for i in other]
            self._full = np.zeros((2, len(other), B, tree.num_hands))
        else:
            self._full = None

    def _net_setup(self, fn, net_idx) -> None:
        """Direct path for a :class:`~cfrkit.solvers.public.leaf_values.BucketedLeafValues` on the leaves
        ``net_idx``: their bucket ids in the ext layout, so each pass sums the reach per (leaf, bucket) in the
        kernel and gathers the net's bucket values back (no 1326-wide arrays); the same computation as
        the function's own call.  Positions of the other leaves go to a dump row (summed into a dropped cell, gathered
        as 0, then overwritten by the generic call)."""
        M = int(fn.num_buckets)
        Ln = len(net_idx)
        net_nodes = [self.leaf_nodes[i] for i in net_idx]
        ids = np.stack([np.asarray(fn.leaf_bucket_ids(n.board), dtype=np.int64) for n in net_nodes])  # M = blocked
        present = np.zeros((Ln, M + 1))
        present[np.arange(Ln)[:, None], ids] = 1.0
        present = present[:, :M]
        contribs = np.array([n.contrib[0] for n in net_nodes], dtype=np.float64)
        for n in net_nodes:
            if abs(n.contrib[0] - n.contrib[1]) > 1e-9:
                raise GameError(f"leaf {n.index} has unequal contributions {n.contrib}")
        netrow = np.full(self.L, Ln, dtype=np.int64)       # leaf -> row of the net's input (Ln: dump row)
        netrow[net_idx] = np.arange(Ln)
        rows = netrow[self._rows]
        on = rows < Ln
        leaf_ids = np.full(len(rows), M, dtype=np.int64)
        leaf_ids[on] = ids[rows[on], self._cols[on]]
        if len(leaf_ids) and (leaf_ids.min() < 0 or leaf_ids.max() > M):
            raise ValueError(f"bucket ids of the leaves outside [0, {M}]")
        B = self.B
        uniform = present / np.maximum(present.sum(1, keepdims=True), 1.0) if fn.empty_range == "uniform" else None
        self._net = {
            "fn": fn, "M": M, "Ln": Ln, "leaves": list(net_idx),
            "flat": np.ascontiguousarray(rows * (M + 1) + leaf_ids, dtype=np.int64),
            "rows": np.ascontiguousarray(rows, dtype=np.int64),
            "cells": np.zeros((B, (Ln + 1) * (M + 1))),
            "uniform": uniform,
            "contribs": np.ascontiguousarray(np.tile(contribs, B)), "pots": 2.0 * contribs,
            "table": np.zeros((B, Ln + 1, M + 1)), "scale": np.zeros((B, Ln + 1)), "normed": [None, None],
            "mass": [None, None]}

    def _fill_net(self, player: int, fresh) -> None:
        net, E, s, B = self._net, self.E, self.leaf_start, self.B
        M, flat, L = net["M"], net["flat"], net["Ln"]
        normed, mass = net["normed"], net["mass"]
        kern, cells = kernel_module(self.dtype), net["cells"]
        for q in (0, 1):
            if q not in fresh and normed[q] is not None:
                continue  # q's strategy has not changed since the last pass: same bucketed range
            for b in range(B):
                kern.bucket_sums(self.reach[b, q * E + s:(q + 1) * E], flat, cells[b], True)
            bk = cells.reshape(B, L + 1, M + 1)[:, :L, :M]
            tot = bk.sum(2, keepdims=True)
            n = bk / np.where(tot > 0, tot, 1.0)
            if net["uniform"] is not None:
                n = np.where(tot > 0, n, net["uniform"][None])
            normed[q], mass[q] = n, tot[:, :, 0]
        # one call of the net for every leaf and spot (BucketedLeafValues.bucket_values: fractions of the pot)
        out = net["fn"].bucket_values(normed[0].reshape(B * L, M), normed[1].reshape(B * L, M), net["contribs"])
        out = np.asarray(out, dtype=np.float64).reshape(B, L, 2, M)[:, :, player]
        table, scale = net["table"], net["scale"]
        table[:, :L, :M] = out
        np.multiply(net["pots"][None], mass[1 - player], out=scale[:, :L])
        for b in range(B):
            kern.bucket_gather(table[b].reshape(-1), flat, net["rows"], scale[b], self.values[b, s:])

    def _fill_generic(self, player: int) -> None:
        E, B, s, full = self.E, self.B, self.leaf_start, self._full
        pos, rows, cols = self._gen_pos, self._gen_rows, self._gen_cols
        for q in (0, 1):
            for b in range(B):
                full[q][rows, b, cols] = self.reach[b, q * E + s:(q + 1) * E][pos]
        v = self.leaf_values(self._gen_nodes, full[0], full[1], _NumpyBackend)[player]
        if not isinstance(v, np.ndarray):
            v = v.detach().cpu().numpy()
        v = np.asarray(v)
        if v.shape != (len(self._gen_nodes), B, full.shape[-1]):
            raise ValueError(f"leaf_values returned shape {v.shape}, expected {(len(self._gen_nodes), B, full.shape[-1])}")
        for b in range(B):
            self.values[b, s + pos] = v[rows, b, cols]

    def fill(self, player: int, fresh=(0, 1)) -> None:
        """``values`` of ``player`` at every external node of every spot from ``reach`` (both players, current
        strategies).  ``fresh``: the players whose reach changed since the last call (the others' bucketed
        ranges are reused on the value-net path)."""
        E, H0, K, B = self.E, self.H0, self.K, self.B
        if K:
            q = 1 - player
            opp, vals = self._allin_opp, self._allin_out
            opp.reshape(B, K * H0)[:] = self.reach[:, q * E:q * E + K * H0]
            np.matmul(opp, self.matrix_t, out=vals)
            vals *= self._allin_amount[player]
            self.values[:, :K * H0] = vals.reshape(B, K * H0)
        if self.L:
            if self._net is not None:
                self._fill_net(player, fresh)
            if self._full is not None:
                self._fill_generic(player)   # after the net: its gather wrote 0 at these leaves
            self.calls += 1


def _net_group(fn, leaf_nodes):
    """``(net function, leaf indices)`` that :class:`LeafSession`'s direct net path can take: all leaves for a
    :class:`~cfrkit.solvers.public.leaf_values.BucketedLeafValues` (a hold'em value net); for a
    :class:`~cfrkit.solvers.public.leaf_values.SplitLeafValues` (a partition of the leaves by the function that
    values them, e.g. the DeepStack agent's next-street net and its check-down values), the leaves of its one
    bucketed net; else ``(None, [])``."""
    if isinstance(fn, BucketedLeafValues):
        return fn, list(range(len(leaf_nodes)))
    if isinstance(fn, SplitLeafValues):
        nets = [(f, sorted(int(i) for i in idx)) for f, idx in fn.split_leaves(leaf_nodes)
                if len(idx) and isinstance(f, BucketedLeafValues)]
        if len(nets) == 1:
            return nets[0]
    return None, []


class BoardLeafSolver(BoardRangeSolver):
    """CFR+ / DCFR in C on a depth-limited turn or flop tree with value-function leaves (module docstring).

    Args:
        tree: depth-limited public tree of a 52-card hold'em game (``build_public_tree(..., depth_limit=True)``);
            a tree without leaves works too (all-in nodes still use the equity matrix).
        ranges: ``(2, 1326)`` root reach (default uniform over the live pairs), or ``(B, 2, 1326)`` for ``B``
            spots of the tree solved side by side (one leaf-function call and one all-in product per pass
            for all of them; each spot's iterates are those of its own solve).
        leaf_values: ``fn(leaf_nodes, reach0, reach1, backend) -> (values0, values1)`` (``(L, B, 1326)``,
            chips), as ``RangeSolver``'s; required when the tree has leaves.
        algorithm: ``"cfr+"`` (default, DeepStack's) or ``"dcfr"`` (``alpha``, ``beta``, ``gamma``).
        skip: the first ``skip`` iterations stay out of the average strategy and the averaged root values.
        dtype: ``"float32"`` (default) or ``"float64"`` storage.
        fast_nets: a hold'em value net's leaf function through :class:`LeafSession`'s direct path.
        gadget: ``(player, terminate_cfvs)`` re-solves with DeepStack's re-solving gadget (CFR-D), as
            ``RangeSolver(gadget=...)``: ``player``'s root range is, at every pass, its follow probability per
            hand from regret matching of follow (the root cfvs of its last pass) against terminate
            (``terminate_cfvs``, chips, ``(1326,)`` or ``(B, 1326)``); ``ranges[player]`` is ignored.  The
            gadget runs in Python between the kernel passes (same iterates as ``RangeSolver``).
        allow_no_ext: accept a tree without leaf or all-in nodes (a river tree; used for the gadget, which
            :class:`BoardRangeSolver`'s one-call solve cannot run).
    """

    def __init__(self, tree: PublicTree, ranges=None, leaf_values: Optional[Callable] = None,
                 algorithm: str = "cfr+", skip: int = 0, alpha: float = 1.5, beta: float = 0.0, gamma: float = 2.0,
                 dtype: str = "float32", fast_nets: bool = True, gadget=None, allow_no_ext: bool = False):
        if np.dtype(dtype) not in (np.float64, np.float32):
            raise ValueError(f"dtype must be 'float64' or 'float32', got {dtype!r}")
        if algorithm not in LEAF_ALGORITHMS:
            raise ValueError(f"unknown algorithm {algorithm!r}; choose one of {', '.join(LEAF_ALGORITHMS)}")
        if int(skip) < 0:
            raise ValueError(f"skip must be >= 0, got {skip}")
        self.threads, self.dtype, self.algorithm, self.skip = 1, np.dtype(dtype), algorithm, int(skip)
        self.alpha, self.beta, self.gamma = float(alpha), float(beta), float(gamma)
        self.tree = tree
        ranges = root_ranges(tree, ranges, batched=True)
        self.batched = ranges.ndim == 3
        if ranges.ndim == 2:
            ranges = ranges[None]
        self.layout = layout = BoardLayout.of(tree, False, leaves=True)
        if layout.num_ext == 0 and not allow_no_ext:
            raise ValueError("the tree has no leaf or all-in node: use BoardRangeSolver")
        self.B = B = len(ranges)
        self.pot = layout.pot
        self.hands = layout.root_pairs
        self._ranges_all = np.ascontiguousarray(ranges[:, :, self.hands], dtype=self.dtype)
        self.ranges = self._ranges_all[0]
        self.compression = False
        self._compressed = None
        self._regrets_all = np.zeros((B, layout.num_entries), dtype=self.dtype)
        self._ssum_all = np.zeros((B, layout.num_entries), dtype=self.dtype)
        self.regrets, self.strategy_sum = self._regrets_all[0], self._ssum_all[0]  # spot 0 (BoardRangeSolver API)
        self.session = s = LeafSession(layout, leaf_values, self.dtype, fast_nets, batch=B)
        kern = kernel_module(self.dtype)
        if layout.num_ext == 0:
            # no external node: the kernel never reads these (it refuses empty buffers)
            ext_reach, ext_vals = np.zeros((B, 2), dtype=self.dtype), np.zeros((B, 1), dtype=self.dtype)
        else:
            ext_reach, ext_vals = s.reach, s.values
        self._kernels = [kern.BoardLeafKernel(layout.layout, layout.ext_off, self._ranges_all[b], self._regrets_all[b],
                                              self._ssum_all[b], ext_reach[b], ext_vals[b]) for b in range(B)]
        self.gadget_player = -1
        if gadget is not None:
            gp, cfvs = gadget
            if gp not in (0, 1):
                raise ValueError(f"gadget player must be 0 or 1, got {gp!r}")
            cfvs = np.asarray(cfvs, dtype=np.float64)
            if cfvs.ndim == 1:
                cfvs = np.broadcast_to(cfvs, (B, cfvs.shape[0]))
            if cfvs.shape != (B, tree.num_hands) or not np.all(np.isfinite(cfvs)):
                raise ValueError(f"gadget cfvs must be finite with shape ({tree.num_hands},) or "
                                 f"({B}, {tree.num_hands}), got {cfvs.shape}")
            self.gadget_player = int(gp)
            self.gadget_values = np.array(cfvs)                                   # (B, 1326) chips, as given
            self._terminate = np.ascontiguousarray(cfvs[:, self.hands])           # (B, H0) chips
            self.gadget_regrets = np.zeros((B, 2, len(self.hands)))              # follow, terminate
            self._set_gadget_range()
        self._root = np.zeros((B, len(self.hands)), dtype=self.dtype)
        self._root_sum = np.zeros((B, 2, len(self.hands)))
        self._root_count = [0, 0]
        self.last_root_values = np.zeros((B, 2, len(self.hands)))
        self._first_pass = True
        self.iterations = 0

    def _params(self, t: int):
        """(average weight, dcfr flag, positive and negative regret scales) of iteration ``t`` (1-based)."""
        if self.algorithm == "dcfr":
            w = float(t) ** self.gamma if t > self.skip else 0.0
            return w, 1, t ** self.alpha / (t ** self.alpha + 1.0), t ** self.beta / (t ** self.beta + 1.0)
        return (float(t) if t > self.skip else 0.0), 0, 0.0, 0.0

    def _gadget_follow(self) -> np.ndarray:
        """``(B, H0)`` follow probabilities of the gadget player (regret matching; 1/2 without regrets)."""
        pos = np.maximum(self.gadget_regrets, 0.0)
        tot = pos[:, 0] + pos[:, 1]
        return np.where(tot > 0, pos[:, 0] / np.where(tot > 0, tot, 1.0), 0.5)

    def _set_gadget_range(self) -> None:
        # written in place: the kernels hold views of these rows
        self._ranges_all[:, self.gadget_player] = self._gadget_follow()

    def _update_gadget(self, root_values: np.ndarray) -> None:
        """CFR+ update of the gadget's follow / terminate regrets from the gadget player's root cfvs."""
        follow = self._gadget_follow()
        vf, vt = np.asarray(root_values, dtype=np.float64), self._terminate
        g = follow * vf + (1 - follow) * vt
        self.gadget_regrets = np.maximum(self.gadget_regrets + np.stack([vf - g, vt - g], 1), 0.0)
        self._set_gadget_range()

    def gadget_range(self) -> Optional[np.ndarray]:
        """The gadget player's current root range (follow probabilities) ``(1326,)`` (``(B, 1326)`` batched),
        or None without a gadget."""
        if self.gadget_player < 0:
            return None
        out = np.zeros((self.B, self.tree.num_hands))
        out[:, self.hands] = self._gadget_follow()
        return out if self.batched else out[0]

    def run(self, iterations: int, check_every: int = 0, target: Optional[float] = None) -> np.ndarray:
        """Run ``iterations`` more iterations (alternating updates, player 0 first); returns an empty array
        (no exploitability checks: a depth-limited tree's exploitability depends on the leaf values)."""
        iterations = int(iterations)
        if iterations < 0:
            raise ValueError("iterations must be non-negative")
        if check_every or target is not None:
            raise ValueError("BoardLeafSolver has no exploitability checks (check_every / target)")
        with one_blas_thread(), _one_torch_thread(self.session.L > 0):
            self._run(iterations)
        return np.zeros(0)

    def _run(self, iterations: int) -> None:
        s = self.session
        for _ in range(iterations):
            self.iterations += 1
            t = self.iterations
            w, dcfr, pos, neg = self._params(t)
            for p in (0, 1):
                for k in self._kernels:
                    k.forward()
                # since the last pass only the other player's strategy changed (p's own did in p's last pass;
                # the gadget player's root range changes right after its own pass too)
                if s.E:
                    s.fill(p, (0, 1) if self._first_pass else (1 - p,))
                self._first_pass = False
                for b, k in enumerate(self._kernels):
                    k.walk(p, w, dcfr, pos, neg, self._root[b])
                if p == self.gadget_player:
                    self._update_gadget(self._root)
                self.last_root_values[:, p] = self._root
                if t > self.skip:
                    self._root_sum[:, p] += self._root
                    self._root_count[p] += 1

    def solve(self, *args, **kwargs):
        raise GameError("BoardLeafSolver runs a fixed number of iterations: use run(iterations)")

    def exploitability(self) -> float:
        raise GameError("BoardLeafSolver has no exploitability (the leaf values are not a game's values)")

    def _to_full(self, rows: np.ndarray) -> np.ndarray:
        out = np.zeros((self.B, 2, self.tree.num_hands))
        out[:, :, self.hands] = rows
        return out if self.batched else out[0]

    def average_root_values(self) -> np.ndarray:
        """Both players' root cfvs ``(2, 1326)`` (``(B, 2, 1326)`` for batched ranges; chips) averaged over the
        iterations after ``skip`` (each iteration's cfvs of the current strategies: DeepStack's targets; 0 on
        pairs touching the board)."""
        if min(self._root_count) == 0:
            raise ValueError("no iterations after skip yet")
        return self._to_full(self._root_sum / np.array(self._root_count, dtype=np.float64)[None, :, None])

    def root_values(self) -> np.ndarray:
        """Both players' root cfvs ``(2, 1326)`` (``(B, 2, 1326)`` batched; chips) of the last iteration's
        current strategies."""
        return self._to_full(self.last_root_values)

    def average_strategy(self, nodes=None, spot: int = 0) -> Dict[int, np.ndarray]:
        """``(1, A, 1326)`` average strategy per decision node of spot ``spot`` (original tree indices)."""
        return self._strategies(self._ssum_all[spot], True, nodes)

    def current_strategy(self, nodes=None, spot: int = 0) -> Dict[int, np.ndarray]:
        """``(1, A, 1326)`` current (regret-matched) strategy per decision node of spot ``spot``."""
        return self._strategies(self._regrets_all[spot], False, nodes)
