"""Solver histories: evaluation records, early stopping at a target, persistence, plots."""
import os

import pytest

from cfrkit.evaluation import exploitability
from cfrkit.solvers import CFRSolver, ExternalSamplingMCCFR
from cfrkit.solvers.progress import SolverHistory


def test_cfr_history_and_early_stop_at_target(tmp_path):
    solver = CFRSolver("kuhn", algorithm="cfr+")
    solver.run(5000, eval_every=25, target=2e-3, progress=False)
    evaluated = solver.history.evaluated()
    assert solver.iterations < 5000 and solver.iterations % 25 == 0   # stopped early, at an evaluation
    assert evaluated[-1].exploitability <= 2e-3 < evaluated[-2].exploitability
    # each record is the true exploitability of the average strategy at that point
    assert evaluated[-1].exploitability == pytest.approx(exploitability("kuhn", solver.average_policy()), abs=1e-12)
    assert [r.iteration for r in evaluated] == list(range(25, solver.iterations + 1, 25))
    assert all(b.seconds >= a.seconds for a, b in zip(evaluated, evaluated[1:]))
    path = str(tmp_path / "k.npz")
    solver.save(path)
    resumed = CFRSolver.load(path)
    assert resumed.history == solver.history
    resumed.run(solver.iterations + 50, eval_every=25, progress=False)
    assert resumed.history[: len(solver.history)] == solver.history
    assert resumed.history[-1].iteration == solver.iterations + 50
    resumed.history.plot(str(tmp_path / "h.png"), title="kuhn")
    assert os.path.getsize(tmp_path / "h.png") > 1000


def test_mccfr_history_persists(tmp_path):
    solver = ExternalSamplingMCCFR("kuhn", seed=3)
    solver.run(2000, eval_every=500, progress=False)
    values = [r.exploitability for r in solver.history.evaluated()]
    assert len(values) == 4 and values[-1] < values[0]
    path = str(tmp_path / "m.npz")
    solver.save(path)
    assert ExternalSamplingMCCFR.load(path).history == solver.history


def test_history_without_evaluation_and_bad_arguments():
    solver = CFRSolver("kuhn")
    solver.run(10, progress=False)
    assert solver.history == [solver.history[0]] and solver.history[0].exploitability is None
    with pytest.raises(ValueError):
        solver.run(20, target=0.1)          # a target needs evaluations
    with pytest.raises(ValueError):
        solver.history.plot()                # nothing evaluated
    assert SolverHistory.from_json(solver.history.to_json()) == solver.history
