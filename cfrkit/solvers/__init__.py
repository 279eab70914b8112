"""Solvers, in two families.

- :mod:`cfrkit.solvers.tabular`: solvers over the game protocol's information sets: compiled flat
  trees with the CFR family in Cython (CFR, CFR+, LCFR, DCFR), sampling MCCFR on the protocol, and
  the exact solver of small common-payoff games.
- :mod:`cfrkit.solvers.public`: range solvers over public trees of poker subgames: public views of
  games, range-vectorised CFR+/DCFR (numpy/torch, and compiled for hold'em river/turn trees),
  depth-limited solving and CFR-D re-solving (DeepStack).

The tabular names are re-exported here for convenience.
"""
import importlib

_TABULAR = ("ALGORITHMS", "CFRSolver", "CompiledGame", "ExternalSamplingMCCFR", "OutcomeSamplingMCCFR", "TreeTooLargeError",
            "compile_game", "estimate_tree_size", "load_mccfr", "policy_to_slots", "slots_to_policy")


def __getattr__(name):
    """The tabular re-exports, imported on first use (PEP 562): a range solve imports cfrkit.solvers.public only,
    and the tabular package with its compiled kernels costs ~5 MiB of resident memory."""
    if name in _TABULAR:
        return getattr(importlib.import_module("cfrkit.solvers.tabular"), name)
    raise AttributeError(f"module 'cfrkit.solvers' has no attribute {name!r}")


__all__ = ["ALGORITHMS", "CFRSolver", "CompiledGame", "TreeTooLargeError", "compile_game", "estimate_tree_size",
           "policy_to_slots", "slots_to_policy", "ExternalSamplingMCCFR", "OutcomeSamplingMCCFR", "load_mccfr"]
