"""Re-solving subgames from ranges and counterfactual values (CFR-D gadget), and leaf value functions.

:func:`resolve` solves the public subgame rooted at a state for one player (the *re-solver*), given
its range and either the opponent's range (plain solve) or the opponent's counterfactual values from
an earlier solve (CFR-D gadget: per hand the opponent chooses between entering the subgame and
taking the stored value, so the re-solved strategy is no more exploitable than the stored values
allow).  The result keeps the average strategy, the reach of both players, both players' cfvs at
every node and the cfvs of the opponent's best response to the average strategy at every node.  The
latter are what continual re-solving carries to its next decision: they bound what the opponent can
get, including with hands its own average strategy never brings to a node (whose cfvs under the
average strategy are those of an arbitrary default strategy and would make the next gadget unsafe).

Leaf value functions for depth-limited trees (``fn(leaves, reach0, reach1, backend) -> (v0, v1)``,
arrays ``(L, B, H)``, chips):

* :class:`SolvedLeafValues` -- the exact continuation: every leaf's subgame (to the end of the game)
  is solved with CFR+ for the leaf's ranges; what a perfect value network would return.
* :class:`cfrkit.value_nets.leaf_values.NetLeafValues` -- a trained DeepStack value network.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional

import numpy as np

from cfrkit.solvers.public.tree import PublicNode, PublicTree, RangeSolver, build_public_tree


class SolvedLeafValues:
    """Exact continuation values: solve each leaf's subgame for the given ranges (CFR+, ``iterations``).

    ``targets="average_values"`` (default, DeepStack's) returns the leaf cfvs averaged over the
    iterations after ``skip``; ``"average_strategy"`` the cfvs of the average strategy, which gives a
    hand with zero reach at the leaf the value of the uniform default strategy (far too low), so the
    outer solve never learns to bring that hand there.
    """

    def __init__(self, pgame, iterations: int = 300, skip: int = 0, algorithm: str = "cfr+",
                 targets: str = "average_values"):
        if targets not in ("average_values", "average_strategy"):
            raise ValueError(f"targets must be 'average_values' or 'average_strategy', got {targets!r}")
        self.targets = targets
        self.pgame = pgame
        self.iterations, self.skip, self.algorithm = int(iterations), int(skip), algorithm
        self._trees: Dict[Any, PublicTree] = {}

    def _tree(self, node: PublicNode) -> PublicTree:
        key = (node.board, node.contrib, self.pgame.public_key(node.state))
        tree = self._trees.get(key)
        if tree is None:
            tree = build_public_tree(self.pgame, node.state)
            self._trees[key] = tree
        return tree

    def __call__(self, leaves: List[PublicNode], reach0, reach1, backend):
        be = backend
        out0, out1 = [], []
        for k, leaf in enumerate(leaves):
            tree = self._tree(leaf)
            ranges = np.stack([be.to_numpy(reach0[k]), be.to_numpy(reach1[k])], 1)  # (B, 2, H)
            solver = RangeSolver(tree, ranges=ranges, algorithm=self.algorithm, skip=self.skip)
            solver.run(self.iterations)
            if self.targets == "average_values":
                avg = solver.average_root_values()
                out0.append(avg[:, 0])
                out1.append(avg[:, 1])
            else:
                vals, _ = solver.node_values()
                out0.append(vals[0][0])
                out1.append(vals[0][1])
        return be.asarray(np.stack(out0)), be.asarray(np.stack(out1))


@dataclass
class ResolveResult:
    """Outcome of :func:`resolve` (numpy arrays, batch index 0 dropped when ``B == 1``).  The per-node lists hold
    None at the nodes below an all-in run-out that ``RangeSolver(allin_equity=...)`` values as one terminal (no
    decision lies there)."""

    tree: PublicTree
    solver: RangeSolver
    strategy: Dict[int, np.ndarray]   # decision node -> (B, A, H) average strategy
    values: List[np.ndarray]          # node -> (B, 2, H) cfvs of both players under the average strategy
    reach: List[np.ndarray]           # node -> (B, 2, H) reach of both players under the average strategy
    opp_br_values: List[np.ndarray]   # node -> (B, H) cfvs of the opponent's best response to the average strategy
    opp_avg_values: List[np.ndarray]  # node -> (B, H) opponent cfvs averaged over the iterations (DeepStack's carry)

    def root_strategy(self) -> np.ndarray:
        return self.strategy[0]


def _pair_np(be, pair):
    """``(B, 2, H)`` numpy array of a node's ``(player 0, player 1)`` arrays; None for a node below an all-in node."""
    return None if pair is None or pair[0] is None else np.stack([be.to_numpy(pair[0]), be.to_numpy(pair[1])], 1)


def _one_np(be, v):
    return None if v is None else be.to_numpy(v)


def _checked_resolve_tree(pgame, state, tree, opp_cfvs, opp_range, skip: int, iterations: int, depth_limit,
                          leaf_values):
    """The argument checks both re-solvers share; returns the public tree (built from ``state`` if not given)."""
    if (opp_cfvs is None) == (opp_range is None):
        raise ValueError("give exactly one of opp_cfvs (CFR-D gadget) or opp_range")
    if not 0 <= skip < iterations:
        raise ValueError(f"need 0 <= skip < iterations (the averages need iterations after the skip), "
                         f"got skip={skip}, iterations={iterations}")
    if depth_limit is None:
        depth_limit = leaf_values is not None
    if tree is None:
        tree = build_public_tree(pgame, state, depth_limit=depth_limit)
    if tree.leaf_nodes and leaf_values is None:
        raise ValueError("depth-limited re-solving needs leaf_values")
    return tree


def resolve(pgame, state, own_player: int, own_range, opp_cfvs=None, opp_range=None, iterations: int = 1000,
            skip: int = 0, leaf_values=None, depth_limit: Optional[bool] = None, algorithm: str = "cfr+",
            average: str = "linear", backend: str = "numpy", device: Optional[str] = None,
            tree: Optional[PublicTree] = None) -> ResolveResult:
    """Solve the public subgame at ``state`` for ``own_player`` (see module docstring).

    ``own_range``: reach of the re-solver's hands ``(H,)`` or ``(B, H)``.  Exactly one of
    ``opp_cfvs`` (gadget) and ``opp_range`` (plain solve) must be given.  ``depth_limit`` defaults to
    True when ``leaf_values`` is given.
    """
    tree = _checked_resolve_tree(pgame, state, tree, opp_cfvs, opp_range, skip, iterations, depth_limit, leaf_values)
    own = np.atleast_2d(np.asarray(own_range, dtype=np.float64))
    B, H = own.shape
    opp = 1 - own_player
    if opp_range is not None:
        other = np.broadcast_to(np.atleast_2d(np.asarray(opp_range, dtype=np.float64)), (B, H))
        gadget = None
    else:
        other = np.zeros((B, H))
        gadget = (opp, np.broadcast_to(np.atleast_2d(np.asarray(opp_cfvs, dtype=np.float64)), (B, H)).copy())
    ranges = np.empty((B, 2, H))
    ranges[:, own_player] = own
    ranges[:, opp] = other
    solver = RangeSolver(tree, ranges=ranges, algorithm=algorithm, skip=skip, average=average,
                         leaf_values=leaf_values, gadget=gadget, backend=backend, device=device,
                         track_node_values=True)
    solver.run(iterations)
    strategy = solver.average_strategy()
    vals, reach = solver.node_values(strategy)
    be = solver.be
    leaf_vals = solver._leaf_values(reach)
    br = solver._backward(reach, opp, strategy, leaf_vals, best_response=True)
    values = [_pair_np(be, v) for v in vals]
    reaches = [_pair_np(be, r) for r in reach]
    return ResolveResult(tree, solver, solver.to_numpy_strategy(strategy), values, reaches,
                         [_one_np(be, v) for v in br], [_one_np(be, v) for v in solver.average_node_values(opp)])


def board_resolve_supported(tree: PublicTree) -> bool:
    """Whether :func:`resolve_board` (the compiled :class:`BoardLeafSolver`) can solve ``tree``: a 52-card
    hold'em tree whose root has a flop, turn or river board (preflop trees are not: no board to lay out)."""
    pg = tree.pgame
    return len(tree.root.board) >= 3 and getattr(pg, "hand_cards", None) is not None \
        and np.asarray(pg.hand_cards).shape == (1326, 2)


def resolve_board(pgame, state, own_player: int, own_range, opp_cfvs=None, opp_range=None, iterations: int = 1000,
                  skip: int = 0, leaf_values=None, depth_limit: Optional[bool] = None, algorithm: str = "cfr+",
                  tree: Optional[PublicTree] = None, dtype: str = "float64", fast_nets: bool = True) -> ResolveResult:
    """:func:`resolve` on the compiled depth-limited solver (:class:`BoardLeafSolver`, gadget between its
    kernel passes): the same iterates as ``resolve`` (``average="linear"``), so the same root strategy and
    the same opponent root cfvs, in a fraction of the time (turn, flop and river subgames; not preflop,
    see :func:`board_resolve_supported`).

    The per-node results come from one numpy pass over the tree with the final average strategy and root
    ranges (``values``, ``reach``, ``opp_br_values``).  The compiled walk returns root cfvs only, so the
    per-node cfvs averaged over the iterations (``resolve``'s ``opp_avg_values``) are not available;
    ``opp_avg_values`` holds the opponent's **best-response** cfvs at every node instead (the CFR-D carry:
    an upper bound on what each opponent hand can get against the re-solved strategy, defined for hands the
    opponent's own average strategy never brings to a node).  ``fast_nets``: hold'em value-net leaves
    (``leaf_values`` a ``HoldemNetLeafValues``, or a function with ``split_leaves`` naming one, as the
    DeepStack agent's) go through the solver's direct batched net path (same values as the generic call, up
    to float rounding); False forces the generic call.  Units: chips.
    """
    from cfrkit.solvers.public.board_leaf_cfr import BoardLeafSolver

    if algorithm not in ("cfr+", "dcfr"):
        raise ValueError(f"unknown algorithm {algorithm!r}; choose 'cfr+' or 'dcfr'")
    tree = _checked_resolve_tree(pgame, state, tree, opp_cfvs, opp_range, skip, iterations, depth_limit, leaf_values)
    if not board_resolve_supported(tree):
        raise ValueError("resolve_board needs a 52-card hold'em tree rooted on the flop, turn or river")
    own = np.asarray(own_range, dtype=np.float64)
    if own.shape != (tree.num_hands,):
        raise ValueError(f"own_range must have shape ({tree.num_hands},), got {own.shape}")
    opp = 1 - own_player
    mask = pgame.hand_mask(tree.root.board)
    ranges = np.zeros((2, tree.num_hands))
    ranges[own_player] = own * mask
    gadget = None
    if opp_range is not None:
        ranges[opp] = np.asarray(opp_range, dtype=np.float64) * mask
    else:
        gadget = (opp, np.asarray(opp_cfvs, dtype=np.float64))
    solver = BoardLeafSolver(tree, ranges=ranges, leaf_values=leaf_values, algorithm=algorithm, skip=skip,
                             dtype=dtype, gadget=gadget, allow_no_ext=True, fast_nets=fast_nets)
    solver.run(iterations)
    strategy = solver.average_strategy()                       # node -> (1, A, H)
    if gadget is not None:
        ranges[opp] = solver.gadget_range() * mask
    # per-node values, reach and the opponent's best response: one numpy pass with the average strategy
    ref = RangeSolver(tree, ranges=ranges, algorithm=algorithm, leaf_values=leaf_values)
    be = ref.be
    strat = {i: be.asarray(np.ascontiguousarray(np.transpose(s, (1, 0, 2)))) for i, s in strategy.items()}
    vals, reach = ref.node_values(strat)
    leaf_vals = ref._leaf_values(reach)
    br = [_one_np(be, v) for v in ref._backward(reach, opp, strat, leaf_vals, best_response=True)]
    values = [_pair_np(be, v) for v in vals]
    reaches = [_pair_np(be, r) for r in reach]
    return ResolveResult(tree, solver, strategy, values, reaches, br, br)
