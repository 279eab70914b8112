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

Both re-solvers run :class:`~cfrkit.solvers.public.solver.SubgameSolver` (``resolve``: numpy/torch,
``resolve_board``: the compiled depth-limited engine) through its public methods.  Depth-limited trees take
:class:`~cfrkit.solvers.public.leaf_values.LeafValues` (``fn(leaves, reach0, reach1, backend) -> (v0, v1)``,
arrays ``(L, B, H)``, chips):

* :class:`~cfrkit.solvers.public.leaf_functions.ExactContinuationValues` (old name ``SolvedLeafValues``,
  still importable from here) -- the exact continuation: every leaf's subgame (to the end of the game)
  is solved with CFR+ for the leaf's ranges; what a perfect value network would return.
* :class:`cfrkit.value_nets.leaf_values.NetLeafValues` -- a trained DeepStack value network.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional

import numpy as np

from cfrkit.solvers.public.leaf_functions import ExactContinuationValues
from cfrkit.solvers.public.public_tree import PublicTree, build_public_tree
from cfrkit.solvers.public.solver import SubgameSolver
from cfrkit.solvers.public.tree import RangeSolver  # the engine type ResolveResult.solver holds


def __getattr__(name):
    # SolvedLeafValues is now ExactContinuationValues (cfrkit.solvers.public.leaf_functions): the old name warns
    # for one release
    if name == "SolvedLeafValues":
        import warnings

        warnings.warn("cfrkit.solvers.public.resolving.SolvedLeafValues is now "
                      "cfrkit.solvers.public.leaf_functions.ExactContinuationValues", DeprecationWarning, stacklevel=2)
        return ExactContinuationValues
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
    front = SubgameSolver(tree, ranges, backend=backend, algorithm=algorithm, skip=skip, average=average,
                          leaf_values=leaf_values, gadget=gadget, device=device, track_node_values=True)
    front.run(iterations)
    strategy = front.average_strategy()
    values, reaches = front.node_values(strategy)
    br = front.best_response_node_values(opp, strategy)
    return ResolveResult(tree, front.engine, strategy, values, reaches, br, front.average_node_values(opp))


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
    front = SubgameSolver(tree, ranges, backend="compiled", storage=dtype, leaf_values=leaf_values,
                          algorithm=algorithm, skip=skip, gadget=gadget, kernel="leaf", fast_nets=fast_nets)
    front.run(iterations)
    strategy = front.average_strategy()                        # node -> (1, A, H)
    # per-node values, reach and the opponent's best response: one numpy pass with the average strategy (the
    # gadget player's root reach its final follow range)
    values, reaches = front.node_values(strategy)
    br = front.best_response_node_values(opp, strategy)
    return ResolveResult(tree, front.engine, strategy, values, reaches, br, br)
