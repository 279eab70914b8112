"""Parallel efficiency on a busy machine: CPU seconds per iteration of 1 and 2 threads, for one to three kernel builds.

    python benchmarks/range_threads_cpu.py DIR_A [DIR_B [DIR_C]] [--spot turn] [--rounds 8] [--step 3] [--threads 1,2]

Wall time says little on a shared machine (another process takes a core whenever it likes); the CPU time of the
whole process (``process_time``: both threads' together) does: with passive waiting a thread that waits burns no CPU,
so ``CPU(2 threads) / CPU(1 thread)`` per iteration is the extra work that splitting costs (cache misses of the
second thread, prefetches guessed wrong, the serial part above the river).  Each (build, thread count) pair gets its
own :class:`BoardRangeSolver` (16-bit storage, DCFR); the pairs take turns (see ``ab_common.alternating_cpu``) for
``--step`` iterations each.  Prints CPU ms per iteration per pair (medians), the ratio of each build's 2-thread to
1-thread figure, and whether all solvers' regrets and strategy sums are bitwise equal at the end.  On Linux also each
thread's own CPU time (``/proc/self/task/*/schedstat``): the calling thread's (it alone walks the part above the
river subtrees) and the busiest other thread's, medians per iteration; ``CPU(1 thread) / max(the two)`` is what an
idle machine's wall speed-up would be if the threads' shares stayed as measured (a busy machine moves subtrees to
the thread that runs, so this estimate is low there).  ``DIR_*``: as in
``range_solver_ab.py`` (a directory with one ``range_cfr_board32*.so``).
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from ab_common import alternating_cpu
from range_solver_ab import SPOTS, _Build


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="+", help="one to three kernel directories (A, B, C)")
    ap.add_argument("--spot", default="turn", choices=sorted(SPOTS))
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--step", type=int, default=3)
    ap.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    ap.add_argument("--no-compression", action="store_true")
    args = ap.parse_args()
    threads = [int(x) for x in args.threads.split(",")]
    if len(args.dirs) > 3 or args.rounds < 1 or args.step < 1 or min(threads) < 1:
        raise SystemExit("need one to three directories, --rounds and --step >= 1, thread counts >= 1")
    import cfrkit.solvers.public.board_range_cfr as brc
    from cfrkit.solvers.public.postflop_game import PostflopPublicGame
    from cfrkit.solvers.public.tree import build_public_tree

    builds = {"ABC"[i]: _Build(d) for i, d in enumerate(args.dirs)}
    print(f"load average at start: {os.getloadavg()}", flush=True)
    tree = build_public_tree(PostflopPublicGame(**SPOTS[args.spot]))
    keys = [(b, n) for b in builds for n in threads]
    solvers = {k: brc.BoardRangeSolver(tree, algorithm="dcfr", threads=k[1], compression=not args.no_compression)
               for k in keys}

    per_thread = {f"{b}{n}": ([], []) for b, n in keys}

    def thread_ns():
        out = {}
        try:
            for tid in os.listdir("/proc/self/task"):
                with open(f"/proc/self/task/{tid}/schedstat") as f:
                    out[int(tid)] = int(f.read().split()[0])
        except OSError:
            pass
        return out

    def run_with(k):
        def run(step):
            brc.kernel_module = lambda dtype=None, build=builds[k[0]]: build
            t0 = thread_ns()
            solvers[k].run(step)
            t1 = thread_ns()
            d = {tid: (v - t0.get(tid, 0)) / 1e9 / step for tid, v in t1.items()}
            if d:
                main_t = d.pop(os.getpid(), 0.0)
                per_thread[f"{k[0]}{k[1]}"][0].append(main_t)
                per_thread[f"{k[0]}{k[1]}"][1].append(max(d.values(), default=0.0))
        return run

    names = {f"{b}{n}": k for k in keys for b, n in [k]}
    cpu = alternating_cpu({name: run_with(k) for name, k in names.items()}, args.rounds, args.step,
                          on_round=lambda r, c: print(f"round {r}: " + ", ".join(
                              f"{n} {v[-1] * 1e3:.2f}" for n, v in c.items()) + " CPU ms per iteration", flush=True))
    med = {n: float(np.median(v)) for n, v in cpu.items()}
    first = solvers[keys[0]]
    same = all(np.array_equal(getattr(first, a), getattr(s, a)) for s in solvers.values()
               for a in ("regrets", "strategy_sum"))
    print(f"{args.spot}: medians " + ", ".join(f"{n} {v * 1e3:.2f}" for n, v in med.items()) + " CPU ms per iteration")
    for b in builds:
        for n in threads[1:]:
            print(f"build {b} ({args.dirs['ABC'.index(b)]}): CPU({n} threads) / CPU({threads[0]}) = "
                  f"{med[f'{b}{n}'] / med[f'{b}{threads[0]}']:.3f}")
    for name, (m, o) in per_thread.items():
        if m:
            mm, oo = float(np.median(m)), float(np.median(o))
            base = float(np.median(per_thread[f"{name[0]}{threads[0]}"][0]))  # the 1-thread run's own thread
            print(f"{name}: calling thread {mm * 1e3:.2f}, busiest other {oo * 1e3:.2f} CPU ms per iteration; "
                  f"CPU({threads[0]}) / max = {base / max(mm, oo, 1e-12):.3f}")
    print(f"iterates bitwise equal across all solvers: {same}; load average at end: {os.getloadavg()}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
