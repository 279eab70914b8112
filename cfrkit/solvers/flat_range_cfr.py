"""Compiled (Cython) range-vectorised CFR+ / DCFR for public trees without chance nodes or leaves.

The fast path for hold'em river subgames: :class:`FlatRangeSolver` flattens a :class:`PublicTree`
(pre-order, contiguous children) and runs whole solves inside :mod:`cfrkit._kernels.range_cfr`
without Python in the loop.  Iterates equal :class:`~cfrkit.solvers.public_tree.RangeSolver`'s
(same algorithms and averaging) up to rounding; exploitability is computed in the kernel too.
"""
from __future__ import annotations

from typing import Dict, List, Optional

import numpy as np

from cfrkit.games.base import GameError
from cfrkit.solvers.public_tree import DECISION, FOLD_NODE, SHOWDOWN_NODE, PublicTree


def _kernel():
    from cfrkit._kernels import range_cfr

    return range_cfr


class FlatRangeSolver:
    """Single-spot CFR+/DCFR in C over a chance-free public tree with two-card hands (see module docstring)."""

    def __init__(self, tree: PublicTree, ranges=None, algorithm: str = "dcfr", alpha: float = 1.5,
                 beta: float = 0.0, gamma: float = 2.0):
        if algorithm not in ("cfr+", "dcfr"):
            raise ValueError(f"unknown algorithm {algorithm!r}; choose 'cfr+' or 'dcfr'")
        kinds = {n.kind for n in tree.nodes}
        if not kinds <= {DECISION, FOLD_NODE, SHOWDOWN_NODE} or len({n.board for n in tree.nodes}) != 1:
            raise GameError("FlatRangeSolver needs a tree without chance nodes or leaves (one board)")
        pg = tree.pgame
        if pg.hand_cards.shape[1] != 2 or pg.hand_cards.max() >= 52:
            raise GameError("FlatRangeSolver needs two-card hands of a 52-card deck")
        self.tree = tree
        self.algorithm = algorithm
        self.alpha, self.beta, self.gamma = float(alpha), float(beta), float(gamma)
        H = tree.num_hands
        board = tree.root.board
        mask = pg.hand_mask(board)
        if ranges is None:
            ranges = np.broadcast_to(mask / mask.sum(), (2, H))
        ranges = np.asarray(ranges, dtype=np.float64)
        if ranges.shape != (2, H):
            raise ValueError(f"ranges must have shape (2, {H}), got {ranges.shape}")
        self.ranges = np.ascontiguousarray(ranges * mask)
        # breadth-first renumbering: children of every node contiguous
        order: List[int] = [0]
        k = 0
        while k < len(order):
            order.extend(tree.nodes[order[k]].children)
            k += 1
        new_of = {old: new for new, old in enumerate(order)}
        N = len(order)
        self.node_type = np.zeros(N, dtype=np.int32)
        self.node_player = np.full(N, -1, dtype=np.int32)
        self.child_start = np.zeros(N, dtype=np.int32)
        self.num_children = np.zeros(N, dtype=np.int32)
        self.node_slot = np.full(N, -1, dtype=np.int32)
        self.amount = np.zeros((N, 2))
        slots = 0
        self._slot_of: Dict[int, int] = {}
        for new, old in enumerate(order):
            n = tree.nodes[old]
            if n.kind == DECISION:
                self.node_type[new] = 0
                self.node_player[new] = n.player
                self.child_start[new] = new_of[n.children[0]]
                self.num_children[new] = len(n.children)
                self.node_slot[new] = slots
                self._slot_of[old] = slots
                slots += len(n.children)
            elif n.kind == FOLD_NODE:
                self.node_type[new] = 1
                for p in (0, 1):
                    self.amount[new, p] = -n.contrib[p] if n.folder == p else n.contrib[1 - p]
            else:
                self.node_type[new] = 2
                self.amount[new] = n.contrib
        # the kernel works on the live hands only (no card on the board)
        strengths = np.asarray(pg.strengths(board), dtype=np.int64)
        self.live = np.nonzero(mask > 0)[0]
        self.num_hands = H
        self.ranges = np.ascontiguousarray(self.ranges[:, self.live])
        live_strength = strengths[self.live]
        self.order = np.ascontiguousarray(np.argsort(live_strength, kind="stable"), dtype=np.int32)
        self.strength = np.ascontiguousarray(live_strength, dtype=np.int32)
        self.hand_cards = np.ascontiguousarray(pg.hand_cards[self.live], dtype=np.int32)
        H = len(self.live)
        self.regrets = np.zeros((slots, H))
        self.strategy_sum = np.zeros((slots, H))
        self.sigma = np.zeros((slots, H))
        for old, s in self._slot_of.items():
            A = len(tree.nodes[old].children)
            self.sigma[s:s + A] = 1.0 / A
        self.iterations = 0

    def _args(self):
        return (self.node_type, self.node_player, self.child_start, self.num_children, self.node_slot, self.amount,
                self.order, self.strength, self.hand_cards)

    def run(self, iterations: int, check_every: int = 0) -> np.ndarray:
        """Run ``iterations`` more iterations; returns the exploitability (chips) every ``check_every``."""
        n_checks = iterations // check_every if check_every > 0 else 0
        out = np.zeros(max(n_checks, 1))
        written = _kernel().solve(*self._args(), self.ranges, self.regrets, self.strategy_sum, self.sigma,
                                  self.iterations + 1, int(iterations), int(self.algorithm == "dcfr"), self.alpha,
                                  self.beta, self.gamma, int(check_every), out)
        self.iterations += iterations
        return out[:written]

    def _average_slots(self) -> np.ndarray:
        out = np.empty_like(self.strategy_sum)
        for old, s in self._slot_of.items():
            A = len(self.tree.nodes[old].children)
            tot = self.strategy_sum[s:s + A].sum(0, keepdims=True)
            out[s:s + A] = np.where(tot > 0, self.strategy_sum[s:s + A] / np.where(tot > 0, tot, 1), 1.0 / A)
        return out

    def exploitability(self) -> float:
        """Exploitability (chips) of the average strategy, the ranges as the deal distribution."""
        return float(_kernel().exploitability(*self._args(), self.ranges, self._average_slots()))

    def average_strategy(self) -> Dict[int, np.ndarray]:
        """``(1, A, H)`` average strategy per decision node (original tree indices)."""
        avg = self._average_slots()
        out = {}
        for old, s in self._slot_of.items():
            A = len(self.tree.nodes[old].children)
            full = np.full((1, A, self.num_hands), 1.0 / A)
            full[0][:, self.live] = avg[s:s + A]
            out[old] = full
        return out


def solve_many(tree: PublicTree, ranges: np.ndarray, iterations: int, threads: Optional[int] = None,
               **solver_kwargs) -> List[FlatRangeSolver]:
    """Solve one spot per ``ranges[b]`` (shape ``(B, 2, H)``) with ``iterations`` iterations each.

    The kernel releases the GIL, so spots run in parallel on ``threads`` threads (default: all cores).
    """
    import os
    from concurrent.futures import ThreadPoolExecutor

    solvers = [FlatRangeSolver(tree, ranges=r, **solver_kwargs) for r in np.asarray(ranges)]
    with ThreadPoolExecutor(max_workers=threads or os.cpu_count()) as pool:
        list(pool.map(lambda s: s.run(iterations), solvers))
    return solvers
