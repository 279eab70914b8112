"""solve_spot against the direct compiled range solver on the river spot of river_subgame.py.

    python benchmarks/spot_api.py [--repeat 5] [--target 0.1]

Spot: board As Jd 8h 5c 2d, pot 1000, stack 2000, bets and raises 50% / 100% / all-in (postflop-solver
notation, its example thresholds), full uniform ranges (1081 x 1081 live hands), DCFR to ``--target``
% of the pot with checks every 10 iterations.

* direct: ``PostflopPublicGame`` + ``build_public_tree`` + ``FlatRangeSolver(tree, ranges).solve(...)``;
* solve_spot: the same through ``cfrkit.solvers.public.spot.solve_spot`` with range strings, which also
  computes the reported exploitability and the average strategy for the result object.

Prints the median wall time of each over ``--repeat`` runs and the ratio (target: within 10%).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402

from cfrkit.cards.ranges import range_vector  # noqa: E402
from cfrkit.solvers.public.flat_range_cfr import FlatRangeSolver  # noqa: E402
from cfrkit.solvers.public.postflop_game import PostflopPublicGame  # noqa: E402
from cfrkit.solvers.public.spot import solve_spot  # noqa: E402
from cfrkit.solvers.public.tree import build_public_tree  # noqa: E402

BOARD, POT, STACK, SIZES = "AsJd8h5c2d", 1000, 2000, "50%, 100%, a"
FULL = "22+,A2s+,K2s+,Q2s+,J2s+,T2s+,92s+,82s+,72s+,62s+,52s+,42s+,32s,A2o+,K2o+,Q2o+,J2o+,T2o+,92o+,82o+,72o+,62o+,52o+,42o+,32o"


def direct(target):
    game = PostflopPublicGame(BOARD, POT, STACK, SIZES, add_allin_threshold=1.5, force_allin_threshold=0.15,
                              merging_threshold=0.1)
    w = range_vector(FULL, game.board_cards)
    solver = FlatRangeSolver(build_public_tree(game), ranges=np.stack([w, w]))
    solver.solve(target_fraction=target / 100, check_every=10, max_iterations=2000)
    return solver.iterations


def spot(target):
    return solve_spot(BOARD, FULL, FULL, pot=POT, stack=STACK, bet_sizes=SIZES, target=target,
                      max_iterations=2000).iterations


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--target", type=float, default=0.1, help="% of the pot")
    args = ap.parse_args()
    print(f"load average at start: {os.getloadavg()}")
    times = {"direct": [], "solve_spot": []}
    its = {}
    for _ in range(args.repeat):
        for name, fn in (("direct", direct), ("solve_spot", spot)):
            start = time.perf_counter()
            its[name] = fn(args.target)
            times[name].append(time.perf_counter() - start)
    for name in times:
        print(f"{name:11s} {statistics.median(times[name]) * 1000:8.1f} ms median over {args.repeat} "
              f"({its[name]} iterations)")
    ratio = statistics.median(times["solve_spot"]) / statistics.median(times["direct"])
    print(f"solve_spot / direct = {ratio:.3f}  (target <= 1.10)")
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
