"""Exact best response, expected values, NashConv and exploitability on compiled game trees.

All values are in game units (chips for poker).  ``exploitability = NashConv / num_players`` where
``NashConv = sum_p (best-response value of p - expected value of p)``, as OpenSpiel defines them.
For poker games :func:`exploitability_mbb` converts chips to milli-big-blinds per game using the
game's ``big_blind``.

Policies: a :class:`~cfrkit.policy.TabularPolicy` (read by information-state key), any object with
``action_probabilities(state, player)`` (queried once per information set), or a per-slot numpy
array in the compiled tree's layout (as solvers produce; the fastest path).

It sits in the solvers layer because the solvers evaluate themselves (``CFRSolver.exploitability``,
stopping at a target); :mod:`cfrkit.evaluation` re-exports the same names.
"""
from __future__ import annotations

from typing import List, Optional, Tuple, Union

import numpy as np

from cfrkit.games.base import TERMINAL, Game, GameError
from cfrkit.policy import TabularPolicy
from cfrkit.solvers.tabular.compiled import CompiledGame, compile_game
from cfrkit.solvers.tabular.slots import policy_to_slots, slots_to_policy

PolicyLike = Union[TabularPolicy, np.ndarray, object]


def _tree_and_slots(game: "str | Game | CompiledGame", policy: PolicyLike,
                    min_coverage: Optional[float] = None) -> Tuple[CompiledGame, np.ndarray]:
    tree = (game if isinstance(game, CompiledGame) else compile_game(game)).validate()
    if isinstance(policy, np.ndarray):
        if policy.shape != (tree.num_slots,):
            raise ValueError(f"per-slot policy needs shape ({tree.num_slots},), got {policy.shape}")
        slots = np.ascontiguousarray(policy, dtype=np.float64)
        if not np.isfinite(slots).all():
            raise ValueError("per-slot policy holds NaN or infinite probabilities")
        return tree, slots
    return tree, policy_to_slots(tree, policy, min_coverage=min_coverage)


def _kernels():
    from cfrkit._kernels import tree_cfr

    return tree_cfr


def expected_values(game: "str | Game | CompiledGame", policy: PolicyLike,
                    min_coverage: Optional[float] = None) -> np.ndarray:
    """Expected return of every player when all follow ``policy`` (game units)."""
    tree, sigma = _tree_and_slots(game, policy, min_coverage)
    return _kernels().expected_values(tree.node_player, tree.node_infoset, tree.child_start, tree.num_children,
                                      tree.node_chance_prob, tree.utilities, tree.infoset_offset, sigma)


def _best_response(tree: CompiledGame, sigma: np.ndarray, player: int) -> Tuple[float, np.ndarray]:
    if not 0 <= player < tree.num_players:
        raise ValueError(f"player must be in [0, {tree.num_players}), got {player}")
    return _kernels().best_response(tree.node_player, tree.node_infoset, tree.child_start, tree.num_children,
                                     tree.node_chance_prob, tree.utilities, tree.infoset_offset,
                                     tree.infoset_node_offset, tree.infoset_nodes, sigma, int(player))


def best_response_value(game: "str | Game | CompiledGame", policy: PolicyLike, player: int,
                        min_coverage: Optional[float] = None) -> float:
    """Value (game units) of ``player``'s exact best response to the other players' ``policy``."""
    tree, sigma = _tree_and_slots(game, policy, min_coverage)
    return float(_best_response(tree, sigma, player)[0])


def best_response_policy(game: "str | Game | CompiledGame", policy: PolicyLike, player: int,
                         min_coverage: Optional[float] = None) -> TabularPolicy:
    """A pure best response of ``player`` (a TabularPolicy over ``player``'s information sets)."""
    tree, sigma = _tree_and_slots(game, policy, min_coverage)
    value, best = _best_response(tree, sigma, player)
    slots = np.zeros(tree.num_slots)
    off = tree.infoset_offset
    mine = np.flatnonzero(tree.infoset_player == player)
    for s in mine:
        slots[off[s] + max(0, int(best[s]))] = 1.0
    full = slots_to_policy(tree, slots, {"best_response_to_player": player, "value": float(value)})
    full.table = {tree.infoset_keys[s]: full.table[tree.infoset_keys[s]] for s in mine}
    return full


def best_response_values(game: "str | Game | CompiledGame", policy: PolicyLike,
                         min_coverage: Optional[float] = None) -> List[float]:
    tree, sigma = _tree_and_slots(game, policy, min_coverage)
    return [float(_best_response(tree, sigma, p)[0]) for p in range(tree.num_players)]


def nash_conv(game: "str | Game | CompiledGame", policy: PolicyLike,
              min_coverage: Optional[float] = None) -> float:
    """Sum over players of what a best response gains over the profile (game units)."""
    tree, sigma = _tree_and_slots(game, policy, min_coverage)
    ev = _kernels().expected_values(tree.node_player, tree.node_infoset, tree.child_start, tree.num_children,
                                    tree.node_chance_prob, tree.utilities, tree.infoset_offset, sigma)
    return float(sum(_best_response(tree, sigma, p)[0] - ev[p] for p in range(tree.num_players)))


def exploitability(game: "str | Game | CompiledGame", policy: PolicyLike,
                   min_coverage: Optional[float] = None) -> float:
    """NashConv / number of players (game units, e.g. chips per game) of a constant-sum game.

    ``min_coverage``: a TabularPolicy covering fewer of the information sets is refused (default
    :data:`cfrkit.solvers.tabular.slots.MIN_POLICY_COVERAGE`); missing sets are played uniformly.

    Raises:
        GameError: the game is not constant-sum (general-sum or identical-interest: exploitability
            is not defined there, as in OpenSpiel; :func:`nash_conv` is), or the policy is not a
            distribution (NaN, negative, not summing to 1) or covers too few information sets.
    """
    tree, sigma = _tree_and_slots(game, policy, min_coverage)
    check_constant_sum(tree)
    return nash_conv(tree, sigma) / tree.num_players


def check_constant_sum(tree: CompiledGame) -> None:
    """Raise :class:`GameError` unless every terminal's returns sum to the same number."""
    sums = tree.utilities[tree.node_player == TERMINAL].sum(axis=1)
    scale = max(1.0, float(np.abs(tree.utilities).max()))
    if len(sums) and float(np.ptp(sums)) > 1e-9 * scale:
        raise GameError(f"{tree.game_string} is not constant-sum (returns sum to {sums.min():.6g} .. "
                        f"{sums.max():.6g}): exploitability is defined for constant-sum games only; "
                        f"use nash_conv() (the sum of the players' best-response gains)")


def exploitability_mbb(game: "str | Game | CompiledGame", policy: PolicyLike,
                       min_coverage: Optional[float] = None) -> float:
    """Exploitability in milli-big-blinds per game (poker games: uses the game's ``big_blind``)."""
    tree = game if isinstance(game, CompiledGame) else compile_game(game)
    big_blind = tree.game().big_blind
    if not big_blind:
        raise ValueError(f"{tree.game_string} has no big blind; exploitability is in game units only")
    return exploitability(tree, policy, min_coverage) / big_blind * 1000.0
