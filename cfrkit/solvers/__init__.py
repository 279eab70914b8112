"""Solvers over the game protocol: compiled-tree CFR family (Cython) and sampling MCCFR."""
from cfrkit.solvers.cfr import ALGORITHMS, CFRSolver, policy_to_slots, slots_to_policy
from cfrkit.solvers.compiled import CompiledGame, TreeTooLargeError, compile_game, estimate_tree_size
from cfrkit.solvers.mccfr import ExternalSamplingMCCFR, OutcomeSamplingMCCFR, load_mccfr

__all__ = ["ALGORITHMS", "CFRSolver", "CompiledGame", "TreeTooLargeError", "compile_game", "estimate_tree_size",
           "policy_to_slots", "slots_to_policy", "ExternalSamplingMCCFR", "OutcomeSamplingMCCFR", "load_mccfr"]
