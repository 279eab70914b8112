"""Solvers, in two families.

- :mod:`cfrkit.solvers.tabular`: solvers over the game protocol's information sets: compiled flat
  trees with the CFR family in Cython (CFR, CFR+, LCFR, DCFR), sampling MCCFR on the protocol, and
  the exact solver of small common-payoff games.
- :mod:`cfrkit.solvers.public`: range solvers over public trees of poker subgames: public views of
  games, range-vectorised CFR+/DCFR (numpy/torch, and compiled for hold'em river/turn trees),
  depth-limited solving and CFR-D re-solving (DeepStack).

The tabular names are re-exported here for convenience.
"""
from cfrkit.solvers.tabular import (ALGORITHMS, CFRSolver, CompiledGame, ExternalSamplingMCCFR, OutcomeSamplingMCCFR,
                                    TreeTooLargeError, compile_game, estimate_tree_size, load_mccfr, policy_to_slots,
                                    slots_to_policy)

__all__ = ["ALGORITHMS", "CFRSolver", "CompiledGame", "TreeTooLargeError", "compile_game", "estimate_tree_size",
           "policy_to_slots", "slots_to_policy", "ExternalSamplingMCCFR", "OutcomeSamplingMCCFR", "load_mccfr"]
