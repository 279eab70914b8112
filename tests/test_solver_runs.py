"""Library functions behind ``cfrkit solve``: start or resume a solver run (``open_solver_run``), the refusal of
changed settings (``cfrkit._resume``) and the choice of the convergence measure (``convergence_measure``)."""
import pytest

from cfrkit._resume import ResumeSettingsError, changed_settings, check_resume_settings
from cfrkit.evaluation import exploitability, nash_conv
from cfrkit.evaluation.convergence import convergence_measure
from cfrkit.solvers import compile_game
from cfrkit.solvers.tabular.runs import (COMPILED_ALGORITHMS, DCFR_DEFAULTS, SAMPLING_ALGORITHMS, SolverRun,
                                         open_solver_run)


def test_changed_settings():
    assert changed_settings({"alpha": 2, "beta": None, "seed": 1}, {"alpha": 2.0, "beta": 0.5}) == {}
    assert changed_settings({"alpha": 3.0, "x": 1}, {"alpha": 2.0}) == {"alpha": (3.0, 2.0)}
    assert changed_settings({"flag": True}, {"flag": False}) == {"flag": (True, False)}
    assert check_resume_settings("f", {"alpha": None}, {"alpha": 2.0}) == {"alpha": 2.0}
    with pytest.raises(ResumeSettingsError, match=r"f was made with other settings: alpha 3 \(checkpoint: 2.0\)") as e:
        check_resume_settings("f", {"alpha": 3}, {"alpha": 2.0})
    assert e.value.changed == {"alpha": (3, 2.0)} and "\n" not in str(e.value)


def test_new_and_resumed_compiled_run(tmp_path):
    tree = compile_game("kuhn")
    path = str(tmp_path / "r.npz")
    run = open_solver_run(tree, "dcfr", path, gamma=1.0)
    assert isinstance(run, SolverRun) and not run.resumed and run.kept == {}
    assert (run.solver.alpha, run.solver.beta, run.solver.gamma) == (DCFR_DEFAULTS["alpha"], DCFR_DEFAULTS["beta"], 1.0)
    run.solver.run(30, progress=False)
    run.solver.save(path)
    again = open_solver_run(tree, "dcfr", path)
    assert again.resumed and again.solver.iterations == 30 and again.solver.gamma == 1.0
    assert again.kept == {"simultaneous": False, "alpha": 1.5, "beta": 0.0, "gamma": 1.0}
    assert open_solver_run(tree, "dcfr", path, gamma=1).resumed          # the same value, another type
    with pytest.raises(ResumeSettingsError) as e:
        open_solver_run(tree, "dcfr", path, gamma=2.0, simultaneous=True)
    assert e.value.changed == {"gamma": (2.0, 1.0), "simultaneous": (True, False)}
    with pytest.raises(ValueError, match="holds a dcfr run"):
        open_solver_run(tree, "cfr+", path)


def test_sampling_run_and_misplaced_options(tmp_path):
    path = str(tmp_path / "m.npz")
    run = open_solver_run("kuhn", "es-mccfr", path, seed=3)
    assert not run.resumed and run.solver.seed == 3
    run.solver.run(20, progress=False)
    run.solver.save(path)
    assert open_solver_run("kuhn", "es-mccfr", path).solver.seed == 3
    with pytest.raises(ResumeSettingsError, match="seed 4"):
        open_solver_run("kuhn", "es-mccfr", path, seed=4)
    with pytest.raises(ValueError, match="another file"):
        open_solver_run("kuhn", "os-mccfr", path)
    tree = compile_game("kuhn")
    for kwargs, match in (({"seed": 1}, "sampling solvers"), ({"alpha": 2.0}, "dcfr only")):
        with pytest.raises(ValueError, match=match):
            open_solver_run(tree, "cfr+", None, **kwargs)
    with pytest.raises(ValueError, match="compiled CFR family"):
        open_solver_run("kuhn", "os-mccfr", None, simultaneous=True)
    with pytest.raises(ValueError, match="unknown algorithm"):
        open_solver_run(tree, "cfr++")


def test_cli_lists_match_library():
    from cfrkit.cli import solve_cmd

    assert solve_cmd.COMPILED == COMPILED_ALGORITHMS and solve_cmd.SAMPLING == SAMPLING_ALGORITHMS


def test_convergence_measure():
    assert convergence_measure(compile_game("kuhn")) == (exploitability, "exploitability")
    general = compile_game("matrix(row_payoffs=3;0;5;1,col_payoffs=3;5;0;1)")
    assert convergence_measure(general) == (nash_conv, "nash_conv")
