"""Threads of the Pluribus trainer with board preparation in the kernel (bucket-table lookups without the GIL).

    python benchmarks/blueprint_threads.py --abstraction emd:/tmp/ps/abs50 --seconds 60
    python benchmarks/blueprint_threads.py --abstraction emd:/tmp/ps/abs50 --bets 0.5+1@2 --paths kernel
    python benchmarks/blueprint_threads.py --synthetic 169,50,50,50 --bets 0.5+1@2 --seconds 30
    python benchmarks/blueprint_threads.py --spread-only                   # the seed spread, no hold'em runs

For each board-preparation path and thread count, a fresh ``PluribusTrainer`` (same seed, ``--bets``, Pluribus
defaults: 64 deals per board, pruning after 200 iterations, discount every 100 iterations) runs ``--warmup``
iterations of ``--boards-per-iteration`` boards (default 2 for every thread count, so that the runs train alike
and reach the same pruning state), then iterates for ``--seconds`` of wall time in chunks of ``--chunk``
iterations; reported: iterations, boards, wall seconds, process CPU seconds (all threads,
``time.process_time``), iterations per wall second and per CPU second, and the load average before and after
(the machine may be shared: CPU seconds are the steadier figure; wall-clock scaling needs idle cores).
``--gil S``: the share of one thread's CPU time spent inside the kernel's board runs and discount passes (the GIL
released) and outside them, which bounds the speed-up of threads on idle cores (Amdahl) independently of the load.
Paths: ``kernel`` (boards, deals, table lookups and strengths in the kernel), ``python`` (the same abstraction's
buckets computed in Python for every board, the path of abstractions without tables), ``ehs`` (the E[HS]
stand-in ``ehs:169,B,B,B`` with the same bucket counts).

``--synthetic B0,B1,B2,B3`` times the same code on tables made up for the purpose (random preflop and flop
tables, zero-filled sparse turn and river memory maps: ``tests/test_blueprint_pluribus_tables.py``) where no
built abstraction is at hand: the kernel does the same work per lookup, but every river bucket is 0, so the
river's regret reads hit fewer cache lines than with a real table.

``--spread``: exploitability of the fixed-board test game (``tests/test_blueprint.py``) after 400 iterations x 2
boards, six seeds, one and two threads, with the buckets read from tables by the kernel (threads race on the
shared table, so a threaded run is not deterministic: the spread over seeds is what it costs).

Results go to ``benchmarks/results/blueprint_threads.json``.
"""
from __future__ import annotations

import argparse
import atexit
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))

import numpy as np  # noqa: E402
from blueprint_common import save_results  # noqa: E402


def speed(abstraction, bets: str, threads: int, seconds: float, warmup: int, chunk: int, seed: int,
          table_lookups: bool = True, boards_per_iteration: int = 2) -> dict:
    """One timed run (see the module docstring)."""
    from cfrkit.solvers.blueprint.betting_tree import parse_action_abstraction
    from cfrkit.solvers.blueprint.pluribus import PluribusTrainer

    spec, cap = parse_action_abstraction(bets)
    tr = PluribusTrainer("holdem", spec, cap if cap is not None else 2, abstraction=abstraction, seed=seed,
                         threads=threads, table_lookups=table_lookups, boards_per_iteration=boards_per_iteration)
    try:
        tr.iterate(warmup)
        load0 = os.getloadavg()[0]
        w0, c0, it0, n0 = time.perf_counter(), time.process_time(), tr.iterations, tr.stats.nodes
        while time.perf_counter() - w0 < seconds:
            tr.iterate(chunk)
        dw, dc = time.perf_counter() - w0, time.process_time() - c0
        its = tr.iterations - it0
        boards = its * tr.boards_per_iteration
        return {"threads": threads, "kernel_lookups": tr.kernel_lookups, "iterations": its, "boards": boards,
                "nodes": tr.stats.nodes - n0, "wall_s": dw, "cpu_s": dc, "boards_per_wall_s": boards / dw,
                "boards_per_cpu_s": boards / dc, "cpu_per_wall": dc / dw, "load_before": load0,
                "load_after": os.getloadavg()[0], "table_mib": tr.memory_bytes() / 2**20}
    finally:
        tr.close()


def gil_fraction(abstraction, bets: str, seconds: float, warmup: int, chunk: int, seed: int, table_lookups: bool,
                 discount_until: int = 10_000) -> dict:
    """Shares of one thread's CPU time inside the kernel's board runs and its discount passes (both release the
    GIL) and outside them (GIL held): on idle cores, ``threads`` threads run at most ``1 / (held + (1 - held) /
    threads)`` times as fast (Amdahl), whatever the load while measuring."""
    from cfrkit._kernels import blueprint_pluribus as kernel
    from cfrkit.solvers.blueprint.betting_tree import parse_action_abstraction
    from cfrkit.solvers.blueprint.pluribus import PluribusTrainer

    spec, cap = parse_action_abstraction(bets)
    tr = PluribusTrainer("holdem", spec, cap if cap is not None else 2, abstraction=abstraction, seed=seed,
                         table_lookups=table_lookups, boards_per_iteration=2, discount_until=discount_until)
    tr.iterate(warmup)
    spent = {"run_boards": 0.0, "discount_int32": 0.0, "discount_float32": 0.0}
    originals = {name: getattr(kernel, name) for name in spent}

    def timed(name):
        def call(*a, **k):
            t = time.thread_time()
            try:
                return originals[name](*a, **k)
            finally:
                spent[name] += time.thread_time() - t
        return call

    for name in spent:
        setattr(kernel, name, timed(name))
    try:
        t0, b0 = time.thread_time(), tr.iterations
        while time.thread_time() - t0 < seconds:
            tr.iterate(chunk)
        total = time.thread_time() - t0
    finally:
        for name, fn in originals.items():
            setattr(kernel, name, fn)
    boards = 2 * (tr.iterations - b0)
    runs = spent["run_boards"] / total
    disc = (spent["discount_int32"] + spent["discount_float32"]) / total
    held = max(0.0, 1.0 - runs - disc)
    return {"table_lookups": table_lookups, "discount_until": discount_until, "boards": boards, "cpu_s": total,
            "boards_per_cpu_s": boards / total, "share_run_boards": runs, "share_discount": disc,
            "share_gil_held": held, "amdahl_2_threads": 1.0 / (held + (1.0 - held) / 2)}


def spread(seeds, iterations: int) -> dict:
    """Exploitability (chips) of the fixed-board game after ``iterations`` x 2 boards, kernel table lookups."""
    from test_blueprint import BOARD, HANDS, SMALL_GAME, FixedBoardGame, KernelPolicy
    from test_blueprint_pluribus_tables import _hand_list_tables

    from cfrkit.cards.hands import NUM_PAIRS, pair_index_of
    from cfrkit.evaluation import exploitability
    from cfrkit.solvers import compile_game
    from cfrkit.solvers.blueprint.betting_tree import build_betting_tree
    from cfrkit.solvers.blueprint.pluribus import PluribusTrainer
    from cfrkit.solvers.blueprint.strategy import BlueprintStrategy
    from cfrkit.solvers.tabular.cfr import policy_to_slots

    tree = build_betting_tree(SMALL_GAME, "0.5+1", 1)
    compiled = compile_game(FixedBoardGame(tree, BOARD, HANDS), cache=False)
    w = np.zeros(NUM_PAIRS)
    w[[pair_index_of(h) for h in HANDS]] = 1.0
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        from pathlib import Path

        ab = _hand_list_tables(Path(tmp))
        for threads in (1, 2):
            values = []
            for seed in seeds:
                tr = PluribusTrainer(SMALL_GAME, "0.5+1", 1, abstraction=ab, tree=tree, board=BOARD, hand_weights=w,
                                     seed=seed, average="all", discount_every=10, discount_until=200,
                                     prune_warmup=50, threads=threads, boards_per_iteration=2)
                assert tr.kernel_lookups
                tr.iterate(iterations)
                tr.close()
                pol = KernelPolicy(BlueprintStrategy(tree, tr.full_strategy(), tr.abstraction), compiled)
                values.append(float(exploitability(compiled, policy_to_slots(compiled, pol))))
            out[f"{threads}_threads"] = {"exploitability_chips": values, "mean": float(np.mean(values)),
                                         "sd": float(np.std(values, ddof=1))}
            print(f"fixed-board game, kernel table lookups, {iterations} iterations x 2 boards, {threads} thread(s): "
                  f"exploitability {np.mean(values):.2f} +- {np.std(values, ddof=1):.2f} (sd over {len(seeds)} "
                  f"seeds) chips", flush=True)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--abstraction", default=None, help="a bucket-table abstraction, emd:DIR")
    ap.add_argument("--synthetic", default=None, metavar="B0,B1,B2,B3",
                    help="made-up tables of these bucket counts instead of --abstraction")
    ap.add_argument("--bets", default="rich", help="action abstraction (default rich: cap 4)")
    ap.add_argument("--paths", default="kernel,python,ehs", help="board-preparation paths to time")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--seconds", type=float, default=60.0, help="wall seconds per timed run")
    ap.add_argument("--warmup", type=int, default=300, help="iterations before timing (past the pruning warm-up)")
    ap.add_argument("--chunk", type=int, default=50, help="iterations per iterate() call")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--boards-per-iteration", type=int, default=2)
    ap.add_argument("--gil", type=float, default=0.0, metavar="CPU_S",
                    help="also the shares of CPU inside / outside the GIL-free kernel calls, this many thread-CPU "
                         "seconds per case (kernel / python lookups, discount phase on / off)")
    ap.add_argument("--spread", action="store_true", help="also the seed spread on the fixed-board game")
    ap.add_argument("--spread-only", action="store_true")
    ap.add_argument("--out", default="blueprint_threads")
    args = ap.parse_args(argv)

    out = {"bets": args.bets, "abstraction": args.abstraction, "cpus": os.cpu_count(), "runs": []}
    if not args.spread_only:
        if (args.abstraction is None) == (args.synthetic is None):
            ap.error("give --abstraction emd:DIR or --synthetic B0,B1,B2,B3 for the speed runs")
        from cfrkit.solvers.blueprint.abstraction_spec import abstraction_from_spec

        if args.synthetic:
            from pathlib import Path

            from test_blueprint_pluribus_tables import TableAbstraction, _tables

            buckets = tuple(int(b) for b in args.synthetic.split(","))
            tmp = tempfile.mkdtemp(prefix="blueprint_threads_")  # sparse files: removed at exit
            atexit.register(shutil.rmtree, tmp, True)
            table = TableAbstraction(_tables(Path(tmp), buckets), buckets)
            out["abstraction"] = f"synthetic:{args.synthetic}"
        else:
            table = abstraction_from_spec(args.abstraction)
        ehs = f"ehs:{','.join(str(table.num_buckets(r)) for r in range(4))}"
        for path in [p for p in args.paths.split(",") if p]:
            for threads in [int(t) for t in args.threads.split(",")]:
                ab = abstraction_from_spec(ehs) if path == "ehs" else table
                r = speed(ab, args.bets, threads, args.seconds, args.warmup, args.chunk, args.seed,
                          table_lookups=path == "kernel", boards_per_iteration=args.boards_per_iteration)
                r["path"] = path
                out["runs"].append(r)
                print(f"{path:6s} {threads} thread(s): {r['iterations']:,} iterations ({r['boards']:,} boards) in "
                      f"{r['wall_s']:.0f} wall s / {r['cpu_s']:.0f} CPU s: {r['boards_per_wall_s']:.0f} boards per "
                      f"wall s, {r['boards_per_cpu_s']:.0f} per CPU s, CPU/wall {r['cpu_per_wall']:.2f} "
                      f"(load {r['load_before']:.1f} -> {r['load_after']:.1f})", flush=True)
    if args.gil:
        out["gil"] = []
        for lookups in (True, False):
            for until in (10_000, 0):
                g = gil_fraction(table, args.bets, args.gil, args.warmup, args.chunk, args.seed, lookups, until)
                out["gil"].append(g)
                print(f"{'kernel' if lookups else 'python'} lookups, discount {'on' if until else 'off'}: "
                      f"{g['boards_per_cpu_s']:.0f} boards per CPU s; CPU in board runs "
                      f"{100 * g['share_run_boards']:.1f}%, discount {100 * g['share_discount']:.1f}%, GIL held "
                      f"{100 * g['share_gil_held']:.1f}%: two threads at most {g['amdahl_2_threads']:.2f}x on idle "
                      f"cores", flush=True)
    if args.spread or args.spread_only:
        out["spread"] = spread(range(6), 400)
    out.update(cpu_total_s=time.process_time(), load_average=os.getloadavg()[0])
    print(f"saved {save_results(args.out, out)}")


if __name__ == "__main__":
    main()
