"""The board kernel's DCFR+ and PDCFR+ update rules (issue 30, branch range-speed4).

* first iterate: with ``d(0) = 0`` both start as CFR+ (regrets ``max(r, 0)``, average weight 1): DCFR+'s regrets
  and PDCFR+'s cumulative regrets equal CFR+'s bitwise, PDCFR+'s predicted regrets are ``(1 + d(1)) = 1.5``
  times them (and its strategies, proportional, give player 1 the same pass);
* both converge on a small flop spot (exploitability below a bound), regrets floored at 0;
* iterates identical across 1, 2 and 3 threads: tests/test_range_threads.py, with the other rules;
* the per-algorithm default exponents and the errors of the front and the engine.
"""
from __future__ import annotations

import numpy as np
import pytest

from cfrkit.solvers.public import SubgameSolver
from cfrkit.solvers.public.board_range_cfr import ALGORITHM_DEFAULTS, BoardRangeSolver



@pytest.fixture(scope="module")
def flop(small_flop_spot):
    return small_flop_spot


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_first_iterate_is_cfr_plus(flop, dtype):
    tree, ranges = flop
    ref = BoardRangeSolver(tree, ranges=ranges, algorithm="cfr+", dtype=dtype, threads=1)
    ref.run(1)
    plus = BoardRangeSolver(tree, ranges=ranges, algorithm="dcfr+", dtype=dtype, threads=1)
    plus.run(1)
    pred = BoardRangeSolver(tree, ranges=ranges, algorithm="pdcfr+", dtype=dtype, threads=1)
    pred.run(1)
    assert np.any(ref.regrets > 0)
    assert np.array_equal(plus.regrets, ref.regrets) and np.array_equal(plus.strategy_sum, ref.strategy_sum)
    # PDCFR+: player 1's pass sees player 0's strategy matched from 1.5 x the regrets, equal up to the rounding of
    # the normalisation (float32: 1.2e-4 of regrets up to 1004)
    tol = (1e-6 if dtype == "float32" else 1e-14) * np.abs(ref.regrets).max()
    assert np.allclose(pred.cumulative_regrets, ref.regrets, rtol=0, atol=tol)
    assert np.allclose(pred.regrets, 1.5 * ref.regrets, rtol=0, atol=2 * tol)
    assert np.array_equal(pred.strategy_sum, ref.strategy_sum)
    # the second iterate discounts: no longer CFR+'s
    ref.run(1)
    plus.run(1)
    assert not np.array_equal(plus.regrets, ref.regrets)


@pytest.mark.parametrize("algorithm,bound", [("dcfr+", 0.003), ("pdcfr+", 0.005)])
def test_new_rules_converge(flop, algorithm, bound):
    tree, ranges = flop
    s = BoardRangeSolver(tree, ranges=ranges, algorithm=algorithm, threads=1)
    first = s.exploitability()
    final = s.solve(bound, check_every=10, max_iterations=400)
    assert final <= bound * s.pot < first
    assert s.regrets.min() >= 0   # CFR+'s floor (PDCFR+: the predicted regrets too)
    if algorithm == "pdcfr+":
        assert s.cumulative_regrets.min() >= 0


def test_default_exponents_and_errors(flop):
    tree, ranges = flop
    s = BoardRangeSolver(tree, ranges=ranges, algorithm="dcfr+", threads=1)
    defaults = ALGORITHM_DEFAULTS["dcfr+"]
    assert (s.alpha, s.gamma) == (defaults["alpha"], defaults["gamma"]) == (1.5, 4)
    assert BoardRangeSolver(tree, ranges=ranges, threads=1).gamma == 2   # DCFR's default unchanged
    assert BoardRangeSolver(tree, ranges=ranges, algorithm="dcfr+", gamma=6, threads=1).gamma == 6
    p = BoardRangeSolver(tree, ranges=ranges, algorithm="pdcfr+", threads=1)
    assert (p.alpha, p.gamma) == (2.3, 5) and p.storage_bytes == 3 * p.regrets.nbytes
    with pytest.raises(ValueError, match="16-bit"):
        BoardRangeSolver(tree, ranges=ranges, algorithm="pdcfr+", compression=True)
    with pytest.raises(ValueError, match="alpha >= 0"):
        BoardRangeSolver(tree, ranges=ranges, algorithm="dcfr+", alpha=-1)
    with pytest.raises(ValueError, match="unknown algorithm"):
        BoardRangeSolver(tree, ranges=ranges, algorithm="pcfr")
    front = SubgameSolver(tree, ranges, backend="compiled", storage="float32", algorithm="dcfr+", threads=1)
    assert front.engine_name == "BoardRangeSolver" and front.engine.gamma == 4
    front.run(3)
    s.run(3)
    assert front.engine.exploitability() == s.exploitability()
    for kw in (dict(backend="numpy"), dict(backend="compiled", kernel="flat")):
        with pytest.raises(ValueError, match="compiled board kernel"):
            SubgameSolver(tree, ranges, algorithm="dcfr+", **kw)
