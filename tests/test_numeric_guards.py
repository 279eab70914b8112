"""Issue 17 items 5, 6, 10: NaN/inf never give a number, sparse policies are flagged, exploitability of
non-constant-sum games is refused."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from cfrkit.evaluation import exploitability, expected_values, nash_conv
from cfrkit.evaluation import protocol_br
from cfrkit.games import load
from cfrkit.games.base import GameError
from cfrkit.policy import TabularPolicy, UniformRandomPolicy
from cfrkit.solvers import CFRSolver, ExternalSamplingMCCFR, OutcomeSamplingMCCFR
from cfrkit.solvers.tabular.cfr import NonFiniteError, PolicyCoverageWarning


def _nan_policy(game):
    policy = CFRSolver(game).run(10).average_policy()
    key = next(iter(policy.keys()))
    policy[key] = {a: float("nan") for a in policy[key]}
    return policy


@pytest.mark.parametrize("evaluate", [exploitability, protocol_br.exploitability, expected_values,
                                      protocol_br.expected_values])
def test_nan_policy_is_refused_by_every_evaluator(evaluate):
    with pytest.raises(GameError, match="NaN|not a distribution"):
        evaluate("kuhn", _nan_policy("kuhn"))


def test_nan_policy_file_is_refused_by_the_cli(tmp_path, capsys):
    from cfrkit.cli import main

    path = str(tmp_path / "nan.npz")
    _nan_policy("leduc").save(path)
    assert main(["exploitability", "leduc", path]) == 2
    assert "NaN" in capsys.readouterr().err


def test_nan_per_slot_policy_is_refused():
    from cfrkit.solvers import compile_game

    tree = compile_game("kuhn")
    slots = np.full(tree.num_slots, 0.5)
    slots[3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        exploitability(tree, slots)


@pytest.mark.parametrize("payoffs", ["1;nan;-1;1", "1;inf;-1;1", "1;-inf;-1;1"])
def test_non_finite_matrix_payoffs_are_refused(payoffs):
    with pytest.raises(GameError, match="finite"):
        load(f"matrix(row_payoffs={payoffs})")


def test_regret_overflow_raises_instead_of_saving_nan(tmp_path):
    solver = CFRSolver("matrix(row_payoffs=1e308;-1e308;-1e308;5e307)", algorithm="cfr+")
    with pytest.raises(NonFiniteError, match="overflowed"):
        solver.run(10)
    with pytest.raises(NonFiniteError):
        solver.save(str(tmp_path / "x.npz"))
    assert not (tmp_path / "x.npz").exists()


@pytest.mark.parametrize("cls", [ExternalSamplingMCCFR, OutcomeSamplingMCCFR])
def test_mccfr_regret_overflow_raises(cls, tmp_path):
    solver = cls("matrix(row_payoffs=1e308;-1e308;-1e308;5e307)", seed=0)
    with pytest.raises(NonFiniteError, match="overflowed"):
        solver.run(200, progress=False)
    with pytest.raises(NonFiniteError):
        solver.save(str(tmp_path / "x.npz"))


def test_policy_of_another_game_is_refused_with_its_coverage():
    """Issue 17 item 6: a policy matching 0 of Leduc's 936 information states was scored as uniform."""
    kuhn_policy = CFRSolver("kuhn").run(10).average_policy()
    foreign = TabularPolicy("leduc", kuhn_policy.table)
    with pytest.raises(GameError, match=r"covers 0 of the 936 information sets"):
        exploitability("leduc", foreign)
    # min_coverage=0 evaluates it anyway (as uniform play), with a warning giving the coverage
    with pytest.warns(PolicyCoverageWarning, match="0 of the 936"):
        value = exploitability("leduc", foreign, min_coverage=0)
    uniform = exploitability("leduc", TabularPolicy("leduc"), min_coverage=0)
    assert value == uniform


def test_partial_policy_warns_with_coverage():
    full = CFRSolver("leduc").run(5).average_policy()
    keys = sorted(full.keys())
    partial = TabularPolicy("leduc", {k: full[k] for k in keys[: len(keys) // 2]})
    with pytest.warns(PolicyCoverageWarning, match=f"covers {len(keys) // 2} of the 936"):
        exploitability("leduc", partial)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        exploitability("leduc", full)  # full coverage: silent


@pytest.mark.parametrize("game", ["turn_based(game=matrix(row_payoffs=3;0;5;1,col_payoffs=3;5;0;1))",
                                  "turn_based(game=matrix(row_payoffs=1;0;0;1,col_payoffs=1;0;0;1))"])
def test_exploitability_of_non_constant_sum_games_is_refused(game):
    """Issue 17 item 10: general-sum (prisoner's dilemma) and identical-interest games returned NashConv/n."""
    policy = UniformRandomPolicy()
    for evaluate in (exploitability, protocol_br.exploitability):
        with pytest.raises(GameError, match="not constant-sum"):
            evaluate(game, policy)
    # NashConv stays available and both evaluators agree on it
    assert nash_conv(game, policy) == pytest.approx(protocol_br.nash_conv(game, policy), abs=1e-12)
    assert math.isfinite(nash_conv(game, policy)) and nash_conv(game, policy) >= 0


def test_constant_sum_non_zero_sum_game_keeps_exploitability():
    game = "turn_based(game=matrix(row_payoffs=2;0;0;2,col_payoffs=0;2;2;0))"
    assert exploitability(game, UniformRandomPolicy()) == pytest.approx(0.0, abs=1e-12)
