"""DeepStack end to end on no-limit Leduc (ante 100, stack 1200): data, value net, continual re-solving,
exact exploitability of the agent (chips).

    python benchmarks/deepstack_leduc.py --work-dir /tmp/ds_leduc --samples 180000 --train-minutes 6

Steps (each cached in --work-dir, so a re-run resumes):

1. ``datagen``: random round-2 situations (board, pot, DeepStack recursive ranges), each solved with
   ``--datagen-iterations`` CFR+ iterations (first half skipped in the average), in shards.
2. ``train``: the DeepStack value net (buckets: Leduc private card x board up to suit isomorphism) on
   the first ``n`` samples for each ``n`` in ``--sample-sizes`` (the largest gets ``--train-minutes``,
   smaller ones proportionally less).
3. ``play``: continual re-solving agents for both seats, depth-limited to the end of round 1 with the
   net at the leaves, re-solving every public state with ``--iterations`` CFR+ iterations; their
   strategy at every information set is tabulated and its exact exploitability computed with
   :func:`cfrkit.evaluation.exploitability`.
4. Reference points in the same run: uniform random, full-game CFR+ (compiled tree) and continual
   re-solving without a net (full depth) at the same iteration counts.

Anchors (DeepStack-Leduc): full-game CFR about 1.0 chips, DeepStack with its net about 1.37, random about 175.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from cfrkit.agents.deepstack import DeepStackAgent, agent_policy  # noqa: E402
from cfrkit.evaluation import exploitability  # noqa: E402
from cfrkit.games import load  # noqa: E402
from cfrkit.policy import UniformRandomPolicy, tabulate  # noqa: E402
from cfrkit.solvers import CFRSolver  # noqa: E402
from cfrkit.value_nets.data import generate_dataset, load_dataset  # noqa: E402
from cfrkit.value_nets.train import load_leaf_values, train_value_net  # noqa: E402

GAME = "leduc_nolimit"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work-dir", default="/tmp/cfrkit_deepstack_leduc")
    ap.add_argument("--samples", type=int, default=180000)
    ap.add_argument("--shard-size", type=int, default=20000)
    ap.add_argument("--datagen-iterations", type=int, default=1000)
    ap.add_argument("--sample-sizes", default="", help="comma-separated training-set sizes (default: --samples)")
    ap.add_argument("--train-minutes", type=float, default=6.0)
    ap.add_argument("--hidden", default="256,256,256")
    ap.add_argument("--iterations", default="300,1000", help="CFR+ iterations per re-solve (comma-separated)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--targets", choices=("average_values", "average_strategy"), default="average_values",
                    help="value-net targets (see cfrkit.value_nets.data.solve_situations)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-baselines", action="store_true")
    ap.add_argument("--algorithm", choices=("dcfr", "cfr+"), default="dcfr", help="re-solve algorithm")
    ap.add_argument("--carry", choices=("average_values", "best_response"), default="average_values",
                    help="opponent cfvs carried between decisions (see cfrkit.agents.deepstack)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    game = load(GAME)
    os.makedirs(args.work_dir, exist_ok=True)
    results = {"game": game.game_string(), "runs": []}
    iteration_counts = [int(x) for x in args.iterations.split(",")]
    sizes = sorted(int(x) for x in args.sample_sizes.split(",") if x) or [args.samples]

    if not args.no_baselines:
        rnd = exploitability(game, tabulate(game, UniformRandomPolicy()))
        print(f"uniform random: {rnd:.2f} chips", flush=True)
        results["random"] = rnd
        for its in iteration_counts:
            t = time.perf_counter()
            cfr = exploitability(game, CFRSolver(game, algorithm="cfr+").run(its).average_policy())
            print(f"full-game CFR+ {its} iterations: {cfr:.4f} chips ({time.perf_counter() - t:.1f} s)", flush=True)
            results[f"full_game_cfr_plus_{its}"] = cfr
            t = time.perf_counter()
            agents = [DeepStackAgent(game, p, iterations=its, algorithm=args.algorithm, carry=args.carry)
                      for p in (0, 1)]
            full = exploitability(game, agent_policy(game, agents))
            print(f"continual re-solving, full depth (no net), {its} iterations: {full:.4f} chips "
                  f"({time.perf_counter() - t:.0f} s)", flush=True)
            results[f"resolving_full_depth_{its}"] = full

    data_dir = os.path.join(args.work_dir, "data")
    t = time.perf_counter()
    generate_dataset(data_dir, game, args.samples, shard_size=args.shard_size, iterations=args.datagen_iterations,
                     skip=args.datagen_iterations // 2, seed=args.seed, workers=args.workers,
                     targets=args.targets)
    results["datagen_seconds"] = time.perf_counter() - t
    print(f"datagen: {args.samples} situations ({results['datagen_seconds']:.0f} s; 0 if cached)", flush=True)
    data = load_dataset(data_dir)
    hidden = tuple(int(h) for h in args.hidden.split(","))
    for n in sizes:
        subset = {k: (v[:n] if isinstance(v, np.ndarray) else v) for k, v in data.items()}
        net_path = os.path.join(args.work_dir, f"net_{n}.pt")
        minutes = args.train_minutes * n / max(sizes)
        if not os.path.exists(net_path + ".done"):
            summary = train_value_net(subset, net_path, hidden=hidden, epochs=1000, batch_size=1000, patience=40,
                                      seed=args.seed, max_seconds=60 * minutes, threads=1)
            with open(net_path + ".done", "w") as f:
                json.dump({k: v for k, v in summary.items() if k != "history"}, f)
        with open(net_path + ".done") as f:
            summary = json.load(f)
        print(f"net on {n} samples: best validation Huber {summary['best_val_loss']:.4g} "
              f"(epoch {summary['best_epoch']}, {summary['seconds']:.0f} s)", flush=True)
        leaf = load_leaf_values(net_path)
        for its in iteration_counts:
            t = time.perf_counter()
            agents = [DeepStackAgent(game, p, leaf_values=leaf, iterations=its, algorithm=args.algorithm,
                                     carry=args.carry) for p in (0, 1)]
            policy = agent_policy(game, agents)
            expl = exploitability(game, policy)
            secs = time.perf_counter() - t
            resolves = agents[0].num_resolves + agents[1].num_resolves
            print(f"DeepStack (net {n} samples, {its} iterations): exploitability {expl:.4f} chips "
                  f"({resolves} re-solves, {secs:.0f} s)", flush=True)
            results["runs"].append({"samples": n, "iterations": its, "exploitability": expl,
                                    "val_huber": summary["best_val_loss"], "resolves": resolves, "seconds": secs})
    with open(os.path.join(args.work_dir, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    best = min(r["exploitability"] for r in results["runs"])
    print(f"best DeepStack exploitability {best:.4f} chips (target <= 1.37; DeepStack-Leduc anchor 1.37)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
