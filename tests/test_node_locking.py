"""Node locking in the tabular CFR solver: exact checks on Leduc."""
import numpy as np
import pytest

from cfrkit.evaluation import best_response_value, expected_values
from cfrkit.games.base import GameError
from cfrkit.solvers import CFRSolver


@pytest.fixture(scope="module")
def leduc_equilibrium():
    solver = CFRSolver("leduc", algorithm="cfr+")
    solver.run(1500, progress=False)
    return solver.average_policy()


def _player_table(policy, tree, player):
    keys = [k for k, p in zip(tree.infoset_keys, tree.infoset_player) if p == player]
    return {k: policy.table[k] for k in keys}


def test_locking_one_player_to_equilibrium_reproduces_it(leduc_equilibrium):
    solver = CFRSolver("leduc", algorithm="cfr+")
    locked = _player_table(leduc_equilibrium, solver.tree, 0)
    assert solver.lock(locked) == len(locked) == 468
    solver.run(1000, progress=False)
    policy = solver.average_policy()
    for key, probs in locked.items():                    # the locked sets stay exactly as given
        assert policy.table[key] == pytest.approx(probs, abs=1e-12)
    # the other player converges to a best response to the locked equilibrium: the game value
    assert expected_values("leduc", policy)[0] == pytest.approx(expected_values("leduc", leduc_equilibrium)[0],
                                                                abs=2e-3)
    # ... and is a best response (any best response to an equilibrium earns exactly the game value)
    assert expected_values("leduc", policy)[1] == pytest.approx(best_response_value("leduc", policy, 1), abs=2e-3)


def test_locking_to_a_dominated_strategy_gives_the_best_response_value(leduc_equilibrium):
    solver = CFRSolver("leduc", algorithm="cfr+")
    # player 0 never raises (calls or checks everywhere it can): exploitable
    table = {}
    for key, probs in _player_table(leduc_equilibrium, solver.tree, 0).items():
        table[key] = {a: (1.0 if a == 1 else 0.0) for a in probs}
    solver.lock(table)
    solver.run(1500, progress=False)
    policy = solver.average_policy()
    br = best_response_value("leduc", policy, 1)          # exact best response to the locked player
    assert expected_values("leduc", policy)[1] == pytest.approx(br, abs=3e-3)
    assert br > -expected_values("leduc", leduc_equilibrium)[0] + 0.1   # far better than the game value


def test_lock_rejects_bad_input():
    solver = CFRSolver("kuhn")
    with pytest.raises(GameError, match="not an information state"):
        solver.lock({"nope": {0: 1.0}})
    key = solver.tree.infoset_keys[0]
    with pytest.raises(GameError, match="sum to 1"):
        solver.lock({key: {0: 0.5}})
    with pytest.raises(GameError, match="not legal"):
        solver.lock({key: {7: 1.0}})
    solver.lock({key: {0: 1.0, 1: 0.0}})
    solver.unlock()
    solver.run(50, progress=False)
    assert not np.allclose(solver.average_strategy_array()[:2], [1.0, 0.0])
