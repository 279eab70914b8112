"""Two builds of the board kernel (``range_cfr_board32``) back to back in one process: CPU seconds per iteration.

    python benchmarks/range_solver_ab.py DIR_A DIR_B [--spot flop|turn|fturn|river] [--rounds 3] [--step 1] [--threads 1]

``DIR_A`` / ``DIR_B``: directories holding a ``range_cfr_board32*.so`` each (e.g. a copy of main's
``cfrkit/_kernels`` and this checkout's).  One public tree and layout, one :class:`BoardRangeSolver` per build (16-bit
storage unless ``--no-compression``, DCFR); the builds take turns (A B, then B A, ...) for ``--step`` iterations
each, so both see the same machine load; prints the CPU seconds (``process_time``) per iteration of each turn, the
medians, their ratio and whether the two solvers' regrets and strategy sums are bitwise equal at the end (builds
that change only the speed must give the same iterates).  A build from before the showdown batches takes the first
17 entries of the layout tuple.  Spots: ``flop`` (Qs Jh 2h of benchmarks/range_solver.py: ~2.7 GB per solver),
``turn`` (8d As 8s Kh), ``fturn`` (Qs Jh 2h 3c with the flop spot's bets, pot 200, stack 900, "50%, a"), ``river`` (As Jd 8h 5c 2d of
benchmarks/range_solver.py).
"""
from __future__ import annotations

import argparse
import glob
import importlib.util
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from ab_common import alternating_cpu

SPOTS = {
    "river": {"board": "AsJd8h5c2d", "starting_pot": 1000, "effective_stack": 2000, "bet_sizes": "50%, 100%, a"},
    "flop": {"board": "QsJh2h", "starting_pot": 200, "effective_stack": 900, "bet_sizes": "50%, a"},
    "turn": {"board": "8dAs8sKh", "starting_pot": 4000, "effective_stack": 18000,
              "bet_sizes": {"turn": "50%, 100%, a", "river": "100%, a"}},
    "fturn": {"board": "QsJh2h3c", "starting_pot": 200, "effective_stack": 900, "bet_sizes": "50%, a"},
}


class _Build:
    """One kernel build loaded from its own file; ``solve`` drops layout entries an older build does not take."""

    def __init__(self, directory: str):
        paths = glob.glob(os.path.join(directory, "range_cfr_board32*.so"))
        if len(paths) != 1:
            raise SystemExit(f"{directory}: need exactly one range_cfr_board32*.so, found {len(paths)}")
        spec = importlib.util.spec_from_file_location("cfrkit._kernels.range_cfr_board32", paths[0])
        self.module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(self.module)
        self.entries = None

    def solve(self, layout, *args):
        if self.entries is None:
            try:
                return self.module.solve(layout, *args)
            except ValueError as e:
                if "unpack" not in str(e):
                    raise
                self.entries = 17
        return self.module.solve(layout[:self.entries], *args)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--spot", default="fturn", choices=sorted(SPOTS))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--step", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--no-compression", action="store_true")
    args = ap.parse_args()
    if args.rounds < 1 or args.step < 1 or args.threads < 1:
        raise SystemExit("--rounds, --step and --threads must be at least 1")
    import cfrkit.solvers.public.board_range_cfr as brc
    from cfrkit.solvers.public.postflop_game import PostflopPublicGame
    from cfrkit.solvers.public.tree import build_public_tree

    builds = {"A": _Build(args.a), "B": _Build(args.b)}
    print(f"load average at start: {os.getloadavg()}", flush=True)
    tree = build_public_tree(PostflopPublicGame(**SPOTS[args.spot]))
    solvers = {k: brc.BoardRangeSolver(tree, algorithm="dcfr", threads=args.threads,
                                       compression=not args.no_compression) for k in builds}

    def run_with(k):
        def run(step):
            # run() looks the kernel up per call through the module global kernel_module (patching the old alias
            # _kernel had no effect: both solvers ran this checkout's build)
            brc.kernel_module = lambda dtype=None, build=builds[k]: build
            solvers[k].run(step)
        return run

    def report(r, cpu):
        print(f"round {r}: A {cpu['A'][-1] * 1e3:.4f}, B {cpu['B'][-1] * 1e3:.4f} CPU ms per iteration", flush=True)

    cpu = alternating_cpu({k: run_with(k) for k in "AB"}, args.rounds, args.step, on_round=report)
    same = all(np.array_equal(getattr(solvers["A"], a), getattr(solvers["B"], a)) for a in ("regrets", "strategy_sum"))
    ma, mb = np.median(cpu["A"]), np.median(cpu["B"])
    print(f"{args.spot}: A median {ma * 1e3:.4f}, B median {mb * 1e3:.4f} CPU ms per iteration (after the first round: A "
          f"{np.median(cpu['A'][1:] or cpu['A']) * 1e3:.4f}, B {np.median(cpu['B'][1:] or cpu['B']) * 1e3:.4f}); A / B = {ma / mb:.3f}; "
          f"iterates bitwise equal: {same}; load average at end: {os.getloadavg()}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
