"""Policies <-> per-slot probability arrays in a compiled tree's layout.

Information set ``s`` of a :class:`~cfrkit.solvers.tabular.compiled.CompiledGame` owns the slots
``infoset_offset[s] .. infoset_offset[s+1]``, one per legal action; a strategy over the whole tree is a
float64 array of shape ``(num_slots,)`` holding each set's action probabilities there.  The CFR solvers
produce such arrays and the best-response code reads them; these functions convert to and from
:class:`~cfrkit.policy.TabularPolicy` and any policy with ``action_probabilities(state, player)``.
"""
from __future__ import annotations

import warnings
from typing import Dict, Optional

import numpy as np

from cfrkit.games.base import Game, GameError
from cfrkit.policy import TabularPolicy
from cfrkit.solvers.tabular.compiled import CompiledGame

__all__ = ["MIN_POLICY_COVERAGE", "PolicyCoverageWarning", "check_distribution", "policy_to_slots",
           "slots_to_policy"]


def slots_to_policy(tree: CompiledGame, slots: np.ndarray, metadata: Optional[Dict[str, object]] = None
                    ) -> TabularPolicy:
    """Per-slot probabilities (compiled-tree layout) -> :class:`TabularPolicy`."""
    off = tree.infoset_offset
    acts = tree.slot_action.tolist()
    probs = slots.tolist()
    table = {key: dict(zip(acts[off[s]:off[s + 1]], probs[off[s]:off[s + 1]]))
             for s, key in enumerate(tree.infoset_keys)}
    policy = TabularPolicy.__new__(TabularPolicy)
    # the table is built already normalised; skip the per-entry conversion of the constructor
    policy.game = tree.game()
    policy.table = table
    policy.metadata = dict(metadata or {})
    policy.missing = "uniform"
    return policy


#: Default for ``min_coverage``: a TabularPolicy covering less than this fraction of the game's
#: information sets is refused (it is most likely for another game or uses another key format).
MIN_POLICY_COVERAGE = 0.1


class PolicyCoverageWarning(UserWarning):
    """A TabularPolicy that lacks entries for some information sets (they are played uniformly)."""


def policy_to_slots(tree: CompiledGame, policy, game: Optional[Game] = None,
                    min_coverage: Optional[float] = None) -> np.ndarray:
    """Any policy -> per-slot probabilities in the compiled-tree layout.

    A :class:`TabularPolicy` is read by key (missing keys: uniform, with a
    :class:`PolicyCoverageWarning` giving the coverage; fewer than ``min_coverage`` (default
    :data:`MIN_POLICY_COVERAGE`) of the information sets covered raises :class:`GameError`); any other
    policy is queried once per information set at a representative state.  Probabilities of each set
    are checked to be a distribution over its legal actions (NaN and infinities are refused).
    """
    off = tree.infoset_offset
    out = np.empty(tree.num_slots, dtype=np.float64)
    acts = tree.slot_action
    table = getattr(policy, "table", None)
    if table is None:
        g = game if game is not None else tree.game()
        first_nodes = tree.infoset_nodes[tree.infoset_node_offset[:-1]]
    missing = 0
    for s, key in enumerate(tree.infoset_keys):
        lo, hi = off[s], off[s + 1]
        if table is not None:
            probs = table.get(key)
            if probs is None and key.startswith("[player "):  # a shared string: a table keyed by the string
                probs = table.get(key.split("] ", 1)[1])
            if probs is None:
                missing += 1
                out[lo:hi] = 1.0 / (hi - lo)
                continue
        else:
            state = g.state_from_history(tree.history_of(int(first_nodes[s])))
            probs = policy.action_probabilities(state, int(tree.infoset_player[s]))
        row = [probs.get(int(a), 0.0) for a in acts[lo:hi]]
        check_distribution(row, key, set(probs) - set(acts[lo:hi].tolist()))
        out[lo:hi] = row
    if missing:
        _report_coverage(tree.num_infosets - missing, tree.num_infosets, tree.game_string, min_coverage)
    return out


def check_distribution(row, key: str, illegal=()) -> None:
    """Raise :class:`GameError` unless ``row`` is a probability distribution (finite, >= 0, sums to 1)."""
    total = float(sum(row))
    if all(p >= -1e-12 for p in row) and abs(total - 1.0) <= 1e-6 and np.isfinite(total):
        return
    if not np.isfinite(total):
        raise GameError(f"policy at information state {key!r} has NaN or infinite probabilities {list(row)}")
    detail = f"; it gives probability to illegal actions {sorted(illegal)}" if illegal else ""
    raise GameError(f"policy at information state {key!r} sums to {total:.6g}, not 1{detail}")


def _report_coverage(covered: int, total: int, game_string: str, min_coverage: Optional[float]) -> None:
    threshold = MIN_POLICY_COVERAGE if min_coverage is None else float(min_coverage)
    text = (f"policy covers {covered} of the {total} information sets of {game_string} "
            f"({100.0 * covered / total:.1f}%); the others are played uniformly")
    if covered < threshold * total:
        raise GameError(f"{text}: below the minimum coverage of {100.0 * threshold:g}% (wrong game or key "
                        f"format? pass min_coverage=0 to evaluate it anyway)")
    warnings.warn(text, PolicyCoverageWarning, stacklevel=3)
