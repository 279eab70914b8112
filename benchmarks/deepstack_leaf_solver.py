"""CPU seconds per DeepStack turn / flop situation: compiled BoardLeafSolver against the numpy RangeSolver.

Situations as the hold'em datagen makes them (``sample_situations``: random board, DeepStack's pots and
recursive ranges, ACPC ``holdem`` stacks 20000, bet sizing pot / one pot raise / fold-call-all-in), leaves
valued by nets of the ``tiny`` preset's shape (river: 3 x 64, 100 hand-strength buckets; turn: 3 x 64,
30 E[HS] buckets) with random weights (the time does not depend on the weights), CFR+ with
``skip = iterations / 2`` (the datagen's targets).  Per street, in one run: the compiled solver
(``board``, float32, and optionally ``board64``) on ``--situations`` situations at ``--iterations``, and
the numpy ``RangeSolver`` (``--numpy-batch`` situations as one batch, as the datagen runs a group) at
``--numpy-iterations`` (linear in the iterations: scaled to ``--iterations``, the scaling stated).  Times
are ``time.process_time`` of this process (torch at one thread); the equity matrix of each board is
timed apart (once per board, shared by the board's group of situations).

    python benchmarks/deepstack_leaf_solver.py --streets turn,flop --iterations 1000 --json out.json
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np


def make_leaf_fn(street: str, seed: int):
    """Leaf value function of a random net of the tiny preset's shape for leaves on ``street``."""
    import torch

    from cfrkit.value_nets.holdem.bucketing import make_bucketer
    from cfrkit.value_nets.holdem.leaf_values import HoldemNetLeafValues
    from cfrkit.value_nets.model import ValueNet

    torch.manual_seed(seed)
    bucketer = make_bucketer("river", "hs", 100) if street == "river" else make_bucketer(street, "ehs", 30)
    model = ValueNet(bucketer.num_buckets, hidden=(64, 64, 64))
    return HoldemNetLeafValues(model, bucketer, 20000.0, street)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--streets", default="turn,flop")
    ap.add_argument("--iterations", type=int, default=1000)
    ap.add_argument("--situations", type=int, default=2, help="compiled single-spot solves per street (one board, "
                                                                "one pot)")
    ap.add_argument("--group", type=int, default=10, help="situations solved side by side in one BoardLeafSolver "
                                                          "(the datagen's group; 1 skips it)")
    ap.add_argument("--numpy-iterations", default="turn:20,flop:2",
                    help="numpy RangeSolver iterations per street (scaled to --iterations); 0 skips it")
    ap.add_argument("--numpy-batch", type=int, default=10, help="situations per numpy RangeSolver batch (the datagen's "
                                                                 "group, default 10)")
    ap.add_argument("--board64", action="store_true", help="also time the float64 compiled solver")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)

    import torch

    torch.set_num_threads(1)
    from cfrkit.games.registry import load
    from cfrkit.solvers.public.board_leaf_cfr import BoardLeafSolver, allin_equity_matrix, one_blas_thread
    from cfrkit.solvers.public.board_range_cfr import BoardLayout
    from cfrkit.solvers.public.tree import RangeSolver
    from cfrkit.value_nets.holdem.datagen import sizing_levels, street_tree
    from cfrkit.value_nets.holdem.situations import sample_situations

    game = load("holdem")
    sizing = sizing_levels(None)
    numpy_its = dict(kv.split(":") for kv in args.numpy_iterations.split(",") if kv)
    report = {"iterations": args.iterations, "streets": {}}
    for street in args.streets.split(","):
        leaf_street = {"turn": "river", "flop": "turn"}[street]
        fn = make_leaf_fn(leaf_street, args.seed)
        n = max(args.situations, args.numpy_batch, args.group)
        sit = sample_situations(street, n, np.random.default_rng([args.seed, len(street)]), group=n, stack=20000.0,
                                big_blind=100.0)
        board, contrib = sit.boards[0], float(sit.contribs[0])
        c0 = time.process_time()
        tree = street_tree(game, sizing, board, contrib, depth_limit=True)
        lay = BoardLayout.of(tree, False, leaves=True)
        c1 = time.process_time()
        allin = [lay.order[k] for k in lay.ext_nodes if lay.node_type[k] == 5]
        if allin:
            allin_equity_matrix(tree, allin[0], lay.root_pairs)
        c2 = time.process_time()
        row = {"board": [int(c) for c in board], "contrib": contrib, "counts": tree.counts(),
               "leaves": len(tree.leaf_nodes), "allin_nodes": len(allin), "kernel_nodes": int(lay.num_nodes),
               "tree_and_layout_cpu_s": c1 - c0, "equity_matrix_cpu_s": c2 - c1}
        print(f"{street}: board {board.tolist()} contrib {contrib:.0f}; {tree.counts()}; {len(allin)} all-in nodes; "
              f"tree + layout {c1 - c0:.2f} CPU s, equity matrix {c2 - c1:.2f} CPU s (once per board)", flush=True)
        for backend in ("board", "board64") if args.board64 else ("board",):
            dtype = "float32" if backend == "board" else "float64"
            times, net = [], []
            for b in range(args.situations):
                calls0 = fn.calls
                t0 = time.process_time()
                s = BoardLeafSolver(tree, ranges=sit.ranges[b], leaf_values=fn, skip=args.iterations // 2,
                                    dtype=dtype)
                s.run(args.iterations)
                s.average_root_values()
                times.append(time.process_time() - t0)
                net.append(fn.calls - calls0)
            # the leaf-net share: the same number of net calls on the last solve's leaf reach
            sess = s.session
            t0 = time.process_time()
            with one_blas_thread():
                for q in range(20):
                    sess.fill(q % 2, (1 - q % 2,))  # as in the solve: one player's range changed per pass
            net_share = (time.process_time() - t0) / 20 * 2 * args.iterations
            row[backend] = {"cpu_s_per_situation": float(np.mean(times)), "per_situation": times,
                            "leaf_fill_cpu_s_estimate": net_share, "net_calls": net[-1]}
            print(f"  {backend}, one spot at a time: {np.mean(times):.2f} CPU s per situation at {args.iterations} "
                  f"iterations ({', '.join(f'{x:.2f}' for x in times)}); leaf values + all-in products "
                  f"~{net_share:.2f} s of it", flush=True)
            if args.group > 1:
                t0 = time.process_time()
                s = BoardLeafSolver(tree, ranges=sit.ranges[:args.group], leaf_values=fn, skip=args.iterations // 2,
                                    dtype=dtype)
                s.run(args.iterations)
                s.average_root_values()
                dt = time.process_time() - t0
                row[backend + "_group"] = {"group": args.group, "cpu_s": dt, "cpu_s_per_situation": dt / args.group}
                print(f"  {backend}, the group of {args.group} side by side (the datagen's way): "
                      f"{dt / args.group:.2f} CPU s per situation ({dt:.1f} CPU s in all)", flush=True)
        k = int(numpy_its.get(street, 0))
        if k:
            t0 = time.process_time()
            nb = args.numpy_batch
            ref = RangeSolver(tree, ranges=sit.ranges[:nb], algorithm="cfr+", skip=0, leaf_values=fn)
            ref.run(k)
            dt = time.process_time() - t0
            per = dt / k * args.iterations / nb
            row["numpy"] = {"iterations_run": k, "batch": nb, "cpu_s": dt, "cpu_s_per_situation_scaled": per}
            print(f"  numpy RangeSolver: {k} iterations on a batch of {nb} in {dt:.2f} CPU s -> "
                  f"{per:.1f} CPU s per situation at {args.iterations} iterations (scaled)", flush=True)
        report["streets"][street] = row
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    return report


if __name__ == "__main__":
    main()
