"""Solvers over the game protocol: compiled-tree CFR family (Cython) and sampling MCCFR."""
from cfrkit.solvers.cfr import ALGORITHMS, CFRSolver, policy_to_slots, slots_to_policy
from cfrkit.solvers.compiled import CompiledGame, TreeTooLargeError, compile_game, estimate_tree_size

__all__ = ["ALGORITHMS", "CFRSolver", "CompiledGame", "TreeTooLargeError", "compile_game", "estimate_tree_size",
           "policy_to_slots", "slots_to_policy"]
