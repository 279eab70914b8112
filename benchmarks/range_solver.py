"""The range solver on postflop-solver's spots: node counts, iterations, time and memory to 1% / 0.3% / 0.1%.

    python benchmarks/range_solver.py [--spots river,turn] [--algorithms dcfr,dcfr-postflop] [--dtypes float64,float32]
                                      [--threads 1,2] [--solver board|flat] [--compression [--rounding nearest]]
                                      [--solve-flop]
                                      [--targets 1,0.3,0.1] [--check-every 5] [--max-iterations 400] [--dcfr 1.5,0,2]

Solved through the front, :class:`~cfrkit.solvers.public.solver.SubgameSolver` (backend ``"compiled"``):
``--solver board`` (default) runs its ``BoardRangeSolver`` engine (a hand space per board, depth first, suit
isomorphism, optional 16-bit storage); ``--solver flat`` its ``FlatRangeSolver`` engine.  Times are
given in wall seconds and in CPU seconds of the process (``process_time``: all threads), which load distorts less.

Spots (built by :class:`cfrkit.solvers.public.postflop_game.PostflopPublicGame` as postflop-solver's
``ActionTree`` builds them: raises = previous bet + X% of the pot after calling, no raise cap, thresholds 0
as in its ``TreeConfig::default()``):

* ``river``: As Jd 8h 5c 2d, pot 1000, stack 2000, bets and raises "50%, 100%, a";
* ``turn``: 8d As 8s Kh, pot 4000, stack 18000, turn "50%, 100%, a", river "100%, a";
* ``flop``: Qs Jh 2h, pot 200, stack 900, "50%, a" on every street (node counts and the memory the
  kernel would need are printed; it is solved only with ``--solve-flop``).

Full uniform ranges (every pair not touching the board), exploitability = (BR_0 + BR_1) / 2 in % of the
starting pot, checked every ``--check-every`` iterations; times are the solver's iteration time up to
the first check at or below each target (the checks themselves are not counted).  Each (spot,
algorithm) runs in its own process so that its peak resident memory (``ru_maxrss``) is its own.

postflop-solver is not built here (its Rust source is not vendored and this machine is shared); its
figures, measured earlier on a machine like this one (/work/shared/REFERENCE.md), are printed next to
ours as context, not as a same-run comparison: river 133 iterations / 47-80 ms to 0.1%, 0.5 MB; turn 88 /
156 iterations to 1% / 0.3%, 11.3 / 19.6 s on one thread, 85 MB.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

SPOTS = {
    "river": dict(board="AsJd8h5c2d", starting_pot=1000, effective_stack=2000, bet_sizes="50%, 100%, a"),
    "turn": dict(board="8dAs8sKh", starting_pot=4000, effective_stack=18000,
                 bet_sizes={"turn": "50%, 100%, a", "river": "100%, a"}),
    "flop": dict(board="QsJh2h", starting_pot=200, effective_stack=900, bet_sizes="50%, a"),
}
POSTFLOP_SOLVER = {  # recorded (REFERENCE.md): iterations and seconds (1 thread) per target in % of the pot
    "river": {"0.3": (61, 0.037), "0.1": (133, 0.047)},
    "turn": {"1": (88, 11.3), "0.3": (156, 19.6)},
}


def kernel_bytes(flat, hands: int, itemsize: int) -> dict:
    """Bytes the compiled solver holds for one spot: per-action arrays (regrets, strategy sum; the current
    strategy is matched on the fly), value rows of non-terminal nodes, reach rows where a player's reach changes at a
    non-terminal node, chance masks; ``itemsize`` 8 (float64) or 4 (float32)."""
    nt = flat.node_type
    terminal = (nt == 1) | (nt == 2)
    reach_rows = 2 + sum((2 if nt[n] == 3 else 1) * int(np.sum(~terminal[flat.child_start[n]:flat.child_start[n]
                                                                         + flat.num_children[n]]))
                         for n in range(len(nt)) if nt[n] in (0, 3))
    per_action = 2 * flat.slots * hands * itemsize
    per_node = (int((~terminal).sum()) + reach_rows) * hands * itemsize
    masks = flat.masks.size * itemsize
    return {"per_action": per_action, "per_node": per_node, "masks": masks, "total": per_action + per_node + masks}


def run_one(spot: str, algorithm: str, targets, check_every: int, max_iterations: int, dtype: str,
            threads: int, solver_kind: str = "board", compression: bool = False, dcfr=None,
            rounding: str = "stochastic") -> dict:
    from cfrkit.solvers.public import SubgameSolver, build_public_tree
    from cfrkit.solvers.public.flat_range_cfr import DEFAULT_DCFR, FlatTree
    from cfrkit.solvers.public.postflop_game import PostflopPublicGame, action_tree_counts

    game = PostflopPublicGame(**SPOTS[spot])
    t0 = time.perf_counter()
    tree = build_public_tree(game)
    # the front, on the compiled engine of --solver (board: BoardRangeSolver, flat: FlatRangeSolver)
    params = dict(DEFAULT_DCFR, **dict(zip(("alpha", "beta", "gamma"), dcfr or ()))) if solver_kind != "flat" else {}
    front = SubgameSolver(tree, backend="compiled", kernel=solver_kind, algorithm=algorithm,
                          storage="16bit" if compression else dtype, threads=threads, rounding=rounding, **params)
    solver = front.engine   # sizes and layout below are the engine's
    if solver_kind == "flat":
        flat = FlatTree.of(tree)
    build = time.perf_counter() - t0
    pot = front.pot
    hit = {}
    seconds = cpu = 0.0
    curve = []
    while solver.iterations < max_iterations and len(hit) < len(targets):
        t0, c0 = time.perf_counter(), time.process_time()
        front.run(check_every)
        seconds += time.perf_counter() - t0
        cpu += time.process_time() - c0
        e = front.exploitability_percent()
        curve.append((solver.iterations, e, seconds, cpu))
        print(json.dumps({"progress": curve[-1]}), flush=True)
        for thr in targets:
            if thr not in hit and e <= thr:
                hit[thr] = (solver.iterations, seconds, cpu)
    hands = len(solver.hands)
    if solver_kind == "flat":
        mem = kernel_bytes(flat, hands, np.dtype(dtype).itemsize)
        slots, cells = flat.slots, len(tree) * hands
    else:
        lay = solver.layout
        mem = lay.kernel_bytes(np.dtype(dtype).itemsize)
        mem["per_action"] = solver.storage_bytes
        mem["total"] = mem["per_action"] + mem["maps"] + mem["scratch"]
        slots, cells = int(sum(lay.num_children[lay.node_type == 0])), len(tree) * hands
    return {"spot": spot, "algorithm": algorithm, "dtype": dtype + (f"+16bit ({rounding})" if compression else ""),
            "solver": solver_kind, "threads": threads, "action_tree": action_tree_counts(game), "nodes": tree.counts(),
            "slots": slots, "hands": int(hands), "build_seconds": build,
            "hit": {str(k): v for k, v in hit.items()}, "iterations": solver.iterations,
            "kernel_bytes": mem, "bytes_per_node_hand": mem["total"] / cells,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spots", default="river,turn")
    ap.add_argument("--algorithms", default="dcfr,dcfr-postflop")
    ap.add_argument("--targets", default="1,0.3,0.1", help="exploitability targets in %% of the pot")
    ap.add_argument("--check-every", type=int, default=5)
    ap.add_argument("--max-iterations", type=int, default=400)
    ap.add_argument("--dtypes", default="float64,float32", help="storage of the hand vectors")
    ap.add_argument("--threads", default="1", help="OpenMP threads per spot, e.g. 1,2")
    ap.add_argument("--solver", default="board", help="board (BoardRangeSolver, default) or flat (FlatRangeSolver)")
    ap.add_argument("--compression", action="store_true", help="16-bit regrets and strategy sums (board solver)")
    ap.add_argument("--rounding", default="stochastic", choices=("stochastic", "nearest"),
                    help="16-bit storage rounding: stochastic (default) or nearest")
    ap.add_argument("--solve-flop", action="store_true", help="solve the full-range flop spot (minutes, ~4 GB)")
    ap.add_argument("--dcfr", default=None, help="DCFR alpha,beta,gamma for the board solver (default 1.5,0,2)")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # internal: run one spot,algorithm and print JSON
    args = ap.parse_args()
    targets = sorted((float(t) for t in args.targets.split(",")), reverse=True)
    dcfr = tuple(float(x) for x in args.dcfr.split(",")) if args.dcfr else None
    if dcfr is not None and len(dcfr) != 3:
        raise SystemExit("--dcfr takes alpha,beta,gamma, e.g. 1.5,0,4")
    if args.one:
        spot, algorithm, dtype, threads = args.one.split(",")
        print(json.dumps(run_one(spot, algorithm, targets, args.check_every, args.max_iterations, dtype,
                                 int(threads), args.solver, args.compression, dcfr, args.rounding)))
        return 0
    print(f"load average at start: {os.getloadavg()}", flush=True)
    for spot in args.spots.split(","):
        if spot == "flop" and not args.solve_flop:
            from cfrkit.solvers.public.postflop_game import PostflopPublicGame, action_tree_counts

            game = PostflopPublicGame(**SPOTS["flop"])
            print(f"flop {SPOTS['flop']}: postflop-solver action tree (flop, turn, river) = "
                  f"{action_tree_counts(game)}; not solved (see --help)", flush=True)
            continue
        for algorithm, dtype, threads in [(a, d, int(n)) for a in args.algorithms.split(",")
                                          for d in args.dtypes.split(",") for n in args.threads.split(",")]:
            cmd = [sys.executable, os.path.abspath(__file__), "--one", f"{spot},{algorithm},{dtype},{threads}", "--targets",
                   args.targets, "--check-every", str(args.check_every), "--max-iterations", str(args.max_iterations),
                   "--solver", args.solver, "--rounding", args.rounding] + (["--compression"] if args.compression else []) + (
                       ["--dcfr", args.dcfr] if args.dcfr else [])
            # the child's progress lines are echoed as they come, so a long flop run shows its curve
            r = None
            with subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True) as child:
                for line in child.stdout:
                    msg = json.loads(line)
                    if "progress" in msg:
                        it, e, sec, cpu = msg["progress"]
                        print(f"    {spot} {algorithm}: {it} iterations, {e:.4f}% of the pot, {sec:.1f} s wall / "
                              f"{cpu:.1f} CPU s", flush=True)
                    else:
                        r = msg
            if child.returncode != 0 or r is None:
                raise SystemExit(f"{spot} {algorithm}: the solving process failed (exit code {child.returncode})")
            print(f"{spot} [{args.solver}, {algorithm}, {r['dtype']}, {threads} thread(s)]: action tree (flop, turn, river) {tuple(r['action_tree'])}, public tree "
                  f"{r['nodes']}, {r['slots']} action rows x {r['hands']} hands; kernel arrays "
                  f"{r['kernel_bytes']['total'] / 1e6:.0f} MB ({r['bytes_per_node_hand']:.1f} bytes per node x hand), "
                  f"peak RSS {r['peak_rss_mb']:.0f} MB", flush=True)
            for thr in targets:
                ref = POSTFLOP_SOLVER.get(spot, {}).get(f"{thr:g}")
                ctx = f" (postflop-solver, recorded: {ref[0]} iterations, {ref[1]:.3g} s)" if ref else ""
                if f"{thr}" in r["hit"]:
                    n, sec, cpu = r["hit"][f"{thr}"]
                    print(f"  {thr:g}% of the pot: {n} iterations, {sec:.3f} s wall / {cpu:.3f} CPU s on {threads} "
                          f"thread(s){ctx}", flush=True)
                else:
                    print(f"  {thr:g}% of the pot: not reached in {r['iterations']} iterations{ctx}", flush=True)
    print(f"load average at end: {os.getloadavg()}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
