"""The ``LeafValues`` protocol: what a depth-limited range solve asks at its leaves.

A depth-limited public tree (``build_public_tree(..., depth_limit=True)``) stops at *leaves*: the first public
state of the next betting round (a decision after the dealt card, or a chance state before it).  Every range
solver of :mod:`cfrkit.solvers.public` (through :class:`~cfrkit.solvers.public.solver.SubgameSolver`) values
them with one batched call per player pass::

    values0, values1 = leaf_values(leaves, reach0, reach1, backend)

* ``leaves``: the leaf :class:`~cfrkit.solvers.public.public_tree.PublicNode` objects, ``L`` of them (board,
  contributions ``contrib`` in chips, public ``state``);
* ``reach0``, ``reach1``: each player's reach at every leaf, shape ``(L, B, H)`` (``B`` spots solved side by
  side, ``H`` private hands: 1326 in hold'em, 6 in Leduc), arrays of ``backend``;
* ``backend``: the solver's array backend (``backend.name`` is ``"numpy"`` or ``"torch"``; ``asarray`` /
  ``to_numpy`` convert); the compiled solvers pass numpy arrays and a numpy backend;
* returns both players' **counterfactual values in chips** at every leaf, shape ``(L, B, H)`` each: player
  ``p``'s value of hand ``h`` is ``sum over opponent hands o compatible with h of reach_opp(o) x (expected
  chips of p from the leaf, net of p's own contribution)``.  Values are linear in the opponent's reach
  (a value net that predicts fractions of the pot for normalised ranges multiplies by the pot and the
  opponent's reach mass to give chips).

Implementations: :class:`~cfrkit.solvers.public.leaf_functions.ExactContinuationValues` (solve each leaf's
subgame: what a perfect value net returns), :class:`~cfrkit.solvers.public.leaf_functions.CheckdownValues`
(the pot checked down to showdown), :class:`~cfrkit.solvers.public.leaf_functions.AllinEquityValues` (the
same by exact enumeration with the all-in equity kernel), and the value nets of :mod:`cfrkit.value_nets`
(``NetLeafValues`` for Leduc, ``HoldemNetLeafValues`` for hold'em).

Two optional refinements a leaf function may offer, both plain public methods (the solvers test for them
with ``isinstance`` on these runtime-checkable protocols, never by importing the value-net package):

* :class:`BucketedLeafValues`: a bucketed value net; the compiled depth-limited solver sums reach per
  (leaf, bucket) in its kernel and asks :meth:`~BucketedLeafValues.bucket_values` for all leaves of a pass
  at once (no ``1326``-wide arrays; the same numbers as ``__call__`` up to float rounding);
* :class:`SplitLeafValues`: a dispatcher naming which function values which leaves
  (:meth:`~SplitLeafValues.split_leaves`), so that a bucketed net among them still takes the fast path.

This module imports nothing from the solvers: it sits at the bottom of the package with
:mod:`~cfrkit.solvers.public.public_tree`, and :mod:`cfrkit.value_nets` (a layer above the solvers) implements
it without the solvers importing the value nets.
"""
from __future__ import annotations

from typing import Any, List, Protocol, Sequence, Tuple, runtime_checkable

import numpy as np

from cfrkit.solvers.public.public_tree import PublicNode


@runtime_checkable
class LeafValues(Protocol):
    """Counterfactual values (chips) of both players at the leaves of a depth-limited tree (module docstring)."""

    def __call__(self, leaves: Sequence[PublicNode], reach0: Any, reach1: Any, backend: Any) -> Tuple[Any, Any]:
        """``(values0, values1)``, each ``(L, B, H)`` in chips, for reach ``(L, B, H)`` of each player."""
        ...


@runtime_checkable
class BucketedLeafValues(LeafValues, Protocol):
    """A leaf function backed by a bucketed value net (DeepStack's): the compiled solver's direct path.

    ``num_buckets`` (``M``) buckets per board; ``empty_range`` (``"uniform"`` or ``"zeros"``) says what the net
    gets for a player with no reach at a leaf.  With a leaf's normalised bucket ranges ``n0, n1`` and
    ``contrib`` chips per player (equal for both), player ``p``'s value of hand ``h`` in chips is
    ``bucket_values(...)[p, bucket(h)] x (2 contrib) x (opponent's reach mass)``.
    """

    num_buckets: int
    empty_range: str

    def leaf_bucket_ids(self, board: Sequence[int]) -> np.ndarray:
        """``(1326,)`` int64 bucket id of every pair on ``board``; pairs touching the board get ``num_buckets``."""
        ...

    def bucket_values(self, ranges0: np.ndarray, ranges1: np.ndarray, contribs: np.ndarray) -> np.ndarray:
        """``(N, 2, M)`` float64: both players' bucket values as **fractions of the pot** per unit of opponent
        reach mass, for ``N`` leaves with normalised bucket ranges ``ranges0, ranges1`` ``(N, M)`` (float64) and
        ``contribs`` ``(N,)`` chips per player."""
        ...


@runtime_checkable
class SplitLeafValues(Protocol):
    """A leaf function that delegates: ``split_leaves(leaves) -> [(fn, leaf indices), ...]`` partitions the
    leaves by the :class:`LeafValues` that values them (its own ``__call__`` gives the same values)."""

    def split_leaves(self, leaves: Sequence[PublicNode]) -> List[Tuple[Any, Sequence[int]]]:
        ...


def check_leaf_values(leaf_values: Any) -> None:
    """Raise a one-line ValueError unless ``leaf_values`` is None or callable as a :class:`LeafValues`."""
    if leaf_values is not None and not callable(leaf_values):
        raise ValueError("leaf_values must be callable (the LeafValues protocol): "
                         "fn(leaf_nodes, reach0, reach1, backend) -> (values0, values1)")
