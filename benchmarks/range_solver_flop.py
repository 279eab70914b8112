"""Full-range flop spot of benchmarks/range_solver.py on BoardRangeSolver: memory and CPU seconds per iteration.

    python benchmarks/range_solver_flop.py [--iterations 2] [--threads 1] [--no-compression] [--target 0.3]

Qs Jh 2h, pot 200, stack 900, "50%, a" on every street (postflop-solver's ActionTree rules), full uniform ranges,
DCFR, suit isomorphism (clubs/diamonds), 16-bit storage unless ``--no-compression``.  Prints the layout (kernel
nodes, entries = actions x hands), the kernel's bytes, the CPU seconds (``process_time``) of each iteration and of
an exploitability check, and the peak resident memory; with ``--target`` (%% of the pot) it keeps iterating
(checks every 10) until the target or ``--iterations``.
"""
from __future__ import annotations

import argparse
import os
import resource
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--iterations", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--no-compression", action="store_true")
    ap.add_argument("--target", type=float, default=None, help="exploitability target in %% of the pot")
    args = ap.parse_args()
    from cfrkit.solvers.public.board_range_cfr import BoardRangeSolver
    from cfrkit.solvers.public.postflop_game import PostflopPublicGame
    from cfrkit.solvers.public.tree import build_public_tree

    rss = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # noqa: E731  (MB)
    print(f"load average at start: {os.getloadavg()}", flush=True)
    game = PostflopPublicGame("QsJh2h", starting_pot=200, effective_stack=900, bet_sizes="50%, a")
    c0 = time.process_time()
    tree = build_public_tree(game)
    print(f"public tree: {len(tree)} nodes {tree.counts()}, {time.process_time() - c0:.1f} CPU s, peak RSS {rss():.0f} MB",
          flush=True)
    c0 = time.process_time()
    solver = BoardRangeSolver(tree, algorithm="dcfr", threads=args.threads, compression=not args.no_compression)
    lay = solver.layout
    hands = len(solver.hands)
    kb = lay.kernel_bytes(4)
    total = solver.storage_bytes + kb["maps"] + kb["scratch"]
    print(f"layout: {time.process_time() - c0:.1f} CPU s; swaps {lay.swaps}; {lay.num_nodes} kernel nodes of {len(tree)}; "
          f"{len(lay.space_pairs)} hand spaces; {lay.num_entries} entries (actions x hands); storage "
          f"{solver.storage_bytes / 1e9:.2f} GB, maps {kb['maps'] / 1e6:.0f} MB, total {total / 1e9:.2f} GB = "
          f"{total / (len(tree) * hands):.2f} bytes per public node x root hand; peak RSS {rss():.0f} MB", flush=True)
    done = 0
    cpu = wall = 0.0
    while done < args.iterations:
        step = 1 if args.target is None else min(10, args.iterations - done)
        c0, w0 = time.process_time(), time.perf_counter()
        solver.run(step)
        cpu += time.process_time() - c0
        wall += time.perf_counter() - w0
        done += step
        line = f"iteration {solver.iterations}: {cpu / done:.2f} CPU s / iteration ({wall / done:.2f} s wall)"
        if args.target is not None or done == args.iterations:
            c0 = time.process_time()
            e = 100 * solver.exploitability() / solver.pot
            line += f"; exploitability {e:.3f}% of the pot ({time.process_time() - c0:.1f} CPU s)"
            if args.target is not None and e <= args.target:
                print(line, flush=True)
                break
        print(line + f"; peak RSS {rss():.0f} MB", flush=True)
    print(f"peak RSS {rss():.0f} MB; load average at end: {os.getloadavg()}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
