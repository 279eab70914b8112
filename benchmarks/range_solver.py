"""The range solver on postflop-solver's spots: node counts, iterations, CPU / wall time and memory to 1% / 0.3% / 0.1%.

    python benchmarks/range_solver.py [--spots river,turn] [--algorithms dcfr,dcfr-postflop,dcfr+,pdcfr+]
                                      [--dtypes float64,float32]
                                      [--threads 1,2,auto] [--load 0,1] [--load-session same|other]
                                      [--iterations 30] [--solver board|flat] [--storage-default]
                                      [--compression [--rounding nearest]] [--solve-flop]
                                      [--targets 1,0.3,0.1] [--check-every 5] [--max-iterations 400] [--dcfr 1.5,0,2]
                                      [--postflop-solver BINARY [--postflop-solver-f32] [--repeats N]]

Solved through the front, :class:`~cfrkit.solvers.public.solver.SubgameSolver` (backend ``"compiled"``):
``--solver board`` (default) runs its ``BoardRangeSolver`` engine (a hand space per board, depth first, suit
isomorphism, optional 16-bit storage); ``--solver flat`` its ``FlatRangeSolver`` engine.  Every run
reports CPU seconds of the process (``process_time``: all threads; load distorts them less than wall seconds),
wall seconds, peak resident memory (``VmHWM``: the whole Python process, tree included) and the 1-minute load
average of the machine at its end.

Thread scaling (issue 30): ``--iterations N`` times exactly N iterations per run (no checks; the exploitability
after them is printed, untimed), and ``--load 0,2`` repeats every run beside N busy processes (pure-Python loops
started by the benchmark, stopped after the run), so that ``--threads 1,2 --load 0,2`` gives the table of 1 and 2
threads on an idle and on a loaded machine.  ``--load-session same`` (default) starts them in the benchmark's own
session, so the scheduler's autogroup puts them in the solver's group (a second thread then takes CPU from them);
``--load-session other`` starts each in a session of its own (``setsid``: its own autogroup, as another user's or
terminal's work is), where a second thread of the solver gets no more CPU share.  ``--threads auto`` runs the
solver's default, the thread count chosen while it runs (:class:`~cfrkit.solvers.public.thread_chooser.ThreadChooser`:
1 or the cores the process may use, by timing chunks of iterations); each run prints which count ran how many
iterations.  ``--repeats`` interleaves the thread counts (1, 2, auto, 1, 2, auto, ...).  The summary at the end
lists every run.

Storage: ``--dtypes`` names it per run (``--compression``: 16-bit); ``--storage-default`` instead leaves it to the
library's default (16-bit when the float32 tables would exceed 16 MB, as on the flop and turn; float32 otherwise).

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
algorithm, dtype, threads, load) runs in its own process so that its peak resident memory is its own.

``--postflop-solver BINARY`` runs postflop-solver (built by ``benchmarks/postflop_solver/build.sh``, see
docs/range_solver.md) right after each of our runs on the same spot, threads and load, and prints the ratios of
this run.  Without it, postflop-solver (commit 9d1509f, f32, built from source) was measured in the same sitting as cfrkit on this
2-core machine (issue 30's table): river to 0.1% 133 iterations, 0.087 CPU s, 4 MiB; turn to 0.3% 156
iterations, 22.5 CPU s, 88 MiB (2 threads: 22.8 CPU s, 49 s wall, machine load 2.5-7); flop 30 iterations on 2
threads 321 CPU s, 5.47 GiB.  The benchmark prints the ratio of ours to these (CPU seconds, CPU seconds per
iteration with ``--iterations``, peak RSS); they are recorded figures, not a same-run comparison: to rerun
postflop-solver beside cfrkit build it as docs/range_solver.md describes.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from typing import TYPE_CHECKING, List, Optional

import numpy as np

if TYPE_CHECKING:
    import subprocess

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

SPOTS = {
    "river": dict(board="AsJd8h5c2d", starting_pot=1000, effective_stack=2000, bet_sizes="50%, 100%, a"),
    "turn": dict(board="8dAs8sKh", starting_pot=4000, effective_stack=18000,
                 bet_sizes={"turn": "50%, 100%, a", "river": "100%, a"}),
    "flop": dict(board="QsJh2h", starting_pot=200, effective_stack=900, bet_sizes="50%, a"),
}
# postflop-solver 9d1509f (f32), issue 30's same-sitting table: per spot and thread count, the target in % of the pot
# (None: a fixed iteration count), its iterations, CPU seconds and peak RSS (MiB)
POSTFLOP_SOLVER = {
    ("river", 1): (0.1, 133, 0.087, 4),
    ("turn", 1): (0.3, 156, 22.5, 88),
    ("turn", 2): (0.3, 156, 22.8, 88),
    ("flop", 2): (None, 30, 321.0, 5.47 * 1024),
}


def postflop_solver_ratio(spot: str, threads: int, cpu: float, iterations: int, rss_mb: float,
                          target: Optional[float] = None) -> str:
    """Ours / postflop-solver's recorded figures (CPU seconds to ``target``, else CPU seconds per iteration;
    peak RSS), as text; empty when nothing was recorded for the spot."""
    ref = POSTFLOP_SOLVER.get((spot, threads)) or POSTFLOP_SOLVER.get((spot, 1 if threads > 1 else 2))
    if ref is None:
        return ""
    r_target, r_it, r_cpu, r_rss = ref
    if target is not None:
        if r_target is None or abs(r_target - target) > 1e-9:
            return ""
        what = f"CPU {cpu / r_cpu:.2f}x postflop-solver's {r_cpu:g} s to {target:g}%"
    else:
        what = (f"CPU per iteration {cpu / max(iterations, 1) / (r_cpu / r_it):.2f}x postflop-solver's "
                f"{r_cpu / r_it:.3g} s")
    return f"{what}, peak RSS {rss_mb / r_rss:.2f}x its {r_rss:g} MiB (recorded in issue 30's sitting, not this run)"


def fresh_process(cmd: List[str]) -> List[str]:
    """``cmd`` run by a shell that forks it: the peak RSS (``ru_maxrss``) the program reports is its own.
    Started directly from this process (vfork + exec), its ``ru_maxrss`` would start at this Python process's
    peak (Linux carries the old memory's high-water mark across exec): postflop-solver's river printed 29 MiB,
    the parent's size, against its own 3.3 MiB (VmHWM; issue 30 part 12)."""
    return ["sh", "-c", '"$0" "$@"; exit $?'] + list(cmd)


def run_postflop_solver(binary: str, spot: str, targets, max_iterations: int, threads: int, iterations: int = 0,
                        compression: bool = False) -> dict:
    """postflop-solver built with benchmarks/postflop_solver/build.sh on ``spot`` (``RAYON_NUM_THREADS``), in
    this run: per target the first check at or below it ``(iterations, CPU s, wall s)``, or with
    ``iterations`` the figures after exactly that many; its peak RSS (MiB)."""
    import subprocess

    n = iterations or max_iterations
    cmd = [binary, spot, f"{-1.0 if iterations else min(targets):g}", str(n)] + (["compress"] if compression else [])
    out = subprocess.run(fresh_process(cmd), env=dict(os.environ, RAYON_NUM_THREADS=str(threads)), capture_output=True, text=True,
                         check=True).stdout
    hit, last, rss = {}, None, float("nan")
    for line in out.splitlines():
        if " iterations, " in line:
            f = line.replace(",", "").split()
            it, e, cpu, wall = int(f[0]), float(f[2].rstrip("%")), float(f[6]), float(f[9])
            last = (it, cpu, wall, e)
            for thr in targets:
                if thr not in hit and e <= thr:
                    hit[thr] = (it, cpu, wall)
        elif line.startswith("peak RSS"):
            rss = int(line.split()[2]) / 1024
    return {"hit": hit, "last": last, "peak_rss_mb": rss}


def start_load(n: int, other_session: bool = False) -> List[subprocess.Popen]:
    """``n`` busy processes (a pure-Python loop each) that load the machine while a run is timed; with
    ``other_session`` each in a new session (``setsid``: its own scheduler autogroup, like another user's work)."""
    import subprocess

    return [subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=other_session)
            for _ in range(n)]


def stop_load(procs: List[subprocess.Popen]) -> None:
    for proc in procs:
        proc.kill()
        proc.wait()


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
            threads: Optional[int], solver_kind: str = "board", compression: bool = False, dcfr=None,
            rounding: str = "stochastic", iterations: int = 0, storage_default: bool = False) -> dict:
    """One spot in this process: to the targets (``iterations`` 0) or exactly ``iterations`` iterations;
    ``threads`` None: the solver's adaptive thread count; ``storage_default``: the library's default storage."""
    from cfrkit.solvers.public import SubgameSolver, build_public_tree
    from cfrkit.solvers.public.flat_range_cfr import FlatTree
    from cfrkit.solvers.public.postflop_game import PostflopPublicGame, action_tree_counts

    game = PostflopPublicGame(**SPOTS[spot])
    t0 = time.perf_counter()
    tree = build_public_tree(game)
    # the front, on the compiled engine of --solver (board: BoardRangeSolver, flat: FlatRangeSolver)
    # --dcfr: the exponents of the algorithm; else each algorithm's defaults (board_range_cfr.ALGORITHM_DEFAULTS)
    params = dict(zip(("alpha", "beta", "gamma"), dcfr or ())) if solver_kind != "flat" else {}
    front = SubgameSolver(tree, backend="compiled", kernel=solver_kind, algorithm=algorithm,
                          storage=None if storage_default else "16bit" if compression else dtype, threads=threads,
                          rounding=rounding, **params)
    solver = front.engine   # sizes and layout below are the engine's
    if solver_kind == "flat":
        flat = FlatTree.of(tree)
    build = time.perf_counter() - t0
    pot = front.pot
    hit = {}
    seconds = cpu = 0.0
    curve = []
    final = None
    if iterations > 0:
        t0, c0 = time.perf_counter(), time.process_time()
        front.run(iterations)
        seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
        final = front.exploitability_percent()
    while iterations == 0 and solver.iterations < max_iterations and len(hit) < len(targets):
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
        mem["allin"] = solver.allin_bytes   # equity matrices of the all-in run-outs
        mem["total"] = mem["per_action"] + mem["maps"] + mem["scratch"] + mem["allin"]
        slots, cells = int(sum(lay.num_children[lay.node_type == 0])), len(tree) * hands
    stats = solver.thread_stats if hasattr(solver, "thread_stats") else {"iterations": {threads: solver.iterations}}
    storage = front.storage + (f" ({rounding})" if front.storage == "16bit" else "")
    return {"spot": spot, "algorithm": algorithm,
            "dtype": (f"default: {storage}" if storage_default else
                      dtype + (f"+16bit ({rounding})" if compression else "")),
            "thread_iterations": {str(k): v for k, v in stats["iterations"].items()},
            "thread_seconds": {str(k): v for k, v in stats.get("seconds", {}).items()},
            "probes": stats.get("probes", 0), "switches": stats.get("switches", 0),
            "probe_history": stats.get("history", []),
            "solver": solver_kind, "threads": threads, "action_tree": action_tree_counts(game), "nodes": tree.counts(),
            "slots": slots, "hands": int(hands), "build_seconds": build,
            "hit": {str(k): v for k, v in hit.items()}, "iterations": solver.iterations,
            "seconds": seconds, "cpu": cpu, "exploitability": final, "load": os.getloadavg()[0],
            "kernel_bytes": mem, "bytes_per_node_hand": mem["total"] / cells,
            "peak_rss_mb": peak_rss_mb()}


def peak_rss_mb() -> float:
    """This process's peak resident memory (MiB): ``VmHWM`` (its own memory's high-water mark) where /proc has it;
    else ``ru_maxrss``, which on Linux starts at the parent's peak when started by fork/vfork + exec."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spots", default="river,turn")
    ap.add_argument("--algorithms", default="dcfr,dcfr-postflop")
    ap.add_argument("--targets", default="1,0.3,0.1", help="exploitability targets in %% of the pot")
    ap.add_argument("--check-every", type=int, default=5)
    ap.add_argument("--max-iterations", type=int, default=400)
    ap.add_argument("--dtypes", default="float64,float32", help="storage of the hand vectors")
    ap.add_argument("--threads", default="1", help="OpenMP threads per spot, e.g. 1,2,auto (auto: the solver's "
                                                   "default, chosen while it runs by timing 1 and all cores)")
    ap.add_argument("--load", default="0", help="busy processes beside each run, e.g. 0,2 (idle and loaded)")
    ap.add_argument("--load-session", default="same", choices=("same", "other"),
                    help="start the busy processes in the benchmark's session (same autogroup as the solver) or "
                         "each in a new one (setsid: another session's work)")
    ap.add_argument("--storage-default", action="store_true",
                    help="leave the storage to the library's default (16-bit when the float32 tables would exceed "
                         "16 MB: the flop and turn; float32 otherwise) instead of --dtypes")
    ap.add_argument("--iterations", type=int, default=0,
                    help="time exactly this many iterations per run (no targets; thread scaling)")
    ap.add_argument("--solver", default="board", help="board (BoardRangeSolver, default) or flat (FlatRangeSolver)")
    ap.add_argument("--compression", action="store_true", help="16-bit regrets and strategy sums (board solver)")
    ap.add_argument("--rounding", default="stochastic", choices=("stochastic", "nearest"),
                    help="16-bit storage rounding: stochastic (default) or nearest")
    ap.add_argument("--solve-flop", action="store_true", help="solve the full-range flop spot (minutes, ~4 GB)")
    ap.add_argument("--dcfr", default=None, help="alpha,beta,gamma of the algorithm for the board solver (default: "
                                                 "the algorithm's: dcfr 1.5,0,2, dcfr+ 1.5,0,4, pdcfr+ 2.3,0,5)")
    ap.add_argument("--postflop-solver", default=None, metavar="BINARY",
                    help="postflop-solver's cfrkit_bench (benchmarks/postflop_solver/build.sh): run it beside every "
                         "run, same spot, threads and load, and print the ratios of this run")
    ap.add_argument("--postflop-solver-f32", action="store_true",
                    help="with --compression, run postflop-solver in f32 (issue 30's reference) instead of its own "
                         "16-bit mode")
    ap.add_argument("--repeats", type=int, default=1,
                    help="run every spot this many times (each beside its own postflop-solver run) and print the "
                         "medians: the river's milliseconds vary by 20-30%% between identical runs")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # internal: run one spot,algorithm and print JSON
    args = ap.parse_args()
    targets = sorted((float(t) for t in args.targets.split(",")), reverse=True)
    dcfr = tuple(float(x) for x in args.dcfr.split(",")) if args.dcfr else None
    if dcfr is not None and len(dcfr) != 3:
        raise SystemExit("--dcfr takes alpha,beta,gamma, e.g. 1.5,0,4")
    if args.one:
        spot, algorithm, dtype, threads = args.one.split(",")
        print(json.dumps(run_one(spot, algorithm, targets, args.check_every, args.max_iterations, dtype,
                                 None if threads == "auto" else int(threads), args.solver, args.compression, dcfr,
                                 args.rounding, args.iterations, args.storage_default)))
        return 0
    if args.repeats < 1:
        raise SystemExit("--repeats must be at least 1")
    # here, not at the top: the solving child (--one) does not load it, so its peak RSS is the solve's
    import subprocess

    print(f"load average at start: {os.getloadavg()}", flush=True)
    summary = []
    medians = {}  # (run label, target) -> [(our CPU s, its CPU s)] over the repeats
    timed = {}    # --iterations: (spot, algorithm, storage, load) -> threads -> [(CPU s, wall s, iterations per count)]
    for spot in args.spots.split(","):
        if spot == "flop" and not args.solve_flop:
            from cfrkit.solvers.public.postflop_game import PostflopPublicGame, action_tree_counts

            game = PostflopPublicGame(**SPOTS["flop"])
            print(f"flop {SPOTS['flop']}: postflop-solver action tree (flop, turn, river) = "
                  f"{action_tree_counts(game)}; not solved (see --help)", flush=True)
            continue
        for algorithm, dtype, load, threads in [(a, d, int(k), n) for a in args.algorithms.split(",")
                                                for d in args.dtypes.split(",") for k in args.load.split(",")
                                                for _ in range(args.repeats)
                                                for n in args.threads.split(",")]:
            cmd = [sys.executable, os.path.abspath(__file__), "--one", f"{spot},{algorithm},{dtype},{threads}", "--targets",
                   args.targets, "--check-every", str(args.check_every), "--max-iterations", str(args.max_iterations),
                   "--solver", args.solver, "--rounding", args.rounding, "--iterations", str(args.iterations)] + (
                       ["--compression"] if args.compression else []) + (["--dcfr", args.dcfr] if args.dcfr else []) + (
                       ["--storage-default"] if args.storage_default else [])
            nthreads = len(os.sched_getaffinity(0)) if threads == "auto" else int(threads)  # postflop-solver's
            # the child's progress lines are echoed as they come, so a long flop run shows its curve
            r = None
            busy = start_load(load, args.load_session == "other")
            try:
                with subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True) as child:
                    for line in child.stdout:
                        msg = json.loads(line)
                        if "progress" in msg:
                            it, e, sec, cpu = msg["progress"]
                            print(f"    {spot} {algorithm}: {it} iterations, {e:.4f}% of the pot, {sec:.1f} s wall / "
                                  f"{cpu:.1f} CPU s", flush=True)
                        else:
                            r = msg
                ref = None
                if args.postflop_solver:
                    ref = run_postflop_solver(args.postflop_solver, spot, targets, args.max_iterations, nthreads,
                                              args.iterations, args.compression and not args.postflop_solver_f32)
            finally:
                stop_load(busy)
            if child.returncode != 0 or r is None:
                raise SystemExit(f"{spot} {algorithm}: the solving process failed (exit code {child.returncode})")
            ran = ", ".join(f"{k}: {v}" for k, v in r["thread_iterations"].items())
            label = (f"{spot} [{args.solver}, {algorithm}, {r['dtype']}, "
                     + (f"adaptive threads ({ran} it; {r['probes']} probes, {r['switches']} switches)"
                        if threads == "auto" else f"{threads} thread(s)")
                     + f", {load} busy process(es){' in other sessions' if load and args.load_session == 'other' else ''}]")
            print(f"{label}: action tree (flop, turn, river) {tuple(r['action_tree'])}, public tree "
                  f"{r['nodes']}, {r['slots']} action rows x {r['hands']} hands; kernel arrays "
                  f"{r['kernel_bytes']['total'] / 1e6:.0f} MB ({r['bytes_per_node_hand']:.1f} bytes per node x hand), "
                  f"peak RSS {r['peak_rss_mb']:.1f} MiB, load average {r['load']:.2f} at the end", flush=True)
            if r["probe_history"]:
                print("  probes (ms per iteration at 1 / all threads -> chosen): " + ", ".join(
                    f"{1e3 * lo:.0f} / {1e3 * hi:.0f} -> {c}" for lo, hi, c in r["probe_history"]), flush=True)
            if args.iterations:
                ratio = postflop_solver_ratio(spot, nthreads, r["cpu"], r["iterations"], r["peak_rss_mb"])
                print(f"  {r['iterations']} iterations: {r['cpu']:.3f} CPU s, {r['seconds']:.3f} s wall, "
                      f"exploitability {r['exploitability']:.4f}% of the pot" + (f"; {ratio}" if ratio else ""),
                      flush=True)
                summary.append((label, r["cpu"], r["seconds"], r["peak_rss_mb"], r["load"]))
                timed.setdefault((spot, algorithm, r["dtype"], load), {}).setdefault(threads, []).append(
                    (r["cpu"], r["seconds"], r["thread_iterations"], r["load"]))
                if ref is not None and ref["last"] is not None:
                    it, cpu, wall, e = ref["last"]
                    print(f"  postflop-solver, this run: {it} iterations, {cpu:.3f} CPU s, {wall:.3f} s wall, "
                          f"exploitability {e:.4f}%, peak RSS {ref['peak_rss_mb']:.1f} MiB; ours / its: CPU "
                          f"{r['cpu'] / cpu:.2f}, wall {r['seconds'] / wall:.2f}, RSS "
                          f"{r['peak_rss_mb'] / ref['peak_rss_mb']:.2f}", flush=True)
                    summary.append((f"postflop-solver, {spot}, {nthreads} thread(s), {load} busy", cpu, wall,
                                    ref["peak_rss_mb"], r["load"]))
            for thr in targets if not args.iterations else ():
                if f"{thr}" in r["hit"]:
                    n, sec, cpu = r["hit"][f"{thr}"]
                    ratio = postflop_solver_ratio(spot, nthreads, cpu, n, r["peak_rss_mb"], thr)
                    print(f"  {thr:g}% of the pot: {n} iterations, {sec:.3f} s wall / {cpu:.3f} CPU s on {threads} "
                          f"thread(s)" + (f"; {ratio}" if ratio else ""), flush=True)
                    summary.append((f"{label} to {thr:g}%", cpu, sec, r["peak_rss_mb"], r["load"]))
                    if ref is not None and thr in ref["hit"]:
                        pn, pcpu, pwall = ref["hit"][thr]
                        print(f"    postflop-solver, this run: {pn} iterations, {pwall:.3f} s wall / {pcpu:.3f} CPU s, "
                              f"peak RSS {ref['peak_rss_mb']:.1f} MiB; ours / its: CPU {cpu / pcpu:.2f}, wall "
                              f"{sec / pwall:.2f}, RSS {r['peak_rss_mb'] / ref['peak_rss_mb']:.2f}", flush=True)
                        summary.append((f"postflop-solver, {spot}, {nthreads} thread(s), {load} busy, to {thr:g}%", pcpu,
                                        pwall, ref["peak_rss_mb"], r["load"]))
                        medians.setdefault((label, thr), []).append((cpu, pcpu))
                else:
                    print(f"  {thr:g}% of the pot: not reached in {r['iterations']} iterations", flush=True)
    print(f"load average at end: {os.getloadavg()}", flush=True)
    if summary:
        print("\n| run | CPU s | wall s | peak RSS MiB | load average |\n|---|---|---|---|---|")
        for label, cpu, sec, rss, load in summary:
            print(f"| {label} | {cpu:.2f} | {sec:.2f} | {rss:.1f} | {load:.2f} |")
    if args.repeats > 1 and timed:
        print(f"\nmedians over {args.repeats} interleaved repeats of {args.iterations} iterations"
              + (" (busy processes in other sessions)" if args.load_session == "other" else "")
              + "\n| spot, algorithm, storage | busy | threads | CPU s | wall s (runs) | wall / best fixed count's |"
              "\n|---|---|---|---|---|---|")
        for (spot, algorithm, dtype, load), by in timed.items():
            wall = {n: float(np.median([w for _, w, _, _ in runs])) for n, runs in by.items()}
            best = min((w for n, w in wall.items() if n != "auto"), default=float("nan"))
            for n, runs in by.items():
                ran = ""
                if n == "auto":
                    tot = {}
                    for _, _, it, _ in runs:
                        for k, v in it.items():
                            tot[k] = tot.get(k, 0) + v
                    ran = " (iterations " + ", ".join(f"{k} thread(s): {v}" for k, v in sorted(tot.items())) + ")"
                print(f"| {spot}, {algorithm}, {dtype} | {load} | {n}{ran} | "
                      f"{np.median([c for c, _, _, _ in runs]):.2f} | {wall[n]:.2f} "
                      f"({', '.join(f'{w:.2f}' for _, w, _, _ in runs)}) | {wall[n] / best:.3f} |")
    if args.repeats > 1 and medians:
        print(f"\nmedians over {args.repeats} repeats (each ratio against the postflop-solver run beside it)\n"
              "| run | target | our CPU s | its CPU s | ratio (median of the runs' ratios) | ratios |\n|---|---|---|---|---|---|")
        for (label, thr), pairs in medians.items():
            ours, its = np.median([a for a, _ in pairs]), np.median([b for _, b in pairs])
            ratios = [a / b for a, b in pairs]
            print(f"| {label} | {thr:g}% | {ours:.4f} | {its:.4f} | {np.median(ratios):.3f} | "
                  f"{', '.join(f'{x:.2f}' for x in ratios)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
