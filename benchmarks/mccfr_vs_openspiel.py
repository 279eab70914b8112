"""MCCFR and protocol best response: cfrkit against OpenSpiel in the same run.

Prints, for Leduc poker:

1. External- and outcome-sampling MCCFR, N iterations each: cfrkit (pure Python on the game
   protocol) against OpenSpiel's C++ solvers (``pyspiel.ExternalSamplingMCCFRSolver`` with simple
   averaging, ``pyspiel.OutcomeSamplingMCCFRSolver``) and OpenSpiel's Python solvers (fewer
   iterations: they are slow), with CPU seconds, exploitability (chips) and the time ratios.
2. Iterations and CPU seconds cfrkit's ES-MCCFR needs to bring Leduc below 0.05 chips (several seeds),
   and the same for OpenSpiel's C++ ES-MCCFR.
3. Exact NashConv of a Leduc policy on the protocol: cfrkit (tree cached / first call) against
   OpenSpiel's Python ``exploitability.nash_conv`` and C++ ``pyspiel.nash_conv``.

Usage: ``python benchmarks/mccfr_vs_openspiel.py [--iterations 100000] [--seeds 3]``.
The machine is shared, so timings are noisy; CPU time (``time.process_time``) is reported.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import pyspiel  # noqa: E402
from open_spiel.python import policy as os_policy  # noqa: E402
from open_spiel.python.algorithms import exploitability as os_exploitability  # noqa: E402
from open_spiel.python.algorithms import external_sampling_mccfr as os_es  # noqa: E402
from open_spiel.python.algorithms import outcome_sampling_mccfr as os_os  # noqa: E402

from cfrkit.evaluation import protocol_br  # noqa: E402
from cfrkit.interop.openspiel import from_openspiel_policy  # noqa: E402
from cfrkit.solvers.tabular.mccfr import ExternalSamplingMCCFR, OutcomeSamplingMCCFR  # noqa: E402


def cpu(fn):
    start = time.process_time()
    out = fn()
    return out, time.process_time() - start


def compare_solvers(iterations: int, python_iterations: int) -> None:
    os_game = pyspiel.load_game("leduc_poker")
    print(f"== Leduc MCCFR, {iterations} iterations (one update per player per iteration)")
    rows = []
    for label, ours_cls, cpp_factory, py_factory in [
        ("ES", ExternalSamplingMCCFR,
         lambda: pyspiel.ExternalSamplingMCCFRSolver(os_game, seed=0, avg_type=pyspiel.MCCFRAverageType.SIMPLE),
         lambda: os_es.ExternalSamplingSolver(os_game, os_es.AverageType.SIMPLE)),
        ("OS", OutcomeSamplingMCCFR,
         lambda: pyspiel.OutcomeSamplingMCCFRSolver(os_game, seed=0),
         lambda: os_os.OutcomeSamplingSolver(os_game)),
    ]:
        ours = ours_cls("leduc", seed=0)
        _, t_ours = cpu(lambda: ours.run(iterations, progress=False))
        e_ours = protocol_br.exploitability("leduc", ours.average_policy())
        cpp = cpp_factory()

        def run_cpp():
            for _ in range(iterations):
                cpp.run_iteration()

        _, t_cpp = cpu(run_cpp)
        e_cpp = pyspiel.exploitability(os_game, cpp.average_policy())
        py = py_factory()

        def run_py():
            for _ in range(python_iterations):
                py.iteration()

        _, t_py = cpu(run_py)
        e_py = os_exploitability.exploitability(os_game, py.average_policy())
        t_py_scaled = t_py * iterations / python_iterations
        rows.append((label, t_ours, e_ours, t_cpp, e_cpp, t_py_scaled, e_py))
        print(f"{label}-MCCFR cfrkit (Python)      : {t_ours:7.2f} s  exploitability {e_ours:.4f}  "
              f"({t_ours / iterations * 1e6:.1f} us/iteration)")
        print(f"{label}-MCCFR OpenSpiel C++        : {t_cpp:7.2f} s  exploitability {e_cpp:.4f}  "
              f"({t_cpp / iterations * 1e6:.1f} us/iteration)")
        print(f"{label}-MCCFR OpenSpiel Python     : {t_py:7.2f} s for {python_iterations} iterations "
              f"(exploitability {e_py:.4f}); scaled to {iterations}: {t_py_scaled:.2f} s")
        print(f"{label}-MCCFR time ratio: OpenSpiel C++ / cfrkit = {t_cpp / t_ours:.2f}x, "
              f"OpenSpiel Python / cfrkit = {t_py_scaled / t_ours:.1f}x")


def time_to_threshold(seeds: int, threshold: float = 0.05, step: int = 10_000, limit: int = 1_000_000) -> None:
    print(f"== Leduc ES-MCCFR: iterations and CPU seconds until exploitability < {threshold} "
          f"(checked every {step} iterations; evaluation time excluded)")
    os_game = pyspiel.load_game("leduc_poker")
    for seed in range(seeds):
        solver = ExternalSamplingMCCFR("leduc", seed=seed)
        reached = None
        while solver.iterations < limit:
            start = time.process_time()
            solver.iterate(step)
            solver.cpu = getattr(solver, "cpu", 0.0) + time.process_time() - start
            if protocol_br.exploitability("leduc", solver.average_policy()) < threshold:
                reached = (solver.iterations, solver.cpu)
                break
        cpp = pyspiel.ExternalSamplingMCCFRSolver(os_game, seed=seed, avg_type=pyspiel.MCCFRAverageType.SIMPLE)
        cpp_reached, cpp_cpu, done = None, 0.0, 0
        while done < limit:
            start = time.process_time()
            for _ in range(step):
                cpp.run_iteration()
            cpp_cpu += time.process_time() - start
            done += step
            if pyspiel.exploitability(os_game, cpp.average_policy()) < threshold:
                cpp_reached = (done, cpp_cpu)
                break
        fmt = lambda r: "not reached" if r is None else f"{r[0]:>7} iterations, {r[1]:6.2f} s"  # noqa: E731
        print(f"seed {seed}: cfrkit {fmt(reached)}   OpenSpiel C++ {fmt(cpp_reached)}")


def compare_nash_conv() -> None:
    print("== Exact NashConv of a Leduc policy (CFR-trained by pyspiel.CFRSolver, 30 iterations)")
    os_game = pyspiel.load_game("leduc_poker")
    solver = pyspiel.CFRSolver(os_game)
    for _ in range(30):
        solver.evaluate_and_update_policy()
    cpp_policy = solver.tabular_average_policy()
    py_policy = os_policy.pyspiel_policy_to_python_policy(os_game, cpp_policy)
    ours = from_openspiel_policy(cpp_policy, os_game, "leduc")
    protocol_br._TREE_CACHE.clear()
    first, t_first = cpu(lambda: protocol_br.nash_conv("leduc", ours))
    reps = 10
    _, t_cached = cpu(lambda: [protocol_br.nash_conv("leduc", ours) for _ in range(reps)])
    t_cached /= reps
    theirs_py, t_py = cpu(lambda: os_exploitability.nash_conv(os_game, py_policy))
    _, t_cpp = cpu(lambda: [pyspiel.nash_conv(os_game, cpp_policy) for _ in range(reps)])
    t_cpp /= reps
    theirs_cpp = pyspiel.nash_conv(os_game, cpp_policy)
    print(f"cfrkit protocol: {first:.12f}  first call (builds the tree) {t_first * 1e3:.1f} ms, "
          f"tree cached {t_cached * 1e3:.1f} ms")
    print(f"OpenSpiel Python: {theirs_py:.12f}  {t_py * 1e3:.1f} ms   ratio {t_py / t_cached:.1f}x")
    print(f"OpenSpiel C++   : {theirs_cpp:.12f}  {t_cpp * 1e3:.1f} ms   ratio {t_cpp / t_cached:.2f}x")
    print(f"|difference| cfrkit vs OpenSpiel Python: {abs(first - theirs_py):.2e}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=100_000)
    parser.add_argument("--python-iterations", type=int, default=10_000,
                        help="iterations of OpenSpiel's slow Python solvers (timings scaled)")
    parser.add_argument("--seeds", type=int, default=3, help="seeds for the time-to-0.05 measurement")
    args = parser.parse_args()
    compare_solvers(args.iterations, args.python_iterations)
    time_to_threshold(args.seeds)
    compare_nash_conv()


if __name__ == "__main__":
    main()
