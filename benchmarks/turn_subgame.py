"""Hold'em turn subgame from a protocol state, full ranges: time to reach 1% and 0.3% of the pot.

    python benchmarks/turn_subgame.py [--matchstate M] [--stacks 20000] [--sizing "0.5,1;1"]
                                      [--backends cython,numpy,torch] [--max-iterations 300]

Spot (default): ACPC heads-up no-limit (blinds 100/50), preflop raise to 2000 and call, flop checked
through, turn card dealt: board 8d As 8s Kh, pot 4000, 18000 chips behind each.  The public tree comes
from :class:`cfrkit.solvers.public.games.HoldemPublicGame` (``build_public_tree(game, state,
bet_sizing=...)``): turn betting, 48 river chance outcomes, river betting to fold/showdown terminals
(no depth limit, no value net).  Ranges: the 1128 live pairs of each player, uniform (``--random-ranges``:
random weights).  Solver: :class:`cfrkit.solvers.public.tree.RangeSolver`, DCFR (alpha 1.5, beta 0,
gamma 2), alternating updates, numpy (cards-package Cython showdown kernels) and torch CPU (sorted
prefix-sum kernels, ``--torch-threads`` intra-op threads, default 1), and the compiled
:class:`cfrkit.solvers.public.flat_range_cfr.FlatRangeSolver` (``cython``: whole iterations in C, same
algorithm and parameters; its time includes allocating/first touching its arrays, the flat layout is
built once per tree and reported separately).  Exploitability =
(BR_0 + BR_1) / 2 in chips with the ranges as the deal distribution, checked every ``--check-every``
iterations; the time to a target is the solver's own iteration time up to the first check at or
below it (checks not counted).

No peer is timed here: no installed library solves hold'em turn subgames (postflop-solver, the Rust
anchor of the river benchmark, is not installed), so the script reports cfrkit's numbers and the
torch/numpy and numpy/cython ratios only (same run, same spot).  The machine is shared: wall times are noisy.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402

from cfrkit.games import load  # noqa: E402
from cfrkit.games.holdem.matchstate import state_from_matchstate  # noqa: E402
from cfrkit.solvers.public.flat_range_cfr import FlatRangeSolver, FlatTree  # noqa: E402
from cfrkit.solvers.public.tree import RangeSolver, build_public_tree  # noqa: E402


def parse_sizing(text: str):
    """``"0.5,1;1"`` -> ``[[0.5, 1.0], [1.0]]`` (per bet number: first bet; first raise; ...)."""
    return [[float(x) for x in level.split(",") if x.strip()] for level in text.split(";")]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--matchstate", default="MATCHSTATE:0:0:r2000c/cc/:5d5c|/8dAs8s/Kh")
    ap.add_argument("--stacks", type=int, default=20000)
    ap.add_argument("--sizing", default="0.5,1;1", help="pot fractions per bet number, ';' between bet numbers")
    ap.add_argument("--backends", default="cython,numpy,torch")
    ap.add_argument("--targets", default="1,0.3", help="exploitability targets in %% of the pot")
    ap.add_argument("--max-iterations", type=int, default=300)
    ap.add_argument("--max-seconds", type=float, default=600.0, help="per backend (solve time)")
    ap.add_argument("--check-every", type=int, default=5)
    ap.add_argument("--random-ranges", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--torch-threads", type=int, default=1,
                    help="torch intra-op threads (on this shared 2-core machine 2 threads ran 6x slower than 1)")
    args = ap.parse_args()
    from tqdm.auto import tqdm

    if "torch" in args.backends:
        import torch

        torch.set_num_threads(args.torch_threads)

    targets = sorted((float(t) for t in args.targets.split(",")), reverse=True)
    game = load(f"holdem(stacks={args.stacks};{args.stacks})")
    state = state_from_matchstate(game, args.matchstate)
    t0 = time.perf_counter()
    tree = build_public_tree(game, state, bet_sizing=parse_sizing(args.sizing))
    build = time.perf_counter() - t0
    pot = tree.root.pot
    mask = tree.pgame.hand_mask(tree.root.board)
    rng = np.random.default_rng(args.seed)
    ranges = rng.random((2, 1326)) * mask if args.random_ranges else np.broadcast_to(mask, (2, 1326)).copy()
    print(f"turn spot {args.matchstate} (stacks {args.stacks}): pot {pot:g}, bet sizing {args.sizing!r} + all-in; "
          f"{int(mask.sum())} live pairs per player; public tree {tree.counts()} ({len(tree)} nodes), "
          f"built in {build:.2f} s", flush=True)
    per_iteration = {}
    time_to = {}
    for backend in args.backends.split(","):
        if backend == "cython":
            hit, solver, setup = run_cython(tree, ranges, targets, args)
            time_to[backend] = hit
            per_iteration[backend] = solver.seconds / max(1, solver.iterations)
            for thr in targets:
                if thr in hit:
                    n, sec = hit[thr]
                    print(f"cython [FlatRangeSolver]: {thr:g}% of the pot after {n} iterations: {sec:.2f} s "
                          f"({1e3 * sec / n:.0f} ms per iteration; flat layout + setup {setup:.2f} s)", flush=True)
                else:
                    print(f"cython: {thr:g}% of the pot not reached in {solver.iterations} iterations", flush=True)
            continue
        t0 = time.perf_counter()
        solver = RangeSolver(tree, ranges=ranges, algorithm="dcfr", backend=backend)
        setup = time.perf_counter() - t0
        hit = {}
        bar = tqdm(total=args.max_iterations, desc=f"turn {backend}", unit="it", leave=False)
        last = float("nan")
        while solver.iterations < args.max_iterations and solver.seconds < args.max_seconds:
            solver.iterate(args.check_every)
            bar.update(args.check_every)
            last = float(solver.exploitability()[0]) / pot * 100
            for thr in targets:
                if thr not in hit and last <= thr:
                    hit[thr] = (solver.iterations, solver.seconds)
            if len(hit) == len(targets):
                break
        bar.close()
        time_to[backend] = hit
        per_iteration[backend] = solver.seconds / max(1, solver.iterations)
        for thr in targets:
            if thr in hit:
                n, sec = hit[thr]
                print(f"{backend} [{solver.be.device}]: {thr:g}% of the pot after {n} iterations: {sec:.1f} s "
                      f"({1e3 * sec / n:.0f} ms per iteration; setup {setup:.2f} s)", flush=True)
            else:
                print(f"{backend}: {thr:g}% of the pot not reached in {solver.iterations} iterations / "
                      f"{solver.seconds:.0f} s (last {last:.3f}%)", flush=True)
    if "numpy" in per_iteration and "torch" in per_iteration:
        print(f"torch CPU / numpy time per iteration: {per_iteration['torch'] / per_iteration['numpy']:.2f}x")
    if "numpy" in time_to and "cython" in time_to:
        for thr in targets:
            if thr in time_to["numpy"] and thr in time_to["cython"]:
                print(f"numpy RangeSolver / cython FlatRangeSolver time to {thr:g}% of the pot: "
                      f"{time_to['numpy'][thr][1] / time_to['cython'][thr][1]:.1f}x")
        print(f"numpy / cython time per iteration: {per_iteration['numpy'] / per_iteration['cython']:.1f}x")
    return 0


def run_cython(tree, ranges, targets, args):
    """FlatRangeSolver in chunks of ``check_every`` iterations; exploitability (also in C) checked between
    chunks and not counted, like the RangeSolver paths.  Then a second solver runs the in-kernel
    stopping (``solve``) to the last target, checks included, as a cross-check of the iteration count."""
    from tqdm.auto import tqdm

    t0 = time.perf_counter()
    FlatTree.of(tree)
    solver = FlatRangeSolver(tree, ranges=ranges, algorithm="dcfr")
    setup = time.perf_counter() - t0
    solver.seconds = 0.0
    hit = {}
    bar = tqdm(total=args.max_iterations, desc="turn cython", unit="it", leave=False)
    while solver.iterations < args.max_iterations and solver.seconds < args.max_seconds:
        t0 = time.perf_counter()
        solver.run(args.check_every)
        solver.seconds += time.perf_counter() - t0
        bar.update(args.check_every)
        last = solver.exploitability() / tree.root.pot * 100
        for thr in targets:
            if thr not in hit and last <= thr:
                hit[thr] = (solver.iterations, solver.seconds)
        if len(hit) == len(targets):
            break
    bar.close()
    stopper = FlatRangeSolver(tree, ranges=ranges, algorithm="dcfr")
    t0 = time.perf_counter()
    expl = stopper.solve(target_fraction=targets[-1] / 100, check_every=args.check_every,
                         max_iterations=args.max_iterations)
    print(f"cython in-kernel stopping at {targets[-1]:g}%: {stopper.iterations} iterations, "
          f"{time.perf_counter() - t0:.2f} s including the checks (exploitability {expl / tree.root.pot * 100:.3f}%)",
          flush=True)
    return hit, solver, setup


if __name__ == "__main__":
    sys.exit(main())
