"""The blueprint trainer at Pluribus' recipe against the CFR+ trainer (and plain ES-MCCFR) at equal CPU time.

    python benchmarks/blueprint_pluribus.py                                # 169/10/10/10, cap 2, 30/90 CPU-s
    python benchmarks/blueprint_pluribus.py --budgets 10 --deals 1000      # a quick run
    python benchmarks/blueprint_pluribus.py --sizes-only                   # table sizes, no training

Trainers on the same abstract game (ACPC heads-up no-limit, 20000 stacks, 50/100 blinds; ``--bets``, default
half pot / pot / all-in with ``--raise-cap`` 2) and the same card-abstraction object (E[HS] ``--buckets``):

* ``cfr+``: ``BlueprintTrainer`` (public chance sampling CFR+, float32, one board per iteration);
* ``es``: ``ESMCCFRTrainer`` (external sampling, float32, linear averaging, no pruning);
* ``pluribus``: ``PluribusTrainer`` defaults (int32 regrets, preflop-only strategy sums, Linear-CFR discount
  every 100 iterations up to 10,000, pruning after 200 iterations).

Each trains on one thread until its own process CPU time reaches each budget (cumulative); at each budget the
average strategies play seeded duplicate matches (``--deals`` deals, both seats; mbb/hand of the first-named
with a 95% interval).  Also: iterations per CPU-second, bytes per information set (this abstraction, and
169/1000/1000/1000 with this action abstraction and with the ``rich`` preset), and -- for threads, whose
lock-free updates make a run non-deterministic -- the spread over seeds of the exploitability of the
fixed-board test game (``tests/test_blueprint.py``) with one and two threads at equal iterations, plus the
wall-clock iterations/s of two threads on the hold'em abstraction.

Results go to ``benchmarks/results/blueprint_pluribus.json``.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))

import numpy as np  # noqa: E402
from blueprint_common import add_game_arguments, save_results, train_to  # noqa: E402


def sizes(tree, buckets):
    """Bytes per information set of each trainer's tables for ``buckets`` on ``tree``."""
    from cfrkit.solvers.blueprint.pluribus import estimate_bytes

    est = estimate_bytes(tree, buckets, "int32", "preflop")
    n = est["information_sets"]
    old = 8 * est["entries"]  # two float32 arrays (CFR+ and ES)
    return {"buckets": list(buckets), "betting_nodes": tree.num_nodes, "information_sets": n,
            "entries": est["entries"], "cfr+_bytes": old, "cfr+_bytes_per_information_set": old / n,
            "pluribus_bytes": est["table_bytes"], "pluribus_bytes_per_information_set": est["table_bytes"] / n}


def thread_spread(seeds, iterations):
    """Exploitability (chips) of the fixed-board test game after ``iterations``, per seed, 1 and 2 threads."""
    from test_blueprint import BOARD, HANDS, SMALL_GAME, FixedBoardGame, HandListAbstraction, KernelPolicy

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
    for threads in (1, 2):
        values = []
        for seed in seeds:
            # boards_per_iteration 2 in both: equal work per iteration, only the races differ
            tr = PluribusTrainer(SMALL_GAME, "0.5+1", 1, abstraction=HandListAbstraction(HANDS), tree=tree,
                                 board=BOARD, hand_weights=w, seed=seed, average="all", discount_every=10,
                                 discount_until=200, prune_warmup=50, threads=threads, boards_per_iteration=2)
            tr.iterate(iterations)
            tr.close()
            pol = KernelPolicy(BlueprintStrategy(tree, tr.full_strategy(), tr.abstraction), compiled)
            values.append(float(exploitability(compiled, policy_to_slots(compiled, pol))))
        out[f"{threads}_threads"] = {"exploitability_chips": values, "mean": float(np.mean(values)),
                                     "sd": float(np.std(values, ddof=1))}
        print(f"fixed-board game, {iterations} iterations x 2 boards, {threads} thread(s): exploitability "
              f"{np.mean(values):.2f} +- {np.std(values, ddof=1):.2f} (sd over {len(seeds)} seeds) chips", flush=True)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_game_arguments(ap)
    ap.add_argument("--budgets", default="30,90", help="CPU seconds per trainer (cumulative checkpoints)")
    ap.add_argument("--deals", type=int, default=5000, help="duplicate deals per match")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-es", action="store_true", help="leave plain ES-MCCFR out")
    ap.add_argument("--no-prune", action="store_true", help="the pluribus trainer without pruning")
    ap.add_argument("--average", choices=("preflop", "all"), default="preflop",
                    help="the pluribus trainer's strategy sums: first round only (default, Pluribus) or everywhere")
    ap.add_argument("--thread-seconds", type=float, default=20.0,
                    help="wall seconds of the two-thread speed run on the hold'em abstraction (0: skip)")
    ap.add_argument("--sizes-only", action="store_true")
    ap.add_argument("--out", default="blueprint_pluribus", help="results file name (benchmarks/results/NAME.json)")
    args = ap.parse_args(argv)

    from cfrkit.solvers.blueprint.betting_tree import ACTION_PRESETS, build_betting_tree

    buckets = tuple(int(b) for b in args.buckets.split(","))
    tree = build_betting_tree(args.game, args.bets, args.raise_cap)
    out = {"game": tree.game_string, "bets": args.bets, "raise_cap": args.raise_cap, "average": args.average,
           "prune": not args.no_prune, "abstraction": f"ehs:{args.buckets}",
           "sizes": [sizes(tree, buckets), sizes(tree, (169, 1000, 1000, 1000))]}
    if args.sizes_only:
        rich = build_betting_tree(args.game, *ACTION_PRESETS["rich"])
        out["sizes"].append(dict(sizes(rich, (169, 1000, 1000, 1000)), preset="rich"))
    for s in out["sizes"]:
        print(f"{s.get('preset', args.bets)} {s['buckets']}: {s['betting_nodes']:,} nodes, {s['information_sets']:,} "
              f"information sets; CFR+/ES {s['cfr+_bytes'] / 2**20:,.1f} MiB ({s['cfr+_bytes_per_information_set']:.1f}"
              f" B/infoset), pluribus {s['pluribus_bytes'] / 2**20:,.1f} MiB "
              f"({s['pluribus_bytes_per_information_set']:.1f} B/infoset)", flush=True)
    if args.sizes_only:
        _save(args.out, out)
        return

    from cfrkit.abstraction.ehs_abstraction import EHSAbstraction
    from cfrkit.agents.blueprint import BlueprintAgent, duplicate_match
    from cfrkit.games import load
    from cfrkit.solvers.blueprint.mccfr import ESMCCFRTrainer
    from cfrkit.solvers.blueprint.pluribus import PluribusTrainer
    from cfrkit.solvers.blueprint.strategy import BlueprintStrategy
    from cfrkit.solvers.blueprint.trainer import BlueprintTrainer

    # one abstraction object per trainer: the E[HS] stand-in caches the buckets of recent boards, and the
    # trainers sample the same boards, so a shared object would hand later trainers free bucket lookups
    ab = EHSAbstraction(buckets)
    trainers = {"cfr+": BlueprintTrainer(args.game, args.bets, args.raise_cap, abstraction=EHSAbstraction(buckets),
                                         seed=args.seed, tree=tree),
                "pluribus": PluribusTrainer(args.game, args.bets, args.raise_cap, abstraction=EHSAbstraction(buckets),
                                            seed=args.seed, tree=tree, average=args.average,
                                            prune=not args.no_prune)}
    if not args.no_es:
        trainers["es"] = ESMCCFRTrainer(args.game, args.bets, args.raise_cap, abstraction=EHSAbstraction(buckets),
                                        seed=args.seed, tree=tree)
    out["memory_bytes"] = {name: tr.memory_bytes() for name, tr in trainers.items()}
    game = load(tree.game_string)
    spent = {name: {"cpu": 0.0} for name in trainers}
    speeds, rows = {}, []
    for budget in [float(b) for b in args.budgets.split(",")]:
        snaps = {}
        for name, tr in trainers.items():
            it0, c0 = tr.iterations, spent[name]["cpu"]
            train_to(tr, budget, spent[name])
            dc = spent[name]["cpu"] - c0
            speeds.setdefault(name, []).append({"budget": budget, "iterations": tr.iterations,
                                                "iterations_per_cpu_s": (tr.iterations - it0) / max(dc, 1e-9)})
            strat = tr.full_strategy() if isinstance(tr, PluribusTrainer) else tr.strategy_sum.copy()
            snaps[name] = BlueprintStrategy(tree, strat, ab)
            print(f"{budget:.0f} CPU-s: {name}: {tr.iterations} iterations, "
                  f"{speeds[name][-1]['iterations_per_cpu_s']:.3g} it/CPU-s", flush=True)
        for a, b in (("pluribus", "cfr+"), ("pluribus", "es"), ("es", "cfr+")):
            if a not in trainers or b not in trainers:
                continue
            c0 = time.process_time()
            res = duplicate_match(game, lambda: BlueprintAgent(snaps[a], seed=1),
                                  lambda: BlueprintAgent(snaps[b], seed=2), args.deals, seed=args.seed + 7)
            rows.append({"budget_cpu_s": budget, "a": a, "b": b, "hands": 2 * res.deals,
                         "mbb_per_hand": res.mbb_per_hand, "ci95": res.ci95,
                         "iterations": {a: trainers[a].iterations, b: trainers[b].iterations}})
            print(f"{budget:.0f} CPU-s: {a} vs {b}: {res.mbb_per_hand:+.0f} +- {res.ci95:.0f} mbb/hand over "
                  f"{2 * res.deals} hands ({time.process_time() - c0:.0f} CPU-s)", flush=True)
    out.update(speeds=speeds, matches=rows)
    for tr in trainers.values():
        tr.close()
    if args.thread_seconds > 0:
        runs = {}
        # sampled boards (bucket lookups in Python hold the GIL), then one fixed board (lookups cached: the
        # kernel's own scaling)
        for fixed, deals, threads in [(f, d, t) for f in (None, "AsJd8h5c2d") for d in (64, 512) for t in (1, 2)]:
            tr = PluribusTrainer(args.game, args.bets, args.raise_cap, abstraction=EHSAbstraction(buckets),
                                 seed=args.seed + 1, tree=tree, threads=threads, deals_per_board=deals, board=fixed)
            tr.iterate(threads)  # warm-up (first-touch of pages)
            w0, c0, it0 = time.perf_counter(), time.process_time(), tr.iterations
            while time.perf_counter() - w0 < args.thread_seconds:
                tr.iterate(1)
            boards = (tr.iterations - it0) * tr.boards_per_iteration
            dw, dc = time.perf_counter() - w0, time.process_time() - c0
            tr.close()
            kind = "fixed" if fixed else "sampled"
            runs[f"{kind}_{deals}_deals_{threads}_threads"] = {"boards": boards, "wall_s": dw, "cpu_s": dc,
                                                                "boards_per_wall_s": boards / dw,
                                                                "boards_per_cpu_s": boards / dc}
            print(f"{kind} boards, {deals} deals per board, {threads} thread(s): {boards / dw:.0f} boards per wall-s, "
                  f"{boards / dc:.0f} per CPU-s (load {os.getloadavg()[0]:.1f})", flush=True)
        out["thread_speed"] = runs
        out["thread_spread"] = thread_spread(range(6), 400)
    out.update(cpu_total_s=time.process_time(), load_average=os.getloadavg()[0], cpus=os.cpu_count())
    _save(args.out, out)


def _save(name, out):
    print(f"saved {save_results(name, out)}")


if __name__ == "__main__":
    main()
