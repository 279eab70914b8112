"""Compiled-tree CFR family: known game values, convergence bounds, agreement with OpenSpiel."""
import itertools
import os

import numpy as np
import pytest

from cfrkit.evaluation import (best_response_policy, best_response_value, exploitability, expected_values,
                               nash_conv)
from cfrkit.policy import PolicyFileError, TabularPolicy, UniformRandomPolicy
from cfrkit.solvers import ALGORITHMS, CFRSolver, TreeTooLargeError, compile_game


def test_kuhn_value_is_minus_one_eighteenth():
    solver = CFRSolver("kuhn", "cfr+").run(2000)
    ev = expected_values("kuhn", solver.average_policy())
    assert ev[0] == pytest.approx(-1 / 18, abs=1e-3)
    assert ev.sum() == pytest.approx(0.0, abs=1e-12)
    assert exploitability("kuhn", solver.average_policy()) < 1e-3


def test_leduc_value_and_cfr_plus_bound():
    solver = CFRSolver("leduc", "cfr+").run(1000)
    policy = solver.average_policy()
    assert expected_values("leduc", policy)[0] == pytest.approx(-0.0856, abs=1e-3)
    assert exploitability("leduc", policy) <= 3e-4


# uniform play is the equilibrium of plain RPS (where every solver starts), so use biased RPS
BIASED_RPS = "turn_based(game=matrix(rows=3,cols=3,row_payoffs=0;-1;2;1;0;-1;-2;1;0))"


@pytest.mark.parametrize("algorithm", sorted(ALGORITHMS))
@pytest.mark.parametrize("game", [BIASED_RPS, "kuhn", "kuhn(players=3)", "leduc"])
def test_every_algorithm_reduces_exploitability(algorithm, game):
    solver = CFRSolver(game, algorithm)
    values = []
    for target in (10, 100, 400):
        solver.run(target)
        values.append(exploitability(solver.tree, solver.average_strategy_array()))
    assert values[2] < values[0]
    assert values[2] < 0.5 * exploitability(game, UniformRandomPolicy())
    if not game.startswith("kuhn(players=3)"):  # two-player zero-sum: convergence to equilibrium
        assert values[2] < 0.05


def test_plain_rps_stays_at_its_uniform_equilibrium():
    solver = CFRSolver("turn_based(game=rps)", "cfr+").run(50)
    assert exploitability(solver.tree, solver.average_strategy_array()) == pytest.approx(0.0, abs=1e-12)
    assert expected_values("rps", solver.average_policy()) == pytest.approx([0.0, 0.0])


def test_simultaneous_updates_converge():
    solver = CFRSolver("kuhn", "cfr", alternating=False).run(1000)
    assert exploitability("kuhn", solver.average_policy()) < 1e-2


def test_simultaneous_updates_match_openspiel():
    pyspiel = pytest.importorskip("pyspiel")
    from open_spiel.python.algorithms import cfr
    from open_spiel.python.algorithms import exploitability as os_exploitability

    game = pyspiel.load_game("leduc_poker")
    reference = cfr._CFRSolver(game, regret_matching_plus=False, alternating_updates=False, linear_averaging=False)
    for _ in range(4):
        reference.evaluate_and_update_policy()
    solver = CFRSolver("leduc", "cfr", alternating=False).run(4)
    assert nash_conv("leduc", solver.average_strategy_array()) == pytest.approx(
        os_exploitability.nash_conv(game, reference.average_policy()), abs=1e-9)


@pytest.mark.parametrize("algorithm,os_name", [("cfr", "CFRSolver"), ("cfr+", "CFRPlusSolver"),
                                               ("lcfr", "LCFRSolver"), ("dcfr", "DCFRSolver")])
@pytest.mark.parametrize("ours,theirs", [("kuhn", "kuhn_poker"), ("kuhn(players=3)", "kuhn_poker(players=3)"),
                                         ("leduc", "leduc_poker")])
def test_iterates_match_openspiel_python_solvers(algorithm, os_name, ours, theirs):
    """Same algorithm, same iterates: the NashConv of both average policies agrees to 1e-9."""
    pyspiel = pytest.importorskip("pyspiel")
    from open_spiel.python.algorithms import cfr, discounted_cfr
    from open_spiel.python.algorithms import exploitability as os_exploitability

    module = cfr if hasattr(cfr, os_name) else discounted_cfr
    game = pyspiel.load_game(theirs)
    reference = getattr(module, os_name)(game)
    for _ in range(5):
        reference.evaluate_and_update_policy()
    solver = CFRSolver(ours, algorithm).run(5)
    assert nash_conv(ours, solver.average_strategy_array()) == pytest.approx(
        os_exploitability.nash_conv(game, reference.average_policy()), abs=1e-9)


def _pure_strategy_values(game, policy, player):
    """Brute force: the value of every pure strategy of ``player`` against ``policy``."""
    tree = compile_game(game)
    sigma = np.array(CFRSolver(tree).current_strategy_array())
    from cfrkit.solvers.tabular.cfr import policy_to_slots

    sigma = policy_to_slots(tree, policy)
    mine = np.flatnonzero(tree.infoset_player == player)
    sizes = [tree.infoset_offset[s + 1] - tree.infoset_offset[s] for s in mine]
    values = []
    for choice in itertools.product(*[range(k) for k in sizes]):
        trial = sigma.copy()
        for s, k in zip(mine, choice):
            lo, hi = tree.infoset_offset[s], tree.infoset_offset[s + 1]
            trial[lo:hi] = 0.0
            trial[lo + k] = 1.0
        values.append(expected_values(tree, trial)[player])
    return values


@pytest.mark.parametrize("game", ["kuhn", "turn_based(game=rps)", "turn_based(game=matrix(rows=2,cols=3,"
                                                                   "row_payoffs=3;-1;0;-2;4;1))"])
def test_best_response_equals_best_pure_strategy(game):
    rng = np.random.default_rng(0)
    tree = compile_game(game)
    table = {}
    for s, key in enumerate(tree.infoset_keys):
        lo, hi = tree.infoset_offset[s], tree.infoset_offset[s + 1]
        p = rng.dirichlet(np.ones(hi - lo))
        table[key] = dict(zip(tree.slot_action[lo:hi].tolist(), p.tolist()))
    policy = TabularPolicy(game, table)
    for player in range(tree.num_players):
        brute = max(_pure_strategy_values(game, policy, player))
        assert best_response_value(game, policy, player) == pytest.approx(brute, abs=1e-12)
        br = best_response_policy(game, policy, player)
        mixed = dict(policy.table)
        mixed.update(br.table)
        assert expected_values(game, TabularPolicy(game, mixed))[player] == pytest.approx(brute, abs=1e-12)


def test_uniform_kuhn_best_response_values():
    # known: against uniform random, player 0's best response earns 0.5, player 1's 0.41666...
    assert best_response_value("kuhn", UniformRandomPolicy(), 0) == pytest.approx(0.5)
    assert best_response_value("kuhn", UniformRandomPolicy(), 1) == pytest.approx(5 / 12)


def test_resume_equals_uninterrupted(tmp_path):
    path = str(tmp_path / "leduc.npz")
    straight = CFRSolver("leduc", "dcfr").run(60)
    first = CFRSolver("leduc", "dcfr").run(25)
    first.save(path)
    resumed = CFRSolver.load(path).run(60)
    assert resumed.iterations == 60
    np.testing.assert_array_equal(resumed.regrets, straight.regrets)
    np.testing.assert_array_equal(resumed.strategy_sum, straight.strategy_sum)
    # the same file is also a policy file
    policy = TabularPolicy.load(path, "leduc")
    assert policy.metadata["algorithm"] == "dcfr" and len(policy) == 936


def test_damaged_and_foreign_files_give_clear_errors(tmp_path):
    path = tmp_path / "kuhn.npz"
    CFRSolver("kuhn").run(5).save(str(path))
    data = path.read_bytes()
    (tmp_path / "cut.npz").write_bytes(data[: len(data) // 2])
    with pytest.raises(PolicyFileError, match="cut.npz"):
        TabularPolicy.load(str(tmp_path / "cut.npz"))
    with pytest.raises(PolicyFileError, match="cut.npz"):
        CFRSolver.load(str(tmp_path / "cut.npz"))
    np.savez(tmp_path / "other.npz", x=np.zeros(3))
    with pytest.raises(PolicyFileError, match="not a cfrkit file"):
        TabularPolicy.load(str(tmp_path / "other.npz"))
    with pytest.raises(PolicyFileError, match="policy is for game 'kuhn'"):
        TabularPolicy.load(str(path), "leduc")


def test_tree_size_limit_gives_clear_error():
    with pytest.raises(TreeTooLargeError, match="nodes"):
        compile_game("leduc(ranks=6)", max_nodes=5000, cache=False)


def test_disk_cache_round_trip(tmp_path):
    fresh = compile_game("kuhn(players=3)", cache=False)
    compile_game("kuhn(players=3)", cache_dir=str(tmp_path))
    from cfrkit.solvers.tabular import compiled

    compiled._MEMORY_CACHE.clear()
    cached = compile_game("kuhn(players=3)", cache_dir=str(tmp_path))
    assert len(os.listdir(tmp_path)) == 1
    for name in compiled._ARRAYS:
        np.testing.assert_array_equal(getattr(cached, name), getattr(fresh, name))
    assert cached.infoset_keys == fresh.infoset_keys


def test_invalid_policy_is_rejected():
    table = {"0": {0: 0.7, 1: 0.7}}
    with pytest.raises(ValueError, match="sums to 1.4"):
        exploitability("kuhn", TabularPolicy("kuhn", table))


def test_callback_fires_at_every_multiple_even_with_a_progress_bar():
    seen = []
    CFRSolver("kuhn").run(1234, callback=lambda s: seen.append(s.iterations), callback_every=100, progress=True)
    assert seen == list(range(100, 1201, 100)) + [1234]
