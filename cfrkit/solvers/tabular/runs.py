"""A solver run on disk: start one or resume it from its checkpoint, refusing changed settings.

``cfrkit solve GAME -a ALGORITHM -o FILE`` and scripts use :func:`open_solver_run`: with ``path`` present the
run continues from it (its algorithm, DCFR parameters, update order and seed are the stored ones; settings
given that differ are refused with :class:`~cfrkit._resume.ResumeSettingsError`), otherwise a new solver
starts with the given settings (DCFR: alpha 1.5, beta 0, gamma 2 unless given; sampling solvers: seed 0).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Dict, Optional

from cfrkit._resume import check_resume_settings
from cfrkit.solvers.tabular import mccfr
from cfrkit.solvers.tabular.cfr import CFRSolver

COMPILED_ALGORITHMS = ("cfr", "cfr+", "lcfr", "dcfr")
SAMPLING_ALGORITHMS = ("es-mccfr", "os-mccfr")
DCFR_DEFAULTS = {"alpha": 1.5, "beta": 0.0, "gamma": 2.0}


@dataclass
class SolverRun:
    """``solver`` (a :class:`CFRSolver` or an MCCFR solver), ``resumed`` (loaded from ``path``) and ``kept``
    (a resumed run's stored settings, which it uses; empty for a new run)."""

    solver: Any
    resumed: bool
    kept: Dict[str, Any] = field(default_factory=dict)


def open_solver_run(game, algorithm: str, path: Optional[str] = None, *, alpha: Optional[float] = None,
                    beta: Optional[float] = None, gamma: Optional[float] = None, seed: Optional[int] = None,
                    simultaneous: bool = False) -> SolverRun:
    """Resume the run at ``path`` when the file exists, else start ``algorithm`` on ``game``.

    ``game``: a game (string or object) or, for the compiled algorithms (``cfr``, ``cfr+``, ``lcfr``, ``dcfr``),
    its compiled tree; the sampling algorithms (``es-mccfr``, ``os-mccfr``) run on the protocol game.
    ``alpha``/``beta``/``gamma``: DCFR's discounting (dcfr only); ``simultaneous``: simultaneous instead of
    alternating updates (compiled family); ``seed``: the sampling solvers' seed.  ``None`` means not given:
    a new run takes the default, a resumed one its stored value.  One-line ``ValueError`` for an option that
    does not apply to ``algorithm``, a checkpoint of another algorithm, or (:class:`ResumeSettingsError`) a
    given setting that differs from the checkpoint's.
    """
    if algorithm not in COMPILED_ALGORITHMS + SAMPLING_ALGORITHMS:
        raise ValueError(f"unknown algorithm {algorithm!r}; choose from "
                         f"{', '.join(COMPILED_ALGORITHMS + SAMPLING_ALGORITHMS)}")
    dcfr_given = {"alpha": alpha, "beta": beta, "gamma": gamma}
    resume = path is not None and os.path.exists(path)
    if algorithm in COMPILED_ALGORITHMS:
        if resume:
            solver = CFRSolver.load(path, game)
            if solver.algorithm != algorithm:
                raise ValueError(f"{path} holds a {solver.algorithm} run; use algorithm {solver.algorithm} to resume "
                                 f"it or another file")
            stored: Dict[str, Any] = {"simultaneous": not solver.alternating}
            if solver.algorithm == "dcfr":
                stored.update(alpha=solver.alpha, beta=solver.beta, gamma=solver.gamma)
            given = {**dcfr_given, "seed": seed, "simultaneous": True if simultaneous else None}
            return SolverRun(solver, True, check_resume_settings(path, given, stored))
        if seed is not None:
            raise ValueError("seed applies to the sampling solvers (es-mccfr, os-mccfr) only")
        if algorithm != "dcfr" and any(v is not None for v in dcfr_given.values()):
            raise ValueError(f"alpha/beta/gamma apply to dcfr only, not {algorithm}")
        dcfr = {k: DCFR_DEFAULTS[k] if v is None else v for k, v in dcfr_given.items()}
        return SolverRun(CFRSolver(game, algorithm=algorithm, alternating=not simultaneous, **dcfr), False)
    if simultaneous or any(v is not None for v in dcfr_given.values()):
        raise ValueError(f"alpha/beta/gamma/simultaneous apply to the compiled CFR family, not to {algorithm}")
    cls = mccfr.ExternalSamplingMCCFR if algorithm == "es-mccfr" else mccfr.OutcomeSamplingMCCFR
    if resume:
        solver = mccfr.load_mccfr(path, game)
        if solver.algorithm != cls.algorithm:
            raise ValueError(f"{path} holds a {solver.algorithm} run; use another file to start a new one")
        return SolverRun(solver, True, check_resume_settings(path, {"seed": seed}, {"seed": solver.seed}))
    return SolverRun(cls(game, seed=0 if seed is None else seed), False)
