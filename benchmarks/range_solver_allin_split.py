"""Where a flop group's time goes on the RangeSolver path, with and without ``allin_equity``.

One group of the hold'em datagen's flop situations (its own sampler: one board and pot, recursive ranges,
``--batch`` situations) on the depth-limited flop tree with the turn net at the leaves, as
``solve_group_with_leaves(..., backend="torch")`` runs it, split into: tree building, ``RangeSolver`` set-up
(terminal kernels; with ``--allin-equity on`` the all-in equity matrix of the board, built in this process),
and the first ``--iterations`` CFR+ iterations one by one.  Wall seconds (``time.perf_counter``) and this
process's CPU seconds (``time.process_time``; a loaded machine inflates wall time, not CPU time).
``--allin-equity off`` walks every run-out board (the code path before ``allin_equity`` existed).

    python benchmarks/range_solver_allin_split.py --nets /work/runs/s7/ds_small_nets_with_preflop --allin-equity on
    python benchmarks/range_solver_allin_split.py --nets /work/runs/s7/ds_small_nets_with_preflop --allin-equity off
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nets", required=True, help="HoldemValueNets directory with a turn net")
    ap.add_argument("--batch", type=int, default=10, help="situations in the group")
    ap.add_argument("--iterations", type=int, default=2, help="iterations timed one by one")
    ap.add_argument("--allin-equity", choices=("on", "off"), default="on")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--backend", choices=("torch", "numpy"), default="torch")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.batch <= 0 or args.iterations <= 0:
        print("range_solver_allin_split: error: --batch and --iterations must be positive", file=sys.stderr)
        return 2
    if not os.path.isdir(args.nets):
        print(f"range_solver_allin_split: error: --nets {args.nets}: no such directory", file=sys.stderr)
        return 2
    import numpy as np
    import torch

    from cfrkit.games import load
    from cfrkit.solvers.public.tree import RangeSolver
    from cfrkit.value_nets.holdem.datagen import sizing_levels, street_tree
    from cfrkit.value_nets.holdem.nets import HoldemValueNets
    from cfrkit.value_nets.holdem.situations import sample_situations

    torch.set_num_threads(1)
    game = load("holdem")
    from cfrkit.value_nets.model import ValueNetFileError

    try:
        nets = HoldemValueNets.load(args.nets, device=args.device if args.backend == "torch" else "cpu")
        fn = nets.leaf_values("turn")
    except (ValueNetFileError, KeyError, ValueError, RuntimeError) as exc:
        print(f"range_solver_allin_split: error: --nets {args.nets}: {exc}", file=sys.stderr)
        return 2
    sit = sample_situations("flop", args.batch, np.random.default_rng([args.seed, 2]), group=args.batch,
                            stack=float(min(game.definition.stack)))

    def clock():
        return time.perf_counter(), time.process_time()

    rows = {}
    w, c = clock()
    tree = street_tree(game, sizing_levels(None), sit.boards[0], float(sit.contribs[0]), True)
    w1, c1 = clock()
    rows["tree"] = (w1 - w, c1 - c)
    solver = RangeSolver(tree, ranges=sit.ranges, skip=0, leaf_values=fn, backend=args.backend,
                         device=args.device if args.backend == "torch" else None,
                         allin_equity=args.allin_equity == "on")
    w2, c2 = clock()
    rows["setup"] = (w2 - w1, c2 - c1)
    for k in range(args.iterations):
        w, c = clock()
        solver.iterate(1)
        w1, c1 = clock()
        rows[f"iteration {k + 1}"] = (w1 - w, c1 - c)
    report = {"allin_equity": args.allin_equity, "backend": args.backend, "device": args.device,
              "batch": args.batch, "nodes": len(tree), "allin_nodes": len(solver.allin_nodes),
              "board": [int(x) for x in sit.boards[0]], "pot_per_player": float(sit.contribs[0]),
              "load_average": os.getloadavg()[0],
              "seconds_wall_cpu": {k: [round(a, 3), round(b, 3)] for k, (a, b) in rows.items()}}
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
