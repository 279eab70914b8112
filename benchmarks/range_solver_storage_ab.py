"""float32 against 16-bit storage of the board solver, back to back in one process: CPU seconds per iteration.

    python benchmarks/range_solver_storage_ab.py [--spots river,turn,turn-3,turn-17,turn-24,turn-37] [--rounds 12]
                                                 [--step 5]

Per spot one public tree and two :class:`BoardRangeSolver` (DCFR, 1 thread): ``dtype="float32"`` and
``compression=True`` (16-bit, stochastic rounding).  They take turns (float32 then 16-bit, then the other way
round, ...) for ``--step`` iterations each, so both see the same machine load; prints the size of the float32
tables, the median CPU seconds (``process_time``) per iteration of each after the first round, and their ratio.
This is the measurement behind ``STORAGE_16BIT_BYTES`` (issue 30 part 11): 16-bit costs about float32's time once
the tables outgrow the cache, and more while they sit in it.

Spots: ``river`` and ``turn`` as in benchmarks/range_solver.py (0.4 MB and 81 MB of float32 tables); the turn
8d As 8s Kh with smaller bet trees: ``turn-3`` (turn "a", river "a": 3.4 MB), ``turn-17`` (turn "100%", river "a":
17 MB), ``turn-24`` (turn "50%, a", river "a": 24 MB), ``turn-37`` (turn "100%, a", river "100%, a": 37 MB).
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from ab_common import alternating_cpu

_TURN = {"board": "8dAs8sKh", "starting_pot": 4000, "effective_stack": 18000}
SPOTS = {
    "river": {"board": "AsJd8h5c2d", "starting_pot": 1000, "effective_stack": 2000, "bet_sizes": "50%, 100%, a"},
    "turn": dict(_TURN, bet_sizes={"turn": "50%, 100%, a", "river": "100%, a"}),
    "turn-3": dict(_TURN, bet_sizes={"turn": "a", "river": "a"}),
    "turn-17": dict(_TURN, bet_sizes={"turn": "100%", "river": "a"}),
    "turn-24": dict(_TURN, bet_sizes={"turn": "50%, a", "river": "a"}),
    "turn-37": dict(_TURN, bet_sizes={"turn": "100%, a", "river": "100%, a"}),
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spots", default="river,turn-3,turn-17,turn-24,turn-37,turn")
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--step", type=int, default=5)
    args = ap.parse_args()
    if args.rounds < 2 or args.step < 1:
        raise SystemExit("--rounds must be at least 2 and --step at least 1")
    spots = args.spots.split(",")
    for spot in spots:
        if spot not in SPOTS:
            raise SystemExit(f"unknown spot {spot!r}; choose from {', '.join(SPOTS)}")
    from cfrkit.solvers.public import build_public_tree
    from cfrkit.solvers.public.board_range_cfr import BoardRangeSolver
    from cfrkit.solvers.public.postflop_game import PostflopPublicGame

    print(f"load average at start: {os.getloadavg()}", flush=True)
    for spot in spots:
        tree = build_public_tree(PostflopPublicGame(**SPOTS[spot]))
        solvers = {"float32": BoardRangeSolver(tree, dtype="float32", threads=1),
                   "16bit": BoardRangeSolver(tree, dtype="float32", compression=True, threads=1)}
        cpu = alternating_cpu({k: solver.run for k, solver in solvers.items()}, args.rounds, args.step)
        med = {k: float(np.median(v[1:])) for k, v in cpu.items()}
        print(f"{spot}: float32 tables {8 * solvers['float32'].layout.num_entries / 1e6:.2f} MB; ms per iteration "
              f"float32 {1e3 * med['float32']:.3f}, 16-bit {1e3 * med['16bit']:.3f}; 16-bit / float32 = "
              f"{med['16bit'] / med['float32']:.3f}; load average {os.getloadavg()[0]:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
