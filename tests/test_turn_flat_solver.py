"""Compiled turn solver: FlatRangeSolver on hold'em turn subgames (one chance level) vs the numpy RangeSolver.

* the first iterations (CFR+ and DCFR) equal RangeSolver's: average strategy, root values, exploitability;
* the kernel's evaluation (root values, best responses through the chance nodes, exploitability) of any
  given strategy profile equals RangeSolver's, on restricted and on full ranges;
* the solve converges and per-spot stopping reaches its target; river trees agree as before;
* depth-limited trees are rejected with a GameError (flop trees: tests/test_range_solver_flop.py).

Why only the first iterations: after a few iterations some hand is exactly indifferent between actions
(e.g. all its child values are 0 because the opponent's reach there is 0) and the two implementations'
rounding noise (+-1e-16) sends its regret-matched strategy different ways; RangeSolver's own numpy and
torch backends part the same way at the same iteration on this tree.
"""
from __future__ import annotations

import numpy as np
import pytest

from cfrkit.cards.equity import board_strengths
from cfrkit.cards.hands import HOLE_PAIRS
from cfrkit.games import load
from cfrkit.games.base import GameError
from cfrkit.games.holdem.matchstate import state_from_matchstate
from cfrkit.solvers.public.flat_range_cfr import FlatRangeSolver, solve_many
from cfrkit.solvers.public.games import RiverPublicGame
from cfrkit.solvers.public.tree import CHANCE_NODE, RangeSolver, build_public_tree

TURN = "MATCHSTATE:0:0:r200c/cc/:5d5c|/8dAs8s/Kh"


@pytest.fixture(scope="module")
def turn():
    game = load("holdem(stacks=1200;1200)")
    state = state_from_matchstate(game, TURN)
    tree = build_public_tree(game, state, bet_sizing={1: [1.0]})
    assert tree.counts()[CHANCE_NODE] > 1
    return state, tree


def full_ranges(tree, seed):
    mask = tree.pgame.hand_mask(tree.root.board)
    return (np.random.default_rng(seed).random((2, tree.num_hands)) + 0.05) * mask


def restricted_ranges(board, count, seed):
    rng = np.random.default_rng(seed)
    free = [h for h in range(1326) if not set(HOLE_PAIRS[h].tolist()) & set(board)]
    ranges = np.zeros((2, 1326))
    for p in range(2):
        idx = rng.choice(free, count, replace=False)
        ranges[p, idx] = rng.random(count) + 0.1
    return ranges


@pytest.mark.parametrize("algorithm,params", [("cfr+", {}), ("dcfr", {}), ("dcfr", {"alpha": 1.0, "beta": 0.5,
                                                                                       "gamma": 3.0})])
def test_first_iterations_equal_numpy_solver(turn, algorithm, params):
    _, tree = turn
    r = full_ranges(tree, seed=1)
    ref = RangeSolver(tree, ranges=r, algorithm=algorithm, **params)
    fast = FlatRangeSolver(tree, ranges=r, algorithm=algorithm, **params)
    for n in (1, 3):
        ref.run(n)
        fast.run(n - fast.iterations)
        a, b = ref.to_numpy_strategy(), fast.average_strategy()
        assert a.keys() == b.keys()
        for i in a:
            np.testing.assert_allclose(b[i], a[i], rtol=0, atol=1e-9)
        np.testing.assert_allclose(fast.root_values(), ref.root_values()[0], rtol=1e-9)
        assert fast.exploitability() == pytest.approx(float(ref.exploitability()[0]), rel=1e-9)
    # the strategy really moved away from uniform (the comparison is not between two untouched profiles)
    moved = max(np.abs(s - 1.0 / s.shape[1]).max() for s in b.values())
    assert moved > 0.4
    assert np.count_nonzero(fast.regrets) > 0.3 * fast.regrets.size


@pytest.mark.parametrize("restricted", [True, False])
def test_evaluation_of_any_profile_equals_numpy_solver(turn, restricted):
    state, tree = turn
    r = restricted_ranges(state.board, 40, seed=2) if restricted else full_ranges(tree, seed=2)
    ref = RangeSolver(tree, ranges=r, algorithm="dcfr").run(12)
    fast = FlatRangeSolver(tree, ranges=r)
    rng = np.random.default_rng(3)
    random_profile = {i: rng.dirichlet(np.ones(s.shape[1]), size=(1, tree.num_hands)).transpose(0, 2, 1)
                      for i, s in ref.to_numpy_strategy().items()}
    for profile in (ref.to_numpy_strategy(), random_profile):
        strategies = ref.from_numpy_strategy(profile)
        expected = float(ref.exploitability(strategies)[0])
        assert fast.exploitability(profile) == pytest.approx(expected, rel=1e-9)
        values = fast.root_values(profile)
        np.testing.assert_allclose(values, ref.root_values(strategies)[0], rtol=1e-9, atol=1e-9 * tree.root.pot)
        assert abs(values.sum()) < 1e-9 * tree.root.pot  # zero-sum
        # each player's best-response value is at least its value under the profile
        for p in (0, 1):
            br = ref.best_response_values(p, strategies)[0]
            assert np.all(br >= ref.node_values(strategies)[0][0][p][0] - 1e-9 * tree.root.pot)
    with pytest.raises(ValueError, match="shape"):
        fast.exploitability({i: s[:, :1] for i, s in random_profile.items()})


def test_turn_solve_converges_and_per_spot_stopping_reaches_target(turn):
    state, tree = turn
    pot = tree.root.pot
    r = restricted_ranges(state.board, 40, seed=1)
    fast = FlatRangeSolver(tree, ranges=r, algorithm="dcfr")
    fast.run(10)
    early = fast.exploitability() / pot
    fast.run(100)
    late = fast.exploitability() / pot
    assert late < 0.005 and late < early / 5, (early, late)
    v = fast.root_values()
    assert abs(v[0] + v[1]) < 1e-9 * pot

    target, every = 0.01, 5
    ranges = np.stack([full_ranges(tree, seed=4), restricted_ranges(state.board, 50, seed=5)])
    out = solve_many(tree, ranges, max_iterations=300, threads=2, target_fraction=target, check_every=every)
    assert out.reached.all() and np.all(out.exploitability <= target * pot)
    assert np.all(out.iterations % every == 0) and np.all(out.iterations > 0)
    for b, solver in enumerate(out.solvers):
        assert solver.exploitability() == pytest.approx(out.exploitability[b], rel=1e-12)
        probe = FlatRangeSolver(tree, ranges=ranges[b])
        curve = probe.run(int(out.iterations[b]), check_every=every)
        first = int(np.nonzero(curve <= target * pot)[0][0])
        assert out.iterations[b] == (first + 1) * every  # stopped at the first check at or below the target
        # independently of the C kernel: the numpy RangeSolver's best responses to the stopped strategy
        ref = RangeSolver(tree, ranges=ranges[b])
        independent = float(ref.exploitability(strategies=ref.from_numpy_strategy(solver.average_strategy()))[0])
        assert independent == pytest.approx(out.exploitability[b], rel=1e-9)
        assert independent <= target * pot


def test_river_tree_still_agrees():
    board = [51, 37, 26, 12, 1]
    river = RiverPublicGame(board, board_strengths(board), pot=100, stack=150, bet_fractions=[(0.5, 1.0)])
    tree = build_public_tree(river)
    r = np.random.default_rng(5).random((2, tree.num_hands)) * river.hand_mask(board)
    for algorithm in ("cfr+", "dcfr"):
        ref = RangeSolver(tree, ranges=r, algorithm=algorithm).run(10)
        fast = FlatRangeSolver(tree, ranges=r, algorithm=algorithm)
        fast.run(10)
        a, b = ref.to_numpy_strategy(), fast.average_strategy()
        for i in a:
            np.testing.assert_allclose(b[i], a[i], atol=1e-9)
        assert fast.exploitability() == pytest.approx(float(ref.exploitability()[0]), rel=1e-9)
        np.testing.assert_allclose(fast.root_values(), ref.root_values()[0], rtol=1e-9)
    assert np.all(np.diff(fast.strength) >= 0)  # river trees keep the single strength-sorted order


def test_unsupported_trees_raise_game_error():
    game = load("holdem(stacks=1200;1200)")
    state = state_from_matchstate(game, TURN)
    cut = build_public_tree(game, state, bet_sizing={1: [1.0]}, depth_limit=True)
    with pytest.raises(GameError, match="depth-limited"):
        FlatRangeSolver(cut)
    # flop trees (two chance levels) are supported since the range-solver work: tests/test_range_solver_flop.py
