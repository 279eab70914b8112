"""Issue 17 item 11: the compiled-tree cache is keyed on what defines the tree, not on the name only.

A user game is redefined under the same name with other rules (a class made by a factory, so the
class name, qualname and method bytecode are the same and only a closure value differs); the solver
must solve the new rules: its policy's exploitability on the new rules, by the protocol evaluator
(no compiled tree involved), must be near 0.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

from cfrkit.evaluation import exploitability, protocol_br
from cfrkit.games.base import CHANCE, TERMINAL, Game, State
from cfrkit.games.registry import register, unregister
from cfrkit.solvers import CFRSolver
from cfrkit.solvers.tabular import compiled


def _define(call_payoff: float):
    """A tiny poker: one card 0/1 dealt to player 0, who checks or bets; player 1 folds or calls."""

    class UserPokerState(State):
        def clone(self):
            new = UserPokerState(self.game)
            new._history = list(self._history)
            return new

        def current_player(self):
            h = self._history
            if not h:
                return CHANCE
            if len(h) == 1 or (len(h) == 2 and h[1] == 1):
                return len(h) - 1
            return TERMINAL

        def chance_outcomes(self):
            return [(0, 0.5), (1, 0.5)]

        def _legal_actions(self, player):
            return [0, 1] if self.current_player() == player else []

        def _apply_action(self, action):
            self._history.append(action)

        def returns(self):
            h = self._history
            if self.current_player() != TERMINAL:
                return [0.0, 0.0]
            sign = 1.0 if h[0] == 1 else -1.0
            if h[1] == 0:
                u = sign
            elif h[2] == 0:
                u = 1.0
            else:
                u = sign * call_payoff
            return [u, -u]

        def information_state_string(self, player=None):
            return f"card{self._history[0]}" if player == 0 else "bet"

    class UserPoker(Game):
        short_name = "user_poker_test"

        def __init__(self):
            super().__init__({})

        def new_initial_state(self):
            return UserPokerState(self)

        def num_distinct_actions(self):
            return 2

        def max_utility(self):
            return max(1.0, abs(call_payoff))

        def min_utility(self):
            return -self.max_utility()

    return UserPoker


@pytest.fixture
def cache_dir(tmp_path):
    compiled._MEMORY_CACHE.clear()
    yield str(tmp_path)
    unregister("user_poker_test")
    compiled._MEMORY_CACHE.clear()


def _solve(cache_dir):
    tree = compiled.compile_game("user_poker_test", cache_dir=cache_dir)
    return tree, CFRSolver(tree, algorithm="cfr+").run(2000).average_policy()


@pytest.mark.parametrize("through", ["memory", "disk"])
def test_redefined_user_game_is_compiled_anew(cache_dir, through):
    register("user_poker_test", _define(2.0), {}, "test game")
    old_tree, _ = _solve(cache_dir)
    assert len(os.listdir(cache_dir)) == 1
    register("user_poker_test", _define(6.0), {}, "test game, other rules")
    if through == "disk":  # as in a new process: only the disk cache remains
        compiled._MEMORY_CACHE.clear()
    new_tree, policy = _solve(cache_dir)
    assert not np.array_equal(new_tree.utilities, old_tree.utilities)
    assert len(os.listdir(cache_dir)) == 2
    # the policy solves the new rules (protocol evaluator: walks the new game, no compiled tree)
    assert protocol_br.exploitability("user_poker_test", policy) < 1e-3
    assert exploitability("user_poker_test", policy) == pytest.approx(
        protocol_br.exploitability("user_poker_test", policy), abs=1e-12)


def test_hand_built_game_under_a_registered_name_is_not_cached(cache_dir):
    from cfrkit.games.matrix import MatrixGame

    pennies = compiled.compile_game("matrix", cache_dir=cache_dir)
    biased = MatrixGame(np.array([[3.0, -1.0], [-1.0, 1.0]]), -np.array([[3.0, -1.0], [-1.0, 1.0]]))
    assert biased.game_string() == "matrix"  # same name as the registered default (matching pennies)
    tree = compiled.compile_game(biased, cache_dir=cache_dir)
    assert sorted(tree.utilities[:, 0].tolist()) != sorted(pennies.utilities[:, 0].tolist())
    assert compiled.tree_cache_key(biased) is None
    # and the registered game still gets its own cached tree
    assert compiled.compile_game("matrix", cache_dir=cache_dir) is pennies


def test_cache_false_compiles_without_storing(cache_dir):
    tree = compiled.compile_game("kuhn", cache=False, cache_dir=cache_dir)
    assert os.listdir(cache_dir) == [] and not compiled._MEMORY_CACHE
    assert tree.num_infosets == 12
