"""Hold'em river subgame: time to reach 0.3% and 0.1% of the pot in exploitability.

    python benchmarks/river_subgame.py [--batch 64] [--pot 1000] [--stack 2000] [--no-torch] [--no-numpy]
                                       [--sweep-dcfr] [--gamma 2]

Spot: board As Jd 8h 5c 2d (fixed), full 1326-pair ranges (1081 x 1081 live pairs, uniform unless
``--random-ranges``), pot ``--pot`` split equally, ``--stack`` chips behind each, bets of 0.5 and 1 pot
plus all-in at every bet/raise (at most 4 bets), DCFR (alpha 1.5, beta 0, gamma ``--gamma``, default 2),
alternating updates.  Exploitability = (BR_0 + BR_1) / 2 in chips with the ranges as the deal
distribution, as % of the pot.

Paths timed:

* ``cython``: :class:`cfrkit.solvers.public.flat_range_cfr.FlatRangeSolver`, one spot, whole solve in C:
  (a) exactly the iterations needed (found by a first run with checks every 5), no checks;
  (b) ``solve(0.001, check_every=10)``: stops itself at the first check at or below 0.1%.
* ``numpy``: :class:`cfrkit.solvers.public.tree.RangeSolver` (range vectors, per-node numpy ops), one spot
  and ``--batch`` spots at once (different random ranges per spot, same board and tree).
* ``torch``: the same solver on the torch backend (cuda if available, else CPU) with the batch.
* ``cython`` batch: :func:`cfrkit.solvers.public.flat_range_cfr.solve_many` on 1 and all threads,
  (a) per-spot stopping: each spot stops at its own first check (every 10 iterations, in C) at or
  below 0.1% of the pot; the time is for all spots to be solved (construction included);
  (b) every spot run to the worst spot's iteration count from (a), no checks.

Wall and process CPU time are reported (the machine is shared: the load average is printed at the
start and end).  ``--sweep-dcfr`` prints the iterations to 0.1% for several DCFR parameter sets.
Anchor (recorded, not run here: postflop-solver is a Rust program not installed on this machine):
postflop-solver reaches 0.1% of the pot on a 1081 x 1081 river spot with one bet size in 25 ms.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402

from cfrkit.cards import parse_cards  # noqa: E402
from cfrkit.cards.equity import board_strengths  # noqa: E402
from cfrkit.solvers.public.flat_range_cfr import FlatRangeSolver, FlatTree, solve_many  # noqa: E402
from cfrkit.solvers.public.games import RiverPublicGame  # noqa: E402
from cfrkit.solvers.public.tree import RangeSolver, build_public_tree  # noqa: E402

ANCHOR_MS = 25.0
TARGETS = (0.3, 0.1)


def iterations_to_targets(curve_pct, step):
    out = {}
    for thr in TARGETS:
        hit = np.nonzero(np.asarray(curve_pct) <= thr)[0]
        out[thr] = int((hit[0] + 1) * step) if len(hit) else None
    return out


def sweep_dcfr(tree, single, spots, pot, max_iterations) -> int:
    """Iterations to 0.1% of the pot (checks every 5) per DCFR setting: the uniform spot and random ones."""
    settings = [(1.5, 0.0, 2.0), (1.5, 0.0, 3.0), (1.5, 0.5, 2.0), (1.5, 0.5, 3.0), (2.0, 0.0, 3.0),
                (1.5, -0.5, 3.0), (1.0, 0.0, 2.0)]
    print("alpha beta gamma | uniform spot | random spots: each, mean, max")
    for alpha, beta, gamma in settings:
        counts = []
        for r in [single] + list(spots):
            curve = FlatRangeSolver(tree, ranges=r, alpha=alpha, beta=beta, gamma=gamma).run(
                max_iterations, check_every=5) / pot * 100
            counts.append(iterations_to_targets(curve, 5)[0.1] or max_iterations)
        rest = counts[1:]
        print(f"{alpha:g} {beta:g} {gamma:g} | {counts[0]} | {rest} mean {np.mean(rest):.1f} max {max(rest)}", flush=True)
    return 0


def timed(fn):
    w, c = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - w, time.process_time() - c


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--board", default="AsJd8h5c2d")
    ap.add_argument("--pot", type=float, default=1000.0)
    ap.add_argument("--stack", type=float, default=2000.0)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--max-iterations", type=int, default=600)
    ap.add_argument("--random-ranges", action="store_true", help="random ranges for the single spot too")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--no-numpy", action="store_true", help="skip the numpy (and torch) RangeSolver paths")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--gamma", type=float, default=2.0, help="DCFR average weight exponent (all paths)")
    ap.add_argument("--sweep-dcfr", action="store_true", help="only print iterations to 0.1%% per DCFR setting")
    args = ap.parse_args()
    dcfr = {"alpha": 1.5, "beta": 0.0, "gamma": args.gamma}
    board = parse_cards(args.board)
    strengths = board_strengths(board)
    game = RiverPublicGame(board, strengths, pot=args.pot, stack=args.stack, bet_fractions=[(0.5, 1.0)], max_bets=4)
    tree = build_public_tree(game)
    live = int(game.hand_mask(board).sum())
    print(f"load average at the start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)")
    print(f"river spot {args.board}: pot {args.pot:g}, stack {args.stack:g} behind, bets 0.5/1 pot + all-in; "
          f"{live} x {live} live pairs; public tree {tree.counts()}")
    rng = np.random.default_rng(args.seed)
    mask = game.hand_mask(board)
    single = rng.random((2, 1326)) * mask if args.random_ranges else np.broadcast_to(mask, (2, 1326)).copy()
    pot = args.pot
    step = 5
    rows = []
    w0 = time.perf_counter()
    FlatTree.of(tree)
    print(f"flat layout of the tree (once per tree, cached): {1e3 * (time.perf_counter() - w0):.1f} ms")
    if args.sweep_dcfr:
        return sweep_dcfr(tree, single, rng.random((8, 2, 1326)) * mask, pot, args.max_iterations)

    # ---- cython, one spot
    probe = FlatRangeSolver(tree, ranges=single, **dcfr)
    curve = probe.run(args.max_iterations, check_every=step) / pot * 100
    its = iterations_to_targets(curve, step)
    for thr in TARGETS:
        n = its[thr]
        if n is None:
            rows.append(("cython", 1, thr, None, None, None))
            continue
        solver = FlatRangeSolver(tree, ranges=single, **dcfr)
        wall, cpu = timed(lambda: solver.run(n))
        check = solver.exploitability() / pot * 100
        rows.append(("cython", 1, thr, n, wall, cpu))
        print(f"cython 1 spot: {thr}% pot after {n} iterations ({check:.3f}%): {1e3 * wall:.1f} ms wall, "
              f"{1e3 * cpu:.1f} ms CPU; anchor {ANCHOR_MS:g} ms -> ratio {wall * 1e3 / ANCHOR_MS:.2f}x wall, "
              f"{cpu * 1e3 / ANCHOR_MS:.2f}x CPU", flush=True)

    for _ in range(2):  # the second run is the one reported (the first warms caches)
        solver = FlatRangeSolver(tree, ranges=single, **dcfr)
        wall, cpu = timed(lambda: solver.solve(0.001, check_every=10, max_iterations=args.max_iterations))
    print(f"cython 1 spot, solve(0.001, check_every=10): stopped after {solver.iterations} iterations at "
          f"{100 * solver.exploitability() / pot:.4f}% pot: {1e3 * wall:.1f} ms wall, {1e3 * cpu:.1f} ms CPU; anchor "
          f"{ANCHOR_MS:g} ms -> ratio {wall * 1e3 / ANCHOR_MS:.2f}x wall, {cpu * 1e3 / ANCHOR_MS:.2f}x CPU", flush=True)

    # ---- numpy (and torch), one spot and a batch
    batch_ranges = rng.random((args.batch, 2, 1326)) * mask
    configs = [] if args.no_numpy else [("numpy", 1, single[None]), ("numpy", args.batch, batch_ranges)]
    if not args.no_torch and not args.no_numpy:
        configs.append(("torch", args.batch, batch_ranges))
    for backend, B, ranges in configs:
        probe = RangeSolver(tree, ranges=ranges, algorithm="dcfr", backend=backend, **dcfr)
        curve = []
        while probe.iterations < args.max_iterations:
            probe.run(probe.iterations + step)
            curve.append(probe.exploitability().max() / pot * 100)  # the slowest spot of the batch
            if curve[-1] <= min(TARGETS):
                break
        its = iterations_to_targets(curve, step)
        for thr in TARGETS:
            n = its[thr]
            if n is None:
                rows.append((backend, B, thr, None, None, None))
                continue
            solver = RangeSolver(tree, ranges=ranges, algorithm="dcfr", backend=backend, **dcfr)
            wall, cpu = timed(lambda: solver.run(n))
            rows.append((backend, B, thr, n, wall, cpu))
            print(f"{backend} {B} spot(s) [{solver.be.device}]: {thr}% pot (worst spot) after {n} iterations: "
                  f"{1e3 * wall:.1f} ms wall ({1e3 * wall / B:.1f} ms per spot), {1e3 * cpu:.1f} ms CPU "
                  f"({1e3 * cpu / B:.1f} ms per spot); anchor per spot {ANCHOR_MS:g} ms -> ratio "
                  f"{wall * 1e3 / B / ANCHOR_MS:.2f}x wall", flush=True)

    # ---- cython over the batch: per-spot stopping, then every spot to the worst spot's count
    threads_list = sorted({1, os.cpu_count() or 1})
    worst_iterations = None
    for threads in threads_list:
        res = solve_many(tree, batch_ranges, args.max_iterations, threads=threads, target_fraction=0.001,
                         check_every=10, **dcfr)
        worst_iterations = int(res.iterations.max())
        B = args.batch
        print(f"cython {B} spots, {threads} thread(s), per-spot stopping at 0.1% pot (checks every 10 in C): "
              f"{res.reached.sum()}/{B} reached, worst {100 * res.exploitability_fraction.max():.4f}% pot; "
              f"iterations mean {res.iterations.mean():.1f}, median {int(np.median(res.iterations))}, "
              f"max {worst_iterations}; {1e3 * res.wall_seconds / B:.1f} ms wall per spot, "
              f"{1e3 * res.cpu_seconds / B:.1f} ms CPU per spot; anchor {ANCHOR_MS:g} ms -> ratio "
              f"{res.wall_seconds * 1e3 / B / ANCHOR_MS:.2f}x wall", flush=True)
    for threads in threads_list:
        res = solve_many(tree, batch_ranges, worst_iterations, threads=threads, **dcfr)
        print(f"cython {args.batch} spots, {threads} thread(s), all {worst_iterations} iterations (worst spot "
              f"{100 * res.exploitability_fraction.max():.4f}% pot): {1e3 * res.wall_seconds / args.batch:.1f} ms "
              f"wall per spot, {1e3 * res.cpu_seconds / args.batch:.1f} ms CPU per spot; anchor {ANCHOR_MS:g} ms "
              f"-> ratio {res.wall_seconds * 1e3 / args.batch / ANCHOR_MS:.2f}x wall", flush=True)
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
