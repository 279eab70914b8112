"""Compiled river solver (FlatRangeSolver / solve_many): per-spot stopping, unchanged iterates, errors."""
import numpy as np
import pytest

from cfrkit.cards.equity import board_strengths
from cfrkit.solvers.public.flat_range_cfr import FlatRangeSolver, solve_many
from cfrkit.solvers.public.games import RiverPublicGame
from cfrkit.solvers.public.tree import RangeSolver, build_public_tree

BOARD = [51, 37, 26, 12, 1]


@pytest.fixture(scope="module")
def tree():
    river = RiverPublicGame(BOARD, board_strengths(BOARD), pot=100, stack=150, bet_fractions=[(0.5, 1.0)])
    return build_public_tree(river)


def _ranges(tree, count, seed):
    mask = tree.pgame.hand_mask(tree.root.board)
    return np.random.default_rng(seed).random((count, 2, tree.num_hands)) * mask


def test_hands_sorted_by_strength_and_all_live_hands_kept(tree):
    s = FlatRangeSolver(tree)
    mask = tree.pgame.hand_mask(tree.root.board)
    assert sorted(s.hands) == list(np.nonzero(mask > 0)[0])
    assert np.all(np.diff(s.strength) >= 0)
    assert s.pot == pytest.approx(100.0)


def test_per_spot_stopping_reaches_target_on_every_spot(tree):
    target, every = 0.004, 5
    ranges = _ranges(tree, 4, seed=3)
    out = solve_many(tree, ranges, max_iterations=400, threads=2, target_fraction=target, check_every=every)
    assert out.reached.all()
    assert np.all(out.exploitability <= target * out.pot)
    assert np.all(out.iterations % every == 0) and np.all(out.iterations > 0)
    for b, solver in enumerate(out.solvers):
        # the reported exploitability is that of the final average strategy
        assert solver.exploitability() == pytest.approx(out.exploitability[b], rel=1e-12)
        assert solver.iterations == out.iterations[b]
        # and the spot stopped at its first check at or below the target
        probe = FlatRangeSolver(tree, ranges=ranges[b])
        curve = probe.run(400, check_every=every)
        first = int(np.nonzero(curve <= target * out.pot)[0][0])
        assert out.iterations[b] == (first + 1) * every
        assert curve[first] == pytest.approx(out.exploitability[b], rel=1e-12)
        # independently of the C kernel: the numpy RangeSolver's best responses to the stopped strategy
        ref = RangeSolver(tree, ranges=ranges[b])
        independent = float(ref.exploitability(strategies=ref.from_numpy_strategy(solver.average_strategy()))[0])
        assert independent == pytest.approx(out.exploitability[b], rel=1e-9)
        assert independent <= target * out.pot


def test_checks_and_stopping_leave_iterates_unchanged(tree):
    r = _ranges(tree, 1, seed=4)[0]
    plain = FlatRangeSolver(tree, ranges=r)
    plain.run(30)
    checked = FlatRangeSolver(tree, ranges=r)
    curve = checked.run(30, check_every=7, target=1e-12)  # never reached: runs all 30
    assert checked.iterations == 30 and len(curve) == 4
    resumed = FlatRangeSolver(tree, ranges=r)
    resumed.run(12)
    resumed.run(18, check_every=6)
    for other in (checked, resumed):
        np.testing.assert_array_equal(other.regrets, plain.regrets)
        np.testing.assert_array_equal(other.strategy_sum, plain.strategy_sum)
        np.testing.assert_array_equal(other.sigma, plain.sigma)
    # a stopped solve equals an unstopped one run for the same number of iterations
    stopped = FlatRangeSolver(tree, ranges=r)
    expl = stopped.solve(target_fraction=0.01, check_every=4, max_iterations=500)
    assert expl <= 0.01 * stopped.pot
    same = FlatRangeSolver(tree, ranges=r)
    same.run(stopped.iterations)
    np.testing.assert_array_equal(same.strategy_sum, stopped.strategy_sum)
    # without a target every spot runs exactly max_iterations
    batch = solve_many(tree, np.stack([r, r]), 30, threads=2)
    assert list(batch.iterations) == [30, 30] and batch.reached.all()
    np.testing.assert_array_equal(batch.solvers[1].strategy_sum, plain.strategy_sum)


@pytest.mark.parametrize("params", [{"gamma": 3.0}, {"beta": 0.5, "gamma": 3.0}, {"alpha": 1.0, "beta": -1.0}])
def test_dcfr_parameters_agree_with_numpy_solver(tree, params):
    r = _ranges(tree, 1, seed=5)[0]
    ref = RangeSolver(tree, ranges=r, algorithm="dcfr", **params).run(10)
    fast = FlatRangeSolver(tree, ranges=r, algorithm="dcfr", **params)
    fast.run(10)
    a, b = ref.to_numpy_strategy(), fast.average_strategy()
    for i in a:
        np.testing.assert_allclose(b[i], a[i], atol=1e-9)
    assert fast.exploitability() == pytest.approx(ref.exploitability()[0], rel=1e-9)


def test_bad_arguments_raise_readable_errors(tree):
    s = FlatRangeSolver(tree)
    with pytest.raises(ValueError, match="check_every"):
        s.run(10, target=1.0)
    with pytest.raises(ValueError, match="target_fraction"):
        s.solve(target_fraction=0.0)
    with pytest.raises(ValueError, match="shape"):
        FlatRangeSolver(tree, ranges=np.ones((3, tree.num_hands)))
    with pytest.raises(ValueError, match="non-negative"):
        FlatRangeSolver(tree, ranges=-np.ones((2, tree.num_hands)))
    with pytest.raises(ValueError, match="shape"):
        solve_many(tree, np.ones((2, tree.num_hands)), 10)
    with pytest.raises(ValueError, match="target_fraction"):
        solve_many(tree, _ranges(tree, 1, 0), 10, target_fraction=-1.0)
