"""Tabular solvers: one table of regrets per information set of the game protocol.

:mod:`compiled` flattens a game into arrays (cached on disk); :mod:`cfr` runs CFR / CFR+ / LCFR / DCFR
on them in Cython; :mod:`mccfr` samples the protocol directly (external and outcome sampling) for
games too large to compile; :mod:`cooperative` solves tiny common-payoff games exactly.
"""
from cfrkit.solvers.tabular.cfr import ALGORITHMS, CFRSolver, policy_to_slots, slots_to_policy
from cfrkit.solvers.tabular.compiled import CompiledGame, TreeTooLargeError, compile_game, estimate_tree_size
from cfrkit.solvers.tabular.mccfr import ExternalSamplingMCCFR, OutcomeSamplingMCCFR, load_mccfr

__all__ = ["ALGORITHMS", "CFRSolver", "CompiledGame", "TreeTooLargeError", "compile_game", "estimate_tree_size",
           "policy_to_slots", "slots_to_policy", "ExternalSamplingMCCFR", "OutcomeSamplingMCCFR", "load_mccfr"]
