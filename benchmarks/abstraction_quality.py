"""Real-game exploitability of abstract equilibria against abstraction type and size.

Game: flop-turn hold'em on a 16-card deck (cfrkit.abstraction.quality: 4 ranks x 4 suits, ante 1,
flop then turn, limit raises 2 / 4, one raise a round).  For each card abstraction (flop feature
and bucket count, turn feature and count) the abstract game is solved with CFR+ (--iterations),
the per-bucket strategy is lifted to every hand, and its exploitability in the real game is
computed exactly ((BR_0 + BR_1) / 2, chips per hand; x1000 = milli-chips).  "lossless" solves the
real game itself (reference: how far the abstract solve's iterations get without abstraction).

    python benchmarks/abstraction_quality.py --iterations 100
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CONFIGS = [  # (flop feature, flop buckets, turn feature, turn buckets)
    ("ehs", 4, "ochs", 20), ("hist-emd", 4, "ochs", 20), ("pa-emd", 4, "ochs", 20),
    ("ehs", 12, "ochs", 20), ("hist-emd", 12, "ochs", 20), ("pa-emd", 12, "ochs", 20),
    ("pa-emd", 12, "ehs", 5), ("pa-emd", 12, "ochs", 5), ("pa-emd", 12, "ehs", 20),
]


def main():
    from cfrkit.abstraction import build_abstraction
    from cfrkit.abstraction.quality import AbstractSolver, FlopTurnGame, exploitability

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--out", default="/tmp/cfrkit_abstraction_quality")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--lossless", action="store_true", help="also solve the real game (slow)")
    args = ap.parse_args()
    game = FlopTurnGame()
    print(f"flop-turn hold'em, 16 cards: {len(game.flops)} canonical flops, {game.m1} hands per flop, "
          f"{len(game.nodes)} betting nodes; load {os.getloadavg()[0]:.1f}", flush=True)
    configs = list(CONFIGS) + ([("lossless", 0, "lossless", 0)] if args.lossless else [])
    rows = []
    for f1, k1, f2, k2 in configs:
        t0 = time.time()
        if f1 == "lossless":
            b1, b2, n1, n2 = game.lossless_buckets()
        else:
            d = os.path.join(args.out, f"{f1}{k1}_{f2}{k2}_s{args.seed}")
            abs_ = build_abstraction((16, k1, k2), d, features=("lossless", f1, f2), num_ranks=4, num_suits=4,
                                     sample=5000, seed=args.seed, workers=1, progress=False)
            b1, b2, n1, n2 = game.abstraction_buckets(abs_)
        t_abs = time.time() - t0
        solver = AbstractSolver(game, b1, b2, n1, n2)
        curve = []
        t0 = time.time()
        for target in (args.iterations // 2, args.iterations):
            solver.iterate(target - solver.iterations)
            curve.append(exploitability(game, solver.average_tables(), b1, b2))
        rows.append((f1, k1, f2, k2, curve, t_abs, time.time() - t0))
        print(f"flop {f1:8s} {k1:3d}  turn {f2:5s} {k2:3d}: real-game exploitability "
              f"{1000 * curve[0]:8.1f} mchips/hand at {args.iterations // 2} it, {1000 * curve[1]:8.1f} at "
              f"{args.iterations} ({t_abs:.0f} s abstraction, {time.time() - t0:.0f} s solve)", flush=True)
    print("\n| flop feature | flop buckets | turn feature | turn buckets | expl. (mchips/hand) at "
          f"{args.iterations // 2} it | at {args.iterations} it |")
    print("|---|---|---|---|---|---|")
    for f1, k1, f2, k2, curve, _, _ in rows:
        print(f"| {f1} | {k1 or 'all'} | {f2} | {k2 or 'all'} | {1000 * curve[0]:.1f} | {1000 * curve[1]:.1f} |")


if __name__ == "__main__":
    main()
