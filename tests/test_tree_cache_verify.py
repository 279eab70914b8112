"""Issue 29: compiled trees are checked against the game itself.

* A cached tree (memory or disk) is used only after a sample of its paths replays through the game
  (actions, chance probabilities, returns): a user game whose rules read a module-level table that
  changed between two runs (code and game string unchanged, so the cache key is the same) gets a new
  tree, and the solver's exploitability agrees with the protocol evaluator.
* A tree whose chance probabilities do not sum to 1, or whose returns leave the declared utility
  bounds, is refused with a one-line GameError naming the node or history.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

from cfrkit.evaluation import exploitability, protocol_br
from cfrkit.games.base import CHANCE, TERMINAL, Game, GameError, State
from cfrkit.games.consistency import ConsistencyError, check_game
from cfrkit.games.registry import register, unregister
from cfrkit.solvers import CFRSolver
from cfrkit.solvers.tabular import compiled

#: the rules read this table at run time (a bet size), as a user's module might
RULES = {"call_payoff": 2.0, "chance": (0.5, 0.5), "bound": None}


class TablePokerState(State):
    """One card 0/1 to player 0, who checks or bets; player 1 folds or calls (payoff from RULES)."""

    def clone(self):
        new = TablePokerState(self.game)
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
        return list(zip((0, 1), RULES["chance"]))

    def _legal_actions(self, player):
        return [0, 1] if self.current_player() == player else []

    def _apply_action(self, action):
        self._history.append(action)

    def returns(self):
        h = self._history
        if self.current_player() != TERMINAL:
            return [0.0, 0.0]
        sign = 1.0 if h[0] == 1 else -1.0
        u = sign if h[1] == 0 else (1.0 if h[2] == 0 else sign * RULES["call_payoff"])
        return [u, -u]

    def information_state_string(self, player=None):
        return f"card{self._history[0]}" if player == 0 else "bet"


class TablePoker(Game):
    short_name = "table_poker_test"

    def __init__(self):
        super().__init__({})

    def new_initial_state(self):
        return TablePokerState(self)

    def num_distinct_actions(self):
        return 2

    def max_utility(self):
        return RULES["bound"] if RULES["bound"] is not None else max(1.0, abs(RULES["call_payoff"]))

    def min_utility(self):
        return -self.max_utility()


@pytest.fixture
def cache_dir(tmp_path):
    compiled._MEMORY_CACHE.clear()
    register("table_poker_test", TablePoker, {}, "test game reading a module-level table")
    saved = dict(RULES)
    yield str(tmp_path)
    RULES.update(saved)
    unregister("table_poker_test")
    compiled._MEMORY_CACHE.clear()


@pytest.mark.parametrize("through", ["memory", "disk"])
def test_cached_tree_is_verified_against_run_time_data(cache_dir, through):
    old = compiled.compile_game("table_poker_test", cache_dir=cache_dir)
    assert len(os.listdir(cache_dir)) == 1
    RULES["call_payoff"] = 6.0  # source and game string unchanged: the same cache key
    if through == "disk":  # as in a new process: only the disk cache remains
        compiled._MEMORY_CACHE.clear()
    tree = compiled.compile_game("table_poker_test", cache_dir=cache_dir)
    assert tree is not old and not np.array_equal(tree.utilities, old.utilities)
    assert compiled.tree_mismatch(tree, TablePoker(), 64) is None
    assert compiled.tree_mismatch(old, TablePoker(), 64) is not None
    policy = CFRSolver(tree, algorithm="cfr+").run(2000).average_policy()
    # the number the compiled evaluator gives is the protocol evaluator's (no stale tree anywhere)
    assert exploitability("table_poker_test", policy) == pytest.approx(
        protocol_br.exploitability("table_poker_test", policy), abs=1e-12)
    assert protocol_br.exploitability("table_poker_test", policy) < 1e-3
    # an unchanged game is served from the cache (verified, not rebuilt)
    assert compiled.compile_game("table_poker_test", cache_dir=cache_dir) is tree


def test_chance_probabilities_must_sum_to_one(cache_dir):
    RULES["chance"] = (0.5, 0.4)
    with pytest.raises(GameError, match="sum to 0.9") as info:
        compiled.compile_game("table_poker_test", cache_dir=cache_dir)
    assert "\n" not in str(info.value)
    with pytest.raises(GameError):
        CFRSolver("table_poker_test")
    with pytest.raises(ConsistencyError, match="do not form a distribution"):
        check_game("table_poker_test", num_playthroughs=20)


def test_returns_outside_the_declared_bounds_are_refused(cache_dir):
    RULES["bound"] = 1.5  # the game declares [-1.5, 1.5] but a called bet pays 2
    with pytest.raises(GameError, match=r"outside the declared utility bounds \[-1.5, 1.5\]") as info:
        compiled.compile_game("table_poker_test", cache_dir=cache_dir)
    assert "history [" in str(info.value) and "\n" not in str(info.value)
    assert os.listdir(cache_dir) == []  # nothing cached
    with pytest.raises(ConsistencyError, match="outside the declared bounds"):
        check_game("table_poker_test", num_playthroughs=200)
