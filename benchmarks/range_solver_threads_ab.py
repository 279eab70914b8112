"""1 thread, all threads and the adaptive default side by side in one process, interleaved (issue 30).

    python benchmarks/range_solver_threads_ab.py [--spot turn] [--rounds 30] [--step 10] [--load 2]
                                                 [--load-session other|same] [--storage float32]

A shared machine's load drifts over minutes, so runs of different thread counts one after the other compare
different machines (the turn's 300 iterations took 31.8-69.7 s on 1 thread in one sitting).  Here three
:class:`~cfrkit.solvers.public.board_range_cfr.BoardRangeSolver` on the same tree, ``threads=1``,
``threads=N`` (the cores the process may use) and ``threads=None`` (adaptive: chosen while it runs,
:class:`~cfrkit.solvers.public.thread_chooser.ThreadChooser`), take turns: ``--step`` iterations each per round,
the order rotating every round, ``--rounds`` rounds, so each sees the same load.  Printed: per solver the wall and
CPU seconds (``process_time`` of the process during its turns: all its threads) summed over the rounds, the
median of the per-round wall ratios to the faster fixed count, the adaptive solver's iterations per thread
count, and whether the three solvers' regrets and strategy sums are bitwise equal at the end (they must be).
``--load N`` starts N busy processes (pure-Python loops) for the whole comparison: ``--load-session other``
each in a session of its own (``setsid``: their own scheduler autogroup, as other users' work), ``same`` in
the benchmark's session (the solver's autogroup).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spot", default="turn", choices=("river", "turn"))
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--step", type=int, default=10, help="iterations per solver per round")
    ap.add_argument("--load", type=int, default=0, help="busy processes during the comparison")
    ap.add_argument("--load-session", default="other", choices=("same", "other"))
    ap.add_argument("--storage", default="float32", choices=("float32", "float64", "16bit"))
    args = ap.parse_args()
    if args.rounds < 1 or args.step < 1 or args.load < 0:
        raise SystemExit("--rounds and --step must be at least 1, --load at least 0")
    from range_solver import SPOTS, start_load, stop_load

    from cfrkit._kernels import default_threads
    from cfrkit.solvers.public import build_public_tree
    from cfrkit.solvers.public.board_range_cfr import BoardRangeSolver
    from cfrkit.solvers.public.postflop_game import PostflopPublicGame

    n = default_threads()
    tree = build_public_tree(PostflopPublicGame(**SPOTS[args.spot]))
    kw = dict(dtype="float32" if args.storage == "16bit" else args.storage, compression=args.storage == "16bit")
    solvers = {"1 thread": BoardRangeSolver(tree, threads=1, **kw), f"{n} threads": BoardRangeSolver(tree, threads=n, **kw),
               "adaptive": BoardRangeSolver(tree, **kw)}
    names = list(solvers)
    wall = {k: [] for k in names}
    cpu = {k: 0.0 for k in names}
    print(f"{args.spot}, {args.storage}, {args.rounds} rounds of {args.step} iterations per solver, {args.load} busy "
          f"process(es){' in other sessions' if args.load and args.load_session == 'other' else ''}; load average "
          f"at start {os.getloadavg()}", flush=True)
    busy = start_load(args.load, args.load_session == "other")
    try:
        for r in range(args.rounds):
            order = names[r % 3:] + names[:r % 3]
            for k in order:
                t0, c0 = time.perf_counter(), time.process_time()
                solvers[k].run(args.step)
                wall[k].append(time.perf_counter() - t0)
                cpu[k] += time.process_time() - c0
            print(f"round {r}: " + ", ".join(f"{k} {wall[k][-1]:.2f} s" for k in names), flush=True)
    finally:
        stop_load(busy)
    load_end = os.getloadavg()
    same = all(np.array_equal(solvers[names[0]].regrets, s.regrets) and
               np.array_equal(solvers[names[0]].strategy_sum, s.strategy_sum) for s in solvers.values())
    fixed = np.minimum(np.array(wall[names[0]]), np.array(wall[names[1]]))
    best_total = min(sum(wall[names[0]]), sum(wall[names[1]]))
    print(f"\n| solver | wall s | CPU s | wall / faster fixed count's (total) | median per-round ratio to the faster "
          f"fixed count of that round |\n|---|---|---|---|---|")
    for k in names:
        print(f"| {k} | {sum(wall[k]):.2f} | {cpu[k]:.2f} | {sum(wall[k]) / best_total:.3f} | "
              f"{np.median(np.array(wall[k]) / fixed):.3f} |")
    st = solvers["adaptive"].thread_stats
    print(f"\nadaptive: iterations per thread count {st['iterations']}, {st['probes']} probes, {st['switches']} "
          f"switches; probes (ms per iteration at 1 / {n} threads -> chosen): "
          + ", ".join(f"{1e3 * lo:.0f} / {1e3 * hi:.0f} -> {c}" for lo, hi, c in st.get("history", [])))
    print(f"iterates bitwise equal across the three: {same}; load average at end {load_end}", flush=True)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
