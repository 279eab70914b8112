"""External-sampling MCCFR (with and without regret-based pruning) against the CFR+ blueprint trainer at equal CPU time.

    python benchmarks/blueprint_mccfr.py                              # 169/10/10/10, cap 2, budgets 30/60/120 CPU-s
    python benchmarks/blueprint_mccfr.py --budgets 10,20 --deals 2000 # a quick run

Three trainers on the same abstract game (ACPC heads-up no-limit, 20000 stacks, 50/100 blinds, bets half pot
/ pot / all-in, ``--raise-cap`` raises per round) and the same card abstraction object (E[HS] percentile
buckets ``--buckets``): CFR+ with public chance sampling (``BlueprintTrainer``, one thread, one board per
iteration), ES-MCCFR (``ESMCCFRTrainer``, ``--deals-per-board`` deals per board) and ES-MCCFR with
regret-based pruning.  Each trains on one thread until its own process CPU time reaches each budget; the
average strategy is copied at every budget.  At each budget the three pairs play duplicate head-to-head
matches (``--deals`` seeded deals, each played in both seats) and the row gives the first-named agent's
mbb/hand with a 95% interval.  Also reported: iterations and tree nodes per CPU-second of each trainer
(a CFR+ node is a vector over the ~1081 live hands; an ES node is one hand pair), bytes per information
set of the regret + strategy-sum arrays for this abstraction and for 169/1000/1000/1000.

Results go to ``benchmarks/results/blueprint_mccfr.json``.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import numpy as np  # noqa: E402
from blueprint_common import add_game_arguments, save_results, train_to  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_game_arguments(ap)
    ap.add_argument("--budgets", default="30,60,120", help="CPU seconds per trainer (cumulative checkpoints)")
    ap.add_argument("--deals", type=int, default=20000, help="duplicate deals per match")
    ap.add_argument("--deals-per-board", type=int, default=64)
    ap.add_argument("--prune-warmup", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-prune", action="store_true", help="leave the pruned ES trainer out")
    ap.add_argument("--out", default="blueprint_mccfr", help="results file name (benchmarks/results/NAME.json)")
    args = ap.parse_args(argv)

    from cfrkit.abstraction.ehs_abstraction import EHSAbstraction
    from cfrkit.agents.blueprint import BlueprintAgent
    from cfrkit.poker.match import play_match
    from cfrkit.games import load
    from cfrkit.solvers.blueprint.mccfr import ESMCCFRTrainer
    from cfrkit.solvers.blueprint.strategy import BlueprintStrategy
    from cfrkit.solvers.blueprint.trainer import BlueprintTrainer

    buckets = tuple(int(b) for b in args.buckets.split(","))
    budgets = [float(b) for b in args.budgets.split(",")]
    ab = EHSAbstraction(buckets)
    cfr = BlueprintTrainer(args.game, args.bets, args.raise_cap, abstraction=ab, seed=args.seed)
    tree = cfr.tree
    trainers = {
        "cfr+": cfr,
        "es": ESMCCFRTrainer(args.game, args.bets, args.raise_cap, abstraction=ab, seed=args.seed, tree=tree,
                             deals_per_board=args.deals_per_board),
        "es+prune": ESMCCFRTrainer(args.game, args.bets, args.raise_cap, abstraction=ab, seed=args.seed, tree=tree,
                                   deals_per_board=args.deals_per_board, prune=True, prune_warmup=args.prune_warmup),
    }
    if args.no_prune:
        del trainers["es+prune"]
    infosets = cfr.num_information_sets()
    sizes = {"buckets": list(buckets), "information_sets": infosets, "entries": cfr.total,
             "bytes": cfr.memory_bytes(), "bytes_per_information_set": cfr.memory_bytes() / infosets}
    big = (169, 1000, 1000, 1000)
    _, big_total = tree.slots(big)
    dec = tree.kind == 0
    big_infosets = int(np.asarray(big)[tree.round[dec]].sum())
    sizes_big = {"buckets": list(big), "information_sets": big_infosets, "entries": big_total,
                 "bytes": 8 * big_total, "bytes_per_information_set": 8 * big_total / big_infosets}
    print(f"tree: {tree.num_nodes} nodes; {args.buckets}: {infosets:,} information sets, "
          f"{sizes['bytes'] / 2**20:.1f} MiB, {sizes['bytes_per_information_set']:.1f} B/infoset; 169/1000/1000/1000: "
          f"{big_infosets:,} information sets, {sizes_big['bytes'] / 2**20:.0f} MiB, "
          f"{sizes_big['bytes_per_information_set']:.1f} B/infoset", flush=True)

    game = load(tree.game_string)
    spent = {name: {"cpu": 0.0} for name in trainers}
    rows = []
    speeds = {}
    for budget in budgets:
        snaps = {}
        for name, tr in trainers.items():
            it0, n0, c0 = tr.iterations, tr.stats.nodes, spent[name]["cpu"]
            train_to(tr, budget, spent[name])
            dc = spent[name]["cpu"] - c0
            speeds.setdefault(name, []).append({"budget": budget, "iterations": tr.iterations,
                                                "iterations_per_cpu_s": (tr.iterations - it0) / max(dc, 1e-9),
                                                "nodes_per_cpu_s": (tr.stats.nodes - n0) / max(dc, 1e-9)})
            snaps[name] = BlueprintStrategy(tree, tr.strategy_sum.copy(), ab)
            print(f"{budget:.0f} CPU-s: {name}: {tr.iterations} iterations ({spent[name]['cpu']:.1f} CPU-s), "
                  f"{speeds[name][-1]['iterations_per_cpu_s']:.3g} it/CPU-s, "
                  f"{speeds[name][-1]['nodes_per_cpu_s']:.3g} nodes/CPU-s", flush=True)
        for a, b in (("es", "cfr+"), ("es+prune", "cfr+"), ("es+prune", "es")):
            if a not in trainers:
                continue
            c0 = time.process_time()
            res = play_match(game, [BlueprintAgent(snaps[a], seed=1), BlueprintAgent(snaps[b], seed=2)], args.deals,
                             seed=args.seed + 7, duplicate=True, time_limit=float("inf"))
            est = res.duplicate_estimate
            row = {"budget_cpu_s": budget, "a": a, "b": b, "deals": res.deals, "hands": res.hands_played,
                   "mbb_per_hand": est.mean, "ci95": est.ci95, "match_cpu_s": time.process_time() - c0,
                   "iterations": {a: trainers[a].iterations, b: trainers[b].iterations}}
            rows.append(row)
            print(f"{budget:.0f} CPU-s: {a} vs {b}: {est.mean:+.0f} +- {est.ci95:.0f} mbb/hand over "
                  f"{res.hands_played} hands ({row['match_cpu_s']:.0f} CPU-s)", flush=True)
    pruned = trainers.get("es+prune", trainers["es"])
    out = {"game": tree.game_string, "bets": args.bets, "raise_cap": args.raise_cap,
           "abstraction": f"ehs:{args.buckets}",
           "deals_per_board": args.deals_per_board, "prune_warmup": args.prune_warmup,
           "prune_threshold": pruned.prune_threshold, "regret_floor": pruned.regret_floor, "sizes": sizes,
           "sizes_169_1000": sizes_big, "speeds": speeds, "matches": rows, "cpu_total_s": time.process_time(),
           "load_average": os.getloadavg()[0], "cpus": os.cpu_count()}
    print(f"total CPU {out['cpu_total_s']:.0f} s; saved {save_results(args.out, out)}")


if __name__ == "__main__":
    main()
