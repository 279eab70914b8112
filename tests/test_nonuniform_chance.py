"""Every evaluator on games with NON-uniform chance, against a brute-force reference.

Issue 17: a best response that drops the chance probability when choosing its action went unnoticed
because every tested game dealt uniformly.  Here Kuhn poker deals its cards with weights 6:3:1
(without replacement: a card's chance is its weight over the weights left), and the brute-force
reference enumerates every pure strategy of the best responder and evaluates each by a plain
recursive expectation -- no counterfactual values, no argmax per information set -- so it shares no
logic with the compiled-tree kernel or the protocol evaluator.
"""
from __future__ import annotations

import itertools
from typing import Dict, List

import numpy as np
import pytest

from cfrkit.evaluation import (best_response_value, best_response_values, expected_values, exploitability,
                               nash_conv, protocol_br)
from cfrkit.games.base import CHANCE, TERMINAL
from cfrkit.games.kuhn import KuhnPoker, KuhnState
from cfrkit.games.registry import register
from cfrkit.policy import TabularPolicy
from cfrkit.solvers import CFRSolver, compile_game

WEIGHTS = (6.0, 3.0, 1.0)


class WeightedKuhnState(KuhnState):
    def clone(self):
        new = WeightedKuhnState(self.game)
        new._history = list(self._history)
        new.cards = list(self.cards)
        new.bets = list(self.bets)
        return new

    def chance_outcomes(self):
        remaining = [c for c in range(self.game.num_cards) if c not in self.cards]
        total = sum(WEIGHTS[c] for c in remaining)
        return [(c, WEIGHTS[c] / total) for c in remaining]


class WeightedKuhn(KuhnPoker):
    short_name = "kuhn_weighted_test"

    def __init__(self, players: int = 2):
        if players != 2:
            raise ValueError("two players only")
        super().__init__(players=2)

    def new_initial_state(self):
        return WeightedKuhnState(self)


register("kuhn_weighted_test", WeightedKuhn, {"players": 2}, "Kuhn poker dealt 6:3:1 (tests)")
GAME = "kuhn_weighted_test"


def _walk_value(state, strategy, br_player=None, br_choice=None) -> np.ndarray:
    """Expected returns of both players by plain recursion; ``br_player`` plays ``br_choice`` (pure)."""
    player = state.current_player()
    if player == TERMINAL:
        return np.array(state.returns(), dtype=float)
    if player == CHANCE:
        return sum(p * _walk_value(state.child(a), strategy, br_player, br_choice) for a, p in state.chance_outcomes())
    key = state.information_state_string(player)
    if player == br_player:
        return _walk_value(state.child(br_choice[key]), strategy, br_player, br_choice)
    return sum(p * _walk_value(state.child(a), strategy, br_player, br_choice)
               for a, p in strategy[key].items() if p > 0)


def _infosets(game, player) -> List[str]:
    out = []

    def walk(state):
        p = state.current_player()
        if p == TERMINAL:
            return
        if p == player:
            key = state.information_state_string(p)
            if key not in out:
                out.append(key)
        actions = [a for a, _ in state.chance_outcomes()] if p == CHANCE else state.legal_actions()
        for a in actions:
            walk(state.child(a))

    walk(game.new_initial_state())
    return out


def _brute_force_br(game, strategy: Dict[str, Dict[int, float]], player: int) -> float:
    keys = _infosets(game, player)
    root = game.new_initial_state()
    best = -np.inf
    for choice in itertools.product((0, 1), repeat=len(keys)):
        best = max(best, _walk_value(root, strategy, player, dict(zip(keys, choice)))[player])
    return float(best)


def _random_policies(count, seed):
    rng = np.random.default_rng(seed)
    game = WeightedKuhn()
    keys = _infosets(game, 0) + _infosets(game, 1)
    for _ in range(count):
        table = {}
        for k in keys:
            p = rng.dirichlet([0.5, 0.5]) if rng.random() < 0.8 else np.eye(2)[rng.integers(2)]
            table[k] = {0: float(p[0]), 1: float(p[1])}
        yield TabularPolicy(GAME, table)


def test_chance_is_really_skewed():
    tree = compile_game(GAME)
    first_deal = tree.node_chance_prob[tree.child_start[0]:tree.child_start[0] + 3]
    assert first_deal.tolist() == pytest.approx([0.6, 0.3, 0.1])


@pytest.mark.parametrize("seed", [0, 1])
def test_every_evaluator_matches_brute_force_under_skewed_chance(seed):
    game = WeightedKuhn()
    tree = compile_game(GAME)
    for policy in _random_policies(15, seed):
        ev = _walk_value(game.new_initial_state(), policy.table)
        br = [_brute_force_br(game, policy.table, p) for p in (0, 1)]
        assert expected_values(tree, policy) == pytest.approx(ev, abs=1e-12)
        assert protocol_br.expected_values(GAME, policy) == pytest.approx(ev, abs=1e-12)
        assert best_response_values(tree, policy) == pytest.approx(br, abs=1e-12)
        for p in (0, 1):
            assert best_response_value(tree, policy, p) == pytest.approx(br[p], abs=1e-12)
            assert protocol_br.best_response(GAME, policy, p)[0] == pytest.approx(br[p], abs=1e-12)
        conv = br[0] - ev[0] + br[1] - ev[1]
        assert nash_conv(tree, policy) == pytest.approx(conv, abs=1e-12)
        assert exploitability(tree, policy) == pytest.approx(conv / 2, abs=1e-12)
        assert protocol_br.exploitability(GAME, policy) == pytest.approx(conv / 2, abs=1e-12)


def test_best_response_policies_are_best_under_skewed_chance():
    """The best-response *policy* (not only its value) reaches the brute-force value."""
    from cfrkit.evaluation import best_response_policy

    game = WeightedKuhn()
    for policy in _random_policies(10, 2):
        for p in (0, 1):
            br = best_response_policy(GAME, policy, p)
            choice = {k: max(v, key=v.get) for k, v in br.table.items()}
            value = _walk_value(game.new_initial_state(), policy.table, p, choice)[p]
            assert value == pytest.approx(_brute_force_br(game, policy.table, p), abs=1e-12)


def test_cfr_solves_the_skewed_game():
    """CFR+ converges on the skewed game (checked by the brute-force exploitability, not the solver's)."""
    game = WeightedKuhn()
    policy = CFRSolver(GAME, algorithm="cfr+").run(3000).average_policy()
    ev = _walk_value(game.new_initial_state(), policy.table)
    conv = sum(_brute_force_br(game, policy.table, p) - ev[p] for p in (0, 1))
    assert 0 <= conv / 2 < 2e-3
    # the skew changes the game: its value is not Kuhn's -1/18
    assert abs(ev[0] - (-1.0 / 18.0)) > 0.05
