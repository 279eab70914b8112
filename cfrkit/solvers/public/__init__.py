"""Range solvers on public trees of poker subgames (DeepStack's lookahead, postflop-solver's spots).

**The entry point is** :class:`~cfrkit.solvers.public.solver.SubgameSolver`: give it a public tree
(:func:`build_public_tree` over a public game of :mod:`.games` or :mod:`.postflop_game`), ranges, a backend
(``"numpy"``, ``"torch"``, ``"compiled"``; ``"auto"`` by default), a storage (``"float64"``, ``"float32"``,
``"16bit"``) and threads, plus :class:`~cfrkit.solvers.public.leaf_values.LeafValues` for a depth-limited tree.
It runs N iterations (:meth:`~SubgameSolver.run`) or to a target exploitability in % of the pot
(:meth:`~SubgameSolver.solve`) and answers the average strategy (``{node: (B, A, H)}``), root and per-node
counterfactual values (chips) and the exploitability, whichever engine runs it (the table in
``docs/range_solver.md`` and :mod:`.solver`)::

    from cfrkit.solvers.public import SubgameSolver, build_public_tree
    solver = SubgameSolver(build_public_tree(pgame), ranges, storage="float32", threads=2)
    solver.solve(0.3)                       # to 0.3% of the pot
    strategy = solver.average_strategy()    # {decision node: (1, A, 1326)}

Below it (implementation details, not to be constructed by callers outside this package):
:class:`~.tree.RangeSolver` (numpy/torch), :class:`~.flat_range_cfr.FlatRangeSolver`,
:class:`~.board_range_cfr.BoardRangeSolver` and :class:`~.board_leaf_cfr.BoardLeafSolver` (compiled).
Layers inside the package (low to high): :mod:`.games`, :mod:`.public_tree`, :mod:`.leaf_values` (the
protocol), :mod:`.allin` and :mod:`.terminal_values`; the engines; :mod:`.leaf_functions` (exact continuation,
check-down, all-in equity); :mod:`.solver` (the front); :mod:`.resolving` (CFR-D re-solving) and :mod:`.spot`
(postflop spots for people).
"""
import importlib

from cfrkit.solvers.public.leaf_values import BucketedLeafValues, LeafValues, SplitLeafValues
from cfrkit.solvers.public.public_tree import PublicNode, PublicTree, build_public_tree
from cfrkit.solvers.public.solver import SubgameSolver, choose_engine

_LEAF_FUNCTIONS = ("AllinEquityValues", "CheckdownValues", "ExactContinuationValues")


def __getattr__(name):
    """The leaf functions, imported on first use (PEP 562): they bring the numpy engine and the equity tables
    (~4 MiB of resident memory, issue 30 part 11), which a full-tree solve does not use."""
    if name in _LEAF_FUNCTIONS:
        return getattr(importlib.import_module("cfrkit.solvers.public.leaf_functions"), name)
    raise AttributeError(f"module 'cfrkit.solvers.public' has no attribute {name!r}")


__all__ = ["SubgameSolver", "choose_engine", "LeafValues", "BucketedLeafValues", "SplitLeafValues",
           "ExactContinuationValues", "CheckdownValues", "AllinEquityValues", "PublicNode", "PublicTree",
           "build_public_tree"]
